/*
 * main.c - gfp-sweep: drive a program through its allocation failure points
 * and report every crash, hang and silent data loss behind one.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "sweep.h"

/* A count option: a whole number of at least 1. */
static int positive(const char *name, const char *v)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (end == v || *end || errno || n < 1 || n > INT_MAX)
		die(EXIT_USAGE, "%s takes a whole number of at least 1, not '%s'", name, v);
	return (int)n;
}

/* --policy: the runs' keys; the failure points are the sweep's to choose, and
 * a trailing separator would double in reproducers. */
static const char *policy_arg(char *v)
{
	for (const char *k = v; (k = strstr(k, "fail.")); k++)
		if (k == v || k[-1] == ';' || k[-1] == ',' || k[-1] == ' ')
			die(EXIT_USAGE,
			    "--policy '%s' has fail.* keys: the sweep chooses the failure points "
			    "(give the other keys, such as limit= or default=)",
			    v);
	size_t n = strlen(v);
	while (n && (v[n - 1] == ';' || v[n - 1] == ',' || v[n - 1] == ' '))
		v[--n] = '\0';
	return v;
}

/* --fail-on: a comma list of the finding classes that make exit status 1. */
static unsigned fail_on_arg(const char *v)
{
	static const enum outcome classes[] = {O_CRASH, O_HANG, O_SILENT};
	unsigned mask = 0;
	for (const char *p = v;; p++) {
		size_t n = strcspn(p, ","), c = 0;
		while (c < 3 && (strlen(outcome_name[classes[c]]) != n ||
		                 strncmp(p, outcome_name[classes[c]], n) != 0))
			c++;
		if (c == 3)
			die(EXIT_USAGE,
			    "--fail-on takes a comma list of crash, hang and silent, not '%s'", v);
		mask |= 1u << classes[c];
		p += n;
		if (!*p)
			return mask;
	}
}

/* "  NAME       TEXT", TEXT wrapped at 79 columns under itself. */
static void help_line(FILE *f, const char *name, const char *text)
{
	int col = fprintf(f, "  %-10s", name);
	for (const char *w = text; *w;) {
		size_t n = strcspn(w, " ");
		if (col + 1 + (int)n > 79 && col > 13)
			col = fprintf(f, "\n%12s", "") - 1;
		col += fprintf(f, " %.*s", (int)n, w);
		w += n + strspn(w + n, " ");
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: gfp-sweep [--mode sites|nth] [-j N] [--timeout S] [--max-runs N]\n"
	        "                 [--shard K/N|auto] [--policy STR] [--persist] [--follow]\n"
	        "                 [--no-junk] [--no-startup] [--by-hit] [--input FILE]\n"
	        "                 [--json FILE] [--junit FILE] [--html FILE]\n"
	        "                 [--fail-on crash,hang,silent] [--lib PATH] -- PROG [ARGS...]\n"
	        "       gfp-sweep [options] --campaign FILE [--state PATH]\n"
	        "       gfp-sweep --help | --version\n"
	        "Runs PROG once to record its allocation call sites, then once per failure point\n"
	        "(sites: the first, second and last hit of every site; nth: every Nth call;\n"
	        "with --max-runs, every site's first hit or first call comes first),\n"
	        "and reports the crashes, hangs and silent data losses it finds: one finding\n"
	        "per bug, a crash by its state (its signal and top three frames), a hang by the\n"
	        "stack it waited in, a silent run by the data it lost, each with the failed\n"
	        "allocations (call paths) that lead to it.\n"
	        "--json, --junit and --html also write every result as JSON, as a JUnit XML\n"
	        "report (one testcase per finding) and as one self-contained HTML page.\n"
	        "--input FILE is every run's standard input (else /dev/null).\n"
	        "Failure points before main (constructors) are swept too and reported as\n"
	        "start-up; --no-startup leaves them out.\n"
	        "A site only the initial thread reached, at the same of its calls in two\n"
	        "recording runs, is failed by call number: a run unwinds only the call it\n"
	        "fails (another path there runs again by hit). --by-hit counts hits always.\n"
	        "Reproducers and the confirmation of findings always count hits.\n"
	        "--fail-on lists the findings that make exit status 1 (default: all three);\n"
	        "the others are still reported.\n"
	        "--shard auto takes K and N from the job runner: a Kubernetes Indexed Job, a\n"
	        "Slurm job array, GitLab's parallel:, a GitHub Actions matrix, GNU parallel.\n"
	        "--campaign FILE sweeps every target of FILE (JSON: id, argv, stdin, env,\n"
	        "status) in turn into one report; finished runs are kept in --state PATH\n"
	        "(default FILE.state), and a campaign run again goes on from there.\n"
	        "FILE is a regular file, or - for the standard input (with --state).\n"
	        "Each report is written whole to a new file (mode 0600) renamed over its\n"
	        "path: a symlink there is replaced, never written through.\n"
	        "Ctrl-C or SIGTERM stops the sweep: the reports hold the runs that finished.\n"
	        "Exit status:\n"
	        "  0    no finding of a --fail-on class\n"
	        "  1    findings of a --fail-on class (silent data losses, crashes or hangs)\n"
	        "  2    usage error, or the sweep could not go on (no library, the recording\n"
	        "       run failed, a report cannot be written, out of memory, a campaign's\n"
	        "       target that could not be swept)\n"
	        "  125  the shim refused --policy\n"
	        "  126  PROG is not executable, or statically linked\n"
	        "  127  PROG not found\n"
	        "  129  stopped by SIGHUP, the runs in flight killed (128 + the signal)\n"
	        "  130  stopped by SIGINT (Ctrl-C)\n"
	        "  143  stopped by SIGTERM\n"
	        "Outcomes of a run:\n");
	for (int o = 0; o < O_COUNT; o++)
		help_line(f, outcome_name[o], outcome_help[o]);
	fprintf(f, "See gfp-sweep(1) and gfpshim(7).\n");
}

