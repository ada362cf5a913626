/*
 * json-out.c - --json: every result and finding of the sweep as one JSON
 * object, the input of gfp-report and its merge. "format" 2: findings
 * (one per bug, with their call paths) where format 1, without the field,
 * had groups (one per injection site, outcome and crash site).
 */
#include <stdio.h>
#include <stdlib.h>

#include "text.h"
#include "gfp_build.h"
#include "sweep.h"

/* The failed allocation's caller as its frame line, "symbol
 * (module+offset)"; "" without an injection record. */
static void json_caller(FILE *f, const struct run *r)
{
	struct caller c;
	char line[400] = "";
	if (caller_of(r, &c))
		snprintf(line, sizeof(line), "%s%s(%s+%s)", c.fr.sym, c.fr.sym[0] ? " " : "",
		         c.fr.mod, c.fr.off);
	text_json_str(f, line);
}

static void json_reproducer(FILE *f, const struct run *r)
{
	struct membuf m;
	reproducer_print(membuf_open(&m), r);
	fclose(m.f);
	text_json_str(f, m.buf);
	free(m.buf);
}

static void json_paths(FILE *f, size_t fi)
{
	struct path *p;
	size_t np = findings_paths(fi, &p);
	fputc('[', f);
	for (size_t k = 0; k < np; k++) {
		const struct run *r = &sweep.runs[p[k].first];
		struct caller c;
		fprintf(f, "%s{\"site\":\"%s\",\"count\":%zu,\"first_run\":%zu,\"caller\":",
		        k ? "," : "", r->inj_site, p[k].count, p[k].first);
		if (caller_of(r, &c))
			frame_json(f, c.fr.info);
		else
			fputs("null", f);
		fprintf(f, ",\"reproducer\":");
		json_reproducer(f, r);
		fputc('}', f);
	}
	fputc(']', f);
	free(p);
}

static void json_finding(FILE *f, const struct finding *fs, size_t fi)
{
	const struct run *r = &sweep.runs[fs[fi].first];
	char pol[4096], sig[32] = "";
	struct membuf m;
	struct state st;
	reproducer_policy(r, pol, sizeof(pol));
	if (r->outcome == O_CRASH)
		state_signal(r, sig, sizeof(sig));
	fprintf(f, "{\"outcome\":\"%s\",\"key\":", outcome_name[r->outcome]);
	text_json_str(f, fs[fi].key);
	findings_title(membuf_open(&m), r);
	fclose(m.f);
	fprintf(f, ",\"title\":");
	text_json_str(f, m.buf);
	free(m.buf);
	fprintf(f, ",\"crash_type\":\"%s\",\"state\":[", sig);
	state_of(r, &st);
	for (size_t i = 0; i < st.n; i++) {
		fputs(i ? "," : "", f);
		text_json_str(f, st.name[i]);
	}
	fprintf(f, "],\"count\":%zu,\"paths\":%zu,\"first_run\":%zu,\"site\":\"%s\",\"policy\":",
	        fs[fi].count, fs[fi].paths, fs[fi].first, r->inj_site);
	text_json_str(f, pol);
	fprintf(f, ",\"reproducer\":");
	json_reproducer(f, r);
	fprintf(f,
	        ",\"confirmed\":%s,\"rerun\":%s,\"signal\":%d,\"fault_signal\":%d,\"startup\":%s,"
	        "\"crash_site\":",
	        fs[fi].confirmed ? "true" : "false", fs[fi].rerun ? "true" : "false", r->signal,
	        r->fault, r->startup ? "true" : "false");
	text_json_str(f, r->crash_top);
	fprintf(f, ",\"injection_frames\":");
	frames_json(f, r->inj_frames, false);
	fprintf(f, ",\"crash_frames\":");
	frames_json(f, r->crash_frames, true);
	fprintf(f, ",\"evidence\":");
	loss_evidence_json(f, &r->ev);
	fprintf(f, ",\"loss\":");
	loss_json(f, &r->loss);
	fprintf(f, ",\"call_paths\":");
	json_paths(f, fi);
	fprintf(f, "}");
}

/* The abort sites as an array: {"count","first_run","crash_site","aborter",
 * "allocation","reproducer"}, the frames as frame.h's objects or null. */
