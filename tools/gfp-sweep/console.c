/*
 * console.c - the result on the terminal, and what every report shares:
 * the command line and the reproducer, the findings.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"
#include "tool.h"
#include "text.h"
#include "sweep.h"

/* The allocator and libc: the frames between the program's call and the
 * shim, whichever function of them the program called. */
bool allocator_module(const char *mod)
{
	static const char *const prefixes[] = {"libc.so", "ld-linux", "libjemalloc", "libstdc++"};
	if (strcmp(mod, LIB_NAME) == 0)
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(mod, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* The innermost function of a source chain, "make_title inventory.c:98 <
 * main inventory.c:472", taken apart. */
static void innermost(struct caller *c)
{
	const char *src = c->fr.src, *lt = strstr(src, " < ");
	size_t n = lt ? (size_t)(lt - src) : strlen(src);
	const char *colon = memrchr(src, ':', n),
	           *sp = colon ? memrchr(src, ' ', (size_t)(colon - src)) : NULL;
	char *end;
	long line = colon ? strtol(colon + 1, &end, 10) : 0;
	if (!sp || line <= 0 || end != src + n)
		return;
	snprintf(c->func, sizeof(c->func), "%.*s", (int)(sp - src), src);
	snprintf(c->file, sizeof(c->file), "%.*s", (int)(colon - sp - 1), sp + 1);
	c->line = line;
}

struct caller_ctx {
	struct caller *c;
	bool found;
};

static void caller_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct caller_ctx *k = ctx;
	(void)line, (void)len;
	if (!fr || k->found || allocator_module(fr->mod))
		return;
	k->found = true;
	k->c->fr = *fr;
	/* The debug information's own function, file (its full path) and line;
	 * else what the printed source chain says. */
	if (fr->func && fr->file && fr->line > 0) {
		snprintf(k->c->func, sizeof(k->c->func), "%s", fr->func);
		snprintf(k->c->file, sizeof(k->c->file), "%s", fr->file);
		k->c->line = fr->line;
	} else
		innermost(k->c);
}

bool run_caller(const struct run *r, struct caller *c)
{
	memset(c, 0, sizeof(*c));
	struct caller_ctx k = {c, false};
	each_frame(r->inj_frames, false, caller_frame, &k);
	return k.found;
}

void outcome_words(FILE *f, const struct run *r)
{
	fprintf(f, "%s", outcome_name[r->outcome]);
	if (r->fault) {
		fprintf(
		    f, " (signal %d %s, caught by the program's handler, which then ended the run ",
		    r->fault, strsignal(r->fault));
		if (r->signal)
			fprintf(f, "by signal %d %s)", r->signal, strsignal(r->signal));
		else
			fprintf(f, "with status %d)", r->status);
	} else if (r->signal)
		fprintf(f, " (signal %d %s)", r->signal, strsignal(r->signal));
	if (r->startup)
		fprintf(f, " at start-up, before main");
}

/* "output differs at offset ...", then each side's line. */
void print_evidence(FILE *f, const struct evidence *ev, const char *indent)
{
	fprintf(f,
	        "%soutput differs at offset %lld (line %ld, column %ld): expected %lld bytes, got "
	        "%lld\n",
	        indent, ev->offset, ev->line, ev->column, ev->expected_bytes, ev->actual_bytes);
	fprintf(f, "%s  - %s\n%s  + %s\n", indent, ev->expected, indent, ev->actual);
}

/* PROG ARGS as a shell would take them back. */
void command_line(FILE *f)
{
	for (char **a = opt.argv; *a; a++) {
		if (a != opt.argv)
			fputc(' ', f);
		text_shell_quote(f, *a);
	}
	if (opt.input[0]) {
		fprintf(f, " < ");
		text_shell_quote(f, opt.input);
	}
}

/* The gfp-run beside this gfp-sweep's real path (a build tree's, or the
 * installed tree's, wherever it is), which finds the library this sweep
 * found; else gfp-run as a shell finds it. A printed reproducer runs as
 * printed. */
static const char *gfp_run_path(void)
{
	static char path[PATH_MAX];
	if (path[0])
		return path;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash = n > 0 ? (self[n] = '\0', strrchr(self, '/')) : NULL;
	if (slash) {
		snprintf(slash + 1, sizeof(self) - (size_t)(slash + 1 - self), "gfp-run");
		if (access(self, X_OK) == 0) {
			snprintf(path, sizeof(path), "%s", self);
			return path;
		}
	}
	if (!launch_resolve("gfp-run", path, sizeof(path)))
		snprintf(path, sizeof(path), "gfp-run");
	return path;
}

/* The policy a run had (run.c): the junk filling, without which a read of
 * uninitialised memory may pass, --policy's, then its failure point. */
void full_policy(const struct run *r, char *out, size_t n)
{
	char pol[512];
	policy_of(r, pol, sizeof(pol));
	run_policy(pol, out, n);
}

/* NAME=VALUE words a shell takes as an assignment: NAME a shell's name. */
static bool shell_names(char **env)
{
	for (char **e = env; e && *e; e++) {
		size_t n = strcspn(*e, "=");
		if (strspn(*e, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") <
		        n ||
		    (**e >= '0' && **e <= '9'))
			return false;
	}
	return true;
}

/* The directory the runs ran in: the sweep's, which it never leaves; ""
 * when it has no name (removed, or too deep for getcwd). */
const char *run_dir(void)
{
	static char *dir;
	if (!dir) {
		dir = getcwd(NULL, 0);
		if (!dir)
			dir = "";
	}
	return dir;
}

/* reproducer's words; with exec, the command exec'd by the shell (after
 * the cd and any assignments), so that the run's end is the shell's. */
static void print_reproducer(FILE *f, const struct run *r, bool exec)
{
	char pol[4096];
	full_policy(r, pol, sizeof(pol));
	if (run_dir()[0]) {
		fputs("cd -- ", f);
		text_shell_quote(f, run_dir());
		fputs(" && ", f);
	}
	bool assign = shell_names(opt.env);
	if (!assign)
		fputs(exec ? "exec env -- " : "env -- ", f);
	for (char **e = opt.env; e && *e; e++) {
		size_t n = strcspn(*e, "=");
		if (assign) {
			fprintf(f, "%.*s=", (int)n, *e);
			text_shell_quote(f, *e + n + 1);
		} else
			text_shell_quote(f, *e);
		fputc(' ', f);
	}
	if (assign && exec)
		fputs("exec ", f);
	text_shell_quote(f, gfp_run_path());
	/* As the sweep did: failures in the program's own process only. */
	fprintf(f, "%s --policy ", opt.follow ? "" : " --no-follow");
	text_shell_quote(f, pol);
	fprintf(f, " -- ");
	command_line(f);
}

/* The run's command with what it depends on: the directory it ran in (a
 * program reads its directory without naming it: ls, git, make; and
 * "./prog", "-f script" name files relative to it), the whole policy, and
 * a campaign target's environment. A name no shell assignment takes (any
 * byte but '=' is allowed) goes to env(1), each NAME=VALUE one quoted
 * word, so that its bytes reach the program and never the terminal. */
void reproducer(FILE *f, const struct run *r)
{
	print_reproducer(f, r, false);
}

void reproducer_exec(FILE *f, const struct run *r)
{
	print_reproducer(f, r, true);
}

/* ------------------------------------------------------------------------
 * The result: a line per finding, then each one's evidence
 * ---------------------------------------------------------------------- */

#define SHOWN_PATHS 10 /* call paths listed per finding; the reports list all */

/* "1 run", "3 runs" */
static void plural(FILE *f, size_t n, const char *word)
{
	fprintf(f, "%zu %s%s", n, word, n == 1 ? "" : "s");
}

void finding_counts(FILE *f, const struct finding *fd)
{
	plural(f, fd->paths, "call path");
	fputs(", ", f);
	plural(f, fd->count, "run");
}

/* The failed allocation's caller as a title names a frame (frame_title:
 * "make_title inventory.c:98", the program's own line where a library's
 * code is inlined into it). */
void path_words(FILE *f, const struct run *r)
{
	struct caller c;
	char title[600];
	if (!run_caller(r, &c))
		fprintf(f, "(no injection record)");
	else if (c.fr.info) {
		frame_title(c.fr.info, title, sizeof(title));
		fputs(title, f);
	} else
		frame_words(f, &c.fr);
}

/* One line per finding, and what each class of them means. */
static void print_summary(const struct finding *fs, size_t nfs)
{
	size_t runs_n = 0;
	bool shown[O_COUNT] = {false};
	for (size_t f = 0; f < nfs; f++)
		runs_n += fs[f].count;
	printf("findings: %zu, from ", nfs);
	plural(stdout, runs_n, "run");
	printf("\n");
	for (size_t f = 0; f < nfs; f++) {
		const struct run *r = &runs[fs[f].first];
		printf("  [%zu] ", f + 1);
		finding_title(stdout, r);
		printf(" (");
		finding_counts(stdout, &fs[f]);
		printf(")\n");
	}
	for (size_t f = 0; f < nfs; f++) {
		enum outcome o = runs[fs[f].first].outcome;
		if (!shown[o])
			printf("  %s: %s\n", outcome_name[o], outcome_help[o]);
		shown[o] = true;
	}
}

/* A silent finding's receivers: the program frames the failure came back
 * to, which carried on, each with its runs. */
static void print_receivers(size_t f, const struct path *p, size_t np)
{
	char(*who)[300] = xrealloc(NULL, (np + 1) * sizeof(*who));
	size_t *count = xrealloc(NULL, (np + 1) * sizeof(*count)), n = 0;
	for (size_t k = 0; k < np; k++) {
		struct membuf m;
		path_words(mem_open(&m), &runs[p[k].first]);
		fclose(m.f);
		size_t i = 0;
		while (i < n && strcmp(who[i], m.buf) != 0)
			i++;
		if (i == n) {
			snprintf(who[n], sizeof(who[0]), "%s", m.buf);
			count[n++] = 0;
		}
		count[i] += p[k].count;
		free(m.buf);
	}
	printf("  the failure came back to, and the program carried on in:\n");
	for (size_t i = 0; i < n && i < SHOWN_PATHS; i++) {
		printf("    %s: ", who[i]);
		plural(stdout, count[i], "run");
		printf("\n");
	}
	if (n > SHOWN_PATHS)
		printf("    ... and %zu more (--json and --html list every call path)\n",
		       n - SHOWN_PATHS);
	(void)f;
	free(who);
	free(count);
}

/* A finding's call paths past its first, each with its reproducer. */
static void print_paths(size_t f, const struct path *p, size_t np)
{
	printf("  %zu call paths lead here; each one's first run:\n", np);
	for (size_t k = 0; k < np && k < SHOWN_PATHS; k++) {
		const struct run *r = &runs[p[k].first];
		printf("    [%zu.%zu] ", f + 1, k + 1);
		path_words(stdout, r);
		printf(", site %s, %s %llu: ", r->inj_site[0] ? r->inj_site : "-", point_kind(r),
		       (unsigned long long)r->hit);
		plural(stdout, p[k].count, "run");
		printf("\n          reproduce: ");
		reproducer(stdout, r);
		printf("\n");
	}
	if (np > SHOWN_PATHS)
		printf("    ... and %zu more (--json and --html list every call path)\n",
		       np - SHOWN_PATHS);
}

static void print_finding(const struct finding *fs, size_t f)
{
	const struct run *r = &runs[fs[f].first];
	printf("\n[%zu] ", f + 1);
	finding_title(stdout, r);
	printf("\n  ");
	outcome_words(stdout, r);
	printf(" in ");
	finding_counts(stdout, &fs[f]);
	printf("; the first: allocation failure at site %s, %s %llu\n",
	       r->inj_site[0] ? r->inj_site : "-", point_kind(r), (unsigned long long)r->hit);
	printf("  the failed allocation:\n");
	print_frames(r->inj_frames, false);
	if (r->crash_frames[0]) {
		printf("  %s:\n", r->outcome == O_HANG ? "where it waited when the timeout came"
		                  : r->fault           ? "the crash (the fault the handler caught)"
		                                       : "the crash");
		print_frames(r->crash_frames, true);
	}
	if (r->ev.offset >= 0)
		print_evidence(stdout, &r->ev, "  ");
	if (r->loss.message[0])
		printf("  its message on stderr: %s\n", r->loss.message);
	printf("  reproduce (%s): ", !fs[f].rerun      ? "not re-run: interrupted"
	                             : fs[f].confirmed ? "confirmed"
	                                               : "NOT reproduced");
	reproducer(stdout, r);
	printf("\n");
	struct path *p;
	size_t np = finding_paths(f, &p);
	if (r->outcome == O_SILENT)
		print_receivers(f, p, np);
	if (np > 1)
		print_paths(f, p, np);
	free(p);
}

/* The outcomes, a line per finding, then each finding with its backtraces
 * and reproducers. */
void print_results(const struct finding *fs, size_t nfs, const size_t *counts)
{
	if (opt.interrupted)
		printf("interrupted after %zu of %zu runs (SIG%s): the runs in flight were killed, "
		       "the rest not started\n",
		       opt.runs_done, opt.runs_planned, sigabbrev_np(stop_requested()));
	printf("outcomes:");
	for (int o = 0; o < O_COUNT; o++)
		if (counts[o])
			printf(" %s %zu", outcome_name[o], counts[o]);
	printf("%s\n", nruns ? "" : " none");
	if (!nfs)
		printf("no crash, hang or silent data loss behind any failure point\n");
	else
		print_summary(fs, nfs);
	for (size_t f = 0; f < nfs; f++)
		print_finding(fs, f);
	print_abort_sites();
	frame_names_hint(stdout);
}
