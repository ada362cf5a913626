#!/bin/bash
# doc/policy.md is committed so that it reads on the web, and generated:
# it must be what docgen makes now from doc/policy.md.in, src/policy/keys.def and
# src/policy/flags.c (the build's copy, build/doc/policy.md), or a key added,
# renamed or re-described would be missing or wrong there.
source "$TESTS/lib.sh"
built=$BUILD/doc/policy.md
[ -s "$built" ] || fail "not built: $built"
if ! cmp -s "$built" "$SRC/doc/policy.md"; then
	diff -u "$SRC/doc/policy.md" "$built" | head -40 >&2
	fail "doc/policy.md is stale (above: what docgen makes now): regenerate it with
  $BUILD/doc/docgen $SRC/doc/policy.md.in $SRC/doc/policy.md"
fi
echo "# doc/policy.md: $(grep -c '^| `' "$built") rows, as docgen makes them"
