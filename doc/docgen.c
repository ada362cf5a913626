/*
 * docgen.c - fills the man pages, doc/policy.md and the bash completion with
 * what the code knows, so that they cannot drift from it: every policy key
 * from src/policy/keys.def (an X-macro, as config.c includes it), every flag name
 * from flags.c, and the version.
 *
 *   docgen TEMPLATE OUTPUT
 *
 * copies TEMPLATE to OUTPUT, "@VERSION@" replaced anywhere and each line
 * that is only a marker replaced by what it names:
 *   @KEYS_ROFF@    every key as a roff .TP paragraph
 *   @FLAGS_ROFF@   the base contexts and modifiers, described
 *   @KEYS_MD@      every key as a row of a markdown table
 *   @FLAGS_MD@     the base contexts and modifiers, as markdown tables
 *   @ROLES_MD@     the keys by what they make the shim see of a call
 *   @KEYS_BASH@    _gfp_keys (the names) and _gfp_key_values (name -> values)
 *   @FLAGS_BASH@   _gfp_flags (the names)
 * A flag flags.c names that FLAG_HELP below does not describe, or the other
 * way round, stops the build; so does a ROLE that ROLE_HELP does not.
 *
 * doc/policy.md is made from doc/policy.md.in and committed, so that it
 * reads on the web; tests/install/policy_md.sh fails when it is stale.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gfp_build.h"
#include "policy.h"

/* ------------------------------------------------------------------------
 * The keys, with their columns as keys.def spells them
 * ---------------------------------------------------------------------- */

struct key_row {
	const char *name, *type, *role, *def, *choices, *help;
	long long min, max;
};

