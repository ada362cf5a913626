/*
 * journal.c - a campaign's --state file: what it has done, one JSON line per
 * fact, appended with one write(2) each, so that a campaign stopped at any
 * point (Ctrl-C, SIGKILL, a node lost) goes on from its last finished run.
 *
 *   {"gfp_sweep_state":V,"mode":..,...}        the options, first line
 *   {"t":ID,"target":{"key":..,"eligible":..}}  a target's recording run
 *   {"t":ID,"run":POS,"site":..,...}            a run finished, its plan position
 *   {"t":ID,"done":{"findings":[..],"run_finding":[..]}}  its runs done, confirmed
 *   {"t":ID,"error":"why","key":..}             a target that could not be swept
 *                                               ("fatal": its recording run ended
 *                                               gfp-sweep; not tried again)
 *
 * A target's last "target" or "error" line starts what counts of it: a
 * target changed since (its key), or recorded differently, starts anew.
 * It never decides what to run: campaign.c asks it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "infile.h"
#include "text.h"
#include "gfp_build.h"
#include "journal.h"

static int fd = -1;
static const char *path;
static struct jval *lines;
static size_t nlines, cap;
static struct segment *segs;
static const struct target *targets;
static size_t ntargets;

const struct segment *journal_segment(size_t t)
{
	return &segs[t];
}

/* Indexes a parsed line under its target (a target the campaign file no
 * longer has is left out). */
static void index_line(const struct jval *v)
{
	const char *id = json_str(v, "t");
	size_t t = 0;
	while (id && t < ntargets && strcmp(targets[t].id, id) != 0)
		t++;
	if (!id || t == ntargets)
		return;
	struct segment *s = &segs[t];
	if (json_get(v, "target") || json_get(v, "error")) {
		s->nruns = 0;
		s->done = NULL;
		s->target = json_get(v, "target");
		s->error = json_str(v, "error");
		s->key = s->target ? json_str(s->target, "key") : json_str(v, "key");
		s->fatal = json_get(v, "fatal") != NULL;
	} else if (json_get(v, "done"))
		s->done = json_get(v, "done");
	else if (json_get(v, "run") && s->target) {
		if (s->nruns == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 64;
			s->runs = xrealloc(s->runs, s->cap * sizeof(*s->runs));
		}
		s->runs[s->nruns++] = v;
	}
}

/* Keeps one line; lines[] holds them all until the campaign ends (the
 * segments point into it, so it grows by blocks that never move). */
static const struct jval *keep(struct jval *v)
{
	if (nlines == cap) { /* a new block; the full one stays where it is */
		cap = 4096;
		lines = xrealloc(NULL, cap * sizeof(*lines));
		nlines = 0;
	}
	lines[nlines] = *v;
	return &lines[nlines++];
}

static void header(FILE *f)
{
	fprintf(f, "{\"gfp_sweep_state\":\"%s\",\"mode\":\"%s\",\"max_runs\":%d,", GFP_VERSION,
	        opt.mode, opt.max_runs);
	fprintf(f, "\"persist\":%s,\"follow\":%s,\"junk\":%s,\"startup\":%s,\"policy\":",
	        opt.persist ? "true" : "false", opt.follow ? "true" : "false",
	        opt.junk ? "true" : "false", opt.startup ? "true" : "false");
	text_json_str(f, opt.policy ? opt.policy : "");
	fprintf(f, ",\"shard\":\"%d/%d\"}", opt.shard_k, opt.shard_n);
}

/* The options a state was written with must be these: its runs are their
 * failure points. -j and --timeout may change. */
