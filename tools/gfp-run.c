/*
 * gfp-run - run a program under libgfpshim.so.
 *
 *   gfp-run [--policy STR] [--policy-file F] [--rules STR] [--log DEST] [--report F]
 *           -- PROG ARGS
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
#include <unistd.h>

#include "common.h"
#include "gfp_build.h"
#include "internal.h"

#define EXIT_USAGE    2
#define EXIT_CONFIG   125
#define EXIT_NOEXEC   126
#define EXIT_NOTFOUND 127

static void usage(FILE *f)
{
	fprintf(f, "usage: gfp-run [--policy STR] [--policy-file FILE] [--rules STR] [--log DEST]\n"
	           "               [--report FILE] [--lib PATH] -- PROG [ARGS...]\n"
	           "       gfp-run --list-keys\n"
	           "Runs PROG with libgfpshim.so preloaded. --policy sets GFP_POLICY (see\n"
	           "--list-keys), --rules GFP_RULES ('lib:libfoo.so* => NORETRY; ...'), --log\n"
	           "GFP_LOG (stderr, fd:N or a path), --report GFP_REPORT.\n");
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'}, {"policy-file", required_argument, NULL, 'f'},
	    {"log", required_argument, NULL, 'l'},    {"report", required_argument, NULL, 'r'},
	    {"lib", required_argument, NULL, 'L'},    {"list-keys", no_argument, NULL, 'k'},
	    {"rules", required_argument, NULL, 'R'},  {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
	};
	const char *policy = NULL, *policy_file = NULL, *log = NULL, *report = NULL, *lib = NULL,
	           *rules = NULL;
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

	if (policy) {
		struct gfp_policy pol;
		struct gfp_cfg_err err = {0};
		config_defaults(&pol);
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
		char err[512];
		if (rules_parse(rules, err, sizeof(err))) {
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

	execvp(prog, argv + optind);
	int e = errno;
	fprintf(stderr, "gfp-run: error: cannot run %s: %s\n", prog, strerror(e));
	return e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
}