/* The options into opt; returns the exit status when the sweep is not to
 * run (--help, a usage error), else -1. *lib gets --lib. */
static int parse_args(int argc, char **argv, const char **lib)
{
	static const struct option opts[] = {
	    {"mode", required_argument, NULL, 'm'},    {"jobs", required_argument, NULL, 'j'},
	    {"timeout", required_argument, NULL, 't'}, {"max-runs", required_argument, NULL, 'M'},
	    {"shard", required_argument, NULL, 's'},   {"policy", required_argument, NULL, 'p'},
	    {"persist", no_argument, NULL, 'P'},       {"follow", no_argument, NULL, 'F'},
	    {"no-junk", no_argument, NULL, 'J'},       {"no-startup", no_argument, NULL, 'N'},
	    {"by-hit", no_argument, NULL, 'B'},        {"json", required_argument, NULL, 'o'},
	    {"junit", required_argument, NULL, 'U'},   {"html", required_argument, NULL, 'H'},
	    {"lib", required_argument, NULL, 'L'},     {"help", no_argument, NULL, 'h'},
	    {"input", required_argument, NULL, 'i'},   {"version", no_argument, NULL, 'V'},
	    {"fail-on", required_argument, NULL, 'f'}, {"campaign", required_argument, NULL, 'c'},
	    {"state", required_argument, NULL, 'S'},   {NULL, 0, NULL, 0},
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:m:j:t:M:s:p:o:L:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			opt.mode = optarg;
			break;
		case 'j':
			opt.jobs = positive("-j", optarg);
			break;
		case 't':
			opt.timeout_s = positive("--timeout", optarg);
			break;
		case 'M':
			opt.max_runs = positive("--max-runs", optarg);
			break;
		case 'f':
			opt.fail_on = fail_on_arg(optarg);
			break;
		case 'i':
			if (!realpath(optarg, opt.input) || access(opt.input, R_OK) != 0)
				die(EXIT_USAGE, "--input %s: %s", optarg, strerror(errno));
			break;
		case 's':
			if (strcmp(optarg, "auto") == 0) {
				shard_auto();
				break;
			}
			opt.shard_from[0] = '\0';
			if (sscanf(optarg, "%d/%d", &opt.shard_k, &opt.shard_n) != 2 ||
			    opt.shard_n < 1 || opt.shard_k < 1 || opt.shard_k > opt.shard_n)
				die(EXIT_USAGE,
				    "--shard takes K/N with 1 <= K <= N, e.g. 2/4, or auto");
			break;
		case 'p':
			opt.policy = policy_arg(optarg);
			break;
		case 'P':
			opt.persist = true;
			break;
		case 'F':
			opt.follow = true;
			break;
		case 'J':
			opt.junk = false;
			break;
		case 'N':
			opt.startup = false;
			break;
		case 'B':
			opt.by_hit = true;
			break;
		case 'o':
			opt.json = optarg;
			break;
		case 'U':
			opt.junit = optarg;
			break;
		case 'H':
			opt.html = optarg;
			break;
		case 'L':
			*lib = optarg;
			break;
		case 'c':
			opt.campaign = optarg;
			break;
		case 'S':
			opt.state = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			return tool_version();
		default:
			return tool_bad_option(c, argv);
		}
	}
	if (strcmp(opt.mode, "sites") != 0 && strcmp(opt.mode, "nth") != 0)
		die(EXIT_USAGE, "--mode is sites or nth, not '%s'", opt.mode);
	if (opt.campaign && optind < argc)
		return tool_usage_error("--campaign takes its programs from %s, not '%s'",
		                        opt.campaign, argv[optind]);
	if (opt.campaign && opt.input[0])
		return tool_usage_error(
		    "--input with --campaign: each target has its own \"stdin\"");
	if (opt.state && !opt.campaign)
		return tool_usage_error("--state goes with --campaign FILE");
	if (opt.campaign && strcmp(opt.campaign, "-") == 0 && !opt.state)
		return tool_usage_error("--campaign - (the standard input) needs --state PATH");
	if (!opt.campaign && optind >= argc)
		return tool_usage_error("no program to sweep (gfp-sweep [options] -- PROG ARGS)");
	opt.argv = argv + optind;
	return -1;
}

