/* What a run's end means (tools/gfp-sweep/classify.c), from synthetic
 * runs: the shim's records, the run's output and its wait status, as a run
 * leaves them in the sweep's directory. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sweep.h"

#define EXITED(n) ((n) << 8)

static void put(int idx, const char *what, const char *text)
{
	char path[PATH_MAX + 16];
	run_paths(idx, what, path, sizeof(path));
	if (!text) {
		unlink(path);
		return;
	}
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

#define INJ(site, extra)                                                                           \
	"{\"event\":\"injection\",\"site\":\"" site "\",\"pid\":100,\"tid\":100" extra             \
	",\"frames\":[{\"module\":\"libgfpshim.so\",\"offset\":\"0x50\",\"symbol\":\"malloc\"},"   \
	"{\"module\":\"prog\",\"offset\":\"0x1234\",\"symbol\":\"load+0x10\"}]}\n"

static const struct output expected = {"one\ntwo\n", 8};

/* A run of idx with these records and this output, classified. */
static struct run classified(int idx, const char *rec, const char *out, int st, bool timed_out)
{
	put(idx, "rec", rec);
	put(idx, "out", out);
	put(idx, "err", "");
	struct run r;
	memset(&r, 0, sizeof(r));
	classify_run(&r, idx, st, timed_out, &expected);
	return r;
}

static void reached_or_not(void)
{
	struct run r = classified(1, NULL, "one\ntwo\n", EXITED(0), false);
	CHECK(r.outcome == O_UNREACHED && !r.inj_site[0]);
	r = classified(1, "{\"event\":\"start\"}\n", "", EXITED(0), true);
	CHECK(r.outcome == O_UNREACHED); /* a timeout before the failure point */
	r = classified(1, INJ("00ab12cd", ",\"startup\":true"), "", 9, true);
	CHECK(r.outcome == O_HANG);
	CHECK_STR(r.inj_site, "00ab12cd");
	CHECK(r.startup);
	CHECK(strstr(r.inj_frames, "prog\t0x1234\tload+0x10\t") != NULL);
	/* the site is its hex digits */
	r = classified(1, INJ("0badzz", ""), "one\ntwo\n", EXITED(0), false);
	CHECK_STR(r.inj_site, "0bad");
	CHECK(!r.startup);
}

static void by_exit_and_output(void)
{
	sweep.rec_status = 0;
	sweep.unstable = false;
	struct run r = classified(2, INJ("aa", ""), "one\ntwo\n", EXITED(0), false);
	CHECK(r.outcome == O_OK && r.ev.offset == -1 && !r.loss.shape[0]);
	CHECK(r.status == 0 && r.signal == 0);
	r = classified(2, INJ("aa", ""), "one\n", EXITED(3), false);
	CHECK(r.outcome == O_HANDLED && r.status == 3); /* it said so */
	r = classified(2, INJ("aa", ""), "one\n", EXITED(0), false);
	CHECK(r.outcome == O_SILENT && r.ev.offset == 4);
	CHECK_STR(r.loss.shape, "lines lost");
	CHECK_STR(r.loss.missing, "two");
	/* output that changes by itself says nothing */
	sweep.unstable = true;
	r = classified(2, INJ("aa", ""), "one\n", EXITED(0), false);
	CHECK(r.outcome == O_OK);
	sweep.unstable = false;
	/* success where the plain run failed: silent, whatever the output */
	sweep.rec_status = 1;
	r = classified(2, INJ("aa", ""), "one\ntwo\n", EXITED(0), false);
	CHECK(r.outcome == O_SILENT && r.ev.offset == -1);
	CHECK_STR(r.loss.shape, "same output");
	r = classified(2, INJ("aa", ""), "one\ntwo\n", EXITED(1), false);
	CHECK(r.outcome == O_OK);
	sweep.rec_status = 0;
}

#define CRASH(frames) "{\"event\":\"crash\",\"signal\":11,\"pid\":100,\"frames\":[" frames "]}\n"

