/*
 * text.h - what the tools read and write as text: whole files, JSON strings,
 * shell words. One spelling, so that gfp-report's merged files and printed
 * reproducers read exactly like gfp-sweep's own.
 */
#ifndef GFP_TOOLS_TEXT_H
#define GFP_TOOLS_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* The whole file, NUL-terminated, its length in *len (if len is not NULL);
 * NULL with errno set when it cannot be read. Out of memory exits 2. */
char *text_slurp(const char *path, size_t *len);
/* The same from fd's offset to its end (fd stays open). */
char *text_slurp_fd(int fd, size_t *len);
/* Length of the well-formed UTF-8 sequence at p (not a surrogate, not
 * U+FFFE/U+FFFF, which XML cannot carry either), or 0. */
size_t text_utf8_len(const unsigned char *p, const unsigned char *end);
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
