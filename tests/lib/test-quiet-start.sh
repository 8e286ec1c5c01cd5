#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that nobody records starts quietly: no code rewritten (no page made writable and
# executable) and no membarrier barrier across cores (its sites are nops already; before, every
# start issued one).   usage: test-quiet-start.sh PEER-USERTP (bench/peers: fires one event)
set -eu
prog=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset USERTP_EVENTS USERTP_SESSION
export XDG_RUNTIME_DIR="$dir/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"
# LeakSanitizer cannot run under ptrace (the ASan build): leaks are not what this test is about.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null ||
	{ echo "SKIP: strace cannot run here"; exit 77; }
strace -f -qq -e trace=membarrier,mprotect -o "$dir/trace" "$prog" --status >/dev/null
fail=0
barrier='membarrier\(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE,'
if grep -E "$barrier|mprotect\(.*PROT_WRITE\|PROT_EXEC" "$dir/trace"; then
	echo "the start rewrote code or synchronised the cores"
	fail=1
fi
# The same program recorded does rewrite its sites (the test sees what it looks for).
USERTP_EVENTS='usertp_bench:*' USERTP_OUTPUT="$dir/out.dat" strace -f -qq \
	-e trace=membarrier,mprotect -o "$dir/trace2" "$prog" --status >/dev/null
grep -Eq "$barrier" "$dir/trace2" ||
	{ echo "a recorded program did not synchronise the cores after patching:"; cat "$dir/trace2"; fail=1; }
exit $fail
