/*
 * reproducer.c - a run's reproducer: the command that runs it again alone,
 * as every report prints it and confirm.c runs it - from the directory the
 * runs ran in, under gfp-run with the run's whole policy, with a campaign
 * target's environment - quoted so that it runs as printed.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"
#include "text.h"
#include "sweep.h"

/* PROG ARGS as a shell would take them back. */
void reproducer_command(FILE *f)
{
	for (char **a = opt.argv; *a; a++) {
		if (a != opt.argv)
			fputc(' ', f);
		text_shell_quote(f, *a);
	}
	if (opt.input[0]) {
		fprintf(f, " < ");
		text_shell_quote(f, opt.input);
	}
}

/* The gfp-run beside this gfp-sweep's real path (a build tree's, or the
 * installed tree's, wherever it is), which finds the library this sweep
 * found; else gfp-run as a shell finds it. A printed reproducer runs as
 * printed. */
static const char *gfp_run_path(void)
{
	static char path[PATH_MAX];
	if (path[0])
		return path;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash = n > 0 ? (self[n] = '\0', strrchr(self, '/')) : NULL;
	if (slash) {
		snprintf(slash + 1, sizeof(self) - (size_t)(slash + 1 - self), "gfp-run");
		if (access(self, X_OK) == 0) {
			snprintf(path, sizeof(path), "%s", self);
			return path;
		}
	}
	if (!launch_resolve("gfp-run", path, sizeof(path)))
		snprintf(path, sizeof(path), "gfp-run");
	return path;
}

/* The policy a run had (run.c): the junk filling, without which a read of
 * uninitialised memory may pass, --policy's, then its failure point. */
void reproducer_policy(const struct run *r, char *out, size_t n)
{
	char pol[512];
	plan_policy(r, pol, sizeof(pol));
	run_policy(pol, out, n);
}

/* NAME=VALUE words a shell takes as an assignment: NAME a shell's name. */
static bool shell_names(char **env)
{
	for (char **e = env; e && *e; e++) {
		size_t n = strcspn(*e, "=");
		if (strspn(*e, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") <
		        n ||
		    (**e >= '0' && **e <= '9'))
			return false;
	}
	return true;
}

/* The directory the runs ran in: the sweep's, which it never leaves; ""
 * when it has no name (removed, or too deep for getcwd). */
const char *reproducer_dir(void)
{
	static char *dir;
	if (!dir) {
		dir = getcwd(NULL, 0);
		if (!dir)
			dir = "";
	}
	return dir;
}

/* reproducer's words; with exec, the command exec'd by the shell (after
 * the cd and any assignments), so that the run's end is the shell's. */
static void print_reproducer(FILE *f, const struct run *r, bool exec)
{
	char pol[4096];
	reproducer_policy(r, pol, sizeof(pol));
	if (reproducer_dir()[0]) {
		fputs("cd -- ", f);
		text_shell_quote(f, reproducer_dir());
		fputs(" && ", f);
	}
	bool assign = shell_names(opt.env);
	if (!assign)
		fputs(exec ? "exec env -- " : "env -- ", f);
	for (char **e = opt.env; e && *e; e++) {
		size_t n = strcspn(*e, "=");
		if (assign) {
			fprintf(f, "%.*s=", (int)n, *e);
			text_shell_quote(f, *e + n + 1);
		} else
			text_shell_quote(f, *e);
		fputc(' ', f);
	}
	if (assign && exec)
		fputs("exec ", f);
	text_shell_quote(f, gfp_run_path());
	/* As the sweep did: failures in the program's own process only. */
	fprintf(f, "%s --policy ", opt.follow ? "" : " --no-follow");
	text_shell_quote(f, pol);
	fprintf(f, " -- ");
	reproducer_command(f);
}

/* The run's command with what it depends on: the directory it ran in (a
 * program reads its directory without naming it: ls, git, make; and
 * "./prog", "-f script" name files relative to it), the whole policy, and
 * a campaign target's environment. A name no shell assignment takes (any
 * byte but '=' is allowed) goes to env(1), each NAME=VALUE one quoted
 * word, so that its bytes reach the program and never the terminal. */
void reproducer_print(FILE *f, const struct run *r)
{
	print_reproducer(f, r, false);
}

void reproducer_exec(FILE *f, const struct run *r)
{
	print_reproducer(f, r, true);
}
