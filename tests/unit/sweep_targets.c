/* A campaign's file (tools/gfp-sweep/targets.c): a JSON array or JSON
 * Lines, each target checked, a bad one refused with where and why (exit
 * 2), FIFOs and directories refused before they are read; and a target's
 * key, which changes with what its runs would do. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "targets.h"
#include "check.h"

static char dir[] = "/tmp/unit-targets.XXXXXX";

/* LeakSanitizer's, under -Db_sanitize=address: what a child that dies on
 * purpose leaves allocated is no leak. */
extern void __lsan_disable(void) __attribute__((weak));

static void free_targets(struct target *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (char **a = t[i].argv; *a; a++)
			free(*a);
		for (char **e = t[i].env; *e; e++)
			free(*e);
		free(t[i].id);
		free(t[i].argv);
		free(t[i].env);
		free(t[i].input);
	}
	free(t);
}

static const char *file(const char *name, const char *text)
{
	static char path[4][PATH_MAX];
	static int k;
	char *p = path[k++ % 4];
	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	return p;
}

static void a_json_array(void)
{
	const char *path = file("a.json", "[{\"id\":\"one\",\"argv\":[\"/bin/true\",\"x y\"]},\n"
	                                  " {\"id\":\"two.2_b-c\",\"argv\":[\"prog\"],\"status\":3,"
	                                  "\"env\":{\"LANG\":\"C\",\"A B\":\"1=2\"},"
	                                  "\"stdin\":\"in.txt\"}]");
	struct target *t;
	size_t n = targets_load(path, &t);
	CHECK(n == 2);
	CHECK_STR(t[0].id, "one");
	CHECK_STR(t[0].argv[0], "/bin/true");
	CHECK_STR(t[0].argv[1], "x y");
	CHECK(t[0].argv[2] == NULL && t[0].env[0] == NULL);
	CHECK_STR(t[0].input, "");
	CHECK(t[0].status == 0);
	CHECK_STR(t[0].state, "not_run");
	CHECK(t[0].error == NULL);
	CHECK_STR(t[1].id, "two.2_b-c");
	CHECK(t[1].status == 3);
	CHECK_STR(t[1].env[0], "LANG=C");
	CHECK_STR(t[1].env[1], "A B=1=2");
	CHECK(t[1].env[2] == NULL);
	CHECK_STR(t[1].input, "in.txt");
	free_targets(t, n);
}

static void json_lines(void)
{
	const char *path = file("a.jsonl", "# the targets\n"
	                                   "\n"
	                                   "  {\"id\":\"a\",\"argv\":[\"p\"]}\n"
	                                   "   # indented comment\n"
	                                   "{\"id\":\"b\",\"argv\":[\"q\",\"--flag\"]}");
	struct target *t;
	CHECK(targets_load(path, &t) == 2);
	CHECK_STR(t[0].id, "a");
	CHECK_STR(t[1].argv[1], "--flag");
	free_targets(t, 2);
}

