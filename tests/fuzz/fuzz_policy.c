/*
 * libFuzzer target for everything that reads user input before main: the
 * GFP_POLICY / GFP_POLICY_FILE parser, every typed value parser, the flag
 * parser and the did-you-mean search. Built with -Dfuzz=enabled (clang).
 */
#include <stdint.h>
#include <string.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[8192];
	if (size == 0 || size >= sizeof(text))
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	size_t len = size - 1;

	struct gfp_policy pol;
	struct gfp_cfg_err err = {0};
	config_defaults(&pol);
	config_parse(&pol, "GFP_POLICY", text, len, data[0] & 1, NULL, &err);
	/* The message is always terminated and within its buffer. */
	if (strnlen(err.msg, sizeof(err.msg)) == sizeof(err.msg))
		__builtin_trap();

	const struct gfp_key *k = &gfp_keys[data[0] % GFP_KEY_COUNT];
	union {
		int64_t i;
		uint64_t u;
		double d;
		unsigned e;
		bool b;
		struct gfp_str str; /* text keys write a whole struct gfp_str */
	} v;
	const char *expect;
	config_parse_value(k, text, len, &v, &expect);

	gfp_t flags;
	const char *bad;
	size_t badlen;
	if (gfp_flags_parse(text, len, &flags, &bad, &badlen) == 0) {
		char names[256];
		gfp_flags_name(flags, names, sizeof(names));
	}
	config_did_you_mean(text, len);

	for (size_t i = 0; i < GFP_KEY_COUNT; i++) {
		char out[512];
		struct gfp_buf b = {out, sizeof(out), 0};
		config_format_value(&gfp_keys[i], &pol, &b);
	}
	return 0;
}
