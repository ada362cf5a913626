/*
 * policy.h - the policy library (libgfppolicy.a): the key table (keys.def)
 * and its parser (config.c), gfp flag names (flags.c), the GFP_RULES parser
 * (rules_parse.c) and the formatter that never allocates (libc.c).
 *
 * Linked by the shim and by the tools, the fuzzer and the unit tests, which
 * need the same parser and the same messages but not the engine: nothing
 * declared here may reach jemalloc, libunwind or the thread-local state.
 */
#ifndef GFP_POLICY_H
#define GFP_POLICY_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gfpshim.h"

/* Hidden in libgfpshim.so as the engine is (internal.h). */
#pragma GCC visibility push(hidden)

/* ------------------------------------------------------------------------
 * libc.c - string and formatting helpers that never allocate and are safe in
 * signal handlers. The shim runs inside malloc: it cannot use stdio.
 * ---------------------------------------------------------------------- */
int gfp_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int gfp_snprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends to a bounded buffer; `len` saturates at `cap - 1`. */
struct gfp_buf {
	char *p;
	size_t cap, len;
};
void gfp_buf_printf(struct gfp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gfp_buf_json_str(struct gfp_buf *b, const char *s);
int gfp_strcasecmp_n(const char *a, const char *b, size_t n);
unsigned gfp_edit_distance(const char *a, size_t alen, const char *b, size_t blen);
bool gfp_write_all(int fd, const char *p, size_t n);
/* Appends n bytes of what a user wrote, as written except what could act on
 * a terminal or is not UTF-8: control bytes, DEL, C1 controls and bytes of
 * no well-formed UTF-8 character become \xNN. Stops at the buffer's end,
 * never in the middle of an escape or a character. */
void gfp_buf_quote(struct gfp_buf *b, const char *s, size_t n);
/* The same into out (cap bytes, NUL-terminated); returns out. */
const char *gfp_quote(char *out, size_t cap, const char *s, size_t n);
/* glibc's text for err, without strerror (which may allocate). */
const char *gfp_strerror(int err);
/* A size as people read it, the kernel's way: "512 B", "84.8 KiB",
 * "8.0 MiB" (binary units, one decimal). */
#define GFP_HUMAN_LEN 24
const char *gfp_human_size(char out[GFP_HUMAN_LEN], int64_t bytes);

/* ------------------------------------------------------------------------
 * flags.c - gfp flag names <-> bits.
 * ---------------------------------------------------------------------- */
/* Writes "NOFS|NOFAIL" style names; returns the length written. */
size_t gfp_flags_name(gfp_t flags, char *buf, size_t n);
/* Parses "nofs|nofail" (or 0x...); 0 on success, -1 with *bad pointing at an
 * unknown word, -2 when more than one base context is named. No base context
 * means KERNEL, as a bare modifier does in the kernel's GFP_KERNEL | X. */
int gfp_flags_parse(const char *s, size_t len, gfp_t *out, const char **bad, size_t *badlen);
/* Flags as a request's context (context.c applies it to every request,
 * rules_parse.c to each rule's flags). Inline: context.c's hot callers had
 * it inlined when it lived there. */
static inline gfp_t context_normalize(gfp_t f)
{
	/* A bare modifier (gfp_malloc(n, GFP_NOFAIL)) means GFP_KERNEL | it:
	 * no reclaim, IO or FS bit is set. */
	if (!(f & GFP_KERNEL))
		f |= GFP_KERNEL;
	/* NOIO implies NOFS: FS reclaim may do IO. */
	if (!(f & GFP_IO_BIT))
		f &= ~GFP_FS_BIT;
	/* NOMEMALLOC wins over MEMALLOC (__gfp_pfmemalloc_flags). */
	if (f & GFP_NOMEMALLOC)
		f &= ~GFP_MEMALLOC;
	return f;
}

/* ------------------------------------------------------------------------
 * config.c - the policy, parsed from GFP_POLICY / GFP_POLICY_FILE.
 * ---------------------------------------------------------------------- */
enum gfp_key_type {
	GFP_T_BOOL,
	GFP_T_COUNT,
	GFP_T_SIZE,
	GFP_T_MS,
	GFP_T_PROB,
	GFP_T_ENUM,
	GFP_T_FLAGS,
	GFP_T_STR,
};

/* A short string value (globs, site ids). */
struct gfp_str {
	char v[128];
};

#define GFP_CTYPE_BOOL  bool
#define GFP_CTYPE_COUNT int64_t
#define GFP_CTYPE_SIZE  uint64_t
#define GFP_CTYPE_MS    uint64_t
#define GFP_CTYPE_PROB  double
#define GFP_CTYPE_ENUM  unsigned
#define GFP_CTYPE_FLAGS gfp_t
#define GFP_CTYPE_STR   struct gfp_str

enum gfp_key_id {
#define KEY(id, name, type, role, def, min, max, choices, help) GFP_K_##id,
#include "keys.def"
#undef KEY
	GFP_KEY_COUNT
};

struct gfp_policy {
#define KEY(id, name, type, role, def, min, max, choices, help) GFP_CTYPE_##type id;
#include "keys.def"
#undef KEY
	bool set[GFP_KEY_COUNT]; /* given explicitly, not a default */
};

/* The values of the ENUM keys, made from their choices in keys.def. stats:
 * each level counts what the one before it does, and more. */
#define GFP_CHOICE_ENUM(e, s) e,
enum gfp_stats_level { GFP_CHOICES_stats(GFP_CHOICE_ENUM, ) };
enum gfp_oom_action { GFP_CHOICES_oom(GFP_CHOICE_ENUM, ) };
enum gfp_fail_where { GFP_CHOICES_fail_where(GFP_CHOICE_ENUM, ) };
enum gfp_reserve_mode { GFP_CHOICES_reserve_mode(GFP_CHOICE_ENUM, ) };
enum gfp_limit_scope { GFP_CHOICES_limit_scope(GFP_CHOICE_ENUM, ) };

/* What a SIZE key's word (its choices) stands for: limit=cgroup. */
#define GFP_SIZE_WORD UINT64_MAX

/* `max` of a STR key: what the text must be. */
#define GFP_STR_ANY 0
#define GFP_STR_HEX 1

/* A key's ROLE column in keys.def. */
enum gfp_key_role {
	GFP_ROLE_SPEAK,
	GFP_ROLE_CONTROL,
	GFP_ROLE_COUNT,
	GFP_ROLE_SHAPE,
	GFP_ROLE_BUDGET,
	GFP_ROLE_RESERVE,
	GFP_ROLE_FILL,
	GFP_ROLE_INJECT,
};

struct gfp_key {
	const char *name;
	enum gfp_key_type type;
	const char *def;
	int64_t min, max;
	const char *choices;
	const char *help;
	size_t offset;
	enum gfp_key_role role;
};
extern const struct gfp_key gfp_keys[GFP_KEY_COUNT];

/* Where an error message comes from: "GFP_POLICY" or "GFP_POLICY_FILE /x:3". */
struct gfp_cfg_err {
	char msg[512];
	int count;
};
void config_defaults(struct gfp_policy *pol);
/* Parses `key=value` pairs separated by ';', ',' or newlines ('#' comments
 * when `file` is true). Returns the number of errors; each is formatted into
 * err->msg (the last one wins) and passed to `report` when it is not NULL. */
int config_parse(struct gfp_policy *pol, const char *src, const char *text, size_t len, bool file,
                 void (*report)(const char *msg), struct gfp_cfg_err *err);
/* Parses one value for key `k`. 0 on success, else -1 with `expect` set. */
int config_parse_value(const struct gfp_key *k, const char *v, size_t vlen, void *out,
                       const char **expect);
/* Key i back to its default, as if it had not been set. */
void config_reset_key(struct gfp_policy *pol, size_t i);
bool config_shapes(const struct gfp_policy *pol);
/* Keys that are fine alone but not together: the message, or NULL; *drop
 * is the key that GFP_STRICT=0 ignores to settle it. */
const char *config_contradiction(const struct gfp_policy *p, size_t *drop);
/* The nearest key name within a small edit distance, or NULL. */
const char *config_did_you_mean(const char *key, size_t len);
/* Prints the value of key `k` from `pol` as the parser accepts it. */
void config_format_value(const struct gfp_key *k, const struct gfp_policy *pol, struct gfp_buf *b);

/* ------------------------------------------------------------------------
 * rules_parse.c - GFP_RULES as a rule set (rules.c matches requests).
 * ---------------------------------------------------------------------- */
#define GFP_RULES_MAX     32
#define GFP_RULE_GLOB_MAX 128
enum gfp_match_kind {
	GFP_MATCH_SYM,
	GFP_MATCH_LIB,
	GFP_MATCH_SIZE_GT,
	GFP_MATCH_SIZE_LT,
	GFP_MATCH_THREAD
};
struct gfp_matcher {
	enum gfp_match_kind kind;
	char glob[GFP_RULE_GLOB_MAX];
	uint64_t size;
};
struct gfp_rule {
	struct gfp_matcher m[8];
	int nm;
	gfp_t flags;
	bool on_path; /* has sym: or lib: */
};
struct gfp_rule_set {
	struct gfp_rule rule[GFP_RULES_MAX];
	int n;
	bool need_sym; /* some rule looks at function names */
};
/* Parses GFP_RULES text into set; 0, or -1 with one line in err naming the
 * rule, the column and what was expected. */
int rules_parse(struct gfp_rule_set *set, const char *text, char *err, size_t errlen);

/* ------------------------------------------------------------------------
 * ctl_proto.c - the control socket's path and replies (ctl.c, gfp-ctl).
 * ---------------------------------------------------------------------- */
/* The directory the sockets are in (which 0: as the process puts it, 1:
 * the /tmp one), checked to be this user's alone; and a process's socket. */
int ctl_socket_dir(int which, char *dir, size_t n, bool create, char *why, size_t wn);
int ctl_socket_path(int which, pid_t pid, char *out, size_t n, bool create, char *why, size_t wn);
/* How the listener's error replies begin; ctl_reply_status tells gfp-ctl
 * what a reply's first line means for its exit status. */
#define GFP_EXIT_CONFIG     125 /* a bad policy: before main, or refused by gfp-ctl set */
#define GFP_CTL_ERROR       "error: "
#define GFP_CTL_REFUSED     GFP_CTL_ERROR "refused: "
#define GFP_CTL_NOT_APPLIED GFP_CTL_ERROR "not applied at run time: "
bool ctl_reply_is_error(const char *head, size_t len);
int ctl_reply_status(const char *first_line, bool is_set);

#pragma GCC visibility pop

#endif /* GFP_POLICY_H */
