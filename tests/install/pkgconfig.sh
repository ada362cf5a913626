#!/bin/bash
# pkg-config --variable=preload gfpshim names the installed libgfpshim.so:
# the prefix's path (what LD_PRELOAD takes once installed), ending in the
# library's name, whose copy under a meson install --destdir is the built
# shim and preloads as one.
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

preload=$(pkg-config --variable=preload gfpshim) || fail "pkg-config --variable=preload failed"
expect_eq "the preload path" "$prefix/$libdir/libgfpshim.so" "$preload"
[ -f "$TMP/d$preload" ] || fail "$TMP/d$preload: not installed"
cmp -s "$TMP/d$preload" "$SHIM" || fail "$TMP/d$preload is not the built $SHIM"
expect_eq "pkg-config --modversion" "$(meson introspect "$BUILD" --projectinfo |
	/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')" \
	"$(pkg-config --modversion gfpshim)"

# The installed copy is the shim: a program under it writes a report.
LD_PRELOAD=$TMP/d$preload GFP_POLICY=stats=totals GFP_REPORT=$TMP/r.json ls / >/dev/null ||
	fail "ls under the installed shim failed"
/usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert r["totals"]["calls"] > 0, r' "$TMP/r.json" || fail "no report from the installed shim"
note "pkg-config --variable=preload gfpshim: $preload"
