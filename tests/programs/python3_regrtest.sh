#!/bin/bash
# CPython's regression tests of descriptors, subprocesses and stderr pass
# under the shim exactly as without it: idle, limit=8G, stats=sites and
# fail.probability=0 (python3_regrtest.py says how).
source "$TESTS/lib.sh"
need_prog /usr/bin/python3
ver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ -f "/usr/lib/python$ver/test/test_subprocess.py" ] ||
	skip "CPython's test suite is not installed (Debian: libpython$ver-testsuite)"
/usr/bin/python3 "$TESTS/programs/python3_regrtest.py" "$SHIM" "$TMP"
