#!/bin/bash
# The documents (README.md, doc/*.md): see docs.py for what each check
# holds. Usage: docs.sh front|links|pages
source "$TESTS/lib.sh"
/usr/bin/python3 -B "$TESTS/install/docs.py" "$1" || fail "the documents disagree (above)"
