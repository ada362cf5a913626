#!/bin/bash
# Which file names a recorded frame: the records carry each module's path
# and build-id ("modules"). A library whose recorded path is gone is found
# by its build-id in a tree laid out like /usr/lib/debug (--debug-dir DIR:
# .build-id/xx/rest.debug, a copy of the library or a separate debug file
# from objcopy --only-keep-debug), and from a debuginfod server when
# DEBUGINFOD_URLS names one (a local stand-in here); without either it is
# not found. A different build of the library at the recorded path is not
# used for names: the frame keeps its recorded symbol, with one warning.
source "$TESTS/lib.sh"
REPORT=$BUILD/tools/gfp-report
DIR=$BUILD/tests/report
unset DEBUGINFOD_URLS
L_DUP=$(grep -n '/\* SITE:dup_name \*/' "$SRC/tests/report/libfoo.c" | cut -d: -f1)
[ -n "$L_DUP" ] || fail "no SITE:dup_name in libfoo.c"
NAMED="^    dup_name libfoo\.c:$L_DUP \(libfoo\.so\+0x[0-9a-f]+\)$"
RECORDED='^    dup_name\+0x[0-9a-f]+ \(libfoo\.so\+0x[0-9a-f]+\)$'

# fooprog with its library loaded from $TMP/lib, its records read from a
# directory that has neither.
mkdir "$TMP/lib" "$TMP/elsewhere"
cp "$DIR/libfoo.so" "$TMP/lib/libfoo.so"
LD_LIBRARY_PATH=$TMP/lib run_shim GFP_POLICY=fail.nth=1 GFP_RECORD="$TMP/rec.jsonl" \
	"$DIR/fooprog" >/dev/null 2>&1
[ -s "$TMP/rec.jsonl" ] || fail "fooprog under fail.nth=1 wrote no record"
ID=$(/usr/bin/python3 - "$TMP/rec.jsonl" "$TMP/lib/libfoo.so" <<'PY'
import json, sys
rec = json.loads(open(sys.argv[1]).readline())
mods = [m for m in rec.get("modules", []) if m["name"] == "libfoo.so"]
if len(mods) != 1 or mods[0].get("path") != sys.argv[2] or not mods[0].get("build_id"):
    sys.exit(f"FAIL: the record's libfoo.so module {mods} is not at {sys.argv[2]} with a "
             f"build-id; modules {rec.get('modules')}")
print(mods[0]["build_id"])
PY
) || fail "see above"
cd "$TMP/elsewhere" || fail "cd"
report() { # OUT ARGS...: gfp-report ARGS > OUT, stderr in OUT.err; exit status 0
	local out=$1
	shift
	"$REPORT" "$@" "$TMP/rec.jsonl" >"$out" 2>"$out.err"
	expect_eq "gfp-report $*: exit status" 0 "$?"
}
report "$TMP/at_path"
expect_contains "at its recorded path" "$TMP/at_path" "$NAMED"

# Gone from its path: by build-id under --debug-dir, and only there.
tree=$TMP/debug/.build-id/${ID:0:2}
mkdir -p "$tree"
mv "$TMP/lib/libfoo.so" "$tree/${ID:2}.debug"
report "$TMP/gone"
expect_contains "gone: the recorded symbol" "$TMP/gone" "$RECORDED"
expect_contains "gone: a note" "$TMP/gone.err" '^gfp-report: note: libfoo\.so not found'
report "$TMP/by_id" --debug-dir "$TMP/debug"
expect_contains "found by build-id: a copy of the library" "$TMP/by_id" "$NAMED"
objcopy --only-keep-debug "$tree/${ID:2}.debug" "$TMP/only-debug" ||
	fail "objcopy --only-keep-debug failed"
mv "$TMP/only-debug" "$tree/${ID:2}.debug"
report "$TMP/by_id" --debug-dir "$TMP/debug"
expect_contains "found by build-id: a separate debug file" "$TMP/by_id" "$NAMED"

# From a debuginfod server: a stand-in serving /buildid/ID/executable.
mkdir -p "$TMP/served/$ID"
cp "$DIR/libfoo.so" "$TMP/served/$ID/executable"
rm -rf "$TMP/debug"
/usr/bin/python3 - "$TMP/served" "$TMP/port" "$TMP/asked" <<'PY' &
import http.server, os, sys
root, port_file, asked = sys.argv[1:]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        open(asked, "a").write(self.path + "\n")
        parts = self.path.strip("/").split("/")
        f = os.path.join(root, parts[1], parts[2]) if len(parts) == 3 else ""
        if parts[0] != "buildid" or not os.path.isfile(f):
            self.send_error(404)
            return
        data = open(f, "rb").read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(port_file + ".tmp", "w").write(str(s.server_address[1]))
os.rename(port_file + ".tmp", port_file)
s.serve_forever()
PY
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 600); do [ -s "$TMP/port" ] && break; sleep 0.1; done
[ -s "$TMP/port" ] || fail "the debuginfod stand-in did not start"
DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$TMP/port") DEBUGINFOD_CACHE_PATH=$TMP/cache \
	report "$TMP/served.out"
grep -qx "/buildid/$ID/executable" "$TMP/asked" ||
	fail "gfp-report did not ask debuginfod for the executable of $ID: $(cat "$TMP/asked" 2>&1)"
expect_contains "found through debuginfod" "$TMP/served.out" "$NAMED"
kill $server

# Another build at the recorded path: not used, one warning.
cp "$DIR/libfoo_other.so" "$TMP/lib/libfoo.so"
report "$TMP/changed"
expect_contains "changed: the recorded symbol" "$TMP/changed" "$RECORDED"
grep -q 'libfoo\.c:' "$TMP/changed" && fail "changed: named from the other build: $(cat "$TMP/changed")"
expect_eq "changed: one warning" \
	"gfp-report: warning: libfoo.so: file changed since the run (build-id $ID), frames keep their recorded names" \
	"$(cat "$TMP/changed.err")"
exit 0