static void json_aborts(FILE *f)
{
	struct abort_site *sites;
	size_t n = aborts_find(&sites);
	fprintf(f, "[");
	for (size_t k = 0; k < n; k++) {
		const struct abort_site *s = &sites[k];
		fprintf(f, "%s{\"count\":%zu,\"first_run\":%zu,\"crash_site\":", k ? "," : "",
		        s->count, s->first);
		text_json_str(f, sweep.runs[s->first].crash_top);
		fprintf(f, ",\"aborter\":");
		if (s->has_aborter)
			frame_json(f, s->aborter.info);
		else
			fprintf(f, "null");
		fprintf(f, ",\"allocation\":");
		if (s->has_alloc)
			frame_json(f, s->alloc.info);
		else
			fprintf(f, "null");
		struct membuf m;
		reproducer_print(membuf_open(&m), &sweep.runs[s->first]);
		fclose(m.f);
		fprintf(f, ",\"reproducer\":");
		text_json_str(f, m.buf);
		free(m.buf);
		fprintf(f, "}");
	}
	fprintf(f, "]");
	free(sites);
}

void json_out_fields(FILE *f, struct finding *fs, size_t nfs, const size_t *counts)
{
	fprintf(f, "\"gfp_sweep\":\"%s\",\"format\":2,\"mode\":\"%s\",\"program\":[", GFP_VERSION,
	        opt.mode);
	for (char **a = opt.argv; *a; a++) {
		if (a != opt.argv)
			fputc(',', f);
		text_json_str(f, *a);
	}
	fprintf(f, "],\"shard\":\"%d/%d\",\"eligible_calls\":%llu,\"sites\":%zu,\"runs\":%zu,",
	        opt.shard_k, opt.shard_n, (unsigned long long)sweep.eligible, sweep.nsites,
	        sweep.nruns);
	fprintf(f, "\"interrupted\":%s,\"runs_not_done\":%zu,",
	        sweep.interrupted ? "true" : "false", sweep.runs_planned - sweep.runs_done);
	fprintf(f, "\"junk\":%s,", opt.junk ? "true" : "false");
	fprintf(f, "\"startup\":%s,", opt.startup ? "true" : "false");
	fprintf(f, "\"by_call\":%s,", sweep.by_call ? "true" : "false");
	fprintf(f, "\"outcomes\":{");
	for (int o = 0; o < O_COUNT; o++)
		fprintf(f, "%s\"%s\":%zu", o ? "," : "", outcome_name[o], counts[o]);
	fprintf(f, "},\"definitions\":{");
	for (int o = 0; o < O_COUNT; o++) {
		fprintf(f, "%s\"%s\":", o ? "," : "", outcome_name[o]);
		text_json_str(f, outcome_help[o]);
	}
	fprintf(f, "},\"results\":[");
	for (size_t i = 0; i < sweep.nruns; i++) {
		const struct run *r = &sweep.runs[i];
		fprintf(f,
		        "%s{\"site\":\"%s\",\"hit\":%llu,\"outcome\":\"%s\",\"status\":%d,"
		        "\"signal\":%d,\"fault_signal\":%d,\"startup\":%s,\"injected_site\":\"%s\","
		        "\"seconds\":%.3f,\"caller\":",
		        i ? "," : "", r->site, (unsigned long long)r->hit, outcome_name[r->outcome],
		        r->status, r->signal, r->fault, r->startup ? "true" : "false", r->inj_site,
		        r->seconds);
		json_caller(f, r);
		fprintf(f, ",\"crash_site\":");
		text_json_str(f, r->crash_top);
		fprintf(f, ",\"key\":");
		text_json_str(f, r->finding >= 0 ? fs[r->finding].key : "");
		fprintf(f, ",\"evidence\":");
		loss_evidence_json(f, &r->ev);
		fprintf(f, ",\"loss\":");
		loss_json(f, &r->loss);
		if (r->call)
			fprintf(f, ",\"call\":%llu}", (unsigned long long)r->call);
		else
			fprintf(f, ",\"call\":null}");
	}
	fprintf(f, "],\"findings\":[");
	for (size_t fi = 0; fi < nfs; fi++) {
		fputs(fi ? "," : "", f);
		json_finding(f, fs, fi);
	}
	fprintf(f, "],\"abort_sites\":");
	json_aborts(f);
}

void json_out_write(const char *path, struct finding *fs, size_t nfs, const size_t *counts)
{
	struct outfile o;
	FILE *f = report_file(&o, path);
	fputc('{', f);
	json_out_fields(f, fs, nfs, counts);
	fprintf(f, "}\n");
	report_done(&o);
}
