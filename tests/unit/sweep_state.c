/* One finding per bug (tools/gfp-sweep/state.c, findings.c), from
 * synthetic backtraces: a crash's state is its top three functions once
 * the signal's delivery and the tool's own frames are left out, cut at the
 * activation that made the failed call; clones are their function; libc
 * alone gets the program's first frame; runs with one state are one
 * finding whatever allocation failed, each failed allocation a call path.
 * The modules are named so that no file of this machine is one of them:
 * the frames keep their recorded symbols. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sweep.h"

/* frames_of's lines, innermost first: "module offset symbol", space-split. */
static void frames(char *out, size_t n, const char *const *lines)
{
	size_t len = 0;
	out[0] = '\0';
	for (; *lines; lines++) {
		char mod[64], off[32], sym[128] = "";
		if (sscanf(*lines, "%63s %31s %127s", mod, off, sym) < 2)
			continue;
		len += (size_t)snprintf(out + len, n - len, "%s\t%s\t%s\t%zu\n", mod, off, sym,
		                        frames_module_index(mod, NULL, NULL));
	}
}

static struct run crash_run(enum outcome o, int sig, const char *site, const char *const *crash,
                            const char *const *inj)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	r.outcome = o;
	r.signal = sig;
	r.finding = -1;
	r.ev.offset = -1;
	snprintf(r.inj_site, sizeof(r.inj_site), "%s", site);
	frames(r.crash_frames, sizeof(r.crash_frames), crash);
	frames(r.inj_frames, sizeof(r.inj_frames), inj);
	return r;
}

static char *key(const struct run *r, bool title)
{
	static char out[2][1024];
	if (!title) {
		findings_key(r, out[0], sizeof(out[0]));
		return out[0];
	}
	struct membuf m;
	findings_title(membuf_open(&m), r);
	fclose(m.f);
	snprintf(out[1], sizeof(out[1]), "%s", m.buf);
	free(m.buf);
	return out[1];
}

/* The failed allocation, called from main's callee; the program's frames
 * under the shim. */
static const char *const inj_main[] = {"libgfpshim.so 0x50 malloc+0x5",
                                       "prog 0x5000 load_table+0x10", "prog 0x3000 main+0x50",
                                       "libc.so.7 0x400 __libc_start_main+0x80", NULL};

/* abort's delivery (pthread_kill, raise, abort) is left out; the state ends
 * below the activation that made the failed call: main, where both
 * backtraces meet. */
static void delivery_left_out_and_cut_at_the_call(void)
{
	const char *const crash[] = {"libc.so.7 0x100 __pthread_kill_implementation+0x10",
	                             "libc.so.7 0x200 raise+0x12",
	                             "libc.so.7 0x300 abort+0x20",
	                             "prog 0x1000 parse_line+0x30",
	                             "prog 0x2000 read_all+0x40",
	                             "prog 0x3000 main+0x50",
	                             "libc.so.7 0x400 __libc_start_main+0x80",
	                             NULL};
	struct run r = crash_run(O_CRASH, SIGABRT, "aa", crash, inj_main);
	struct state st;
	CHECK(state_of(&r, &st));
	CHECK(st.n == 2 && st.cut);
	CHECK_STR(st.name[0], "parse_line");
	CHECK(st.prog[0] && st.prog[1]);
	CHECK_STR(key(&r, false), "crash SIGABRT in parse_line < read_all");
	/* a caught fault is the crash's signal */
	r.fault = SIGSEGV;
	CHECK_STR(key(&r, false), "crash SIGSEGV in parse_line < read_all");
	/* with no frame in common, the top three */
	const char *const elsewhere[] = {"libgfpshim.so 0x50 malloc+0x5", "prog 0x9000 other+0x1",
	                                 NULL};
	struct run e = crash_run(O_CRASH, SIGABRT, "ab", crash, elsewhere);
	CHECK_STR(key(&e, false), "crash SIGABRT in parse_line < read_all < main");
	/* a run that did not crash has no state */
	r.outcome = O_HANDLED;
	CHECK(!state_of(&r, &st) && st.n == 0);
	CHECK_STR(key(&r, false), "handled");
}

/* libc's frames count, but three of them alone would make one finding of
 * every bug that passed libc a NULL: the program's first frame follows,
 * a clone (.constprop.0) named as its function. */
