/*
 * sweep.h - what gfp-sweep's files share: the options, the runs and their
 * outcomes, the recording run's sites, and each file's functions.
 */
#ifndef GFP_SWEEP_H
#define GFP_SWEEP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "tool.h" /* die() and the other messages */
#include "frame.h"
#include "outfile.h"
#include "record_reader.h"

#define EXIT_FINDINGS 1
#define EXIT_USAGE    2

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

/* Where a silent run's output first left the recording run's (classify.c):
 * the byte offset, its line and column (1-based), both outputs' sizes and
 * the differing line of each, control bytes quoted. */
struct evidence {
	long long offset; /* -1: no evidence (the run is not silent) */
	long line, column;
	long long expected_bytes, actual_bytes;
	char expected[256], actual[256];
};

/* How a silent run's output lost data against the recording run's
 * (classify.c), and what it wrote to stderr that the plain runs did not.
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

struct sweep_opt {
	const char *mode, *policy, *json, *junit, *html;
	int jobs, timeout_s, max_runs, shard_k, shard_n;
	bool persist, follow, junk;
	bool startup;     /* failure points before main too (not --no-startup) */
	unsigned fail_on; /* --fail-on: the outcomes (1 << O_*) that make exit status 1 */
	char **argv;
	char lib[PATH_MAX], tmp[512], input[PATH_MAX];
	int rec_status; /* the recording run's exit status */
	bool unstable;  /* two runs without injection wrote different output */
	/* Its two recordings counted the same hits at the same call numbers:
	 * runs fail a hit by its call number (fail.site.call), unwinding no
	 * other call. */
	bool by_call;
	bool by_hit; /* --by-hit: never by call number */
	double rec_seconds, started;
	time_t wall_started; /* for the reports' timestamps */
	/* Stopped by a signal (Ctrl-C, SIGTERM): runs[0..nruns) are then the
	 * runs that finished, runs_done of the runs_planned. */
	bool interrupted;
	size_t runs_done, runs_planned;
	/* --shard auto: the variables the part was taken from ("" else). */
	char shard_from[160];
	/* --campaign FILE and its journal, --state (NULL without a campaign). */
	const char *campaign, *state;
	/* A campaign target's environment, "NAME=VALUE", for reproducers. */
	char **env;
};
extern struct sweep_opt opt;

/* The plan (plan.c) and the recording run's sites (first: the
 * eligible-call number of a site's first hit, 0 if unknown). */
extern struct run *runs;
extern size_t nruns;
extern struct rec_site *sites;
extern size_t nsites;
extern uint64_t eligible;
/* The program as run, resolved; "" if it cannot be. */
extern char prog_path[PATH_MAX];

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

/* Formatted text goes through a memory stream: into JSON, or text that
 * still needs escaping. */
struct membuf {
	char *buf;
	size_t len;
	FILE *f;
};

/* What the JUnit and HTML reports start with: the file, open for writing
 * (or exit 2), the number of findings, the sweep's start in `stamp_fmt`, and
 * this host's name ("" when unknown). */
struct report_head {
	FILE *f;
	struct outfile out;
	size_t findings;
	char stamp[64], host[256];
};

/* run.c */
/* Room to track the runs in flight: -j runs and one more. */
void run_track_init(size_t n);
double now(void);
void remove_tmp(void);
void stop_on_signals(void);
/* The signal that stopped the sweep (Ctrl-C, SIGTERM, SIGHUP), else 0: no
 * run starts after it, and the runs it killed are not done. */
int stop_requested(void);
void run_paths(int idx, const char *what, char *out, size_t n);
void run_policy(const char *point, char *out, size_t n);
pid_t spawn(int idx, const char *policy, bool recording);
struct output read_output(int idx);
int wait_run(pid_t pid, double started, double timeout, bool *timed_out);
double run_timeout(void);
void execute(size_t from);
/* Called by execute for each run it finished (campaign.c journals it). */
extern void (*run_done_hook)(const struct run *r);
void keep_finished_runs(void);
bool confirm(const struct run *r, int idx);

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

/* frames.c */
const char *prog_base(void);
/* The number frames_of writes for a module: one per name, path and
 * build-id (path and build_id NULL when the record has none). */
