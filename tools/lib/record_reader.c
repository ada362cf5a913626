/*
 * record_reader.c - reading GFP_RECORD lines and a report's call sites (record_reader.h)
 * for gfp-sweep and gfp-report. It interprets documents json.c parsed; it
 * never prints.
 */
#include <stdlib.h>
#include <string.h>

#include "record_reader.h"

/* The next line of text[*pos..len) that parses, in *out; false at the end. */
static bool next_record(const char *text, size_t len, size_t *pos, struct jval *out)
{
	while (*pos < len) {
		const char *line = text + *pos, *nl = memchr(line, '\n', len - *pos);
		size_t l = nl ? (size_t)(nl - line) : len - *pos;
		*pos += l + 1;
		char err[128];
		if (json_parse(line, l, 1, out, err, sizeof(err)))
			return true;
	}
	return false;
}

bool rec_find(const char *text, size_t len, const char *event, struct jval *out)
{
	for (size_t pos = 0; next_record(text, len, &pos, out);) {
		const char *ev = json_str(out, "event");
		if (ev && strcmp(ev, event) == 0)
			return true;
		json_free(out);
	}
	return false;
}

void rec_each(const char *text, size_t len, void (*fn)(void *ctx, const struct jval *rec),
              void *ctx)
{
	struct jval rec;
	for (size_t pos = 0; next_record(text, len, &pos, &rec);) {
		fn(ctx, &rec);
		json_free(&rec);
	}
}

size_t rec_nframes(const struct jval *rec)
{
	const struct jval *f = json_get(rec, "frames");
	return f && f->type == J_ARR ? f->n : 0;
}

bool rec_frame(const struct jval *rec, size_t i, struct rec_frame *out)
{
	const struct jval *f = json_get(rec, "frames");
	if (!f || f->type != J_ARR || i >= f->n) {
		memset(out, 0, sizeof(*out));
		return false;
	}
	return rec_frame_of(&f->v[i], rec, out);
}

bool rec_frame_of(const struct jval *o, const struct jval *doc, struct rec_frame *out)
{
	out->module = json_str(o, "module");
	out->offset = json_str(o, "offset");
	out->symbol = json_str(o, "symbol");
	out->path = json_str(o, "path");
	out->build_id = json_str(o, "build_id");
	const struct jval *mods = json_get(doc, "modules");
	for (size_t i = 0; out->module && !out->path && mods && mods->type == J_ARR && i < mods->n;
	     i++) {
		const char *name = json_str(&mods->v[i], "name");
		if (name && strcmp(name, out->module) == 0) {
			out->path = json_str(&mods->v[i], "path");
			out->build_id = json_str(&mods->v[i], "build_id");
		}
	}
	/* "" is as good as absent. */
	if (out->path && !*out->path)
		out->path = NULL;
	if (out->build_id && !*out->build_id)
		out->build_id = NULL;
	return out->module && out->offset;
}

/* A whole number as the shim writes counts. */
static bool count_of(const struct jval *v, unsigned long long *out)
{
	if (!v || v->type != J_NUM || v->s[0] == '-')
		return false;
	char *end;
	*out = strtoull(v->s, &end, 10);
	return end != v->s;
}

unsigned long long rec_sites(const struct jval *rep,
                             void (*fn)(void *ctx, const struct rec_site *s), void *ctx)
{
	unsigned long long eligible = 0;
	count_of(json_get(rep, "eligible_calls"), &eligible);
	const struct jval *sites = json_get(rep, "sites");
	for (size_t i = 0; sites && sites->type == J_ARR && i < sites->n; i++) {
		const struct jval *o = &sites->v[i];
		const char *id = json_str(o, "site");
		struct rec_site s = {.hits = 0, .first = 0, .tcalls = {0, 0, 0}, .startup = 0};
		if (!id || !*id || strlen(id) > 16 ||
		    strspn(id, "0123456789abcdef") != strlen(id) ||
		    !count_of(json_get(o, "hits"), &s.hits))
			continue;
		count_of(json_get(o, "first"), &s.first);
		const struct jval *tc = json_get(o, "first_thread_calls");
		for (size_t k = 0; tc && tc->type == J_ARR && tc->n == 3 && k < 3; k++)
			count_of(&tc->v[k], &s.tcalls[k]);
		count_of(json_get(o, "startup"), &s.startup);
		memcpy(s.id, id, strlen(id) + 1);
		fn(ctx, &s);
	}
	return eligible;
}
