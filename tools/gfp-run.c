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
 * execs PROG. The library is looked for as launch_find_library says: the build
 * tree, then an installed tree relative to gfp-run's real path, then the
 * configured libdir.
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

#include "infile.h"
#include "launch.h"
#include "tool.h"
#include "record_reader.h"
#include "gfp_build.h"
#include "policy.h"
#include "text.h"

#define EXIT_CONFIG   125
#define EXIT_NOEXEC   126
#define EXIT_NOTFOUND 127

static void usage(void)
{
	printf("usage: gfp-run [--policy STR] [--policy-file FILE] [--rules STR] [--log DEST]\n"
	       "               [--report FILE] [--lib PATH] [--no-follow] -- PROG [ARGS...]\n"
	       "       gfp-run --list-keys | --help | --version\n"
	       "Runs PROG with libgfpshim.so preloaded. --policy sets GFP_POLICY (see\n"
	       "--list-keys), --policy-file GFP_POLICY_FILE, --rules GFP_RULES\n"
	       "('lib:libfoo.so* => NORETRY; ...'), --log GFP_LOG (stderr, fd:N or a path),\n"
	       "--report GFP_REPORT; --lib names the library; --no-follow injects failures\n"
	       "into PROG's own process only, not into programs it runs.\n"
	       "Exit status: PROG's, or\n"
	       "  2    usage error, no libgfpshim.so, or fail.site.hit=last found no hit\n"
	       "  125  --policy, --policy-file or --rules refused (as the shim refuses a bad\n"
	       "       GFP_POLICY before main)\n"
	       "  126  PROG is not executable, or statically linked\n"
	       "  127  PROG not found\n"
	       "See gfp-run(1) and gfpshim(7).\n");
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
	tool_error("%s", msg);
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
		tool_error("fail.site.hit=last: no file for the recording run: %s",
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
	char *text = pid > 0 ? infile_read(report, NULL) : NULL;
	struct site_hits sh = {strtoull(site, NULL, 16), 0};
	struct jval rep;
	char err[256];
	if (text && json_parse(text, strlen(text), 1, &rep, err, sizeof(err))) {
		rec_sites(&rep, count_hits, &sh);
		json_free(&rep);
	}
	unsigned long long hits = sh.hits;
	if (!hits)
		tool_error("fail.site.hit=last: the recording run (%s %d) %s site %s",
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
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:f:l:r:L:R:khV", opts, NULL)) != -1) {
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
			usage();
			return 0;
		case 'V':
			return tool_version();
		case 'n':
			no_follow = true;
			break;
		default:
			return tool_bad_option(c, argv);
		}
	}
	if (optind >= argc)
		return tool_usage_error("no program to run (gfp-run [options] -- PROG ARGS)");

	struct gfp_policy pol;
	config_defaults(&pol);
	if (policy) {
		struct gfp_cfg_err err = {0};
		if (config_parse(&pol, "--policy (GFP_POLICY)", policy, strlen(policy), false,
		                 report_to_stderr, &err))
			return EXIT_CONFIG;
		/* The shim's check, before anything runs; fail.site.hit=last is
		 * settled below by a recording run, and under GFP_STRICT=0 the
		 * shim only warns. */
		struct gfp_policy settled = pol;
		if (settled.fail_site.v[0] && settled.fail_site_hit == 0)
			settled.fail_site_hit = 1;
		size_t drop;
		const char *why = config_contradiction(&settled, &drop);
		const char *strict = getenv("GFP_STRICT");
		if (why && !(strict && strcmp(strict, "0") == 0)) {
			tool_error("--policy (GFP_POLICY): %s", why);
			return EXIT_CONFIG;
		}
		setenv("GFP_POLICY", policy, 1);
	}
	if (policy_file) {
		if (access(policy_file, R_OK) != 0) {
			tool_error("--policy-file: cannot read '%s': %s", policy_file,
			           strerror(errno));
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
			tool_error("--lib: no file '%s'", lib);
			return EXIT_USAGE;
		}
	} else if (!launch_find_library(libpath, sizeof(libpath))) {
		char why[4 * PATH_MAX];
		launch_library_missing(why, sizeof(why));
		tool_error("%s", why);
		return EXIT_USAGE;
	}
	char why[PATH_MAX + 200];
	if (!launch_can_preload(libpath, why, sizeof(why))) {
		tool_error("%s", why);
		return EXIT_USAGE;
	}

	const char *prog = argv[optind];
	char resolved[PATH_MAX];
	if (!launch_resolve(prog, resolved, sizeof(resolved))) {
		tool_error("%s: command not found", prog);
		return EXIT_NOTFOUND;
	}
	if (launch_is_static_elf(resolved)) {
		tool_error("%s is statically linked: LD_PRELOAD cannot reach its allocations",
		           resolved);
		return EXIT_NOEXEC;
	}

	launch_set_preload(libpath);
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
		tool_note("fail.site.hit=last: site %s has %llu hits in a recording run",
		          pol.fail_site.v, hits);
	}

	execvp(prog, argv + optind);
	int e = errno;
	tool_error("cannot run %s: %s", prog, strerror(e));
	return e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
}
