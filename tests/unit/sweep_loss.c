/* A silent run's loss (tools/gfp-sweep/loss.c), from synthetic outputs:
 * where the output first differs, its shape, the message on stderr the
 * plain runs did not write, and the key by which two losses of one kind are
 * one finding: skeletons of the lines (words and numbers alike). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sweep.h"

static struct output out_of(const char *s)
{
	return (struct output){(char *)s, strlen(s)};
}

static void evidence_is_where_they_part(void)
{
	struct evidence ev;
	struct output exp = out_of("header\nab cd\nend\n"), got = out_of("header\nab cx\nend\n");
	loss_evidence(&exp, &got, &ev);
	CHECK(ev.offset == 11 && ev.line == 2 && ev.column == 5);
	CHECK(ev.expected_bytes == 17 && ev.actual_bytes == 17);
	CHECK_STR(ev.expected, "ab cd");
	CHECK_STR(ev.actual, "ab cx");
	loss_evidence(&exp, &exp, &ev);
	CHECK(ev.offset == -1);
	/* ended early: the other side is the end of the output */
	struct output cut = out_of("header\n");
	loss_evidence(&exp, &cut, &ev);
	CHECK(ev.offset == 7 && ev.line == 2 && ev.column == 1);
	CHECK_STR(ev.expected, "ab cd");
	CHECK_STR(ev.actual, "(end of output)");
	/* a long line: from 40 bytes before the difference, control bytes,
	 * backslashes and hidden controls quoted */
	char a[200], b[200];
	memset(a, 0, sizeof(a));
	memset(a, 'x', 100);
	strcpy(a + 100, "\x1b\\\xe2\x80\xae"
	                "A\n");
	memcpy(b, a, sizeof(a));
	b[105] = 'B';
	struct output la = out_of(a), lb = out_of(b);
	loss_evidence(&la, &lb, &ev);
	CHECK(ev.offset == 105 && ev.column == 106);
	CHECK(strncmp(ev.expected, "...xxx", 6) == 0);
	CHECK(strstr(ev.expected, "x\\x1b\\\\\\u202eA") != NULL);
	CHECK(strstr(ev.actual, "x\\x1b\\\\\\u202eB") != NULL);
}

static void shape_is(const char *exp, const char *got, const char *shape, const char *missing,
                     const char *added)
{
	struct loss l;
	memset(&l, 0, sizeof(l));
	struct output e = out_of(exp), g = out_of(got);
	loss_shape(&e, &g, &l);
	CHECK_STR(l.shape, shape);
	CHECK_STR(l.missing, missing);
	CHECK_STR(l.added, added);
}

static void shapes_of_a_loss(void)
{
	const char *exp = "a\nb\nc\n";
	shape_is(exp, "a\nc\n", "lines lost", "b", "");
	shape_is(exp, "a\nB\nc\n", "lines changed", "b", "B");
	shape_is(exp, "a\nb\nb2\nc\n", "lines added", "", "b2");
	shape_is(exp, "a\nb\n", "lines lost", "c", ""); /* cut where a line starts */
	shape_is("hello world\n", "hello", "output ends early", " world", "");
	shape_is(exp, "", "no output", "a", "");
	shape_is(exp, exp, "same output", "", "");
	/* a last line without a newline is a line */
	shape_is("a\nb", "a\nc", "lines changed", "b", "c");
}

static void alike(const char *s, const char *want)
{
	char out[200];
	loss_alike(out, sizeof(out), s);
	CHECK_STR(out, want);
}

static void numbers_and_blanks_alike(void)
{
	alike("  12 items,\t3   left ", "# items, # left");
	alike("v1.2.3-rc4", "v#.#.#-rc#");
	alike("", "");
	char out[6];
	loss_alike(out, sizeof(out), "abcdefgh");
	CHECK(strlen(out) < sizeof(out));
}

static char *key(const struct run *r, bool display)
{
	static char text[2][400];
	struct membuf m;
	loss_key(membuf_open(&m), r, display);
	fclose(m.f);
	snprintf(text[display], sizeof(text[0]), "%s", m.buf);
	free(m.buf);
	return text[display];
}

static struct run silent(const char *shape, const char *missing, const char *added,
                         const char *message)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	r.outcome = O_SILENT;
	snprintf(r.loss.shape, sizeof(r.loss.shape), "%s", shape);
	snprintf(r.loss.missing, sizeof(r.loss.missing), "%s", missing);
	snprintf(r.loss.added, sizeof(r.loss.added), "%s", added);
	snprintf(r.loss.message, sizeof(r.loss.message), "%s", message);
	return r;
}

/* The key: the shape, the skeletons of the lines when lines were lost,
 * changed or added (which ones depends on when the failure came), the exit
 * status where it is not the plain run's, the message with its numbers
 * alike. The title: the same with the run's own lines. */
