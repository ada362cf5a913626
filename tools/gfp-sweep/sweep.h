/*
 * sweep.h - what gfp-sweep's files share: the model (the options, what the
 * recording run counted, the runs and their outcomes: sweep.c) and each
 * file's functions, from the bottom up. A file calls only files above it
 * in this order, so that no two call each other:
 *
 *   sweep                            the model
 *   membuf markup report             text in memory, escaped; a report's file
 *   progress shard frames            the progress line, --shard auto, frames
 *   plan stop keeper run             the plan; stopping; a run's process
 *   loss classify hang               what a run's end means
 *   recording execute                the recording run; running the plan
 *   state caller findings            one finding per bug
 *   aborts reproducer words confirm  what the reports share; confirming
 *   console json-out junit html-*    the reports (html-*.h: the page's parts)
 *   targets journal campaign-out campaign    --campaign (targets.h, journal.h)
 *   main                             the options, and one sweep
 */
#ifndef GFP_SWEEP_H
#define GFP_SWEEP_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "frame.h"
#include "outfile.h"
#include "record_reader.h"
#include "tool.h" /* die() and the other messages */

#define EXIT_FINDINGS 1
#define EXIT_USAGE    2

/* ------------------------------------------------------------------------
 * sweep.c: the model
 * ---------------------------------------------------------------------- */

enum outcome { O_OK, O_SILENT, O_HANDLED, O_ABORT, O_CRASH, O_HANG, O_UNREACHED, O_COUNT };
extern const char *const outcome_name[O_COUNT];
/* What each outcome means, in the words every report, --help, the man page
 * and the README use (the README and the man page are tested to hold them
 * verbatim). */
extern const char *const outcome_help[O_COUNT];
static inline bool is_finding(enum outcome o)
{
	return o == O_SILENT || o == O_CRASH || o == O_HANG;
}

/* Where a silent run's output first left the recording run's (loss.c):
 * the byte offset, its line and column (1-based), both outputs' sizes and
 * the differing line of each, control bytes quoted. */
struct evidence {
	long long offset; /* -1: no evidence (the run is not silent) */
	long line, column;
	long long expected_bytes, actual_bytes;
	char expected[256], actual[256];
};

/* How a silent run's output lost data against the recording run's
 * (loss.c), and what it wrote to stderr that the plain runs did not.
 * The lines are quoted as struct evidence's; shape "" when the run is not
 * silent. */
struct loss {
	/* "no output", "output ends early", "lines lost", "lines added",
	 * "lines changed", or "same output" (only the exit status differs) */
	char shape[24];
	/* the first line missing from the output (lines lost or changed),
	 * the first line that took its place or was added */
	char missing[200], added[200];
	/* the first line of stderr the plain runs did not write, the shim's
	 * own lines left out; "" none: "silent, with a message" when set */
	char message[200];
};

struct run {
	char site[17];     /* sites mode: the site to fail */
	char inj_site[17]; /* the site that failed, from the injection record */
	uint64_t hit;      /* sites mode: which hit; nth mode: N */
	/* sites mode, a program that ran the same way twice: the hit's call
	 * number in the recording run (fail.site.call), 0 if none */
	uint64_t call;
	enum outcome outcome;
	int status, signal;
	char inj_frames[2048]; /* from the injection record */
	/* The crash's backtrace; a hang's, the stack the program waited in
	 * when the timeout came (hang.c), its first frame the pc. */
	char crash_frames[2048];
	char crash_top[160]; /* the crash site: top frame's module+offset */
	/* A fault (SEGV, BUS, FPE, ILL) the program's own handler caught and
	 * never left before the run ended badly: the crash's frames are the
	 * fault's. 0: none. */
	int fault;
	bool startup;       /* the failure was injected before main */
	bool count_startup; /* its policy has fail.startup=1: the recording run
	                     * counted calls before main at its site (nth mode:
	                     * anywhere) */
	pid_t pid;
	int idx; /* the index its files are named by (run_paths) */
	double started, seconds;
	long finding; /* its finding's index, -1 if it is no finding */
	bool done;    /* classified: it ran to its end (not killed by a stop) */
	struct evidence ev;
	struct loss loss;
};

