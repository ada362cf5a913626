/*
 * classify.c - what a run's end means: its exit, its output against the
 * recording run's, and the shim's records (read through records.h).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common.h"
#include "record_reader.h"
#include "text.h"
#include "sweep.h"

const char *const outcome_name[O_COUNT] = {"ok",    "silent", "handled",  "abort",
                                           "crash", "hang",   "unreached"};

/* s without the tabs and newlines that split frames_of's lines. */
static void field(char *out, size_t n, const char *s)
{
	snprintf(out, n, "%s", s ? s : "");
	for (char *p = out; *p; p++)
		if (*p == '\t' || *p == '\n')
			*p = ' ';
}

/* Frames of one record as lines "module\toffset\tsymbol\tN", N the
 * module's number in frames.c (its path and build-id); *top gets the first
 * frame outside libc and the shim, the crash site. The limits are those of
 * struct run's fields. */
static void frames_of(const struct jval *rec, char *out, size_t n, char *top, size_t topn)
{
	out[0] = '\0';
	if (top)
		top[0] = '\0';
	size_t len = 0;
	for (size_t i = 0; i < rec_nframes(rec); i++) {
		struct rec_frame f;
		rec_frame(rec, i, &f);
		char mod[128], off[32], sym[160];
		field(mod, sizeof(mod), f.module);
		field(off, sizeof(off), f.offset);
		field(sym, sizeof(sym), f.symbol);
		int w = snprintf(out + len, n - len, "%s\t%s\t%s\t%zu\n", mod, off, sym,
		                 module_index(mod, f.path, f.build_id));
		if (w > 0 && (size_t)w < n - len)
			len += (size_t)w;
		/* A site longer than struct run keeps is cut, not an error. */
		if (top && !top[0] && strcmp(mod, "libc.so.6") != 0 && strcmp(mod, LIB_NAME) != 0 &&
		    snprintf(top, topn, "%s+%s%s%s", mod, off, *sym ? " " : "", sym) >= (int)topn)
			top[topn - 1] = '\0';
	}
}

/* An abort the program chose (xmalloc's "out of memory") rather than one
 * raised by a check that found memory corrupt: a frame in jemalloc or in
 * glibc's checks. */
static bool crash_is_memory(const struct jval *crash)
{
	static const char *const markers[] = {"libjemalloc",     "__assert_fail",
	                                      "__fortify_fail",  "__stack_chk_fail",
	                                      "malloc_printerr", "__libc_message"};
	for (size_t i = 0; crash && i < rec_nframes(crash); i++) {
		struct rec_frame f;
		rec_frame(crash, i, &f);
		for (size_t m = 0; m < sizeof(markers) / sizeof(markers[0]); m++)
			if ((f.module && strstr(f.module, markers[m])) ||
			    (f.symbol && strstr(f.symbol, markers[m])))
				return true;
	}
	return false;
}

/* Run idx wrote what the recording run wrote: byte for byte, NULs too. */
bool same_output(int idx, const struct output *rec_out)
{
	struct output out = read_output(idx);
	bool same = out.len == rec_out->len && memcmp(out.text, rec_out->text, out.len) == 0;
	free(out.text);
	return same;
}

void classify(struct run *r, int idx, int st, bool timed_out, const struct output *rec_out)
{
	char path[PATH_MAX + 16];
	run_paths(idx, "rec", path, sizeof(path));
	size_t len = 0;
	char *text = text_slurp(path, &len);
	struct jval inj_rec, crash_rec;
	bool inj = text && rec_find(text, len, "injection", &inj_rec);
	bool crash = text && rec_find(text, len, "crash", &crash_rec);
	if (inj) {
		frames_of(&inj_rec, r->inj_frames, sizeof(r->inj_frames), NULL, 0);
		const char *site = json_str(&inj_rec, "site");
		if (site && strspn(site, "0123456789abcdef"))
			snprintf(r->inj_site, sizeof(r->inj_site), "%.*s",
			         (int)strspn(site, "0123456789abcdef"), site);
	}
	if (crash)
		frames_of(&crash_rec, r->crash_frames, sizeof(r->crash_frames), r->crash_top,
		          sizeof(r->crash_top));
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	if (timed_out && inj)
		r->outcome = O_HANG;
	else if (!inj)
		r->outcome = O_UNREACHED; /* also a timeout before the failure point */
	else if (r->signal == SIGABRT && !crash_is_memory(crash ? &crash_rec : NULL))
		r->outcome = O_ABORT;
	else if (r->signal)
		r->outcome = O_CRASH;
	else if (r->status != opt.rec_status && r->status != 0)
		r->outcome = O_HANDLED; /* it said so */
	else if (opt.unstable)
		r->outcome = O_OK; /* silent losses are not looked for */
	else if (r->status != opt.rec_status)
		r->outcome = O_SILENT; /* success where the plain run failed */
	else
		r->outcome = same_output(idx, rec_out) ? O_OK : O_SILENT;
	if (inj)
		json_free(&inj_rec);
	if (crash)
		json_free(&crash_rec);
	free(text);
}
