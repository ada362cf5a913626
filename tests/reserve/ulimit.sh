#!/bin/bash
# No budget, a real ENOMEM: the worker reserves 8M with reserve.prefault=1,
# then the soft RLIMIT_AS is lowered and two other threads (created before)
# fill the address space with 64K, 4K and 256-byte blocks until NULL and keep
# asking. The worker's transaction (1000 x 4K + 1000 x 128, NOFS, then 16
# plain mallocs) completes from the prefaulted pool while the others get
# nothing; the unreserve unmaps the unused part of the pool, which the others
# can then use, and the transaction's blocks stay valid. The same run without
# reserve.prefault: the transaction gets NULLs.
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"

pol='wait=1ms;retries=2;oom=fail;nofs_fail=1'
RS_REPORT=1 rs_run pr "reserve.prefault=1;$pol" "$TXN" ulimit
rs_load pr
want pr "with stats: the transaction, the others, the report's pool_serves and reserved_now" \
	"pr_txn_4k_ok == 1000 && pr_txn_128_ok == 1000 && pr_plain_ok == 16 && pr_hammer_got == 0 &&
	 $(rs_report pr pool_serves) > 0 && $(rs_report pr reserved_now) == 0"
rs_run p "reserve.prefault=1;$pol" "$TXN" ulimit
rs_load p
rs_run n "$pol" "$TXN" ulimit
rs_load n

for r in p n; do
	declare -n rc=${r}_reserve_rc probe=${r}_hog_probe hog=${r}_hog_bytes
	want $r "the reservation failed" "rc == 0"
	want $r "the other threads did not exhaust the address space (probe got $probe)" \
		"hog > 0 && probe == 0"
done
want p "the transaction under prefault: $p_txn_4k_ok x 4K, $p_txn_128_ok x 128 of 1000 each" \
	"p_txn_4k_ok == 1000 && p_txn_128_ok == 1000 && p_txn_4k_null == 0 && p_txn_128_null == 0"
want p "plain malloc inside the prefaulted reservation: $p_plain_ok of 16" "p_plain_ok == 16"
want p "the other threads got memory from the reservation's pool" \
	"p_hammer_got == 0 && p_hammer_tries > 0"
want p "the transaction's blocks after the unreserve" "p_blocks_corrupt == 0"
want p "the unreserve unmapped $p_unmapped bytes, expected the unused part (>= 1M)" \
	"p_unmapped >= 1048576"
want p "the others could not use what the unreserve unmapped: $p_hog_after_unreserve bytes" \
	"p_hog_after_unreserve >= 1048576"
want n "without prefault the transaction should have failed somewhere" \
	"n_txn_4k_null + n_txn_128_null > 0"

note "address space filled by the other threads: $p_hog_bytes bytes (prefault), $n_hog_bytes (without)"
note "with reserve.prefault=1: transaction $p_txn_4k_ok/1000 x 4K, $p_txn_128_ok/1000 x 128, plain $p_plain_ok/16; others $p_hammer_got of $p_hammer_tries; pool serves $(rs_report pr pool_serves) (with stats)"
note "without prefault:        transaction $n_txn_4k_ok/1000 x 4K, $n_txn_128_ok/1000 x 128 (NULLs: $n_txn_4k_null + $n_txn_128_null); others $n_hammer_got of $n_hammer_tries"
note "unreserve unmapped $p_unmapped bytes; another thread then got $p_hog_after_unreserve bytes"
