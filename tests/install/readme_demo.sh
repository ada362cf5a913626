#!/bin/bash
# README.md's excerpt of tools/demo is what gfp-sweep prints on the bundled
# example today. See readme_demo.py.
source "$TESTS/lib.sh"
/usr/bin/python3 -B "$TESTS/install/readme_demo.py" || fail "README.md's demo excerpt is not what the sweep prints (above)"