size_t module_index(const char *name, const char *path, const char *build_id);
void each_frame(const char *frames, bool crash, frame_fn *fn, void *ctx);
void print_frame(void *ctx, const char *line, size_t len, const struct frame *fr);
/* The frame of r's crash backtrace that is its crash_top; false if none. */
bool crash_top_frame(const struct run *r, struct frame *out);
void print_crash_top(const struct run *r);
/* fr is the crash site top (struct run's crash_top, "module+offset symbol"). */
bool frame_is_top(const struct frame *fr, const char *top);
void print_frames(const char *frames, bool crash);
/* frames as a JSON array of frame.h's objects. */
void frames_json(FILE *f, const char *frames, bool crash);

/* hang.c: the stack a hung run waits in, before it is killed: the thread
 * that made the failed call, as frames_of's lines; false without one. */
bool hang_stack(int idx, pid_t keeper, char *out, size_t n);

/* classify.c */

bool same_output(int idx, const struct output *rec_out);
void classify(struct run *r, int idx, int st, bool timed_out, const struct output *rec_out);

/* plan.c */
void record(void);
void plan(void);
size_t plan_missed_sites(void);
void policy_of(const struct run *r, char *out, size_t n);
/* policy_of, and the hit's call number when the run may go by it
 * (opt.by_call): what a run of the plan is given. Reproducers and the
 * confirmation of a finding count hits, as a user's run does. */
void run_policy_of(const struct run *r, char *out, size_t n);

/* The failed allocation's caller: the first injection frame outside the
 * allocator and libc (the frame that called malloc), with its function,
 * source file (a full path when the debug information gives one) and line
 * (0: none known). */
struct caller {
	char func[200], file[300];
	long line;
	struct frame fr;
};

/* console.c */
/* The allocator's and libc's modules: between the program's call and the shim. */
bool allocator_module(const char *mod);
/* "crash (signal 11 Segmentation fault)", a fault the program's handler
 * caught and how the run then ended, and "at start-up" before main. */
void outcome_words(FILE *f, const struct run *r);
bool run_caller(const struct run *r, struct caller *c);
void print_evidence(FILE *f, const struct evidence *ev, const char *indent);
void command_line(FILE *f);
void full_policy(const struct run *r, char *out, size_t n);
void reproducer(FILE *f, const struct run *r);
/* The reproducer as confirm() runs it through bash: the same words, the
 * command exec'd (its signal is then the run's); run_dir() is the
 * directory of the runs, "" when unknown. */
void reproducer_exec(FILE *f, const struct run *r);
const char *run_dir(void);
void print_results(const struct finding *fs, size_t nfs, const size_t *counts);
/* "2 call paths, 5 runs" */
void finding_counts(FILE *f, const struct finding *fd);
/* A call path by the failed allocation's caller: "make_title inventory.c:98". */
void path_words(FILE *f, const struct run *r);

/* findings.c */
/* libc and ld.so: a state's frames there are no program frames. */
bool libc_module(const char *mod);
/* A crash's or a hang's state: at most STATE_FRAMES names of functions
 * (module+offset without one), innermost first, each name's physical frame,
 * and whether it is outside libc and the tool's modules; cut when it ends at
 * the activation that made the failed call. */
#define STATE_FRAMES 4
struct state {
	size_t n;
	char name[STATE_FRAMES][200];
	struct frame frame[STATE_FRAMES];
	bool prog[STATE_FRAMES];
	bool cut;
};
/* false (st->n 0) for a run with no backtrace, or no crash or hang */
bool run_state(const struct run *r, struct state *st);
/* The state's names, "f < g < h": whole (a key's), or as the console cuts
 * them (shown). */
void state_text(FILE *f, const struct state *st, bool shown);
/* s with each run of digits as "#" and each run of blanks as one space,
 * trimmed: how keys compare lines. */
void alike_text(char *out, size_t n, const char *s);
/* "SIGSEGV", from a caught fault where there was one. */
void crash_signal(const struct run *r, char *out, size_t n);
/* What makes two finding runs one finding ("crash SIGSEGV in f < g < h",
 * "silent: lines lost, \"#. item\""), and the same with the first run's
 * own text for people. */
void finding_key(const struct run *r, char *out, size_t n);
void finding_title(FILE *f, const struct run *r);
/* The findings of runs[], each run's in its .finding, the outcomes counted
 * into counts; fs has room for nruns. group_runs also re-runs the first run
 * of each to confirm it. */
