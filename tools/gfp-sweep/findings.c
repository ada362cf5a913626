/*
 * findings.c - one finding per bug: the runs of a sweep grouped by what went
 * wrong, not by which allocation failed. A crash is keyed by its signal and
 * its state (state.c), a hang by the state of the stack it waited in, a
 * silent run by its loss (loss.c); a run with no backtrace to tell bugs
 * apart by, by the allocation that failed. Inside a finding, the distinct
 * failed allocations (injection sites) that lead to it are its call paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"

/* ------------------------------------------------------------------------
 * Keys
 * ---------------------------------------------------------------------- */

/* The caller of the failed allocation as words, "" without one. */
static void caller_words(FILE *f, const struct run *r)
{
	struct caller c;
	if (caller_of(r, &c))
		frames_words(f, &c.fr);
	else
		fputs(r->inj_site[0] ? r->inj_site : "-", f);
}

static void key_of(FILE *f, const struct run *r, bool display)
{
	struct state st;
	char sig[32];
	switch (r->outcome) {
	case O_SILENT:
		loss_key(f, r, display);
		return;
	case O_CRASH:
	case O_HANG:
		fputs(outcome_name[r->outcome], f);
		if (r->outcome == O_CRASH) {
			state_signal(r, sig, sizeof(sig));
			fprintf(f, " %s", sig);
		}
		if (state_of(r, &st)) {
			fprintf(f, " in ");
			state_text(f, &st, display);
			return;
		}
		/* No backtrace to tell bugs apart by: one finding per failed
		 * allocation, as little merged as can be. */
		fprintf(f, ", no backtrace, after the failure in ");
		caller_words(f, r);
		fprintf(f, " (site %s)", r->inj_site[0] ? r->inj_site : "-");
		return;
	default:
		fputs(outcome_name[r->outcome], f);
	}
}

void findings_key(const struct run *r, char *out, size_t n)
{
	struct membuf m;
	key_of(membuf_open(&m), r, false);
	fclose(m.f);
	snprintf(out, n, "%s", m.buf);
	free(m.buf);
}

void findings_title(FILE *f, const struct run *r)
{
	key_of(f, r, true);
}

/* ------------------------------------------------------------------------
 * Findings and their call paths
 * ---------------------------------------------------------------------- */

size_t findings_group(struct finding *fs, size_t *counts)
{
	size_t n = 0;
	char key[sizeof(fs->key)];
	for (size_t i = 0; i < sweep.nruns; i++) {
		struct run *r = &sweep.runs[i];
		counts[r->outcome]++;
		r->finding = -1;
		if (!is_finding(r->outcome))
			continue;
		findings_key(r, key, sizeof(key));
		size_t f = 0;
		while (f < n && (sweep.runs[fs[f].first].outcome != r->outcome ||
		                 strcmp(fs[f].key, key) != 0))
			f++;
		if (f == n) {
			fs[n] = (struct finding){.first = i};
			snprintf(fs[n++].key, sizeof(fs->key), "%s", key);
		}
		fs[f].count++;
		r->finding = (long)f;
	}
	for (size_t f = 0; f < n; f++) {
		struct path *p;
		fs[f].paths = findings_paths(f, &p);
		free(p);
	}
	return n;
}

/* The site a run failed: the injection record's, else the one planned. */
static const char *path_site(const struct run *r)
{
	return r->inj_site[0] ? r->inj_site : r->site;
}

size_t findings_paths(size_t f, struct path **out)
{
	struct path *p = NULL;
	size_t n = 0;
	for (size_t i = 0; i < sweep.nruns; i++) {
		if (sweep.runs[i].finding != (long)f)
			continue;
		size_t k = 0;
		while (k < n &&
		       strcmp(path_site(&sweep.runs[p[k].first]), path_site(&sweep.runs[i])) != 0)
			k++;
		if (k == n) {
			p = xrealloc(p, (n + 1) * sizeof(*p));
			p[n++] = (struct path){.first = i};
		}
		p[k].count++;
	}
	*out = p;
	return n;
}

bool findings_in_path(size_t i, const void *ctx)
{
	const struct run *first = &sweep.runs[((const struct path *)ctx)->first];
	return sweep.runs[i].finding == first->finding &&
	       strcmp(path_site(&sweep.runs[i]), path_site(first)) == 0;
}

int findings_exit_status(const struct finding *fs, size_t nfs)
{
	for (size_t f = 0; f < nfs; f++)
		if (opt.fail_on & 1u << sweep.runs[fs[f].first].outcome)
			return EXIT_FINDINGS;
	return 0;
}