/* What the user asked for, and what every run is given. */
struct sweep_opt {
	const char *mode, *policy, *json, *junit, *html;
	int jobs, timeout_s, max_runs, shard_k, shard_n;
	bool persist, follow, junk;
	bool startup;     /* failure points before main too (not --no-startup) */
	unsigned fail_on; /* --fail-on: the outcomes (1 << O_*) that make exit status 1 */
	bool by_hit;      /* --by-hit: never by call number */
	char **argv;
	char lib[PATH_MAX], tmp[512], input[PATH_MAX];
	/* --shard auto: the variables the part was taken from ("" else). */
	char shard_from[160];
	/* --campaign FILE and its journal, --state (NULL without a campaign). */
	const char *campaign, *state;
	/* A campaign target's environment, "NAME=VALUE", for reproducers. */
	char **env;
};
extern struct sweep_opt opt;

/* The sweep as it goes: what the recording run counted, the plan's runs
 * and how far they got. A campaign loads each target's into it in turn,
 * as a sweep of that target alone leaves it. */
struct sweep {
	double started;      /* sweep_now() when gfp-sweep started */
	time_t wall_started; /* for the reports' timestamps */
	/* The program as run, resolved; "" if it cannot be. */
	char prog_path[PATH_MAX];
	/* The recording run's sites (first: the eligible-call number of a
	 * site's first hit, 0 if unknown), its calls, its exit status. */
	struct rec_site *sites;
	size_t nsites;
	uint64_t eligible;
	int rec_status;
	double rec_seconds;
	bool unstable; /* two runs without injection wrote different output */
	/* Its two recordings counted the same hits at the same call numbers:
	 * runs fail a hit by its call number (fail.site.call), unwinding no
	 * other call. */
	bool by_call;
	/* The plan (plan.c). Stopped by a signal (Ctrl-C, SIGTERM): runs[0..
	 * nruns) are then the runs that finished, runs_done of the
	 * runs_planned. */
	struct run *runs;
	size_t nruns;
	bool interrupted;
	size_t runs_done, runs_planned;
};
extern struct sweep sweep;

/* Seconds on the monotonic clock: timeouts, progress, durations. */
double sweep_now(void);

/* What a run wrote to its standard output. */
struct output {
	char *text;
	size_t len;
};

/* One bug: the runs of one outcome with one key (findings.c) - a crash's
 * or a hang's state, a silent run's loss - whatever allocation failed. */
struct finding {
	size_t first;   /* index of the first run */
	size_t count;   /* its runs */
	size_t paths;   /* the distinct failed allocations (injection sites) */
	bool rerun;     /* its first run was re-run (not when the sweep was stopped) */
	bool confirmed; /* ... and gave the same outcome again */
	char key[1024]; /* a state of four whole C++ names fits */
};

/* One frame of a run's backtrace (a line of frames_of's output), taken
 * apart: sym is the recorded symbol, demangled and cut as the console
 * shows names ("" without one); src its source line
 * from its module's debug information, "func file:line" with the chain of
 * inlined callers ("inner a.c:3 < outer a.c:9"), or "". The rest is where
 * the module was and what it names, from frame.c, valid until gfp-sweep
 * exits: path and build_id NULL when unknown, func NULL and file NULL and
 * line 0 when unknown (func may come from the symbol table alone); inlined
 * the functions the code was inlined into, outermost last; info all of it
 * for frame.h's printing. */
struct frame {
	char sym[200], mod[128], off[32], src[600];
	const char *path, *build_id;
	const char *func, *file;
	int line;
	const struct sym_place *inlined;
	size_t ninlined;
	const struct frame_info *info;
};
/* Calls fn for each line of frames (frames_of's output); fr is NULL for a
 * line that is not a frame. The first frame of a crash is the faulting pc,
 * every other one a return address. */
