#!/bin/bash
# The decision table of the slow path: every base context (KERNEL, NOFS,
# NOIO, NOWAIT, ATOMIC) x modifier (none, NORETRY, RETRY_MAYFAIL, NOFAIL) x
# size (4096, 65536 > costly) x pressure (a full limit=8M budget, a real
# ENOMEM under RLIMIT_AS) fails, reaches the OOM step, or loops until another
# thread frees, as the kernel's slow path does (doc/kernel.md); failing
# requests log the failure report, NOFAIL misuse is warned. See
# decision_table.py.
source "$TESTS/lib.sh"
/usr/bin/python3 "$TESTS/slowpath/decision_table.py" "$BUILD/tests/slowpath/sp_case" "$SHIM" "$TMP" -j 2 ||
	fail "cells disagree with the decision table (above)"