/* targets_load(path) in a child: its exit status, its stderr in err. */
static int child_status(const char *path, char *err, size_t n)
{
	int pipefd[2];
	if (pipe(pipefd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		if (__lsan_disable)
			__lsan_disable();
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		struct target *t;
		targets_load(path, &t);
		_exit(0);
	}
	close(pipefd[1]);
	size_t len = 0;
	ssize_t r;
	char rest[256];
	while ((r = read(pipefd[0], len + 1 < n ? err + len : rest,
	                 len + 1 < n ? n - 1 - len : sizeof(rest))) > 0)
		len += len + 1 < n ? (size_t)r : 0;
	err[len] = '\0';
	close(pipefd[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void refused(const char *name, const char *text, const char *why)
{
	char err[1024];
	const char *path = text ? file(name, text) : name;
	int st = child_status(path, err, sizeof(err));
	if (st != 2 || !strstr(err, why)) {
		fprintf(stderr, "%s: exit %d, '%s' without '%s'\n", name, st, err, why);
		check_failures++;
	}
}

static void bad_targets_refused(void)
{
	refused("b1", "[{\"id\":\"a\",\"argv\":[\"p\"],\"cwd\":\"/\"}]",
	        "b1: target 1: unknown key \"cwd\"");
	refused("b2", "{\"id\":\"a b\",\"argv\":[\"p\"]}\n", "b2:1: \"id\" is a name of letters");
	refused("b3", "{\"id\":\"a\",\"argv\":[\"p\"]}\n{\"id\":\"a\",\"argv\":[\"q\"]}\n",
	        "b3:2: a second target \"a\"");
	refused("b4", "[{\"id\":\"a\",\"argv\":[]}]", "\"argv\" is a list of strings");
	refused("b5", "[{\"id\":\"a\",\"argv\":[\"p\",1]}]", "\"argv\" is a list of strings");
	refused("b6", "[{\"id\":\"a\",\"argv\":[\"p\"],\"status\":256}]", "\"status\" is an exit");
	refused("b7", "[{\"id\":\"a\",\"argv\":[\"p\"],\"status\":1.5}]", "\"status\" is an exit");
	refused("b8", "[{\"id\":\"a\",\"argv\":[\"p\"],\"env\":{\"X\":1}}]", "env \"X\" is not");
	refused("b9", "[{\"id\":\"a\",\"argv\":[\"p\"],\"env\":{\"X=Y\":\"1\"}}]", "env \"X=Y\"");
	refused("b10", "[{\"id\":\"a\",\"argv\":[\"p\"],\"stdin\":5}]", "\"stdin\" is a file");
	refused("b11", "[\"a\"]", "a target is an object");
	refused("b12", "# nothing\n\n", "has no target");
	refused("b13", "{\"id\":\"a\",\"argv\":[\"p\"]\n", "b13: line 1, column");
	/* what is no regular file is refused before it is read: a FIFO would
	 * hold the sweep in open(2) */
	char fifo[PATH_MAX];
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	refused(fifo, NULL, "is a FIFO: give a regular file");
	refused(dir, NULL, "is a directory");
	char missing[PATH_MAX];
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	refused(missing, NULL, strerror(ENOENT));
	unlink(fifo);
}

/* The key changes with argv, env, stdin, the expected status and the
 * program's and input's files (size and time); not with the id. */
static void keys_follow_what_runs(void)
{
	const char *prog = file("prog", "#!/bin/sh\n");
	const char *in = file("in", "data\n");
	snprintf(sweep.prog_path, sizeof(sweep.prog_path), "%s", prog);
	char *argv[] = {(char *)prog, "a", NULL}, *argv2[] = {(char *)prog, "b", NULL};
	char *env[] = {"X=1", NULL}, *env2[] = {"X=2", NULL};
	struct target t = {"id", argv, (char *)in, env, 0, "not_run", NULL};
	char k0[17], k[17];
	targets_key(&t, k0);
	CHECK(strlen(k0) == 16 && strspn(k0, "0123456789abcdef") == 16);
	targets_key(&t, k);
	CHECK_STR(k, k0);
	struct target u = t;
	u.id = "other";
	targets_key(&u, k);
	CHECK_STR(k, k0);
	u = t;
	u.argv = argv2;
	targets_key(&u, k);
	CHECK(strcmp(k, k0) != 0);
	u = t;
	u.env = env2;
	targets_key(&u, k);
	CHECK(strcmp(k, k0) != 0);
	u = t;
	u.status = 1;
	targets_key(&u, k);
	CHECK(strcmp(k, k0) != 0);
	u = t;
	u.input = "";
	targets_key(&u, k);
	CHECK(strcmp(k, k0) != 0);
	/* an argument that moved into the environment is another target */
	char *argv3[] = {(char *)prog, NULL}, *env3[] = {"a", "X=1", NULL};
	u = t;
	u.argv = argv3;
	u.env = env3;
	targets_key(&u, k);
	CHECK(strcmp(k, k0) != 0);
	/* the input rewritten: another size */
	file("in", "more data\n");
	targets_key(&t, k);
	CHECK(strcmp(k, k0) != 0);
	char k1[17];
	snprintf(k1, sizeof(k1), "%s", k);
	/* the program rebuilt: another time */
	struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
	CHECK(utimensat(AT_FDCWD, prog, times, 0) == 0);
	targets_key(&t, k);
	CHECK(strcmp(k, k1) != 0);
	sweep.prog_path[0] = '\0';
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	a_json_array();
	json_lines();
	bad_targets_refused();
	keys_follow_what_runs();
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return CHECK_DONE();
}