typedef void frame_fn(void *ctx, const char *line, size_t len, const struct frame *fr);

/* ------------------------------------------------------------------------
 * Text in memory, escaped, and a report's file
 * ---------------------------------------------------------------------- */

/* membuf.c: formatted text goes through a memory stream: into JSON, a key,
 * or text that still needs escaping. */
struct membuf {
	char *buf;
	size_t len;
	FILE *f;
};
FILE *membuf_open(struct membuf *m);

/* markup.c: XML and HTML text for the JUnit and HTML reports. */
void markup_esc_n(FILE *f, const char *s, size_t n, bool attr);
void markup_esc(FILE *f, const char *s, bool attr);
/* A program's own text as markup_esc writes it, the controls of
 * text_hidden_control as U+FFFD too. */
void markup_program_text(FILE *f, const char *s);
/* Closes m and writes its text to f, escaped. */
void markup_flush(struct membuf *m, FILE *f, bool attr);

/* report.c: what the JUnit and HTML reports start with: the file, open for
 * writing (or exit 2), the number of findings, the sweep's start in
 * `stamp_fmt`, and this host's name ("" when unknown). */
struct report_head {
	FILE *f;
	struct outfile out;
	size_t findings;
	char stamp[64], host[256];
};
/* That a report can be written at path (NULL: none), or exit 2. */
void report_check(const char *path);
/* A report file (outfile.h): opened, or exit 2 with why; put in place
 * whole, or exit 2 with the old file left as it was. */
FILE *report_file(struct outfile *o, const char *path);
void report_done(struct outfile *o);
void report_open(struct report_head *h, const char *path, const size_t *counts,
                 const char *stamp_fmt);

/* ------------------------------------------------------------------------
 * The progress line, --shard auto, frames' lines
 * ---------------------------------------------------------------------- */

/* progress.c: a line on stderr while the sweep runs, at least every
 * GFP_SWEEP_PROGRESS_S seconds (10) when stderr is no terminal, one line
 * updated in place when it is one. */
void progress_init(void);
/* What the next progress_tick says: "recording run", ... */
void progress_phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void progress_tick(void);
/* eta: the seconds the rest should take, -1 when unknown. */
void progress_runs(size_t done, size_t total, size_t findings, double eta);
void progress_clear(void);
bool progress_on_line(void); /* async-signal-safe */

/* shard.c: --shard auto, from the job runner's environment (or exit 2). */
void shard_auto(void);

/* frames.c: the frames the records named, as lines "module\toffset\tsymbol\tN"
 * (N the module's number here: its path and build-id), taken apart and
 * named once per module+offset. */
const char *frames_prog_base(void);
/* The number the lines name a module by: one per name, path and build-id
 * (path and build_id NULL when the record has none). */
size_t frames_module_index(const char *name, const char *path, const char *build_id);
/* The path and build-id of module number n (NULL: unknown). */
void frames_module_of(size_t n, const char **path, const char **build_id);
void frames_each(const char *frames, bool crash, frame_fn *fn, void *ctx);
/* A frame_fn: the line as frame.h prints a frame, to the FILE ctx. */
void frames_print_line(void *ctx, const char *line, size_t len, const struct frame *fr);
/* The frames as printed, with source lines where the modules have them. */
void frames_print(const char *frames, bool crash);
/* frames as a JSON array of frame.h's objects. */
void frames_json(FILE *f, const char *frames, bool crash);
/* The frame of r's crash backtrace that is its crash_top; false if none. */
bool frames_crash_top(const struct run *r, struct frame *out);
/* "func file:line", "func (module+offset)", "fn@module+start (module+offset)"
 * (a stripped module's function by its CFI's start) or "module+offset". */
void frames_words(FILE *f, const struct frame *fr);

/* ------------------------------------------------------------------------
 * The plan, stopping, and a run's process and files
 * ---------------------------------------------------------------------- */