static void check_header(const struct jval *v)
{
	struct membuf m;
	header(membuf_open(&m));
	fclose(m.f);
	struct jval now;
	char err[128];
	if (!json_parse(m.buf, m.len, 1, &now, err, sizeof(err)))
		die(EXIT_USAGE, "the state header: %s", err);
	for (size_t i = 0; i < now.n; i++) {
		if (strcmp(now.k[i], "gfp_sweep_state") == 0)
			continue;
		const struct jval *was = json_get(v, now.k[i]);
		if (!was || !json_equal(was, &now.v[i]))
			die(EXIT_USAGE,
			    "%s was written by a campaign with other options (%s was %s, is %s "
			    "now): "
			    "give the same options to go on from it, or remove it to start again",
			    path, now.k[i],
			    was ? json_text(was) ? json_text(was) : "other" : "unset",
			    json_text(&now.v[i]) ? json_text(&now.v[i]) : "other");
	}
	json_free(&now);
	free(m.buf);
}

/* Appends one line with one write: a line is whole or absent. */
static void append(const char *text, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die(EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
		done += (size_t)w;
	}
}

void journal_open(const char *state, const struct target *ts, size_t n)
{
	path = state;
	targets = ts;
	ntargets = n;
	segs = xrealloc(NULL, (n + 1) * sizeof(*segs));
	memset(segs, 0, (n + 1) * sizeof(*segs));
	/* Appended to line by line, it cannot be renamed into place as a
	 * report is: it is opened once, never through a symlink, and only as
	 * a file of its own (outfile.h), then read through the same
	 * descriptor. */
	char why[PATH_MAX + 200];
	fd = outfile_append_open(path, why, sizeof(why));
	if (fd < 0)
		die(EXIT_USAGE, "cannot write %s: %s (--state PATH chooses another file)", path,
		    why);
	size_t len = 0;
	char *text = infile_read_fd(fd, &len);
	if (!text)
		die(EXIT_USAGE, "cannot read %s: %s", path, strerror(errno));
	size_t lineno = 0, bad = 0;
	for (char *line = text; line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t l = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		struct jval v;
		char err[128];
		lineno++;
		bool ok = json_parse(line, l, (int)lineno, &v, err, sizeof(err));
		/* Its first line was written whole (one write(2) into an empty
		 * file): a file that starts otherwise is someone else's. */
		if (lineno == 1 && (!ok || !json_get(&v, "gfp_sweep_state")))
			die(EXIT_USAGE,
			    "%s is not a gfp-sweep campaign's state (--state PATH chooses another "
			    "file)",
			    path);
		if (!ok)
			bad++; /* cut short: a write that did not finish */
		else if (lineno == 1) {
			check_header(&v);
			json_free(&v);
		} else
			index_line(keep(&v));
		line = nl ? nl + 1 : text + len;
	}
	bool open_line = len && text[len - 1] != '\n';
	free(text);
	if (bad)
		tool_warning("%s: %zu line%s cut short, left out", path, bad, bad == 1 ? "" : "s");
	if (open_line)
		append("\n", 1); /* the next line starts on its own */
	if (lineno == 0) {
		struct membuf m;
		header(membuf_open(&m));
		fputc('\n', m.f);
		fclose(m.f);
		append(m.buf, m.len);
		free(m.buf);
		/* The one line that must be whole after a crash: the others
		 * may be cut short and are left out, but without it the state
		 * is refused. */
		fdatasync(fd);
	}
}

/* Writes the line m holds (and closes it), and indexes it. */
static void journal_add(struct membuf *m)
{
	fputc('\n', m->f);
	fclose(m->f);
	append(m->buf, m->len);
	struct jval v;
	char err[128];
	if (!json_parse(m->buf, m->len, 1, &v, err, sizeof(err)))
		die(EXIT_USAGE, "a state line: %s", err);
	index_line(keep(&v));
	free(m->buf);
}

/* A line's start: {"t":ID, */
static FILE *line_start(struct membuf *m, size_t t)
{
	FILE *f = membuf_open(m);
	fprintf(f, "{\"t\":");
	text_json_str(f, targets[t].id);
	fputc(',', f);
	return f;
}

