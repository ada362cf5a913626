/* The tools' text spelling (tools/lib/text.c): shell words that bash takes
 * back byte for byte, JSON strings that the tools' own reader takes back,
 * UTF-8 as XML and a terminal need it, and text from files made visible. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "json.h"
#include "text.h"

/* What fn wrote to a memory stream, as a string to free. */
static char *written(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fn(f, s);
	fclose(f);
	return buf ? buf : strdup("");
}

static void shell_is(const char *s, const char *want)
{
	char *got = written(text_shell_quote, s);
	CHECK_STR(got, want);
	free(got);
}

/* The words as printed, each one a shell word: how they read. */
static void quoting_reads_as_its_kind(void)
{
	shell_is("abc/d.e_f-g=h+i:j,k", "abc/d.e_f-g=h+i:j,k");
	shell_is("", "''");
	shell_is("a b", "'a b'");
	shell_is("it's", "'it'\\''s'");
	shell_is("caf\xc3\xa9", "'caf\xc3\xa9'");
	/* bytes a terminal or a copy would mangle: bash's $'...' */
	shell_is("a\x1b[31mb", "$'a\\x1b[31mb'");
	shell_is("a\nb", "$'a\\x0ab'");
	shell_is("it's\t", "$'it\\'s\\x09'");
	shell_is("\xc2\x9b", "$'\\xc2\\x9b'"); /* C1 CSI in UTF-8 */
	shell_is("\xff", "$'\\xff'");          /* no UTF-8 */
	shell_is("\x7f", "$'\\x7f'");
	/* bidirectional controls make a line read in another order than it
	 * runs (RLO U+202E, LRI U+2066, PDI U+2069, RLM U+200F, ALM U+061C) */
	shell_is("a\xe2\x80\xae"
	         "b",
	         "$'a\\xe2\\x80\\xaeb'");
	shell_is("\xe2\x81\xa6"
	         "x\xe2\x81\xa9",
	         "$'\\xe2\\x81\\xa6x\\xe2\\x81\\xa9'");
	shell_is("\xe2\x80\x8f", "$'\\xe2\\x80\\x8f'");
	shell_is("\xd8\x9c", "$'\\xd8\\x9c'");
	/* their neighbours are text: EN DASH U+2013, U+2070 */
	shell_is("a\xe2\x80\x93"
	         "b",
	         "'a\xe2\x80\x93"
	         "b'");
	shell_is("\xe2\x81\xb0", "'\xe2\x81\xb0'");
}

/* Many strings, of every byte but NUL, each quoted and given to bash as
 * one printf argument: bash must print each back exactly. */
static void bash_takes_every_word_back(void)
{
	enum { WORDS = 400 };
	static char words[WORDS][24];
	srand(29);
	char *script = NULL;
	size_t slen = 0;
	FILE *s = open_memstream(&script, &slen);
	fputs("printf '%s\\0'", s);
	for (int w = 0; w < WORDS; w++) {
		int n = rand() % 23;
		for (int i = 0; i < n; i++) {
			/* mostly the bytes that mean something to a shell */
			static const char special[] = " '\"\\$`!*?[]{}()<>|&;#~=%\n\t";
			int r = rand() % 4;
			words[w][i] = r == 0   ? special[rand() % (sizeof(special) - 1)]
			              : r == 1 ? (char)(1 + rand() % 255)
			                       : (char)('a' + rand() % 26);
		}
		words[w][n] = '\0';
		fputc(' ', s);
		text_shell_quote(s, words[w]);
	}
	fclose(s);
	int out[2];
	CHECK(pipe(out) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		execl("/bin/bash", "bash", "-c", script, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	static char got[WORDS * 25];
	size_t len = 0;
	ssize_t r;
	while ((r = read(out[0], got + len, sizeof(got) - len)) > 0)
		len += (size_t)r;
	close(out[0]);
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	size_t at = 0;
	int bad = 0;
	for (int w = 0; w < WORDS; w++) {
		size_t n = strlen(words[w]);
		if (at + n >= len || memcmp(got + at, words[w], n) != 0 || got[at + n] != '\0') {
			if (bad++ < 5)
				fprintf(stderr, "word %d: bash did not take it back\n", w);
			break;
		}
		at += n + 1;
	}
	CHECK(bad == 0);
	CHECK(at == len);
	free(script);
}

static void json_str_is(const char *s, const char *want)
{
	char *got = written(text_json_str, s);
	CHECK_STR(got, want);
	free(got);
}

/* The reader takes back what the writer spelled; what is no UTF-8 becomes
 * U+FFFD. */
static void json_strings_read_back(void)
{
	json_str_is("a\"b\\c", "\"a\\\"b\\\\c\"");
	json_str_is("\x01\n\x1f", "\"\\u0001\\u000a\\u001f\"");
	json_str_is("\xff", "\"\\ufffd\"");
	json_str_is("\xe2\x82\xac", "\"\xe2\x82\xac\"");
	const char *const cases[] = {"plain", "tab\there", "quote\"back\\slash", "\x01\x7f",
	                             "\xc3\xa9\xe2\x80\xae\xf0\x9f\x98\x80"};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = written(text_json_str, cases[i]);
		struct jval v;
		char err[128];
		CHECK(json_parse(text, strlen(text), 1, &v, err, sizeof(err)));
		CHECK(v.type == J_STR && strcmp(v.s, cases[i]) == 0);
		json_free(&v);
		free(text);
	}
}

static size_t utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	return text_utf8_len(p, p + strlen(s));
}

