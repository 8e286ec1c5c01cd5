#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that nobody records starts quietly: no code rewritten (no page made writable and
# executable) and no membarrier barrier across cores (its sites are nops already; before, every
# start issued one); its endpoint is made by the control thread, not before main() (before:
# the main thread's socket, bind, chmod, listen, pipe and /proc write cost about 150 us of
# every start), and that thread sets up no malloc arena; a program that exits at once leaves
# no socket behind.   usage: test-quiet-start.sh PEER-USERTP (bench/peers: fires one event)
set -eu
prog=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset USERTP_EVENTS USERTP_SESSION
export XDG_RUNTIME_DIR="$dir/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"
# LeakSanitizer cannot run under ptrace (the ASan build): leaks are not what this test is about.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# ThreadSanitizer waits 1 s at the exit of a program with threads, for races to show: not
# what the 100 starts below are about.
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}atexit_sleep_ms=0"
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
# Who makes the endpoint: the thread (its pid is not the program's).
strace -f -qq -e trace=socket,bind,listen,pipe2,openat,mmap -o "$dir/trace3" "$prog" --status >/dev/null
main=$(awk 'NR == 1 { print $1 }' "$dir/trace3")
if awk -v main="$main" '$1 == main && (/bind\(/ || /listen\(/ || /pipe2\(/ || /\/comm"/)' "$dir/trace3" | grep .; then
	echo "the main thread made the endpoint (or named the thread) before main()"
	fail=1
fi
grep -q 'bind(.*\.sock' "$dir/trace3" || { echo "no endpoint made at all:"; cat "$dir/trace3"; fail=1; }
# glibc's arena for a thread's first malloc() or free(): 128 MiB reserved, then trimmed.
if awk -v main="$main" '$1 != main && /mmap\(NULL, 134217728,/' "$dir/trace3" | grep .; then
	echo "the control thread set up a malloc arena"
	fail=1
fi
# Exits at once, before or while its thread makes the endpoint: the exit waits for it and
# removes the socket.
i=0
while [ $i -lt 100 ]; do
	"$prog" --start-only
	i=$((i + 1))
done
left=$(find "$XDG_RUNTIME_DIR" -name '*.sock' | wc -l)
[ "$left" -eq 0 ] || { echo "$left sockets left by 100 programs that exited"; fail=1; }
exit $fail
