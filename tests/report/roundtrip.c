/*
 * roundtrip.c - every record kind written by the shim's own writer
 * (src/records.c, record_event) and read back by the tools' one reader
 * (tools/lib/record_reader.c): each field as written, frames in order, symbols
 * with JSON escapes, a frame without module or symbol. A change to what
 * records.c writes that the tools would misread fails here, not in a sweep.
 * Likewise the report's "sites" array (stats=paths, inject.c's hit table,
 * written by stats_format) against the tools' rec_sites: each path's id,
 * hits and first call as the shim counted them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "infile.h"
#include "internal.h"
#include "apply.h"
#include "json.h"
#include "record_reader.h"
#include "text.h"
#include "../unit/check.h"

/* Each kind with an extra of the shape its writer gives (slowpath.c,
 * oom.c, canary.c, reserve.c, crash.c, inject.c) and one key to read back. */
static const struct kind {
	const char *event, *extra, *key, *value;
	bool has_req;
} kinds[] = {
    {"injection", NULL, "entry", "malloc", true},
    {"failure", "\"reason\":\"no progress\",\"rounds\":3", "reason", "no progress", true},
    {"oom", "\"rounds\":16,\"outcome\":\"killed\"", "outcome", "killed", true},
    {"canary", "\"rounds\":100,\"ms\":2100", "ms", "2100", true},
    {"reserve", "\"reserve\":\"drawn\",\"drawn\":4096,\"left\":-1,\"thread_left\":0", "left", "-1",
     true},
    {"crash", "\"signal\":11,\"code\":1,\"addr\":\"0x10\"", "signal", "11", false},
};

static struct gfp_frame frames[3] = {
    {.module_off = 0x12ab, .func_off = 0x6b, .func = "main", .module = "inventory"},
    {.module_off = 0x9e9aa, .func_off = 0x1a, .func = "we\"ird\\name", .module = "libstdc++.so.6"},
    {.module_off = 0x2724a, .func = "", .module = ""},
};

static void check_frames(const struct jval *rec)
{
	static const struct {
		const char *module, *offset, *symbol;
	} want[] = {
	    {"inventory", "0x12ab", "main+0x6b"},
	    {"libstdc++.so.6", "0x9e9aa", "we\"ird\\name+0x1a"},
	    {"?", "0x2724a", NULL},
	};
	CHECK(rec_nframes(rec) == 3);
	for (size_t i = 0; i < 3 && i < rec_nframes(rec); i++) {
		struct rec_frame f;
		CHECK(rec_frame(rec, i, &f));
		CHECK_STR(f.module ? f.module : "(none)", want[i].module);
		CHECK_STR(f.offset ? f.offset : "(none)", want[i].offset);
		CHECK_STR(f.symbol ? f.symbol : "(none)",
		          want[i].symbol ? want[i].symbol : "(none)");
	}
}

static void check_kind(const char *text, size_t len, const struct kind *k)
{
	struct jval rec;
	if (!rec_find(text, len, k->event, &rec)) {
		fprintf(stderr, "no \"%s\" record read back\n", k->event);
		check_failures++;
		return;
	}
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	const char *v = json_text(json_get(&rec, "pid"));
	CHECK_STR(v ? v : "(none)", pid);
	CHECK(json_get(&rec, "seq") && json_get(&rec, "tid"));
	v = json_text(json_get(&rec, k->key));
	CHECK_STR(v ? v : "(none)", k->value);
	if (k->has_req) {
		v = json_str(&rec, "site");
		CHECK_STR(v ? v : "(none)", "0123456789abcdef");
		v = json_text(json_get(&rec, "size"));
		CHECK_STR(v ? v : "(none)", "4096");
		v = json_text(json_get(&rec, "call"));
		CHECK_STR(v ? v : "(none)", "7");
		v = json_str(&rec, "mode");
		CHECK(v && strncmp(v, "0x", 2) == 0);
		v = json_str(&rec, "flags");
		CHECK(v && strstr(v, "KERNEL"));
	}
	check_frames(&rec);
	json_free(&rec);
}