static void by_signal(void)
{
	const char *rec = INJ("aa", "")
	    CRASH("{\"module\":\"libc.so.6\",\"offset\":\"0x10\",\"symbol\":\"strlen+0x5\"},"
	          "{\"module\":\"libgfpshim.so\",\"offset\":\"0x20\"},"
	          "{\"module\":\"prog\",\"offset\":\"0x30\",\"symbol\":\"show+0x4\"}");
	struct run r = classified(3, rec, "", SIGSEGV, false);
	CHECK(r.outcome == O_CRASH && r.signal == SIGSEGV && r.status == -1);
	CHECK_STR(r.crash_top, "prog+0x30 show+0x4"); /* past libc and the shim */
	CHECK(strncmp(r.crash_frames, "libc.so.6\t0x10\tstrlen+0x5\t", 25) == 0);
	/* an abort the program chose */
	r = classified(3, INJ("aa", "") CRASH("{\"module\":\"prog\",\"offset\":\"0x30\"}"), "",
	               SIGABRT, false);
	CHECK(r.outcome == O_ABORT);
	/* one a memory check raised: jemalloc's, or glibc's */
	r = classified(3,
	               INJ("aa", "") CRASH("{\"module\":\"libjemalloc.so.2\",\"offset\":\"0x9\"}"),
	               "", SIGABRT, false);
	CHECK(r.outcome == O_CRASH);
	r = classified(3,
	               INJ("aa", "") CRASH("{\"module\":\"libc.so.6\",\"offset\":\"0x9\","
	                                   "\"symbol\":\"__fortify_fail+0x12\"}"),
	               "", SIGABRT, false);
	CHECK(r.outcome == O_CRASH);
	/* no crash record: no frames, still a crash */
	r = classified(3, INJ("aa", ""), "", SIGBUS, false);
	CHECK(r.outcome == O_CRASH && !r.crash_frames[0] && !r.crash_top[0]);
}

#define CAUGHT(pid, seq, sig, code)                                                                \
	"{\"event\":\"caught\",\"pid\":" pid ",\"tid\":100,\"seq\":" seq ",\"signal\":" sig        \
	",\"code\":" code ",\"frames\":[{\"module\":\"prog\",\"offset\":\"0x77\"}]}\n"
#define LEFT(pid) "{\"event\":\"caught_left\",\"pid\":" pid ",\"tid\":100}\n"

/* A fault the program's own handler caught and never left decides a run
 * that ended badly: a crash, by the fault's signal and frames. */
static void by_a_caught_fault(void)
{
	struct run r =
	    classified(4, INJ("aa", "") CAUGHT("100", "5", "11", "1"), "", EXITED(1), false);
	CHECK(r.outcome == O_CRASH && r.fault == SIGSEGV && r.status == 1);
	CHECK_STR(r.crash_top, "prog+0x77");
	/* left again (returned, or jumped out): the program said it failed */
	r = classified(4, INJ("aa", "") CAUGHT("100", "5", "11", "1") LEFT("100"), "", EXITED(1),
	               false);
	CHECK(r.outcome == O_HANDLED && r.fault == 0);
	/* another process's fault, or a signal sent rather than a fault */
	r = classified(4, INJ("aa", "") CAUGHT("101", "5", "11", "1"), "", EXITED(1), false);
	CHECK(r.outcome == O_HANDLED);
	r = classified(4, INJ("aa", "") CAUGHT("100", "5", "11", "0"), "", EXITED(1), false);
	CHECK(r.outcome == O_HANDLED);
	/* an exit 0 is the program's word that it recovered */
	r = classified(4, INJ("aa", "") CAUGHT("100", "5", "11", "1"), "one\ntwo\n", EXITED(0),
	               false);
	CHECK(r.outcome == O_OK && r.fault == 0);
	/* nested: the outer one, still open, decides */
	r = classified(
	    4, INJ("aa", "") CAUGHT("100", "5", "7", "1") CAUGHT("100", "6", "11", "1") LEFT("100"),
	    "", EXITED(2), false);
	CHECK(r.outcome == O_CRASH && r.fault == SIGBUS);
}

static void same_output(void)
{
	put(5, "out", "one\ntwo\n");
	CHECK(classify_same_output(5, &expected));
	put(5, "out", "one\ntwo\n\n");
	CHECK(!classify_same_output(5, &expected));
	put(5, "out", "one\ntwO\n");
	CHECK(!classify_same_output(5, &expected));
}

int main(void)
{
	snprintf(opt.tmp, sizeof(opt.tmp), "/tmp/unit-classify.XXXXXX");
	CHECK(mkdtemp(opt.tmp) != NULL);
	put(0, "err", "");
	put(-1, "err", "");
	reached_or_not();
	by_exit_and_output();
	by_signal();
	by_a_caught_fault();
	same_output();
	run_remove_tmp();
	frame_close_all();
	return CHECK_DONE();
}
