/*
 * main.c - gfp-report: print what the shim and gfp-sweep wrote, with frames
 * named by function and source line, and join the parts of a sharded sweep.
 *
 *   gfp-report [--path DIR]... [--debug-dir DIR]... FILE...
 *   gfp-report [--path DIR]... --allocinfo FILE [--top N] [--sort live|peak|calls]
 *   gfp-report merge [-o OUT] PART.json...
 *
 * A FILE is a GFP_REPORT (totals, entries, allocinfo, sites), a GFP_RECORD file (one
 * JSON event per line) or a gfp-sweep --json result; its kind is told from
 * its keys, not its name, because all three are usually called *.json.
 * Frames are recorded as module basename + offset from the module's start,
 * the same across ASLR and machines, and each module's path and build-id;
 * libdwfl maps them back to functions and lines when it finds the module
 * (frame.c) and its debug information.
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
#include "text.h"

/* ------------------------------------------------------------------------
 * main
 * ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: gfp-report [--path DIR]... [--debug-dir DIR]... FILE...\n"
	        "       gfp-report [options] --allocinfo FILE [--top N] [--sort live|peak|calls]\n"
	        "       gfp-report merge [-o OUT.json] PART.json...\n"
	        "       gfp-report --help | --version\n"
	        "Prints a GFP_REPORT file (entry points, call sites), a GFP_RECORD file (one\n"
	        "block per event) or a gfp-sweep --json result (outcomes, findings and their\n"
	        "reproducers), with frames named 'function file:line' where the module and its\n"
	        "debug information are found: at the path the run recorded if the file is still\n"
	        "the build it ran (its build-id), else by build-id in each --debug-dir DIR and\n"
	        "/usr/lib/debug (.build-id/xx/rest.debug or rest) or from debuginfod when\n"
	        "DEBUGINFOD_URLS is set, else by name in each --path DIR, the directory of the\n"
	        "swept program, '.', /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu, /usr/bin\n"
	        "and /bin.\n"
	        "--allocinfo prints the call sites of a GFP_REPORT written with stats=sites in\n"
	        "the layout of /proc/allocinfo, by live bytes, with a column of each site's peak\n"
	        "live bytes when the report has them, and mapped:yes after a site whose live\n"
	        "bytes the program mapped itself; --sort peak by those, --sort calls by\n"
	        "live calls; --top N only the first N.\n"
	        "merge joins the parts of gfp-sweep --shard K/N into the result of one run,\n"
	        "a --campaign's target by target (a file named 'merge' is ./merge).\n"
	        "Exit status:\n"
	        "  0    every FILE printed, or the parts merged\n"
	        "  2    usage error, or a FILE that cannot be read or is of no known kind, or\n"
	        "       parts that do not belong to one sweep\n"
	        "See gfp-report(1) and gfpshim(7).\n");
}

/* The options; returns the exit status when nothing is to be printed
 * (--help, --version, a usage error), else -1. */
static int parse_args(int argc, char **argv, const char **allocinfo_out, long *top_out,
                      const char **sort_out)
{
	static const struct option opts[] = {
	    {"path", required_argument, NULL, 'p'},
	    {"debug-dir", required_argument, NULL, 'd'},
	    {"allocinfo", required_argument, NULL, 'a'},
	    {"top", required_argument, NULL, 't'},
	    {"sort", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	const char *allocinfo = NULL;
	long top = 0;
	*sort_out = NULL;
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
		case 's':
			*sort_out = optarg;
			break;
		case 'p':
		case 'd': {
			struct stat st;
			if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode))
				return tool_usage_error("%s %s: not a directory",
				                        c == 'p' ? "--path" : "--debug-dir",
				                        optarg);
			if (c == 'p')
				frames_add_user_dir(optarg);
			else
				sym_debug_dir_add(optarg);
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

/* --sort's column; false for a name that is none. */
static bool sort_of(const char *name, enum ai_sort *out)
{
	static const char *const names[] = {
	    [SORT_LIVE] = "live", [SORT_PEAK] = "peak", [SORT_CALLS] = "calls"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0) {
			*out = (enum ai_sort)i;
			return true;
		}
	return false;
}

int main(int argc, char **argv)
{
	/* Debug information comes from this machine, and from a debuginfod
	 * server only when the user set DEBUGINFOD_URLS: libdwfl asks one
	 * then, for a module no file here has. */
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return merge_main(argc - 1, argv + 1);

	const char *allocinfo = NULL, *sort_name = NULL;
	long top = 0;
	enum ai_sort sort = SORT_LIVE;
	int status = parse_args(argc, argv, &allocinfo, &top, &sort_name);
	if (status >= 0)
		return status;
	if ((top || sort_name) && !allocinfo)
		return tool_usage_error("%s goes with --allocinfo FILE", top ? "--top" : "--sort");
	if (sort_name && !sort_of(sort_name, &sort))
		return tool_usage_error("--sort %s: expected live, peak or calls", sort_name);
	if (allocinfo && optind < argc)
		return tool_usage_error("--allocinfo takes one FILE; '%s' is another",
		                        argv[optind]);
	if (!allocinfo && optind >= argc)
		return tool_usage_error("no FILE given (gfp-report [--path DIR]... FILE...)");
	text_visible_stdout();
	status = 0;
	if (allocinfo && !allocinfo_show(allocinfo, top, sort))
		status = EXIT_USAGE;
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			printf("\n");
		if (!print_file(argv[i]))
			status = EXIT_USAGE;
	}
	frames_free();
	if (ferror(stdout) || fclose(stdout) != 0) {
		error("cannot write the standard output: %s", strerror(errno));
		return EXIT_USAGE;
	}
	return status;
}
