/*
 * gfp-run - run a program under libgfpshim.so.
 *
 *   gfp-run [--policy STR] [--policy-file F] [--rules STR] [--log DEST] [--report F]
 *           -- PROG ARGS
 *
 * With fail.site.hit=last in --policy it first runs PROG once to count the
 * site's hits (a recording run), then names the last hit.
 *   gfp-run --list-keys
 *
 * It validates the policy with the engine's own parser (the same messages,
 * status 125), sets the variables, prepends the library to LD_PRELOAD and
 * execs PROG. The library is looked for next to the tool first (a build
 * tree: build/tools/../preload), then in the install prefix.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "record_reader.h"
#include "gfp_build.h"
#include "policy.h"
#include "text.h"

#define EXIT_USAGE    2
#define EXIT_CONFIG   125
#define EXIT_NOEXEC   126
#define EXIT_NOTFOUND 127

static void usage(FILE *f)
{
	fprintf(f, "usage: gfp-run [--policy STR] [--policy-file FILE] [--rules STR] [--log DEST]\n"
	           "               [--report FILE] [--lib PATH] [--no-follow] -- PROG [ARGS...]\n"
	           "       gfp-run --list-keys\n"
	           "Runs PROG with libgfpshim.so preloaded. --policy sets GFP_POLICY (see\n"
	           "--list-keys), --rules GFP_RULES ('lib:libfoo.so* => NORETRY; ...'), --log\n"
	           "GFP_LOG (stderr, fd:N or a path), --report GFP_REPORT; --no-follow injects\n"
	           "failures into PROG's own process only, not into programs it runs.\n");
}

static void list_keys(void)
{
	static const char *const type_name[] = {"bool", "count", "size",  "time",
	                                        "prob", "enum",  "flags", "text"};
	printf("%-20s %-6s %-10s %s\n", "KEY", "TYPE", "DEFAULT", "MEANING");
	for (size_t i = 0; i < GFP_KEY_COUNT; i++) {
		const struct gfp_key *k = &gfp_keys[i];
		printf("%-20s %-6s %-10s %s", k->name, type_name[k->type], k->def, k->help);
		if (k->type == GFP_T_ENUM)
			printf(" [%s]", k->choices);
		printf("\n");
	}
}

static void report_to_stderr(const char *msg)
{
	fprintf(stderr, "gfp-run: error: %s\n", msg);
}

/* The hits of one site, read from the recording run's report. */
struct site_hits {
	unsigned long long want, hits;
};

static void count_hits(void *ctx, const struct rec_site *s)
{
	struct site_hits *sh = ctx;
	if (!sh->hits && strtoull(s->id, NULL, 16) == sh->want)
		sh->hits = s->hits;
}

/* fail.site.hit=last: a recording run of the program (the site's injection
 * off, stats=paths, input and output /dev/null) counts the site's hits; 0 and
 * a message when it cannot. The program must take the same path twice, as
 * for gfp-sweep. */