static void libc_alone_takes_the_programs_frame(void)
{
	const char *const crash[] = {"libc.so.7 0x111 __strlen_avx2+0x11",
	                             "libc.so.7 0x222 __vfprintf_internal+0x22",
	                             "libc.so.7 0x333 printf+0x33",
	                             "prog 0x1000 report.constprop.0+0x10",
	                             "prog 0x3100 main+0x90",
	                             NULL};
	const char *const inj[] = {"libgfpshim.so 0x50 malloc+0x5", "prog 0x7000 start+0x1", NULL};
	struct run r = crash_run(O_CRASH, SIGSEGV, "bb", crash, inj);
	struct state st;
	CHECK(state_of(&r, &st));
	CHECK(st.n == 4 && !st.cut);
	CHECK(!st.prog[0] && st.prog[3]);
	CHECK_STR(key(&r, false), "crash SIGSEGV in __strlen_avx2 < __vfprintf_internal < printf "
	                          "< report");
	/* another clone of the same function, at another offset: one key */
	const char *const other[] = {"libc.so.7 0x111 __strlen_avx2+0x11",
	                             "libc.so.7 0x222 __vfprintf_internal+0x22",
	                             "libc.so.7 0x333 printf+0x33",
	                             "prog 0x1800 report.isra.0+0x80",
	                             "prog 0x3100 main+0x90",
	                             NULL};
	struct run o = crash_run(O_CRASH, SIGSEGV, "cc", other, inj);
	CHECK_STR(key(&o, false), "crash SIGSEGV in __strlen_avx2 < __vfprintf_internal < printf "
	                          "< report");
}

/* A crash inside the allocator (a bad free) keeps the allocator's entry
 * point the program called, and leaves the rest of the tool's frames out. */
static void allocator_crash_keeps_its_entry_point(void)
{
	const char *const crash[] = {"libjemalloc.so.9 0x500 je_free_default+0x10",
	                             "libunwind.so.99 0x700 _ULx86_64_step+0x1",
	                             "libgfpshim.so 0x600 free+0x20",
	                             "prog 0x1000 cleanup+0x10",
	                             "prog 0x3000 main+0x50",
	                             NULL};
	const char *const inj[] = {"libgfpshim.so 0x50 malloc+0x5", "prog 0x9000 other+0x1", NULL};
	struct run r = crash_run(O_CRASH, SIGSEGV, "dd", crash, inj);
	struct state st;
	CHECK(state_of(&r, &st));
	CHECK_STR(key(&r, false), "crash SIGSEGV in free < cleanup < main");
	CHECK(st.n == 3 && !st.prog[0] && st.prog[1]);
}

/* An xmalloc whose failure handler crashed: the wrapper is the activation
 * that made the failed call, so whoever called it is the same bug. */
static void a_wrappers_failure_is_one_bug(void)
{
	const char *const crash1[] = {"prog 0x1100 xmalloc+0x30", "prog 0x2000 load+0x10",
	                              "prog 0x3000 main+0x50", NULL};
	const char *const inj1[] = {"libgfpshim.so 0x50 malloc+0x5", "prog 0x1050 xmalloc+0x10",
	                            "prog 0x2000 load+0x10", "prog 0x3000 main+0x50", NULL};
	const char *const crash2[] = {"prog 0x1100 xmalloc+0x30", "prog 0x2400 save+0x18",
	                              "prog 0x3010 main+0x60", NULL};
	const char *const inj2[] = {"libgfpshim.so 0x50 malloc+0x5", "prog 0x1050 xmalloc+0x10",
	                            "prog 0x2400 save+0x18", "prog 0x3010 main+0x60", NULL};
	struct run a = crash_run(O_CRASH, SIGSEGV, "e1", crash1, inj1);
	struct run b = crash_run(O_CRASH, SIGSEGV, "e2", crash2, inj2);
	CHECK_STR(key(&a, false), "crash SIGSEGV in xmalloc");
	CHECK_STR(key(&b, false), "crash SIGSEGV in xmalloc");
	/* a crash past the call, in a function load called later: that
	 * function, not load, which made the call */
	const char *const crash3[] = {"prog 0x8000 use_it+0x3", "prog 0x2000 load+0x10",
	                              "prog 0x3000 main+0x50", NULL};
	struct run c = crash_run(O_CRASH, SIGSEGV, "e1", crash3, inj1);
	CHECK_STR(key(&c, false), "crash SIGSEGV in use_it");
}

/* A hang is keyed by the stack it waited in, read as a crash's. */
static void hang_by_where_it_waits(void)
{
	const char *const waits[] = {"libc.so.7 0x10 __futex_abstimed_wait_common+0x1",
	                             "libc.so.7 0x20 pthread_cond_wait+0x2",
	                             "prog 0x30 summarise+0x3", "prog 0x40 main+0x4", NULL};
	struct run r = crash_run(O_HANG, SIGKILL, "ff", waits, inj_main);
	CHECK_STR(key(&r, false),
	          "hang in __futex_abstimed_wait_common < pthread_cond_wait < summarise");
}

/* Without a backtrace there is nothing to tell bugs apart by: one finding
 * per failed allocation, its caller and site. */
