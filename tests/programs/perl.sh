#!/bin/bash
# perl building hashes, matching regular expressions and sorting gives the
# same stdout, stderr and status under the idle shim.
source "$TESTS/lib.sh"
source "$TESTS/programs/idle.sh"
need_prog /usr/bin/perl

perl_cmd=(/usr/bin/perl "$TESTS/programs/perl_text.pl")
identical_under_idle_shim perl "${perl_cmd[@]}"
expect_status perl plain 0
same_file "perl: output against perl_text.expected" "$TESTS/programs/perl_text.expected" \
	"$TMP/perl.plain.out"
served_by_shim perl malloc 1000 "${perl_cmd[@]}"
