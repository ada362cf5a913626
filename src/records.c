/*
 * records.c - GFP_RECORD: one JSON line per event (injection, failure,
 * canary, oom, crash), for the tools and for CI logs.
 *
 * A record is at most PIPE_BUF bytes and leaves with one write(2) before the
 * call it describes returns, so a crash right after cannot lose it and lines
 * from several processes on one pipe never interleave. dest_set.c opens
 * and dest.c writes the destination.
 */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "dest.h"
#include "dest_set.h"
#include "modules.h"
#include "records.h"

static struct gfp_dest out = {.var = "GFP_RECORD", .fd = -1};
static uint64_t seq; /* atomic */

int records_set_dest(const char *dest, bool secure, char *err, size_t errlen)
{
	if (!dest || !*dest)
		return 0;
	return gfp_dest_set(&out, "GFP_RECORD", GFP_DEST_APPEND, dest, secure, err, errlen);
}

bool records_on(void)
{
	return gfp_dest_on(&out);
}

void record_event(const char *event, const struct gfp_req *req, const struct gfp_frame *frames,
                  int n, const char *extra)
{
	if (!records_on())
		return;
	char line[PIPE_BUF];
	/* Leave room to close the frames array and the object whatever happens. */
	struct gfp_buf b = {line, sizeof(line) - 8, 0};
	gfp_buf_printf(&b, "{\"event\":\"%s\",\"pid\":%d,\"tid\":%d,\"seq\":%llu", event,
	               (int)getpid(), (int)gettid(),
	               (unsigned long long)__atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	if (req) {
		char names[128];
		gfp_flags_name(req->gfp, names, sizeof(names));
		gfp_buf_printf(
		    &b,
		    ",\"site\":\"%016llx\",\"size\":%zu,\"flags\":\"%s\",\"mode\":\"%#x\","
		    "\"entry\":\"%s\",\"call\":%llu",
		    (unsigned long long)req->path, req->size, names, req->gfp,
		    gfp_entry_name[req->entry], (unsigned long long)req->call);
	}
	if (extra && *extra)
		gfp_buf_printf(&b, ",%s", extra);
	/* Each frame's module once, after the frames, with its path and
	 * build-id (modules.c); room for them is kept as frames are added, so
	 * that a frame is dropped rather than the module that names it. */
	unsigned mods[32], nmods = 0;
	size_t mods_len = 0;
	gfp_buf_printf(&b, ",\"frames\":[");
	for (int i = 0; i < n; i++) {
		size_t before = b.len;
		unsigned m = modules_of(frames[i].ip), k = 0;
		while (k < nmods && mods[k] != m)
			k++;
		size_t add = 0;
		if (m && k == nmods && nmods < sizeof(mods) / sizeof(mods[0])) {
			char one[512];
			struct gfp_buf mb = {one, sizeof(one), 0};
			modules_json(&mb, m);
			add = mb.len + 1;
		}
		gfp_buf_printf(&b, "%s{\"module\":", i ? "," : "");
		gfp_buf_json_str(&b, frames[i].module[0] ? frames[i].module : "?");
		gfp_buf_printf(&b, ",\"offset\":\"%#lx\"", (unsigned long)frames[i].module_off);
		if (frames[i].func[0]) {
			char sym[128];
			gfp_snprintf(sym, sizeof(sym), "%s+%#lx", frames[i].func,
			             (unsigned long)frames[i].func_off);
			gfp_buf_printf(&b, ",\"symbol\":");
			gfp_buf_json_str(&b, sym);
		}
		gfp_buf_printf(&b, "}");
		/* did not fit with its module: drop this frame and the rest */
		if (b.len + mods_len + add + 16 >= b.cap) {
			b.len = before;
			break;
		}
		if (add) {
			mods[nmods++] = m;
			mods_len += add;
		}
	}
	gfp_buf_printf(&b, "],\"modules\":[");
	for (unsigned k = 0; k < nmods; k++) {
		if (k)
			gfp_buf_printf(&b, ",");
		modules_json(&b, mods[k]);
	}
	b.cap = sizeof(line);
	gfp_buf_printf(&b, "]}\n");
	(void)gfp_dest_write(&out, line, b.len);
}

void record_short(const char *event, const char *extra)
{
	if (!records_on())
		return;
	/* Small enough for what is left of a signal handler's alternate stack. */
	char line[256];
	struct gfp_buf b = {line, sizeof(line) - 2, 0};
	gfp_buf_printf(&b, "{\"event\":\"%s\",\"pid\":%d,\"tid\":%d,\"seq\":%llu,%s", event,
	               (int)getpid(), (int)gettid(),
	               (unsigned long long)__atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED), extra);
	b.cap = sizeof(line);
	gfp_buf_printf(&b, "}\n");
	(void)gfp_dest_write(&out, line, b.len);
}