void journal_target(size_t t, const char *key)
{
	struct membuf m;
	FILE *f = line_start(&m, t);
	fprintf(f, "\"target\":{\"key\":\"%s\",\"eligible\":%llu,\"sites\":%zu,\"rec_status\":%d,",
	        key, (unsigned long long)sweep.eligible, sweep.nsites, sweep.rec_status);
	fprintf(f, "\"unstable\":%s,\"by_call\":%s,\"planned\":%zu,\"program\":",
	        sweep.unstable ? "true" : "false", sweep.by_call ? "true" : "false", sweep.nruns);
	text_json_str(f, sweep.prog_path);
	fprintf(f, "}}");
	journal_add(&m);
}

void journal_error(size_t t, const char *key, const char *why, bool fatal)
{
	struct membuf m;
	FILE *f = line_start(&m, t);
	fprintf(f, "\"key\":\"%s\",%s\"error\":", key, fatal ? "\"fatal\":true," : "");
	text_json_str(f, why);
	fputc('}', f);
	journal_add(&m);
}

/* ------------------------------------------------------------------------
 * A run, kept and brought back
 * ---------------------------------------------------------------------- */

/* frames_of's lines ("module\toffset\tsymbol\tN") with each module's path
 * and build-id in place of N, whose numbers are this process's only. */
static void frames_out(FILE *f, const char *frames)
{
	fputc('[', f);
	bool first = true;
	for (const char *line = frames; *line;) {
		size_t len = strcspn(line, "\n");
		char buf[600], *field[4], *p = buf;
		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		int n = 0;
		for (; n < 4 && p; n++) {
			field[n] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = '\0';
		}
		line += len + (line[len] == '\n');
		if (n < 4)
			continue;
		const char *mpath, *bid;
		frames_module_of(strtoull(field[3], NULL, 10), &mpath, &bid);
		fprintf(f, "%s[", first ? "" : ",");
		for (int i = 0; i < 3; i++) {
			text_json_str(f, field[i]);
			fputc(',', f);
		}
		mpath ? text_json_str(f, mpath) : (void)fputs("null", f);
		fputc(',', f);
		bid ? text_json_str(f, bid) : (void)fputs("null", f);
		fputc(']', f);
		first = false;
	}
	fputc(']', f);
}

static void frames_in(const struct jval *a, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; a && a->type == J_ARR && i < a->n; i++) {
		const struct jval *fr = &a->v[i];
		if (fr->type != J_ARR || fr->n != 5)
			continue;
		const char *s[5];
		for (int k = 0; k < 5; k++)
			s[k] = fr->v[k].type == J_STR ? fr->v[k].s : NULL;
		if (!s[0] || !s[1] || !s[2])
			continue;
		int w = snprintf(out + len, n - len, "%s\t%s\t%s\t%zu\n", s[0], s[1], s[2],
		                 frames_module_index(s[0], s[3], s[4]));
		if (w > 0 && (size_t)w < n - len)
			len += (size_t)w;
	}
}

/* The last bytes of the run's stderr, one more than junit.c shows, so that
 * it cuts them at the same line start as from the whole file. */
static void stderr_out(FILE *f, const struct run *r)
{
	char p[PATH_MAX + 16];
	size_t len = 0;
	run_paths(r->idx, "err", p, sizeof(p));
	char *err = infile_read(p, &len);
	fprintf(f, ",\"stderr\":");
	text_json_str(f, err ? err + (len > 4097 ? len - 4097 : 0) : "");
	free(err);
}

void journal_run(size_t t, size_t pos, const struct run *r)
{
	struct membuf m;
	FILE *f = line_start(&m, t);
	fprintf(f,
	        "\"run\":%zu,\"site\":\"%s\",\"hit\":%llu,\"outcome\":\"%s\",\"status\":%d,"
	        "\"signal\":%d,\"inj_site\":\"%s\",\"seconds\":%.3f,\"crash_top\":",
	        pos, r->site, (unsigned long long)r->hit, outcome_name[r->outcome], r->status,
	        r->signal, r->inj_site, r->seconds);
	text_json_str(f, r->crash_top);
	fprintf(f, ",\"inj_frames\":");
	frames_out(f, r->inj_frames);
	fprintf(f, ",\"crash_frames\":");
	frames_out(f, r->crash_frames);
	fprintf(f, ",\"evidence\":");
	loss_evidence_json(f, &r->ev);
	fprintf(f, ",\"loss\":");
	loss_json(f, &r->loss);
	fprintf(f, ",\"fault\":%d,\"startup\":%s,\"count_startup\":%s,\"call\":%llu", r->fault,
	        r->startup ? "true" : "false", r->count_startup ? "true" : "false",
	        (unsigned long long)r->call);
	if (is_finding(r->outcome))
		stderr_out(f, r);
	fputc('}', f);
	journal_add(&m);
}

