/*
 * docgen.c - fills the man pages and the bash completion with what the
 * code knows, so that they cannot drift from it: every policy key from
 * src/keys.def (an X-macro, as config.c includes it), every flag name from
 * flags.c, and the version.
 *
 *   docgen TEMPLATE OUTPUT
 *
 * copies TEMPLATE to OUTPUT, "@VERSION@" replaced anywhere and each line
 * that is only a marker replaced by what it names:
 *   @KEYS_ROFF@    every key as a roff .TP paragraph
 *   @FLAGS_ROFF@   the base contexts and modifiers, described
 *   @KEYS_BASH@    _gfp_keys (the names) and _gfp_key_values (name -> values)
 *   @FLAGS_BASH@   _gfp_flags (the names)
 * A flag flags.c names that FLAG_HELP below does not describe, or the other
 * way round, stops the build.
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
		bool bounded =
		    !strcmp(k->type, "COUNT") || !strcmp(k->type, "SIZE") || !strcmp(k->type, "MS");
		if (bounded && k->max != INT64_MAX) {
			fprintf(o, "; from ");
			print_bound(o, k, k->min);
			fprintf(o, " to ");
			print_bound(o, k, k->max);
		} else if (bounded && k->min > 0) {
			fprintf(o, "; at least ");
			print_bound(o, k, k->min);
		}
		fprintf(o, ".\n");
	}
}

/* In the order of the words here (flags_agree checked the names). */
static void flags_roff(FILE *o)
{
	fprintf(o, "Base contexts (at most one; none means KERNEL):\n");
	for (size_t i = 0; i < NBASES; i++) {
		fprintf(o, ".TP\n.B %s\n", base_help[i].name);
		roff_text(o, base_help[i].help);
		fprintf(o, ".\n");
	}
	fprintf(o, ".PP\nModifiers (any number):\n");
	for (size_t i = 0; i < NMODIFIERS; i++) {
		fprintf(o, ".TP\n.B %s\n", modifier_help[i].name);
		roff_text(o, modifier_help[i].help);
		fprintf(o, ".\n");
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
	if (!flags_agree())
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