/* plan.c: the failure points to try, from what the recording run counted:
 * sites or nth mode, --max-runs, --shard. */
void plan_make(void);
/* nth mode, after the runs: one more run for each site the run at its first
 * call did not fail; returns where they start. */
size_t plan_missed_sites(void);
/* The failure point's keys of a run, as its reproducer gives them. */
void plan_policy(const struct run *r, char *out, size_t n);
/* plan_policy, and the hit's call number when the run may go by it
 * (sweep.by_call): what a run of the plan is given. Reproducers and the
 * confirmation of a finding count hits, as a user's run does. */
void plan_run_policy(const struct run *r, char *out, size_t n);
/* "hit" (sites mode) or "call" (nth mode): what r's number counts. */
const char *plan_point_kind(const struct run *r);

/* stop.c: a stop signal (Ctrl-C, SIGTERM, SIGHUP) kills the runs in flight,
 * by their keepers' pids, and lets the sweep report the runs that finished;
 * a second one ends it at once. */
/* Room to track the runs in flight: -j runs and one more. */
void stop_init(size_t n);
void stop_on_signals(void);
/* The signal that stopped the sweep, else 0: no run starts after it, and
 * the runs it killed are not done. */
int stop_requested(void);
/* The stop signals held (old: the mask before) while a run is forked and
 * tracked, or reaped and forgotten: a stop must neither miss a run nor
 * kill a pid that is no longer ours. */
void stop_hold(sigset_t *old);
void stop_release(const sigset_t *old);
/* pid tracked in replace's place (0: a free one), with the signals held. */
void stop_track(pid_t pid, pid_t replace);
/* waitpid, and the run forgotten once reaped. */
pid_t stop_reap(pid_t pid, int *st, int flags);

/* run.c: one run of the program, under a keeper (keeper.c) that ends it
 * and all it started, with its files in the sweep's directory. */
/* opt.argv's program resolved into sweep.prog_path: 0 if it can run under
 * the shim, else the exit status that says why it cannot, why in *why. */
int run_check_program(char *why, size_t n);
/* A new directory for the runs' files, removed however the sweep ends. */
void run_make_tmp(void);
void run_remove_tmp(void);
void run_paths(int idx, const char *what, char *out, size_t n);
/* A run's GFP_POLICY: the junk filling, --policy's keys, then point. */
void run_policy(const char *point, char *out, size_t n);
/* Starts the program with the extra policy under a keeper, whose pid it
 * returns; its files named after idx. */
pid_t run_spawn(int idx, const char *policy, bool recording);
/* A keeper of what start(arg) starts in it: its pid, tracked. */
pid_t run_start_keeper(void (*start)(void *), void *arg);
struct output run_read_output(int idx);
/* Waits for a run with a timeout; ends it on expiry or a stop. */
int run_wait(pid_t pid, double started, double timeout, bool *timed_out);
/* Ends a run that is still going: its keeper kills all it started. */
void run_end(pid_t keeper, int *st);
/* --timeout, else ten times the recording run's time, at least 2 s. */
double run_timeout(void);

/* ------------------------------------------------------------------------
 * What a run's end means
 * ---------------------------------------------------------------------- */

/* loss.c: a silent run's loss, from its output against the recording run's
 * and its stderr against the plain runs'. */
/* Where out first differs from exp; ev->offset -1 when they are the same. */
void loss_evidence(const struct output *exp, const struct output *out, struct evidence *ev);
/* How out lost data against exp. */
void loss_shape(const struct output *exp, const struct output *out, struct loss *l);
/* The first line of run idx's stderr that neither plain run (0 and -1)
 * wrote, numbers made alike. */
void loss_message(int idx, struct loss *l);
/* s with each run of digits as "#" and each run of blanks as one space,
 * trimmed: how keys compare lines. */
