#!/bin/bash
# pkg-config --variable=preload gfpshim names the installed libgfpshim.so
# wherever pkg-config finds the .pc file (the prefix, or a meson install
# --destdir), with --define-prefix too (which would double lib/ of a
# multiarch libdir if the path came from the prefix); that copy is the built
# shim, and LD_PRELOAD takes the path as printed.
source "$TESTS/lib.sh"
need_prog pkg-config
meson install -C "$BUILD" --no-rebuild --quiet --destdir "$TMP/d" >/dev/null ||
	fail "meson install --destdir failed"
opts=$(meson introspect "$BUILD" --buildoptions) || fail "meson introspect"
option() { /usr/bin/python3 -c 'import json, sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1" <<<"$opts"; }
prefix=$(option prefix) libdir=$(option libdir)
export PKG_CONFIG_PATH=$TMP/d$prefix/$libdir/pkgconfig
[ -f "$PKG_CONFIG_PATH/gfpshim.pc" ] || fail "no gfpshim.pc in $PKG_CONFIG_PATH"

real() { /usr/bin/python3 -c 'import os, sys; print(os.path.realpath(sys.argv[1]))' "$1"; }
for define in "" --define-prefix; do
	preload=$(pkg-config $define --variable=preload gfpshim) ||
		fail "pkg-config $define --variable=preload failed"
	[ -f "$preload" ] || fail "pkg-config $define --variable=preload: no file $preload"
	expect_eq "pkg-config $define --variable=preload" "$(real "$TMP/d$prefix/$libdir/libgfpshim.so")" \
		"$(real "$preload")"
done
cmp -s "$preload" "$SHIM" || fail "$preload is not the built $SHIM"
expect_eq "pkg-config --modversion" "$(meson introspect "$BUILD" --projectinfo |
	/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')" \
	"$(pkg-config --modversion gfpshim)"

# The installed copy is the shim: a program under it writes a report.
LD_PRELOAD=$preload GFP_POLICY=stats=totals GFP_REPORT=$TMP/r.json ls / >/dev/null ||
	fail "ls under the installed shim failed"
/usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert r["totals"]["calls"] > 0, r' "$TMP/r.json" || fail "no report from the installed shim"
note "pkg-config --variable=preload gfpshim: $preload"
