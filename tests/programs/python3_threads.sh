#!/bin/bash
# python3 running 8 threads that allocate lists, dicts and bytes gives the
# same stdout, stderr and status with the idle shim as without it.
source "$TESTS/lib.sh"
source "$TESTS/programs/idle.sh"
need_prog /usr/bin/python3

script="$TESTS/programs/python3_threads.py"
identical_under_idle_shim py /usr/bin/python3 "$script"
expect_status py plain 0
same_file "py: output against python3_threads.expected" \
	"$TESTS/programs/python3_threads.expected" "$TMP/py.plain.out"
served_by_shim py malloc 1000 /usr/bin/python3 "$script"