static const struct key_row keys[] = {
#define KEY(id, name_, type_, role_, def_, min_, max_, choices_, help_)                            \
	{.name = name_,                                                                            \
	 .type = #type_,                                                                           \
	 .role = #role_,                                                                           \
	 .def = def_,                                                                              \
	 .choices = choices_,                                                                      \
	 .help = help_,                                                                            \
	 .min = min_,                                                                              \
	 .max = max_},
#include "keys.def"
#undef KEY
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* ------------------------------------------------------------------------
 * The flags: names from flags.c, words from here
 * ---------------------------------------------------------------------- */

struct flag_help {
	const char *name, *help;
};

static const struct flag_help base_help[] = {
    {"KERNEL", "may sleep, reclaim everything and reach the OOM step (the default context)"},
    {"NOFS", "as KERNEL, but no filesystem shrinkers and never the OOM step: it loops instead"},
    {"NOIO", "as NOFS, and no IO shrinkers either"},
    {"NOWAIT", "never sleeps and reclaims nothing that blocks: one attempt, then fails"},
    {"ATOMIC", "as NOWAIT, and may use part of the emergency reserve under a budget"},
};

static const struct flag_help modifier_help[] = {
    {"NORETRY", "fails after the first round of reclaim instead of looping"},
    {"RETRY_MAYFAIL", "retries as long as reclaim makes progress (retries= rounds without), then "
                      "fails; never the OOM step"},
    {"NOFAIL", "never fails: loops until it succeeds (warned above 8 KiB, or with NOWAIT)"},
    {"NOWARN", "no allocation-failure report when it fails"},
    {"HIGH", "may use half of the reserve below limit= (min_free=)"},
    {"MEMALLOC", "may use all of the reserve, ignoring the watermarks"},
    {"NOMEMALLOC", "cancels MEMALLOC"},
    {"ZERO", "the memory is zeroed, as by calloc"},
};

#define NBASES     (sizeof(base_help) / sizeof(base_help[0]))
#define NMODIFIERS (sizeof(modifier_help) / sizeof(modifier_help[0]))

static char bases[16][128], modifiers[32][128];
static size_t nbases, nmods;

static bool named(const char *s)
{
	return *s >= 'A' && *s <= 'Z' && !strchr(s, '|') && !strstr(s, "0x");
}

static bool listed(char (*list)[128], size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* What flags.c names: a modifier is the X of "KERNEL|X" for one bit, a base
 * the single name of a mix of the reclaim bits that is no modifier. */
static void find_flags(void)
{
	char buf[128];
	for (unsigned bit = 0; bit < 32; bit++) {
		gfp_flags_name(GFP_KERNEL | (gfp_t)(1u << bit), buf, sizeof(buf));
		const char *x = strncmp(buf, "KERNEL|", 7) == 0 ? buf + 7 : "";
		if (named(x) && !listed(modifiers, nmods, x))
			snprintf(modifiers[nmods++], sizeof(modifiers[0]), "%s", x);
	}
	const gfp_t mask = GFP_KERNEL | GFP_ATOMIC;
	for (gfp_t s = 0; s <= mask; s++) {
		if (s & ~mask)
			continue;
		gfp_flags_name(s, buf, sizeof(buf));
		if (named(buf) && !listed(modifiers, nmods, buf) && !listed(bases, nbases, buf))
			snprintf(bases[nbases++], sizeof(bases[0]), "%s", buf);
	}
}

static const char *help_of(const struct flag_help *h, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(h[i].name, name))
			return h[i].help;
	return NULL;
}

/* Whether every name of one kind that flags.c gives is described here, and
 * only those. */
static bool described(const char *kind, char (*names)[128], size_t n, const struct flag_help *h,
                      size_t nh)
{
	bool ok = n == nh;
	for (size_t i = 0; i < n; i++)
		if (!help_of(h, nh, names[i])) {
			fprintf(stderr,
			        "docgen: error: flags.c names the %s %s: describe it in "
			        "doc/docgen.c\n",
			        kind, names[i]);
			ok = false;
		}
	if (n != nh)
		fprintf(stderr,
		        "docgen: error: doc/docgen.c describes %zu %ss, flags.c names %zu\n", nh,
		        kind, n);
	return ok;
}

static bool flags_agree(void)
{
	bool bases_ok = described("context", bases, nbases, base_help, NBASES);
	return described("modifier", modifiers, nmods, modifier_help, NMODIFIERS) && bases_ok;
}

/* ------------------------------------------------------------------------
 * roff
 * ---------------------------------------------------------------------- */

/* Text for a roff line: backslashes escaped, a leading '.' or '\'' made
 * text, a '-' that starts a word a minus (options, -1). */
static void roff_text(FILE *o, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", o);
	for (const char *p = s; *p; p++) {
		if (*p == '\\')
			fputs("\\e", o);
		else if (*p == '-' && (p == s || strchr(" (/[", p[-1])))
			fputs("\\-", o);
		else
			fputc(*p, o);
	}
}

static const char *value_word(const struct key_row *k)
{
	static const struct {
		const char *type, *word;
	} words[] = {
	    {"BOOL", "0|1"}, {"COUNT", "N"},     {"SIZE", "SIZE"}, {"MS", "TIME"},
	    {"PROB", "P"},   {"FLAGS", "FLAGS"}, {"STR", "TEXT"},
	};
	static char buf[128];
	if (!strcmp(k->type, "ENUM"))
		return k->choices;
	if ((!strcmp(k->type, "COUNT") || !strcmp(k->type, "SIZE")) && *k->choices) {
		snprintf(buf, sizeof(buf), "%s|%s", k->type[0] == 'C' ? "N" : "SIZE", k->choices);
		return buf;
	}
	if (!strcmp(k->type, "STR") && k->max == GFP_STR_HEX)
		return "ID";
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(words[i].type, k->type))
			return words[i].word;
	return "VALUE";
}

/* A bound as the parser reads it back: 64K, 2s; INT64_MAX is no bound. */
static void print_bound(FILE *o, const struct key_row *k, long long v)
{
	if (!strcmp(k->type, "MS") && v >= 1000 && v % 1000 == 0)
		fprintf(o, "%llds", v / 1000);
	else if (!strcmp(k->type, "MS"))
		fprintf(o, "%lldms", v);
	else
		fprintf(o, "%lld", v);
}

/* A bounded key's range, after `from` ("A to B") or, with no upper bound,
 * after `at_least` ("A"); nothing for the other keys. */
static void print_range(FILE *o, const struct key_row *k, const char *from, const char *at_least)
{
	bool bounded =
	    !strcmp(k->type, "COUNT") || !strcmp(k->type, "SIZE") || !strcmp(k->type, "MS");
	if (bounded && k->max != INT64_MAX) {
		fprintf(o, "%s", from);
		print_bound(o, k, k->min);
		fprintf(o, " to ");
		print_bound(o, k, k->max);
	} else if (bounded && k->min > 0) {
		fprintf(o, "%s", at_least);
		print_bound(o, k, k->min);
	}
}

