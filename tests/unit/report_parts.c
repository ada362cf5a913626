/* gfp-report merge's parts (tools/gfp-report/parts.c): a part's "shard"
 * read as K/N, and the parts checked to be one sweep's, each shard once. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report.h"

/* The part a file with this text would be (its JSON in p->doc). */
static void part_of(struct part *p, const char *json)
{
	memset(p, 0, sizeof(*p));
	p->path = "part.json";
	char err[128];
	if (!json_parse(json, strlen(json), 1, &p->doc, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", json, err);
		check_failures++;
	}
	p->v = &p->doc;
}

static void shard_is(const char *shard, bool ok, long k, long n)
{
	char json[128];
	snprintf(json, sizeof(json), "{\"shard\":\"%s\"}", shard);
	struct part p;
	part_of(&p, json);
	bool got = parts_shard(&p);
	if (got != ok || (ok && (p.k != k || p.n != n))) {
		fprintf(stderr, "shard '%s': %d %ld/%ld\n", shard, got, p.k, p.n);
		check_failures++;
	}
	json_free(&p.doc);
}

static void shards_are_k_of_n(void)
{
	shard_is("1/1", true, 1, 1);
	shard_is("2/4", true, 2, 4);
	shard_is("4/4", true, 4, 4);
	shard_is("0/4", false, 0, 0);
	shard_is("5/4", false, 0, 0);
	shard_is("1/0", false, 0, 0);
	shard_is("2/4x", false, 0, 0);
	shard_is("2", false, 0, 0);
	shard_is("", false, 0, 0);
	struct part p;
	part_of(&p, "{\"shard\":2}");
	CHECK(!parts_shard(&p));
	json_free(&p.doc);
}

/* A sweep's part: its shard and what the checks compare. */
static void sweep_part(struct part *p, const char *shard, const char *mode, const char *prog)
{
	char json[512];
	snprintf(json, sizeof(json),
	         "{\"gfp_sweep\":\"x\",\"mode\":\"%s\",\"program\":[\"%s\"],\"shard\":\"%s\","
	         "\"eligible_calls\":10,\"sites\":3,\"results\":[{\"site\":\"ab\",\"hit\":1,"
	         "\"outcome\":\"ok\"}],\"findings\":[]}",
	         mode, prog, shard);
	part_of(p, json);
	CHECK(parts_check_sweep(p));
}

static bool check(const char *const *shards, const char *mode2, const char *prog2)
{
	struct part ps[4] = {0};
	size_t n = 0;
	for (; shards[n]; n++)
		sweep_part(&ps[n], shards[n], n ? mode2 : "sites", n ? prog2 : "p");
	bool ok = parts_check(ps, n);
	for (size_t i = 0; i < n; i++)
		json_free(&ps[i].doc);
	return ok;
}

static void parts_of_one_sweep(void)
{
	CHECK(check((const char *const[]){"1/2", "2/2", NULL}, "sites", "p"));
	CHECK(check((const char *const[]){"3/3", "1/3", "2/3", NULL}, "sites", "p"));
	CHECK(!check((const char *const[]){"1/2", "1/2", NULL}, "sites", "p"));
	CHECK(!check((const char *const[]){"1/3", "3/3", NULL}, "sites", "p"));
	CHECK(!check((const char *const[]){"1/2", "2/3", NULL}, "sites", "p"));
	CHECK(!check((const char *const[]){"1/2", "2/2", NULL}, "nth", "p"));
	CHECK(!check((const char *const[]){"1/2", "2/2", NULL}, "sites", "q"));
	/* what a sweep's merge reads must be there */
	struct part p;
	part_of(&p, "{\"gfp_sweep\":\"x\",\"mode\":\"sites\",\"program\":[],"
	            "\"results\":[],\"findings\":[]}");
	CHECK(!parts_check_sweep(&p));
	json_free(&p.doc);
	part_of(&p, "{\"gfp_sweep\":\"x\",\"mode\":\"sites\",\"program\":[],\"shard\":\"1/1\","
	            "\"results\":[{\"site\":\"ab\"}],\"findings\":[]}");
	CHECK(!parts_check_sweep(&p));
	json_free(&p.doc);
}

int main(void)
{
	shards_are_k_of_n();
	parts_of_one_sweep();
	return CHECK_DONE();
}
