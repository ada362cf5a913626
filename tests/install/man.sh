#!/bin/bash
# meson install puts the man pages in mandir; each renders without a groff
# warning; the tools' pages list their --help's exit statuses and options,
# gfpshim(7) every key of src/policy/keys.def, every flag and variable. See man.py.
source "$TESTS/lib.sh"
need_prog groff man
/usr/bin/python3 -B "$TESTS/install/man.py" || fail "man pages disagree (above)"