void loss_alike(char *out, size_t n, const char *s);
/* The silent key: "silent: SHAPE" with the skeletons of the first line
 * lost and of the one in its place, the exit status where it is not the
 * plain run's, the message with its numbers made alike; with display, the
 * run's own lines for people. */
void loss_key(FILE *f, const struct run *r, bool display);
/* A silent run's evidence and loss as objects; null for any other run. */
void loss_evidence_json(FILE *f, const struct evidence *ev);
void loss_json(FILE *f, const struct loss *l);

/* classify.c: a run's outcome from its exit, its output against the
 * recording run's (rec_out), and the shim's records. */
void classify_run(struct run *r, int idx, int st, bool timed_out, const struct output *rec_out);
/* Run idx wrote what the recording run wrote: byte for byte, NULs too. */
bool classify_same_output(int idx, const struct output *rec_out);

/* hang.c: the stack a hung run waits in, before it is killed: the thread
 * that made the failed call, as frames_of's lines; false without one. */
bool hang_stack(int idx, pid_t keeper, char *out, size_t n);

/* ------------------------------------------------------------------------
 * The recording run, and running the plan
 * ---------------------------------------------------------------------- */

/* recording.c: the program run without injection, twice: its sites and
 * calls into sweep, or exit 2 (or 125: the shim refused --policy). */
void recording_run(void);

/* execute.c: runs sweep.runs[from..nruns), -j at a time, or until a stop
 * signal; done(r) for each run finished (NULL: none). */
void execute_runs(size_t from, void (*done)(const struct run *r));
/* After the runs: only the finished ones kept, in plan order. */
void execute_keep_finished(void);

/* ------------------------------------------------------------------------
 * One finding per bug
 * ---------------------------------------------------------------------- */

/* state.c: a crash's or a hang's state: at most STATE_FRAMES names of
 * functions (module+offset without one), innermost first, each name's
 * physical frame, and whether it is outside libc and the tool's modules;
 * cut when it ends at the activation that made the failed call. */
#define STATE_FRAMES 4
struct state {
	size_t n;
	char name[STATE_FRAMES][200];
	struct frame frame[STATE_FRAMES];
	bool prog[STATE_FRAMES];
	bool cut;
};
/* false (st->n 0) for a run with no backtrace, or no crash or hang */
bool state_of(const struct run *r, struct state *st);
/* The state's names, "f < g < h": whole (a key's), or as the console cuts
 * them (shown). */
void state_text(FILE *f, const struct state *st, bool shown);
/* "SIGSEGV": the signal of a crash, a caught fault's where there was one. */
void state_signal(const struct run *r, char *out, size_t n);

/* caller.c: the failed allocation's caller: the first injection frame
 * outside the allocator and libc (the frame that called malloc), with its
 * function, source file (a full path when the debug information gives one)
 * and line (0: none known). */
struct caller {
	char func[200], file[300];
	long line;
	struct frame fr;
};
bool caller_of(const struct run *r, struct caller *c);
/* The allocator's and libc's modules: between the program's call and the
 * shim. */
bool caller_allocator(const char *mod);

/* findings.c: the runs of a sweep grouped into findings. */
/* What makes two finding runs one finding ("crash SIGSEGV in f < g < h",
 * "silent: lines lost, \"#. item\""), and the same with the first run's
 * own text for people. */
void findings_key(const struct run *r, char *out, size_t n);
void findings_title(FILE *f, const struct run *r);
/* The findings of sweep.runs, each run's in its .finding, the outcomes
 * counted into counts; fs has room for nruns. */
size_t findings_group(struct finding *fs, size_t *counts);
/* A finding's call paths: its runs by the failed allocation's site, in
 * the order of their first runs. *out to be freed. */
struct path {
	size_t first, count;
};
size_t findings_paths(size_t f, struct path **out);
/* keep for html_chart_points: run i is one of the path's (ctx). */
bool findings_in_path(size_t i, const void *ctx);
/* 1 when a finding's outcome is one of --fail-on's classes, else 0. */
int findings_exit_status(const struct finding *fs, size_t nfs);