static unsigned long long count_site_hits(char **argv, const char *policy, const char *site)
{
	char report[] = "/tmp/gfp-run-XXXXXX";
	int fd = mkstemp(report);
	if (fd < 0) {
		fprintf(stderr,
		        "gfp-run: error: fail.site.hit=last: no file for the recording run: %s\n",
		        strerror(errno));
		return 0;
	}
	close(fd);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null < 0)
			_exit(126);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		char recording[8192];
		snprintf(recording, sizeof(recording), "%s;fail.site=;stats=paths", policy);
		setenv("GFP_POLICY", recording, 1);
		setenv("GFP_REPORT", report, 1);
		/* Its own report, not that of a program it runs. */
		char pid[32];
		snprintf(pid, sizeof(pid), "%ld", (long)getpid());
		setenv("GFP_INJECT_PID", pid, 1);
		unsetenv("GFP_RECORD");
		unsetenv("GFP_LOG");
		execvp(argv[0], argv);
		_exit(127);
	}
	int st = 0;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	char *text = pid > 0 ? text_slurp(report, NULL) : NULL;
	struct site_hits sh = {strtoull(site, NULL, 16), 0};
	struct jval rep;
	char err[256];
	if (text && json_parse(text, strlen(text), 1, &rep, err, sizeof(err))) {
		rec_sites(&rep, count_hits, &sh);
		json_free(&rep);
	}
	unsigned long long hits = sh.hits;
	if (!hits)
		fprintf(
		    stderr,
		    "gfp-run: error: fail.site.hit=last: the recording run (%s %d) %s site %s\n",
		    WIFSIGNALED(st) ? "killed by signal" : "exit status",
		    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
		    text ? "never reached" : "wrote no report to count the hits of", site);
	free(text);
	unlink(report);
	return hits;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'},
	    {"policy-file", required_argument, NULL, 'f'},
	    {"log", required_argument, NULL, 'l'},
	    {"report", required_argument, NULL, 'r'},
	    {"lib", required_argument, NULL, 'L'},
	    {"list-keys", no_argument, NULL, 'k'},
	    {"rules", required_argument, NULL, 'R'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"no-follow", no_argument, NULL, 'n'},
	    {NULL, 0, NULL, 0},
	};
	const char *policy = NULL, *policy_file = NULL, *log = NULL, *report = NULL, *lib = NULL,
	           *rules = NULL;
	bool no_follow = false;
	int c;
	while ((c = getopt_long(argc, argv, "+p:f:l:r:L:R:khV", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			policy = optarg;
			break;
		case 'f':
			policy_file = optarg;
			break;
		case 'l':
			log = optarg;
			break;
		case 'r':
			report = optarg;
			break;
		case 'L':
			lib = optarg;
			break;
		case 'R':
			rules = optarg;
			break;
		case 'k':
			list_keys();
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("gfp-run %s\n", GFP_VERSION);
			return 0;
		case 'n':
			no_follow = true;
			break;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr,
		        "gfp-run: error: no program to run (gfp-run [options] -- PROG ARGS)\n");
		return EXIT_USAGE;
	}

	struct gfp_policy pol;
	config_defaults(&pol);
	if (policy) {
		struct gfp_cfg_err err = {0};
		if (config_parse(&pol, "--policy (GFP_POLICY)", policy, strlen(policy), false,
		                 report_to_stderr, &err))
			return EXIT_CONFIG;
		setenv("GFP_POLICY", policy, 1);
	}
	if (policy_file) {
		if (access(policy_file, R_OK) != 0) {
			fprintf(stderr, "gfp-run: error: --policy-file: cannot read '%s': %s\n",
			        policy_file, strerror(errno));
			return EXIT_CONFIG;
		}
		setenv("GFP_POLICY_FILE", policy_file, 1);
	}
	if (rules) {
		static struct gfp_rule_set set;
		char err[512];
		if (rules_parse(&set, rules, err, sizeof(err))) {
			report_to_stderr(err);
			return EXIT_CONFIG;
		}
		setenv("GFP_RULES", rules, 1);
	}
	if (log)
		setenv("GFP_LOG", log, 1);
	if (report)
		setenv("GFP_REPORT", report, 1);

	char libpath[PATH_MAX];
	if (lib) {
		snprintf(libpath, sizeof(libpath), "%s", lib);
		if (access(libpath, R_OK) != 0) {
			fprintf(stderr, "gfp-run: error: --lib: no file '%s'\n", lib);
			return EXIT_USAGE;
		}
	} else if (!tool_find_library(libpath, sizeof(libpath))) {
		fprintf(stderr,
		        "gfp-run: error: cannot find %s next to gfp-run or in %s (build it with "
		        "'meson compile -C build', or pass --lib PATH)\n",
		        LIB_NAME, GFP_LIBDIR);
		return EXIT_USAGE;
	}

	const char *prog = argv[optind];
	char resolved[PATH_MAX];
	if (!tool_resolve(prog, resolved, sizeof(resolved))) {
		fprintf(stderr, "gfp-run: error: %s: command not found\n", prog);
		return EXIT_NOTFOUND;
	}
	if (tool_is_static_elf(resolved)) {
		fprintf(stderr,
		        "gfp-run: error: %s is statically linked: LD_PRELOAD cannot reach its "
		        "allocations\n",
		        resolved);
		return EXIT_NOEXEC;
	}

	tool_set_preload(libpath);
	if (no_follow) {
		/* PROG keeps this process's id (exec): the programs it runs get
		 * no injected failure, as under gfp-sweep without --follow. */
		char pid[32];
		snprintf(pid, sizeof(pid), "%ld", (long)getpid());
		setenv("GFP_INJECT_PID", pid, 1);
	}

	if (policy && pol.fail_site.v[0] && pol.fail_site_hit == 0) {
		unsigned long long hits = count_site_hits(argv + optind, policy, pol.fail_site.v);
		if (!hits)
			return EXIT_USAGE;
		static char last[8192];
		snprintf(last, sizeof(last), "%s;fail.site.hit=%llu", policy, hits);
		setenv("GFP_POLICY", last, 1);
		fprintf(stderr,
		        "gfp-run: fail.site.hit=last: site %s has %llu hits in a recording run\n",
		        pol.fail_site.v, hits);
	}

	execvp(prog, argv + optind);
	int e = errno;
	fprintf(stderr, "gfp-run: error: cannot run %s: %s\n", prog, strerror(e));
	return e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
}
