/* The tools' reader of what the shim writes (tools/lib/record_reader.c):
 * GFP_RECORD lines by key, a line cut short spoiling only itself, frames
 * with their module's file from "modules", and a report's call sites. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "record_reader.h"

/* A string that may be missing, printable. */
static const char *or_null(const char *s)
{
	return s ? s : "(null)";
}

static const char records[] =
    "{\"event\":\"start\",\"pid\":7}\n"
    "{\"event\":\"injection\",\"site\":\"00ab\",\"pid\":7,\"tid\":8,\"frames\":["
    "{\"module\":\"prog\",\"offset\":\"0x10\",\"symbol\":\"main+0x4\"},"
    "{\"offset\":\"0x20\"},"
    "{\"module\":\"libc.so.6\",\"offset\":\"0x30\",\"path\":\"/own/libc.so.6\"}],"
    "\"modules\":[{\"name\":\"prog\",\"path\":\"/bin/prog\",\"build_id\":\"beef\"},"
    "{\"name\":\"libc.so.6\",\"path\":\"/lib/libc.so.6\",\"build_id\":\"\"}]}\n"
    /* a killed process's line, cut short */
    "{\"event\":\"crash\",\"pid\":7,\"fra\n"
    "\n"
    "{\"event\":\"crash\" , \"signal\":11, \"pid\":7}\n"
    "{\"event\":\"injection\",\"site\":\"second\"}";

static void collect(void *ctx, const struct jval *rec)
{
	char *seen = ctx;
	const char *ev = json_str(rec, "event");
	strcat(seen, ev ? ev : "?");
	strcat(seen, ",");
}

static void records_by_event(void)
{
	struct jval v;
	size_t len = strlen(records);
	CHECK(rec_find(records, len, "injection", &v));
	CHECK_STR(or_null(json_str(&v, "site")), "00ab"); /* the first of them */
	json_free(&v);
	CHECK(rec_find(records, len, "crash", &v)); /* past the cut line */
	double sig = 0;
	CHECK(json_num(&v, "signal", &sig) && sig == 11);
	json_free(&v);
	CHECK(!rec_find(records, len, "caught", &v));
	char seen[128] = "";
	rec_each(records, len, collect, seen);
	CHECK_STR(seen, "start,injection,crash,injection,");
}

static void frames_with_their_modules(void)
{
	struct jval v;
	CHECK(rec_find(records, strlen(records), "injection", &v));
	CHECK(rec_nframes(&v) == 3);
	struct rec_frame f;
	CHECK(rec_frame(&v, 0, &f));
	CHECK_STR(or_null(f.module), "prog");
	CHECK_STR(or_null(f.offset), "0x10");
	CHECK_STR(or_null(f.symbol), "main+0x4");
	CHECK_STR(or_null(f.path), "/bin/prog");
	CHECK_STR(or_null(f.build_id), "beef");
	CHECK(!rec_frame(&v, 1, &f)); /* no module */
	/* a frame's own path wins over "modules"; an empty build-id is none */
	CHECK(rec_frame(&v, 2, &f));
	CHECK_STR(or_null(f.path), "/own/libc.so.6");
	CHECK(f.symbol == NULL && f.build_id == NULL);
	CHECK(!rec_frame(&v, 3, &f));
	json_free(&v);
	/* the modules' own entry, an empty path no path */
	struct jval o;
	char err[128];
	const char *doc = "{\"modules\":[{\"name\":\"m\",\"path\":\"\",\"build_id\":\"ab\"}]}";
	const char *fr = "{\"module\":\"m\",\"offset\":\"0x1\"}";
	CHECK(json_parse(doc, strlen(doc), 1, &v, err, sizeof(err)));
	CHECK(json_parse(fr, strlen(fr), 1, &o, err, sizeof(err)));
	CHECK(rec_frame_of(&o, &v, &f));
	CHECK(f.path == NULL);
	CHECK_STR(or_null(f.build_id), "ab");
	json_free(&o);
	json_free(&v);
}

struct sites_seen {
	size_t n;
	struct rec_site s[8];
};

static void take_site(void *ctx, const struct rec_site *s)
{
	struct sites_seen *seen = ctx;
	if (seen->n < 8)
		seen->s[seen->n++] = *s;
}

/* A stats=paths report's sites: ids of hex digits (16 at most), hits a
 * whole number, and the counts that may be missing. */
static void report_sites(void)
{
	const char *rep = "{\"eligible_calls\":120,\"sites\":["
	                  "{\"site\":\"00000000000000ab\",\"hits\":3,\"first\":5,"
	                  "\"first_thread_calls\":[5,9,40],\"startup\":1},"
	                  "{\"site\":\"cd\",\"hits\":1},"
	                  "{\"site\":\"XYZ\",\"hits\":1},"
	                  "{\"site\":\"00000000000000abc\",\"hits\":1},"
	                  "{\"site\":\"ef\",\"hits\":-1},"
	                  "{\"site\":\"ee\",\"hits\":2,\"first_thread_calls\":[1,2]}]}";
	struct jval v;
	char err[128];
	CHECK(json_parse(rep, strlen(rep), 1, &v, err, sizeof(err)));
	struct sites_seen seen = {0};
	CHECK(rec_sites(&v, take_site, &seen) == 120);
	CHECK(seen.n == 3);
	CHECK_STR(seen.s[0].id, "00000000000000ab");
	CHECK(seen.s[0].hits == 3 && seen.s[0].first == 5 && seen.s[0].startup == 1);
	CHECK(seen.s[0].tcalls[0] == 5 && seen.s[0].tcalls[1] == 9 && seen.s[0].tcalls[2] == 40);
	CHECK_STR(seen.s[1].id, "cd");
	CHECK(seen.s[1].hits == 1 && seen.s[1].first == 0 && seen.s[1].tcalls[2] == 0);
	/* calls by thread need all three */
	CHECK_STR(seen.s[2].id, "ee");
	CHECK(seen.s[2].tcalls[0] == 0 && seen.s[2].tcalls[1] == 0);
	json_free(&v);
	CHECK(json_parse("{}", 2, 1, &v, err, sizeof(err)));
	seen.n = 0;
	CHECK(rec_sites(&v, take_site, &seen) == 0 && seen.n == 0);
	json_free(&v);
}

int main(void)
{
	records_by_event();
	frames_with_their_modules();
	report_sites();
	return CHECK_DONE();
}
