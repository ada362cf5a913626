#!/bin/bash
# The installed bash completion completes every tool's options, the policy
# keys and values of src/policy/keys.def, flags, modes and gfp-ctl's processes,
# driven as bash drives it and in a real interactive bash. See
# completion.py.
source "$TESTS/lib.sh"
/usr/bin/python3 -B "$TESTS/install/completion.py" || fail "completions disagree (above)"