/* Everything the runs need, checked before the first one: the shim, the
 * program, the reports' files, a directory for the runs' files. */
static void prepare(const char *lib)
{
	if (opt.jobs <= 0)
		opt.jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (opt.jobs <= 0)
		opt.jobs = 1;
	stop_init((size_t)opt.jobs + 1);
	/* From here a stop is a stop the sweep reports: it may be creating
	 * and removing files already (the reports' checks, its directory). */
	stop_on_signals();
	if (lib)
		snprintf(opt.lib, sizeof(opt.lib), "%s", lib);
	else if (!launch_find_library(opt.lib, sizeof(opt.lib))) {
		char why[4 * PATH_MAX];
		launch_library_missing(why, sizeof(why));
		die(EXIT_USAGE, "%s", why);
	}
	char why[PATH_MAX + 200];
	if (!launch_can_preload(opt.lib, why, sizeof(why)))
		die(EXIT_USAGE, "%s", why);
	int status = opt.campaign ? 0 : run_check_program(why, sizeof(why));
	if (status)
		die(status, "%s", why);

	/* The reports' files are checked before the runs, not after them,
	 * and made only once whole: an error meanwhile leaves none. */
	const char *outputs[] = {opt.json, opt.junit, opt.html};
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++)
		report_check(outputs[i]);

	run_make_tmp();
	atexit(run_remove_tmp);
}

/* The plan and its runs. */
static void plan_and_run(void)
{
	plan_make();
	console_header();
	execute_runs(0, NULL);
	if (strcmp(opt.mode, "nth") == 0 && !stop_requested())
		execute_runs(plan_missed_sites(), NULL);
}

int main(int argc, char **argv)
{
	const char *lib = NULL;
	sweep.started = sweep_now();
	sweep.wall_started = time(NULL);
	int status = parse_args(argc, argv, &lib);
	if (status >= 0)
		return status;
	prepare(lib);
	progress_init();
	if (opt.campaign)
		return campaign_run();

	progress_phase("recording run");
	recording_run();
	if (!stop_requested())
		plan_and_run();
	execute_keep_finished();

	size_t counts[O_COUNT] = {0};
	struct finding *fs = calloc(sweep.nruns + 1, sizeof(*fs));
	if (!fs)
		die(EXIT_USAGE, "out of memory");
	size_t nfs = confirm_findings(fs, counts);
	sweep.interrupted = stop_requested() != 0;
	if (sweep.interrupted)
		tool_error("stopped by SIG%s: the runs in flight were killed; the reports hold the "
		           "%zu runs of %zu that finished",
		           sigabbrev_np(stop_requested()), sweep.runs_done, sweep.runs_planned);
	console_results(fs, nfs, counts);
	if (opt.json)
		json_out_write(opt.json, fs, nfs, counts);
	if (opt.junit)
		junit_write(opt.junit, fs, nfs, counts);
	if (opt.html)
		html_write(opt.html, fs, nfs, counts);
	fflush(stdout);
	status = sweep.interrupted ? 128 + stop_requested() : findings_exit_status(fs, nfs);
	free(fs);
	return status;
}
