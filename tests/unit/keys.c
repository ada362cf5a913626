/* Every row of src/policy/keys.def: help text, a default that parses, bounds that
 * hold it, enum choices that contain it. A new key cannot skip this. */
#include <string.h>

#include "check.h"
#include "policy.h"

int main(void)
{
	for (size_t i = 0; i < GFP_KEY_COUNT; i++) {
		const struct gfp_key *k = &gfp_keys[i];
		char v[sizeof(struct gfp_str)] __attribute__((aligned(8)));
		const char *expect;
		CHECK(k->help && strlen(k->help) > 10);
		CHECK(k->name && *k->name);
		int r = config_parse_value(k, k->def, strlen(k->def), v, &expect);
		if (r != 0)
			fprintf(stderr, "key %s: default '%s' does not parse\n", k->name, k->def);
		CHECK(r == 0);
		if (k->type == GFP_T_COUNT)
			CHECK(k->min <= *(int64_t *)v && *(int64_t *)v <= k->max);
		if (k->type == GFP_T_SIZE || k->type == GFP_T_MS)
			CHECK((uint64_t)k->min <= *(uint64_t *)v && *(uint64_t *)v <= (uint64_t)k->max);
		if (k->type == GFP_T_ENUM)
			CHECK(k->choices && strchr(k->choices, '|'));
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(gfp_keys[j].name, k->name) != 0);
	}
	/* The effective-policy dump prints what the parser reads back. */
	struct gfp_policy pol, back;
	config_defaults(&pol);
	config_defaults(&back);
	for (size_t i = 0; i < GFP_KEY_COUNT; i++) {
		char text[256];
		struct gfp_buf b = {text, sizeof(text), 0};
		gfp_buf_printf(&b, "%s=", gfp_keys[i].name);
		config_format_value(&gfp_keys[i], &pol, &b);
		struct gfp_cfg_err err = {0};
		CHECK(config_parse(&back, "test", text, b.len, false, NULL, &err) == 0);
	}
	pol.set[0] = back.set[0] = false;
	CHECK(memcmp(&pol, &back, offsetof(struct gfp_policy, set)) == 0);
	return CHECK_DONE();
}
