/*
 * json-out.c - --json: every result and group of the sweep as one JSON
 * object, the input of gfp-report and its merge.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "gfp_build.h"
#include "sweep.h"

/* A silent run's evidence as an object; null for any other run. */
void json_evidence(FILE *f, const struct evidence *ev)
{
	if (ev->offset < 0) {
		fprintf(f, "null");
		return;
	}
	fprintf(f,
	        "{\"offset\":%lld,\"line\":%ld,\"column\":%ld,\"expected_bytes\":%lld,"
	        "\"actual_bytes\":%lld,\"expected\":",
	        ev->offset, ev->line, ev->column, ev->expected_bytes, ev->actual_bytes);
	text_json_str(f, ev->expected);
	fprintf(f, ",\"actual\":");
	text_json_str(f, ev->actual);
	fprintf(f, "}");
}

/* The failed allocation's caller as its frame line, "symbol
 * (module+offset)"; "" without an injection record. */
static void json_caller(FILE *f, const struct run *r)
{
	struct caller c;
	char line[400] = "";
	if (run_caller(r, &c))
		snprintf(line, sizeof(line), "%s%s(%s+%s)", c.fr.sym, c.fr.sym[0] ? " " : "",
		         c.fr.mod, c.fr.off);
	text_json_str(f, line);
}

void json_sweep_fields(FILE *f, struct group *groups, size_t ngroups, const size_t *counts)
{
	fprintf(f, "\"gfp_sweep\":\"%s\",\"mode\":\"%s\",\"program\":[", GFP_VERSION, opt.mode);
	for (char **a = opt.argv; *a; a++) {
		if (a != opt.argv)
			fputc(',', f);
		text_json_str(f, *a);
	}
	fprintf(f, "],\"shard\":\"%d/%d\",\"eligible_calls\":%llu,\"sites\":%zu,\"runs\":%zu,",
	        opt.shard_k, opt.shard_n, (unsigned long long)eligible, nsites, nruns);
	fprintf(f, "\"interrupted\":%s,\"runs_not_done\":%zu,", opt.interrupted ? "true" : "false",
	        opt.runs_planned - opt.runs_done);
	fprintf(f, "\"junk\":%s,", opt.junk ? "true" : "false");
	fprintf(f, "\"startup\":%s,", opt.startup ? "true" : "false");
	fprintf(f, "\"by_call\":%s,", opt.by_call ? "true" : "false");
	fprintf(f, "\"outcomes\":{");
	for (int o = 0; o < O_COUNT; o++)
		fprintf(f, "%s\"%s\":%zu", o ? "," : "", outcome_name[o], counts[o]);
	fprintf(f, "},\"results\":[");
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		fprintf(f,
		        "%s{\"site\":\"%s\",\"hit\":%llu,\"outcome\":\"%s\",\"status\":%d,"
		        "\"signal\":%d,\"fault_signal\":%d,\"startup\":%s,\"injected_site\":\"%s\","
		        "\"seconds\":%.3f,\"caller\":",
		        i ? "," : "", r->site, (unsigned long long)r->hit, outcome_name[r->outcome],
		        r->status, r->signal, r->fault, r->startup ? "true" : "false", r->inj_site,
		        r->seconds);
		json_caller(f, r);
		fprintf(f, ",\"evidence\":");
		json_evidence(f, &r->ev);
		if (r->call)
			fprintf(f, ",\"call\":%llu}", (unsigned long long)r->call);
		else
			fprintf(f, ",\"call\":null}");
	}
	fprintf(f, "],\"groups\":[");
	for (size_t g = 0; g < ngroups; g++) {
		const struct run *r = &runs[groups[g].first];
		char pol[4096];
		full_policy(r, pol, sizeof(pol));
		fprintf(f,
		        "%s{\"outcome\":\"%s\",\"count\":%zu,\"first_run\":%zu,\"site\":\"%s\","
		        "\"policy\":",
		        g ? "," : "", outcome_name[r->outcome], groups[g].count, groups[g].first,
		        r->inj_site);
		text_json_str(f, pol);
		struct membuf m;
		reproducer(mem_open(&m), r);
		fclose(m.f);
		fprintf(f, ",\"reproducer\":");
		text_json_str(f, m.buf);
		free(m.buf);
		fprintf(f,
		        ",\"confirmed\":%s,\"signal\":%d,\"fault_signal\":%d,\"startup\":%s,"
		        "\"crash_site\":",
		        groups[g].confirmed ? "true" : "false", r->signal, r->fault,
		        r->startup ? "true" : "false");
		text_json_str(f, r->crash_top);
		fprintf(f, ",\"injection_frames\":");
		frames_json(f, r->inj_frames, false);
		fprintf(f, ",\"crash_frames\":");
		frames_json(f, r->crash_frames, true);
		fprintf(f, ",\"evidence\":");
		json_evidence(f, &r->ev);
		fprintf(f, "}");
	}
	fprintf(f, "],\"abort_sites\":");
	abort_sites_json(f);
}

void write_json(const char *path, struct group *groups, size_t ngroups, const size_t *counts)
{
	struct tool_out o;
	FILE *f = report_file(&o, path);
	fputc('{', f);
	json_sweep_fields(f, groups, ngroups, counts);
	fprintf(f, "}\n");
	report_done(&o);
}
