#!/bin/bash
# The tools work from an installed tree, not only from the build tree: after
# meson install --destdir into a directory whose path has spaces and UTF-8
# (so the tree is not at the configured prefix), the installed gfp-run finds
# the installed library relative to its own real path (run by a symlink
# too) and the program runs under it; the installed gfp-sweep finds what
# the build tree's finds, and its reproducers name the installed gfp-run;
# pkg-config's preload, with --define-prefix too, is the installed library.
# The build tree's gfp-run still takes the build tree's library, and a
# gfp-run with no library around says in one line everywhere it looked.
source "$TESTS/lib.sh"
need_prog pkg-config

root="$TMP/inst dé ✓"
meson install -C "$BUILD" --no-rebuild --quiet --destdir "$root" >/dev/null ||
	fail "meson install --destdir failed"
opts=$(meson introspect "$BUILD" --buildoptions) || fail "meson introspect"
option() { /usr/bin/python3 -c 'import json, sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1" <<<"$opts"; }
prefix=$(option prefix) bindir=$(option bindir) libdir=$(option libdir)
bin=$root$prefix/$bindir lib=$root$prefix/$libdir
[ -f "$lib/libgfpshim.so" ] || fail "no $lib/libgfpshim.so"

# Everything meson says it installs is there.
meson introspect "$BUILD" --installed | /usr/bin/python3 -c 'import json, os, sys
missing = [d for d in json.load(sys.stdin).values()
           if not os.path.lexists(sys.argv[1] + d)]
sys.exit("not installed: %s" % missing if missing else 0)' "$root" || fail "meson install left files out"

# A gfp-run on PATH must not be the one the tools name or run.
mkdir "$TMP/decoy"
printf '#!/bin/sh\necho decoy; exit 99\n' >"$TMP/decoy/gfp-run"
chmod +x "$TMP/decoy/gfp-run"
export PATH="$TMP/decoy:$PATH"
outprog=$BUILD/tests/sweep/outprog

# The library a program ran under, as its memory map names it.
loaded_shim() {
	"$@" -- /bin/cat /proc/self/maps >"$TMP/maps" || fail "$1 -- cat /proc/self/maps failed"
	/usr/bin/python3 -c 'import os, sys
libs = {os.path.realpath(l.split(None, 5)[5].rstrip("\n")) for l in open(sys.argv[1])
        if l.rstrip("\n").endswith("/libgfpshim.so")}
print(" ".join(sorted(libs)))' "$TMP/maps"
}
real() { /usr/bin/python3 -c 'import os, sys; print(os.path.realpath(sys.argv[1]))' "$1"; }

# The installed gfp-run: the installed library, and the policy applies (a
# failed malloc loses outprog's payload line, which it prints otherwise).
expect_eq "library under the installed gfp-run" "$(real "$lib/libgfpshim.so")" \
	"$(loaded_shim "$bin/gfp-run")"
"$bin/gfp-run" -- "$outprog" status1 >"$TMP/plain.out"
expect_eq "outprog status1 under the installed gfp-run, no policy: status" 1 "$?"
expect_eq "outprog status1 under the installed gfp-run, no policy" $'hdr\npayload' "$(cat "$TMP/plain.out")"
"$bin/gfp-run" --policy 'fail.probability=1;stats=totals' --report "$TMP/r.json" -- \
	"$outprog" status1 >"$TMP/fail.out"
expect_eq "outprog status1 under the installed gfp-run, every malloc failing: status" 1 "$?"
expect_eq "outprog status1 under the installed gfp-run, every malloc failing" hdr "$(cat "$TMP/fail.out")"
/usr/bin/python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["totals"]
assert t["failures"] > 0, t' "$TMP/r.json" || fail "the installed shim reported no failure"

# Run by a symlink elsewhere: relative to the real path, not the link's.
mkdir "$TMP/links ü"
ln -s "$bin/gfp-run" "$TMP/links ü/gfp-run"
expect_eq "library under a symlink to the installed gfp-run" "$(real "$lib/libgfpshim.so")" \
	"$(loaded_shim "$TMP/links ü/gfp-run")"

# The build tree's gfp-run keeps the build tree's library.
expect_eq "library under the build tree's gfp-run" "$(real "$SHIM")" "$(loaded_shim "$GFP_RUN")"

# gfp-sweep from the install finds what the build tree's finds; each names
# the gfp-run beside it in its reproducers, and the installed one's
# reproducer, run as printed, reproduces.
for where in install build; do
	sweep=$bin/gfp-sweep run=$bin/gfp-run
	[ "$where" = build ] && sweep=$BUILD/tools/gfp-sweep run=$BUILD/tools/gfp-run
	(cd "$TMP" && "$sweep" --json "$TMP/$where.json" -- "$outprog" status1 >"$TMP/$where.sweep" 2>&1)
	expect_eq "$where gfp-sweep status (a silent data loss)" 1 "$?"
	/usr/bin/python3 -c 'import json, shlex, sys
r = json.load(open(sys.argv[1]))
assert r["findings"], "no finding"
for g in r["findings"] + [p for f in r["findings"] for p in f["call_paths"]]:
    argv = shlex.split(g["reproducer"])
    argv = argv[argv.index("&&") + 1:] if argv[:2] == ["cd", "--"] else argv
    assert argv[0] == sys.argv[2], f"reproducer runs {argv[0]!r}, not {sys.argv[2]!r}"' \
		"$TMP/$where.json" "$run" || fail "$where gfp-sweep's reproducers"
done
/usr/bin/python3 -c 'import json, sys
found = [sorted((x["site"], x["hit"], x["outcome"]) for x in json.load(open(f))["results"])
         for f in sys.argv[1:]]
assert found[0] == found[1], f"installed {found[0]}, build tree {found[1]}"' \
	"$TMP/install.json" "$TMP/build.json" || fail "the installed gfp-sweep finds other things"
repro=$(/usr/bin/python3 -c 'import json, sys
print(next(g["reproducer"] for g in json.load(open(sys.argv[1]))["findings"]
           if g["outcome"] == "silent"))' "$TMP/install.json") || fail "no silent finding to reproduce"
bash -c "$repro" >"$TMP/repro.out" 2>"$TMP/repro.err"
expect_eq "the installed reproducer's status ($repro)" 1 "$?"
expect_eq "the installed reproducer loses the payload ($repro)" hdr "$(cat "$TMP/repro.out")"

# pkg-config, as found and with --define-prefix: the installed library
# (pkg-config writes a space in a path as "\ ").
for define in "" --define-prefix; do
	preload=$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config $define --variable=preload gfpshim) ||
		fail "pkg-config $define --variable=preload failed"
	preload=${preload//\\ / }
	[ -f "$preload" ] || fail "pkg-config $define --variable=preload: no file '$preload'"
	expect_eq "pkg-config $define --variable=preload" "$(real "$lib/libgfpshim.so")" "$(real "$preload")"
done

# A gfp-run with no library around: one line naming every directory it
# looked in and the fix, status 2, and the program is not run.
configured=$(/usr/bin/python3 -c 'import os, sys; print(os.path.join(*sys.argv[1:]))' "$prefix" "$libdir")
if [ -e "$configured/libgfpshim.so" ]; then
	note "a library is installed in $configured: the lone gfp-run would take it, not checked"
else
	mkdir "$TMP/lone dir"
	cp "$bin/gfp-run" "$TMP/lone dir/"
	"$TMP/lone dir/gfp-run" -- /bin/sh -c ": >'$TMP/ran'" >"$TMP/lone.out" 2>"$TMP/lone.err"
	expect_eq "a lone gfp-run: status" 2 "$?"
	[ ! -e "$TMP/ran" ] || fail "a lone gfp-run ran the program"
	[ ! -s "$TMP/lone.out" ] || fail "a lone gfp-run wrote to stdout"
	/usr/bin/python3 -c 'import os, re, shlex, sys
err, tmp, prefix, bindir, libdir = sys.argv[1:]
bindir, libdir = os.path.join(prefix, bindir), os.path.join(prefix, libdir)
lines = open(err).read().splitlines()
assert len(lines) == 1, f"{len(lines)} lines: {lines}"
m = re.fullmatch(r"gfp-run: error: cannot find libgfpshim\.so in (.*) \(build it with "
                 r"\x27meson compile -C build\x27, install it with \x27meson install\x27, "
                 r"or pass --lib PATH\)", lines[0])
assert m, lines[0]
dirs = shlex.split(m.group(1).replace(", ", " "))
up = os.path.normpath(os.path.join(tmp, "lone dir", os.path.relpath(libdir, bindir)))
want = [tmp + "/preload", tmp + "/lone dir", up, tmp + "/lib", libdir]
want = [d for i, d in enumerate(want) if d not in want[:i]]
assert dirs == want, f"looked in {dirs}, not {want}"' \
		"$TMP/lone.err" "$(real "$TMP")" "$prefix" "$bindir" "$libdir" ||
		fail "a lone gfp-run's message: $(cat "$TMP/lone.err")"
	# Still one line from a directory whose name has a newline and a tab.
	odd=$TMP/$'new\nline\ttab'
	mkdir "$odd"
	cp "$bin/gfp-run" "$odd/"
	"$odd/gfp-run" -- /bin/true 2>"$TMP/odd.err"
	expect_eq "a lone gfp-run in an odd directory: status" 2 "$?"
	expect_eq "a lone gfp-run in an odd directory: lines" 1 "$(wc -l <"$TMP/odd.err")"
	expect_contains "a lone gfp-run in an odd directory" "$TMP/odd.err" \
		'^gfp-run: error: cannot find libgfpshim\.so in .*new\\x0aline\\x09tab'
fi

# A library LD_PRELOAD cannot name (a colon, which LD_LIBRARY_PATH splits
# at too) is refused, not silently left out.
mkdir "$TMP/co:lon"
cp "$lib/libgfpshim.so" "$TMP/co:lon/"
"$bin/gfp-run" --lib "$TMP/co:lon/libgfpshim.so" -- /bin/sh -c ": >'$TMP/ran'" 2>"$TMP/colon.err"
expect_eq "a library path with a colon: status" 2 "$?"
[ ! -e "$TMP/ran" ] || fail "gfp-run ran the program without its library"
expect_contains "a library path with a colon" "$TMP/colon.err" \
	"^gfp-run: error: LD_PRELOAD cannot name .*co:lon/libgfpshim\.so'? \(ld\.so splits it"
note "installed in $root: gfp-run, gfp-sweep and pkg-config's preload work from there"