size_t find_findings(struct finding *fs, size_t *counts);
size_t group_runs(struct finding *fs, size_t *counts);
/* A finding's call paths: its runs by the failed allocation's site, in
 * the order of their first runs. *out to be freed. */
struct path {
	size_t first, count;
};
size_t finding_paths(size_t f, struct path **out);
/* keep for html_points: run i is one of the path's (ctx). */
bool run_in_path(size_t i, const void *ctx);

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
size_t abort_sites(struct abort_site **out);
/* "func file:line", "func (module+offset)" or "module+offset". */
void frame_words(FILE *f, const struct frame *fr);
void print_abort_sites(void);
/* A JSON array: {"count","first_run","crash_site","aborter","allocation",
 * "reproducer"}, the frames as frame.h's objects or null. */
void abort_sites_json(FILE *f);

/* markup.c */
FILE *mem_open(struct membuf *m);
void esc_n(FILE *f, const char *s, size_t n, bool attr);
void esc(FILE *f, const char *s, bool attr);
/* A program's own text as esc writes it, those controls as U+FFFD too. */
void esc_program_text(FILE *f, const char *s);
void mem_flush(struct membuf *m, FILE *f, bool attr);
const char *point_kind(const struct run *r);
/* A report file (outfile.h): opened, or exit 2 with why; put in place
 * whole, or exit 2 with the old file left as it was. */
FILE *report_file(struct outfile *o, const char *path);
/* main.c: that a report can be written at path (NULL: none), or exit 2. */
void report_check(const char *path);
void report_done(struct outfile *o);
void report_open(struct report_head *h, const char *path, const size_t *counts,
                 const char *stamp_fmt);

/* json-out.c */
/* A silent run's evidence as an object; null for any other run. */
void json_evidence(FILE *f, const struct evidence *ev);
/* A silent run's loss as an object; null for any other run. */
void json_loss(FILE *f, const struct loss *l);
/* The fields of one sweep's JSON object, without its braces. */
void json_sweep_fields(FILE *f, struct finding *fs, size_t nfs, const size_t *counts);
void write_json(const char *path, struct finding *fs, size_t nfs, const size_t *counts);

/* junit.c */
/* One <testsuite> of the runs: named after the program and classed by its
 * name, or after a campaign's target id. */
void junit_testsuite(FILE *f, const struct report_head *h, const struct finding *fs, size_t nfs,
                     const size_t *counts, const char *id);
void write_junit(const char *path, const struct finding *fs, size_t nfs, const size_t *counts);

/* html.c */
void write_html(const char *path, const struct finding *fs, size_t nfs, const size_t *counts);

/* frames.c: the path and build-id of module number n (NULL: unknown). */
void module_of(size_t n, const char **path, const char **build_id);

/* main.c: what a campaign shares with one sweep. */
int program_check(char *why, size_t n);
void make_tmp(void);
void sweep_header(void);
int exit_status(const struct finding *fs, size_t nfs);

/* shard.c: --shard auto, from the job runner's environment (or exit 2). */
void shard_auto(void);

/* campaign.c: --campaign FILE, every target swept in turn with one -j,
 * finished runs journalled to --state; returns the exit status. */
int campaign_main(void);

/* One target of a campaign: id, argv, stdin (absolute path, "" for
 * /dev/null), env ("NAME=VALUE"), the plain run's expected exit status, and
 * what became of it: "done", "interrupted", "not_run" or "error" (error:
 * why). */
struct target {
	char *id, **argv, *input, **env;
	int status;
	const char *state;
	char *error;
};
/* The reports' loop over the targets (campaign-out.c): each target's
 * results loaded into the globals above (opt.argv, runs, nruns, eligible,
 * ...) as after a sweep of it alone, then fn with its findings and counts. */
typedef void target_fn(void *ctx, const struct target *t, struct finding *fs, size_t nfs,
                       const size_t *counts);
void campaign_each_target(target_fn *fn, void *ctx);
/* The console result and the reports of targets[0..n), from the journal;
 * returns the campaign's exit status. */
int campaign_report(const struct target *targets, size_t n);
/* --html's page of each target can be written (or exit 2), before the runs. */
void campaign_check_pages(const struct target *targets, size_t n);

#endif
