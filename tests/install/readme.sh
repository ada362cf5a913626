#!/bin/bash
# README.md's Install table is what meson install installs. See readme.py.
source "$TESTS/lib.sh"
/usr/bin/python3 -B "$TESTS/install/readme.py" || fail "README.md's Install table is not what meson installs (above)"
