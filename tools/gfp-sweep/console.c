/*
 * console.c - the result on the terminal, and what every report shares:
 * finding groups, the command line and the reproducer.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
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

static bool same_group(const struct run *a, const struct run *b)
{
	return a->outcome == b->outcome && strcmp(a->crash_top, b->crash_top) == 0 &&
	       strcmp(a->inj_site, b->inj_site) == 0;
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
	if (!tool_resolve("gfp-run", path, sizeof(path)))
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

/* The site, and the first group's reproducer: one command per bug. */
static void print_group_top(size_t g, void *groups)
{
	const struct run *r = &runs[((const struct group *)groups)[g].first];
	print_crash_top(r);
	printf("    reproduce: ");
	reproducer(stdout, r);
	printf("\n");
}

static void crash_sites_digest(const struct group *groups, size_t ngroups)
{
	const char **top = calloc(ngroups ? ngroups : 1, sizeof(*top));
	double *count = calloc(ngroups ? ngroups : 1, sizeof(*count));
	if (!top || !count)
		die(EXIT_USAGE, "out of memory");
	for (size_t g = 0; g < ngroups; g++) {
		const struct run *r = &runs[groups[g].first];
		if (r->outcome == O_CRASH)
			top[g] = r->crash_top;
		count[g] = (double)groups[g].count;
	}
	tool_crash_sites_digest(ngroups, top, count, print_group_top, (void *)groups);
	free(top);
	free(count);
}

/* Groups the findings by (injection site, outcome, crash site), counts the
 * outcomes and confirms each group by re-running its first failure point. */
size_t group_runs(struct group *groups, size_t *counts)
{
	size_t ngroups = 0;
	for (size_t i = 0; i < nruns; i++) {
		counts[runs[i].outcome]++;
		runs[i].group = -1;
		if (!is_finding(runs[i].outcome))
			continue;
		size_t g = 0;
		while (g < ngroups && !same_group(&runs[groups[g].first], &runs[i]))
			g++;
		if (g == ngroups)
			groups[ngroups++] = (struct group){.first = i};
		groups[g].count++;
		runs[i].group = (long)g;
	}
	/* Their files' indexes follow every planned run's. */
	for (size_t g = 0; g < ngroups && !stop_requested(); g++) {
		progress_phase("confirming finding group %zu of %zu", g + 1, ngroups);
		groups[g].confirmed =
		    confirm(&runs[groups[g].first], (int)(opt.runs_planned + 1 + g));
		groups[g].rerun = !stop_requested();
	}
	progress_clear();
	return ngroups;
}

/* The outcomes, then each group with its backtraces and reproducer. */
void print_results(const struct group *groups, size_t ngroups, const size_t *counts)
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
	for (size_t g = 0; g < ngroups; g++) {
		const struct run *r = &runs[groups[g].first];
		printf("\n[%zu] ", g + 1);
		outcome_words(stdout, r);
		printf(" in %zu run%s: allocation failure at site %s, %s %llu\n", groups[g].count,
		       groups[g].count == 1 ? "" : "s", r->inj_site[0] ? r->inj_site : "-",
		       r->site[0] ? "hit" : "call", (unsigned long long)r->hit);
		printf("  the failed allocation:\n");
		print_frames(r->inj_frames, false);
		if (r->crash_frames[0]) {
			printf("  the crash%s:\n",
			       r->fault ? " (the fault the handler caught)" : "");
			print_frames(r->crash_frames, true);
		}
		if (r->ev.offset >= 0)
			print_evidence(stdout, &r->ev, "  ");
		printf("  reproduce (%s): ", !groups[g].rerun      ? "not re-run: interrupted"
		                             : groups[g].confirmed ? "confirmed"
		                                                   : "NOT reproduced");
		reproducer(stdout, r);
		printf("\n");
	}
	if (!ngroups)
		printf("no crash, hang or silent data loss behind any failure point\n");
	crash_sites_digest(groups, ngroups);
	print_abort_sites();
	frame_names_hint(stdout);
}