static void copy_str(char *out, size_t n, const struct jval *v, const char *key)
{
	const char *s = json_str(v, key);
	snprintf(out, n, "%s", s ? s : "");
}

static double num(const struct jval *v, const char *key)
{
	double d = 0;
	json_num(v, key, &d);
	return d;
}

size_t journal_restore(const struct jval *v, struct run *r)
{
	memset(r, 0, sizeof(*r));
	copy_str(r->site, sizeof(r->site), v, "site");
	copy_str(r->inj_site, sizeof(r->inj_site), v, "inj_site");
	copy_str(r->crash_top, sizeof(r->crash_top), v, "crash_top");
	r->hit = (uint64_t)num(v, "hit");
	const char *o = json_str(v, "outcome");
	for (int i = 0; o && i < O_COUNT; i++)
		if (strcmp(o, outcome_name[i]) == 0)
			r->outcome = (enum outcome)i;
	r->status = (int)num(v, "status");
	r->signal = (int)num(v, "signal");
	r->seconds = num(v, "seconds");
	r->fault = (int)num(v, "fault");
	r->startup = json_bool(v, "startup");
	r->count_startup = json_bool(v, "count_startup");
	r->call = (uint64_t)num(v, "call");
	frames_in(json_get(v, "inj_frames"), r->inj_frames, sizeof(r->inj_frames));
	frames_in(json_get(v, "crash_frames"), r->crash_frames, sizeof(r->crash_frames));
	const struct jval *ev = json_get(v, "evidence");
	r->ev.offset = -1;
	if (ev && ev->type == J_OBJ) {
		r->ev.offset = (long long)num(ev, "offset");
		r->ev.line = (long)num(ev, "line");
		r->ev.column = (long)num(ev, "column");
		r->ev.expected_bytes = (long long)num(ev, "expected_bytes");
		r->ev.actual_bytes = (long long)num(ev, "actual_bytes");
		copy_str(r->ev.expected, sizeof(r->ev.expected), ev, "expected");
		copy_str(r->ev.actual, sizeof(r->ev.actual), ev, "actual");
	}
	const struct jval *loss = json_get(v, "loss");
	if (loss && loss->type == J_OBJ) {
		copy_str(r->loss.shape, sizeof(r->loss.shape), loss, "shape");
		copy_str(r->loss.missing, sizeof(r->loss.missing), loss, "missing");
		copy_str(r->loss.added, sizeof(r->loss.added), loss, "added");
		copy_str(r->loss.message, sizeof(r->loss.message), loss, "message");
	}
	r->finding = -1;
	r->done = true;
	return (size_t)num(v, "run");
}

/* A target's runs all done: its findings as confirm_findings made and confirmed
 * them, each run's finding, and how many runs were planned. */
void journal_done(size_t t, const struct finding *fs, size_t nfs)
{
	struct membuf m;
	FILE *f = line_start(&m, t);
	fprintf(f, "\"done\":{\"planned\":%zu,\"findings\":[", sweep.runs_planned);
	for (size_t i = 0; i < nfs; i++)
		fprintf(f, "%s[%zu,%zu,%s,%s]", i ? "," : "", fs[i].first, fs[i].count,
		        fs[i].rerun ? "true" : "false", fs[i].confirmed ? "true" : "false");
	fprintf(f, "],\"run_finding\":[");
	for (size_t i = 0; i < sweep.nruns; i++)
		fprintf(f, "%s%ld", i ? "," : "", sweep.runs[i].finding);
	fprintf(f, "]}}");
	journal_add(&m);
}