static void keys_roff(FILE *o)
{
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key_row *k = &keys[i];
		fprintf(o, ".TP\n.BI \"%s=\" ", k->name);
		roff_text(o, value_word(k));
		fprintf(o, "\n");
		roff_text(o, k->help);
		fprintf(o, ".\n.br\nDefault: ");
		roff_text(o, *k->def ? k->def : "empty");
		print_range(o, k, "; from ", "; at least ");
		fprintf(o, ".\n");
	}
}

static void roff_flags(FILE *o, const struct flag_help *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fprintf(o, ".TP\n.B %s\n", h[i].name);
		roff_text(o, h[i].help);
		fprintf(o, ".\n");
	}
}

/* In the order of the words here (flags_agree checked the names). */
static void flags_roff(FILE *o)
{
	fprintf(o, "Base contexts (at most one; none means KERNEL):\n");
	roff_flags(o, base_help, NBASES);
	fprintf(o, ".PP\nModifiers (any number):\n");
	roff_flags(o, modifier_help, NMODIFIERS);
}

/* ------------------------------------------------------------------------
 * markdown
 * ---------------------------------------------------------------------- */

/* Whether a word of help text is code: it holds a character markdown
 * would read (emphasis, a table cell's end, a tag) or that marks a name
 * (a key=, a path, MALLOC_CHECK_). Set in backticks, it needs no escape
 * but the table's pipe. */
static bool md_code_word(const char *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strchr("_*=/<>|[]\\`", w[i]))
			return true;
	return false;
}

/* A code span's text in a table cell: its pipes escaped (GitHub reads a
 * cell's end before the code span). */
static void md_code(FILE *o, const char *s, size_t n)
{
	fputc('`', o);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '|')
			fputc('\\', o);
		fputc(s[i], o);
	}
	fputc('`', o);
}

/* Help text for a table cell: each word that md_code_word calls code in
 * backticks, without the punctuation around it. */
static void md_text(FILE *o, const char *s)
{
	while (*s) {
		size_t sp = strspn(s, " ");
		fwrite(s, 1, sp, o);
		s += sp;
		size_t n = strcspn(s, " ");
		if (!n)
			continue;
		size_t lead = strspn(s, "(\"'"), end = n;
		while (end > lead && strchr(".,;:)\"'", s[end - 1]))
			end--;
		if (end > lead && md_code_word(s + lead, end - lead)) {
			fwrite(s, 1, lead, o);
			md_code(o, s + lead, end - lead);
			fwrite(s + end, 1, n - end, o);
		} else {
			fwrite(s, 1, n, o);
		}
		s += n;
	}
}

static void keys_md(FILE *o)
{
	fprintf(o, "| key | value | default | meaning |\n|---|---|---|---|\n");
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key_row *k = &keys[i];
		const char *v = value_word(k);
		fprintf(o, "| `%s` | ", k->name);
		md_code(o, v, strlen(v));
		print_range(o, k, ", ", ", at least ");
		fprintf(o, " | ");
		if (*k->def)
			md_code(o, k->def, strlen(k->def));
		else
			fprintf(o, "empty");
		fprintf(o, " | ");
		md_text(o, k->help);
		fprintf(o, " |\n");
	}
}

static void md_flags(FILE *o, const struct flag_help *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fprintf(o, "| `%s` | ", h[i].name);
		md_text(o, h[i].help);
		fprintf(o, " |\n");
	}
}

static void flags_md(FILE *o)
{
	fprintf(o, "Base contexts (at most one; none means `KERNEL`):\n\n"
	           "| context | meaning |\n|---|---|\n");
	md_flags(o, base_help, NBASES);
	fprintf(o, "\nModifiers (any number):\n\n| modifier | meaning |\n|---|---|\n");
	md_flags(o, modifier_help, NMODIFIERS);
}

/* The ROLE column of keys.def, in words (keys.def's own comment says the
 * same). */
static const struct flag_help role_help[] = {
    {"SPEAK", "nothing of a call: messages and ids"},
    {"CONTROL", "nothing yet, but a policy may come later (gfp-ctl set)"},
    {"COUNT", "every call, to count it"},
    {"SHAPE", "failing requests: what they do under pressure"},
    {"BUDGET", "every call's size"},
    {"RESERVE", "every call of a thread, whose frees top its reserve up"},
    {"FILL", "every block an allocation hands out"},
    {"INJECT", "every allocation, once one of them arms injection"},
};
#define NROLES (sizeof(role_help) / sizeof(role_help[0]))