static void utf8_is_what_xml_carries(void)
{
	CHECK(utf8("\xc3\xa9") == 2);
	CHECK(utf8("\xe2\x82\xac") == 3);
	CHECK(utf8("\xf0\x9f\x98\x80") == 4);
	CHECK(utf8("\xc0\x80") == 0);         /* overlong */
	CHECK(utf8("\xe0\x80\x80") == 0);     /* overlong */
	CHECK(utf8("\xed\xa0\x80") == 0);     /* a surrogate */
	CHECK(utf8("\xef\xbf\xbe") == 0);     /* U+FFFE */
	CHECK(utf8("\xf4\x90\x80\x80") == 0); /* past U+10FFFF */
	CHECK(utf8("\xe2\x82") == 0);         /* cut short */
	CHECK(utf8("a") == 0);
}

static unsigned hidden(const char *s)
{
	return text_hidden_control((const unsigned char *)s, strlen(s));
}

static void hidden_controls_are_named(void)
{
	CHECK(hidden("\xc2\x9b") == 0x9b);       /* CSI */
	CHECK(hidden("\xe2\x80\xae") == 0x202e); /* right-to-left override */
	CHECK(hidden("\xe2\x81\xa6") == 0x2066); /* left-to-right isolate */
	CHECK(hidden("\xe2\x80\xa8") == 0x2028); /* line separator */
	CHECK(hidden("\xd8\x9c") == 0x61c);      /* Arabic letter mark */
	CHECK(hidden("\xc3\xa9") == 0);
	CHECK(hidden("\xe2\x82\xac") == 0);
	CHECK(hidden("\xc2\xa0") == 0); /* no-break space: shown */
}

static void visible_is(const char *s, size_t n, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	text_visible_put(f, s, n);
	fclose(f);
	CHECK_STR(buf, want);
	free(buf);
}

static void visible_text_drives_no_terminal(void)
{
	visible_is("a\x1b]0;x\x07z", 8, "a\\x1b]0;x\\x07z");
	visible_is("\xc2\x9b"
	           "2J",
	           4, "\\xc2\\x9b2J");
	visible_is("tab\tnl\n\xc3\xa9", 9, "tab\tnl\n\xc3\xa9");
	visible_is("\x85", 1, "\\x85"); /* a stray C1 byte */
	visible_is("\x7f", 1, "\\x7f");
	visible_is("a\0b", 3, "a\\x00b");
	visible_is("x\xe2\x80\xae"
	           "y",
	           5, "x\\xe2\\x80\\xaey"); /* RLO */
}

static void append_cuts_at_the_end(void)
{
	char out[8];
	size_t len = 0;
	text_append(out, sizeof(out), &len, "%s", "abc");
	CHECK(len == 3);
	text_append(out, sizeof(out), &len, "%d", 12345);
	CHECK_STR(out, "abc1234");
	CHECK(len == 7);
	text_append(out, sizeof(out), &len, "more");
	CHECK_STR(out, "abc1234");
}

int main(void)
{
	quoting_reads_as_its_kind();
	bash_takes_every_word_back();
	json_strings_read_back();
	utf8_is_what_xml_carries();
	hidden_controls_are_named();
	visible_text_drives_no_terminal();
	append_cuts_at_the_end();
	return CHECK_DONE();
}