/* ------------------------------------------------------------------------
 * What the reports share
 * ---------------------------------------------------------------------- */

/* aborts.c: the distinct places the program aborted (outcome abort), by
 * the frame that called abort() and the failed allocation it aborted for
 * (the first injection frame outside the allocator and that function: a
 * wrapper's caller), in the order of their first runs. */
struct abort_site {
	size_t first, count; /* its first run's index in runs[]; its runs */
	struct frame aborter, alloc;
	bool has_aborter, has_alloc; /* the frames are known */
};
/* *out to be freed; returns how many. */
size_t aborts_find(struct abort_site **out);

/* reproducer.c: a run's command, as the reports print it and run again. */
/* PROG ARGS (< INPUT) as a shell would take them back. */
void reproducer_command(FILE *f);
/* The policy a run had: the junk filling, --policy's, its failure point. */
void reproducer_policy(const struct run *r, char *out, size_t n);
/* The directory the runs ran in, "" when unknown. */
const char *reproducer_dir(void);
void reproducer_print(FILE *f, const struct run *r);
/* The reproducer as confirm.c runs it through bash: the same words, the
 * command exec'd (its signal is then the run's). */
void reproducer_exec(FILE *f, const struct run *r);

/* words.c: what every report says the same way of a run or a finding. */
/* "crash (signal 11 Segmentation fault)", a fault the program's handler
 * caught and how the run then ended, and "at start-up" before main. */
void words_outcome(FILE *f, const struct run *r);
/* "2 call paths, 5 runs" */
void words_counts(FILE *f, const struct finding *fd);
/* A call path by the failed allocation's caller: "make_title inventory.c:98". */
void words_path(FILE *f, const struct run *r);
/* "output differs at offset ...", then each side's line. */
void words_evidence(FILE *f, const struct evidence *ev, const char *indent);

/* confirm.c: findings_group, then each finding's first run's printed
 * reproducer run again from another directory (not once the sweep is
 * stopped): the same outcome again confirms it. */
size_t confirm_findings(struct finding *fs, size_t *counts);

/* ------------------------------------------------------------------------
 * The reports
 * ---------------------------------------------------------------------- */

/* console.c */
/* The line that says what the sweep is about to run. */
void console_header(void);
/* The outcomes, a line per finding, then each finding with its backtraces
 * and reproducers, then the abort sites. */
void console_results(const struct finding *fs, size_t nfs, const size_t *counts);

/* json-out.c */
/* The fields of one sweep's JSON object, without its braces. */
void json_out_fields(FILE *f, struct finding *fs, size_t nfs, const size_t *counts);
void json_out_write(const char *path, struct finding *fs, size_t nfs, const size_t *counts);

/* junit.c */
/* One <testsuite> of the runs: named after the program and classed by its
 * name, or after a campaign's target id. */
void junit_testsuite(FILE *f, const struct report_head *h, const struct finding *fs, size_t nfs,
                     const size_t *counts, const char *id);
void junit_write(const char *path, const struct finding *fs, size_t nfs, const size_t *counts);

/* html.c (html-*.h: its parts) */
void html_write(const char *path, const struct finding *fs, size_t nfs, const size_t *counts);

/* ------------------------------------------------------------------------
 * --campaign FILE: its targets (targets.h), the journal of its finished runs
 * (journal.h), each target swept in turn, and the reports of them all
 * ---------------------------------------------------------------------- */

struct target;

/* campaign-out.c */
/* --html's page of each target can be written (or exit 2), before the runs. */
void campaign_out_check_pages(const struct target *targets, size_t n);
/* The console result and the reports of targets[0..n), from the journal;
 * returns the campaign's exit status. */
int campaign_out_write(const struct target *targets, size_t n);

/* campaign.c: every target swept in turn with one -j, finished runs
 * journalled to --state; returns the exit status. */
int campaign_run(void);

#endif