static bool roles_agree(void)
{
	bool ok = true;
	for (size_t i = 0; i < NKEYS; i++)
		if (!help_of(role_help, NROLES, keys[i].role)) {
			fprintf(stderr,
			        "docgen: error: keys.def gives %s the role %s: describe it in "
			        "doc/docgen.c\n",
			        keys[i].name, keys[i].role);
			ok = false;
		}
	return ok;
}

static void roles_md(FILE *o)
{
	fprintf(o, "| role | the shim must see | keys |\n|---|---|---|\n");
	for (size_t r = 0; r < NROLES; r++) {
		fprintf(o, "| %s | ", role_help[r].name);
		md_text(o, role_help[r].help);
		fprintf(o, " |");
		const char *sep = " ";
		for (size_t i = 0; i < NKEYS; i++)
			if (!strcmp(keys[i].role, role_help[r].name)) {
				fprintf(o, "%s`%s`", sep, keys[i].name);
				sep = ", ";
			}
		fprintf(o, " |\n");
	}
}

/* ------------------------------------------------------------------------
 * bash
 * ---------------------------------------------------------------------- */

static void flags_bash(FILE *o)
{
	fprintf(o, "_gfp_flags=(");
	for (size_t i = 0; i < NBASES; i++)
		fprintf(o, "%s%s", i ? " " : "", base_help[i].name);
	for (size_t i = 0; i < NMODIFIERS; i++)
		fprintf(o, " %s", modifier_help[i].name);
	fprintf(o, ")\n");
}

/* The values a key takes that can be listed: an ENUM's choices, 0 and 1,
 * a COUNT's word for 0; FLAGS are completed name by name. */
static void keys_bash(FILE *o)
{
	fprintf(o, "_gfp_keys=(");
	for (size_t i = 0; i < NKEYS; i++)
		fprintf(o, "%s%s", i ? " " : "", keys[i].name);
	fprintf(o, ")\ndeclare -gA _gfp_key_values=(");
	const char *sep = "";
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key_row *k = &keys[i];
		char values[256] = "";
		if (!strcmp(k->type, "ENUM") || (!strcmp(k->type, "COUNT") && *k->choices))
			snprintf(values, sizeof(values), "%s", k->choices);
		else if (!strcmp(k->type, "BOOL"))
			snprintf(values, sizeof(values), "0 1");
		else if (!strcmp(k->type, "FLAGS"))
			snprintf(values, sizeof(values), "FLAGS");
		for (char *p = values; *p; p++)
			if (*p == '|')
				*p = ' ';
		if (*values)
			fprintf(o, "%s[%s]=\"%s\"", sep, k->name, values);
		sep = *values ? " " : sep;
	}
	fprintf(o, ")\n");
}

/* ------------------------------------------------------------------------
 * main
 * ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "docgen: error: usage: docgen TEMPLATE OUTPUT\n");
		return 2;
	}
	find_flags();
	if (!flags_agree() || !roles_agree())
		return 1;
	FILE *in = fopen(argv[1], "r");
	FILE *o = in ? fopen(argv[2], "w") : NULL;
	if (!o) {
		fprintf(stderr, "docgen: error: cannot open %s\n", in ? argv[2] : argv[1]);
		return 1;
	}
	char line[4096];
	while (fgets(line, sizeof(line), in)) {
		if (!strcmp(line, "@KEYS_ROFF@\n"))
			keys_roff(o);
		else if (!strcmp(line, "@FLAGS_ROFF@\n"))
			flags_roff(o);
		else if (!strcmp(line, "@KEYS_BASH@\n"))
			keys_bash(o);
		else if (!strcmp(line, "@FLAGS_BASH@\n"))
			flags_bash(o);
		else if (!strcmp(line, "@KEYS_MD@\n"))
			keys_md(o);
		else if (!strcmp(line, "@FLAGS_MD@\n"))
			flags_md(o);
		else if (!strcmp(line, "@ROLES_MD@\n"))
			roles_md(o);
		else
			for (char *p = line, *v; *p; p = v + strlen("@VERSION@")) {
				v = strstr(p, "@VERSION@");
				if (!v) {
					fputs(p, o);
					break;
				}
				fprintf(o, "%.*s%s", (int)(v - p), p, GFP_VERSION);
			}
	}
	bool ok = !ferror(in) && fclose(o) == 0;
	fclose(in);
	if (!ok)
		fprintf(stderr, "docgen: error: cannot write %s\n", argv[2]);
	return ok ? 0 : 1;
}