static void no_backtrace_keys_by_the_allocation(void)
{
	const char *const none[] = {NULL};
	struct run r = crash_run(O_CRASH, SIGSEGV, "0123456789abcdef", none, inj_main);
	CHECK_STR(key(&r, false), "crash SIGSEGV, no backtrace, after the failure in "
	                          "load_table+0x10 (prog+0x5000) (site 0123456789abcdef)");
}

/* C++ names demangled, their offsets and clones' suffixes left out; the
 * title reads as the key does. */
static void cxx_names_demangled(void)
{
	const char *const crash[] = {"prog 0x1000 _ZN2ns5Shelf5stockEi+0x1c",
	                             "prog 0x1800 _ZN2ns5Shelf5stockEi.cold+0x4",
	                             "prog 0x3000 main+0x50", NULL};
	const char *const inj[] = {"libgfpshim.so 0x50 malloc+0x5", "prog 0x9000 other+0x1", NULL};
	struct run r = crash_run(O_CRASH, SIGSEGV, "ab", crash, inj);
	CHECK_STR(key(&r, false), "crash SIGSEGV in ns::Shelf::stock(int) < "
	                          "ns::Shelf::stock(int) < main");
	CHECK_STR(key(&r, true), key(&r, false));
}

/* Runs grouped: one finding per key, its runs counted, each distinct
 * failed allocation a call path in the order of its first run; the
 * outcomes counted; --fail-on's classes make the exit status. */
static void runs_group_into_findings(void)
{
	const char *const crash[] = {"prog 0x1000 parse_line+0x30", "prog 0x2000 read_all+0x40",
	                             "prog 0x3000 main+0x50",
	                             "libc.so.7 0x400 __libc_start_main+0x80", NULL};
	struct run rs[7];
	rs[0] = crash_run(O_OK, 0, "s0", (const char *const[]){NULL}, inj_main);
	rs[1] = crash_run(O_CRASH, SIGSEGV, "s1", crash, inj_main);
	rs[2] = crash_run(O_CRASH, SIGSEGV, "s2", crash, inj_main);
	rs[3] = crash_run(O_CRASH, SIGSEGV, "s1", crash, inj_main);
	rs[4] = crash_run(O_SILENT, 0, "s3", (const char *const[]){NULL}, inj_main);
	snprintf(rs[4].loss.shape, sizeof(rs[4].loss.shape), "lines lost");
	snprintf(rs[4].loss.missing, sizeof(rs[4].loss.missing), "3. pears");
	rs[5] = rs[4];
	snprintf(rs[5].loss.missing, sizeof(rs[5].loss.missing), "12. apples");
	rs[6] = crash_run(O_ABORT, SIGABRT, "s4", (const char *const[]){NULL}, inj_main);
	sweep.runs = rs;
	sweep.nruns = 7;
	struct finding fs[8];
	size_t counts[O_COUNT] = {0};
	size_t n = findings_group(fs, counts);
	CHECK(n == 2);
	CHECK(counts[O_OK] == 1 && counts[O_CRASH] == 3 && counts[O_SILENT] == 2 &&
	      counts[O_ABORT] == 1);
	CHECK(fs[0].first == 1 && fs[0].count == 3 && fs[0].paths == 2);
	CHECK(fs[1].first == 4 && fs[1].count == 2 && fs[1].paths == 1);
	CHECK_STR(fs[1].key, "silent: lines lost, \"w. w\"");
	CHECK(rs[0].finding == -1 && rs[3].finding == 0 && rs[5].finding == 1 &&
	      rs[6].finding == -1);
	struct path *p;
	CHECK(findings_paths(0, &p) == 2);
	CHECK(p[0].first == 1 && p[0].count == 2 && p[1].first == 2 && p[1].count == 1);
	CHECK(findings_in_path(3, &p[0]) && !findings_in_path(2, &p[0]));
	free(p);
	opt.fail_on = 1u << O_HANG;
	CHECK(findings_exit_status(fs, n) == 0);
	opt.fail_on = 1u << O_SILENT;
	CHECK(findings_exit_status(fs, n) == EXIT_FINDINGS);
	sweep.runs = NULL;
	sweep.nruns = 0;
}

int main(void)
{
	/* "." is a directory modules are looked for in: an empty one */
	char dir[] = "/tmp/unit-state.XXXXXX";
	CHECK(mkdtemp(dir) && chdir(dir) == 0);
	delivery_left_out_and_cut_at_the_call();
	libc_alone_takes_the_programs_frame();
	allocator_crash_keeps_its_entry_point();
	a_wrappers_failure_is_one_bug();
	hang_by_where_it_waits();
	no_backtrace_keys_by_the_allocation();
	cxx_names_demangled();
	runs_group_into_findings();
	frame_close_all();
	rmdir(dir);
	return CHECK_DONE();
}