/* Call paths of stats=paths, counted as the injection decision counts
 * eligible calls: the ids are what the shim computed (req->path). */
struct path_seen {
	uint64_t id, first;
	unsigned long long hits;
};
static struct path_seen seen[8];
static size_t nseen;

static __attribute__((noinline)) void eligible_call(void)
{
	struct gfp_req req = {.entry = GFP_E_malloc, .size = 64, .gfp = GFP_KERNEL};
	CHECK(!inject_should_fail(&req, false));
	size_t i = 0;
	while (i < nseen && seen[i].id != req.path)
		i++;
	if (i == nseen && nseen < 8)
		seen[nseen++] = (struct path_seen){.id = req.path, .first = req.call};
	if (i < nseen)
		seen[i].hits++;
	__asm__ volatile("" ::: "memory"); /* no tail call: a frame of its own */
}

/* Within the test every frame is the shim's (it links the engine): other
 * paths go through libc's qsort. */
static int compare_and_count(const void *x, const void *y)
{
	eligible_call();
	return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

static void site_read(void *ctx, const struct rec_site *s)
{
	size_t *matched = ctx;
	matched[1]++;
	for (size_t i = 0; i < nseen; i++) {
		char id[17];
		snprintf(id, sizeof(id), "%016llx", (unsigned long long)seen[i].id);
		if (strcmp(s->id, id) != 0)
			continue;
		++*matched;
		CHECK(s->hits == seen[i].hits);
		CHECK(s->first == seen[i].first);
	}
}

static void check_sites(void)
{
	config_defaults(&gfp_policy);
	gfp_policy.stats = GFP_STATS_PATHS;
	gfp_policy.fail_startup = true; /* eligible before main's hook ran */
	apply_policy();
	for (int i = 0; i < 3; i++)
		eligible_call();
	int two[2] = {2, 1};
	for (int i = 0; i < 2; i++)
		qsort(two, 2, sizeof(int), compare_and_count);
	CHECK(nseen >= 2 && nseen < 8);

	static char out[1 << 16];
	struct gfp_buf b = {out, sizeof(out) - 1, 0};
	struct gfp_entry_stats st[GFP_ENTRY_COUNT];
	stats_format(&b, st);
	out[b.len] = '\0';
	struct jval rep;
	char err[256];
	if (!json_parse(out, b.len, 1, &rep, err, sizeof(err))) {
		fprintf(stderr, "the report does not parse: %s\n%s", err, out);
		check_failures++;
		return;
	}
	size_t matched[2] = {0, 0};                      /* matched, read */
	CHECK(rec_sites(&rep, site_read, matched) == 5); /* eligible_calls */
	CHECK(matched[0] == nseen && matched[1] == nseen);
	if (check_failures)
		fprintf(stderr, "the report as written:\n%s", out);
	json_free(&rep);
}

int main(void)
{
	char path[] = "/tmp/gfp-roundtrip.XXXXXX", err[256];
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(records_set_dest(path, false, err, sizeof(err)) == 0);
	struct gfp_req req = {.entry = GFP_E_malloc,
	                      .size = 4096,
	                      .gfp = GFP_KERNEL,
	                      .path = 0x0123456789abcdefULL,
	                      .call = 7};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		record_event(kinds[i].event, kinds[i].has_req ? &req : NULL, frames, 3,
		             kinds[i].extra);
	size_t len = 0;
	char *text = infile_read(path, &len);
	CHECK(text != NULL);
	for (size_t i = 0; text && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		check_kind(text, len, &kinds[i]);
	if (check_failures && text)
		fprintf(stderr, "the records as written:\n%s", text);
	free(text);
	close(fd);
	unlink(path);
	check_sites();
	return CHECK_DONE();
}