static void keys_of_losses(void)
{
	sweep.rec_status = 0;
	struct run a = silent("lines lost", "3. apple pie", "", "");
	struct run b = silent("lines lost", "12. cherry-tart", "", "");
	CHECK_STR(key(&a, false), "silent: lines lost, \"w. w w\"");
	CHECK_STR(key(&b, false), "silent: lines lost, \"w. w\"");
	CHECK_STR(key(&a, true), "silent: lines lost, \"3. apple pie\"");
	struct run c = silent("lines changed", "total: 12", "total: 3 (partial)", "");
	CHECK_STR(key(&c, false), "silent: lines changed, \"w: w\" became \"w: w (w)\"");
	struct run d = silent("lines added", "", "/etc/foo.conf: read", "");
	CHECK_STR(key(&d, false), "silent: lines added, \"/w: w\"");
	/* what ends early or is missing whole: the shape alone */
	struct run e = silent("output ends early", "rest of the line", "", "");
	CHECK_STR(key(&e, false), "silent: output ends early");
	struct run f = silent("no output", "first line", "", "");
	CHECK_STR(key(&f, false), "silent: no output");
	/* the message, numbers alike */
	struct run g = silent("lines lost", "x", "", "error: out of memory at 12:30:01");
	CHECK_STR(key(&g, false),
	          "silent, with a message: lines lost, \"w\"; stderr: \"error: out of memory at "
	          "#:#:#\"");
	CHECK_STR(key(&g, true),
	          "silent, with a message: lines lost, \"x\"; stderr: \"error: out of memory at "
	          "12:30:01\"");
	/* success where the plain run failed */
	sweep.rec_status = 1;
	struct run h = silent("same output", "", "", "");
	CHECK_STR(key(&h, false), "silent (exit 0 where the plain run exited 1): same output");
	h.status = 1;
	h.loss.shape[0] = '\0';
	CHECK_STR(key(&h, false), "silent: output differs");
	sweep.rec_status = 0;
}

/* The first stderr line neither plain run wrote, the shim's own lines and
 * blank ones left out, numbers alike: a clock in a warning is no message. */
static void message_on_stderr(void)
{
	snprintf(opt.tmp, sizeof(opt.tmp), "/tmp/unit-loss.XXXXXX");
	CHECK(mkdtemp(opt.tmp) != NULL);
	const struct {
		int idx;
		const char *text;
	} files[] = {
	    {0, "warning: started at 11:00:00\nreading input\n"},
	    {-1, "warning: started at 11:00:07\n"},
	    {5, "gfpshim: note: a failure injected\n\n"
	        "warning: started at 11:02:00\nerror: cannot allocate 4096 bytes\nlater\n"},
	    {6, "warning: started at 11:03:00\nreading input\n"},
	    {7, "oops \x1b[2J\n"},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[PATH_MAX + 16];
		run_paths(files[i].idx, "err", path, sizeof(path));
		FILE *f = fopen(path, "w");
		fputs(files[i].text, f);
		fclose(f);
	}
	struct loss l;
	memset(&l, 0, sizeof(l));
	loss_message(5, &l);
	CHECK_STR(l.message, "error: cannot allocate 4096 bytes");
	memset(&l, 0, sizeof(l));
	loss_message(6, &l);
	CHECK_STR(l.message, "");
	memset(&l, 0, sizeof(l));
	loss_message(7, &l);
	CHECK_STR(l.message, "oops \\x1b[2J");
	memset(&l, 0, sizeof(l));
	loss_message(8, &l); /* no file */
	CHECK_STR(l.message, "");
	run_remove_tmp();
}

static char *json(void (*fn)(FILE *, const void *), const void *v)
{
	static char text[1024];
	struct membuf m;
	fn(membuf_open(&m), v);
	fclose(m.f);
	snprintf(text, sizeof(text), "%s", m.buf);
	free(m.buf);
	return text;
}

static void ev_json(FILE *f, const void *v)
{
	loss_evidence_json(f, v);
}

static void l_json(FILE *f, const void *v)
{
	loss_json(f, v);
}

static void as_json(void)
{
	struct evidence ev = {.offset = -1};
	CHECK_STR(json(ev_json, &ev), "null");
	ev = (struct evidence){4, 2, 1, 10, 8, "a\"b", "c"};
	CHECK_STR(json(ev_json, &ev),
	          "{\"offset\":4,\"line\":2,\"column\":1,\"expected_bytes\":10,"
	          "\"actual_bytes\":8,\"expected\":\"a\\\"b\",\"actual\":\"c\"}");
	struct loss l;
	memset(&l, 0, sizeof(l));
	CHECK_STR(json(l_json, &l), "null");
	struct run r = silent("lines lost", "m", "", "msg");
	CHECK_STR(
	    json(l_json, &r.loss),
	    "{\"shape\":\"lines lost\",\"missing\":\"m\",\"added\":\"\",\"message\":\"msg\"}");
}

int main(void)
{
	evidence_is_where_they_part();
	shapes_of_a_loss();
	numbers_and_blanks_alike();
	keys_of_losses();
	message_on_stderr();
	as_json();
	return CHECK_DONE();
}
