/*
 * text.h - what the tools write as text: JSON strings, shell words, and text
 * from files made visible. One spelling, so that gfp-report's merged files
 * and printed reproducers read exactly like gfp-sweep's own. It calls
 * nothing of the tools': their messages are written with it.
 */
#ifndef GFP_TOOLS_TEXT_H
#define GFP_TOOLS_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Length of the well-formed UTF-8 sequence at p (not a surrogate, not
 * U+FFFE/U+FFFF, which XML cannot carry either), or 0. */
size_t text_utf8_len(const unsigned char *p, const unsigned char *end);
/* The code point of the well-formed UTF-8 character p[0..k) when it is a
 * control a terminal or a browser acts on - C1 (a CSI), the bidirectional
 * overrides and isolates, the line and paragraph separators - else 0: what
 * a program wrote must not reorder or drive what shows it. */
unsigned text_hidden_control(const unsigned char *p, size_t k);
/* Appends the formatted text to out[0..n) at *len, cut at out's end. */
void text_append(char *out, size_t n, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* s as a JSON string; a malformed UTF-8 byte becomes U+FFFD. */
void text_json_str(FILE *f, const char *s);
/* s as one shell word: bare, '...', or bash's $'...' when it holds bytes a
 * terminal or a copy and paste would mangle. */
void text_shell_quote(FILE *f, const char *s);
/* n bytes of s with every control byte as \xNN (C0 but newline and tab,
 * DEL, C1 in UTF-8 or alone): what a message quotes cannot drive a
 * terminal. */
void text_visible_put(FILE *f, const char *s, size_t n);
/* From here on, stdout writes control bytes (all but newline and tab, C1
 * ones too) as \xNN, so that text read from files cannot drive a terminal.
 * The caller fclose()s stdout at the end to flush it. */
void text_visible_stdout(void);

#endif
