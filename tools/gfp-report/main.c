/*
 * main.c - gfp-report: print what the shim and gfp-sweep wrote, with frames
 * named by function and source line, and join the parts of a sharded sweep.
 *
 *   gfp-report [--path DIR]... FILE...
 *   gfp-report [--path DIR]... --allocinfo FILE [--top N]
 *   gfp-report merge [-o OUT] PART.json...
 *
 * A FILE is a GFP_REPORT (totals, entries, allocinfo, sites), a GFP_RECORD file (one
 * JSON event per line) or a gfp-sweep --json result; its kind is told from
 * its keys, not its name, because all three are usually called *.json.
 * Frames are recorded as module basename + offset from the module's start,
 * the same across ASLR and machines; libdwfl maps them back to functions and
 * lines when it finds the module and its debug information.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbolize.h"
#include "gfp_build.h"
#include "report.h"

/* ------------------------------------------------------------------------
 * main
 * ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: gfp-report [--path DIR]... FILE...\n"
	        "       gfp-report [--path DIR]... --allocinfo FILE [--top N]\n"
	        "       gfp-report merge [-o OUT.json] PART.json...\n"
	        "       gfp-report --help | --version\n"
	        "Prints a GFP_REPORT file (entry points, call sites), a GFP_RECORD file (one\n"
	        "block per event) or a gfp-sweep --json result (outcomes, findings and their\n"
	        "reproducers), with frames named 'function file:line' where the module and its\n"
	        "debug information are found: in each --path DIR, then the directory of the\n"
	        "swept program, '.', /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu, /usr/bin\n"
	        "and /bin.\n"
	        "--allocinfo prints the call sites of a GFP_REPORT written with stats=sites in\n"
	        "the layout of /proc/allocinfo, by live bytes; --top N only the first N.\n"
	        "merge joins the parts of gfp-sweep --shard K/N into the result of one run\n"
	        "(a file named 'merge' is ./merge).\n"
	        "Exit status:\n"
	        "  0    every FILE printed, or the parts merged\n"
	        "  2    usage error, or a FILE that cannot be read or is of no known kind, or\n"
	        "       parts that do not belong to one sweep\n"
	        "See gfp-report(1) and gfpshim(7).\n");
}

/* The options; returns the exit status when nothing is to be printed
 * (--help, --version, a usage error), else -1. */
static int parse_args(int argc, char **argv, const char **allocinfo_out, long *top_out)
{
	static const struct option opts[] = {
	    {"path", required_argument, NULL, 'p'}, {"allocinfo", required_argument, NULL, 'a'},
	    {"top", required_argument, NULL, 't'},  {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},    {NULL, 0, NULL, 0},
	};
	int c;
	const char *allocinfo = NULL;
	long top = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (allocinfo)
				return tool_usage_error(
				    "--allocinfo takes one FILE (given '%s' and "
				    "'%s')",
				    allocinfo, optarg);
			allocinfo = optarg;
			break;
		case 't': {
			char *end = NULL;
			errno = 0;
			top = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || top < 1)
				return tool_usage_error("--top %s: expected a number of rows, 1 or "
				                        "more",
				                        optarg);
			break;
		}
		case 'p': {
			struct stat st;
			if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode))
				return tool_usage_error("--path %s: not a directory", optarg);
			add_user_dir(optarg);
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			return tool_version();
		default:
			return tool_bad_option(c, argv);
		}
	}
	*allocinfo_out = allocinfo;
	*top_out = top;
	return -1;
}

int main(int argc, char **argv)
{
	/* A report must not wait on the network: debug information comes from
	 * this machine only, never from a debuginfod server. */
	unsetenv("DEBUGINFOD_URLS");
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return merge_main(argc - 1, argv + 1);

	const char *allocinfo = NULL;
	long top = 0;
	int status = parse_args(argc, argv, &allocinfo, &top);
	if (status >= 0)
		return status;
	if (top && !allocinfo)
		return tool_usage_error("--top goes with --allocinfo FILE");
	if (allocinfo && optind < argc)
		return tool_usage_error("--allocinfo takes one FILE; '%s' is another",
		                        argv[optind]);
	if (!allocinfo && optind >= argc)
		return tool_usage_error("no FILE given (gfp-report [--path DIR]... FILE...)");
	status = 0;
	if (allocinfo && !show_allocinfo(allocinfo, top))
		status = EXIT_USAGE;
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			printf("\n");
		if (!show_file(argv[i]))
			status = EXIT_USAGE;
	}
	modules_free();
	if (fflush(stdout) != 0 || ferror(stdout)) {
		error("cannot write the standard output: %s", strerror(errno));
		return EXIT_USAGE;
	}
	return status;
}
