#!/bin/sh
# SPDX-License-Identifier: MIT
# Damaged trace.dat files: usertp report prints every intact event before the damage (what
# trace-cmd prints for the same file cut cleanly there), then an error naming the byte, and
# exits 1; it never hangs.   usage: test-report-damage.sh USERTP REPORT-FIRE
set -eu
usertp=$1 fire=$2
. "$(dirname "$0")/lib.sh"
export LC_ALL=C
page=4096

# All data on CPU 0, many pages.
USERTP_EVENTS='usertp-test:*' USERTP_OUTPUT=$dir/full.dat taskset -c 0 "$fire" 30 100
theirs "$dir/full.txt" -i "$dir/full.dat"

u64() { od -An -tu8 -j "$2" -N 8 "$1" | tr -d ' '; }
table=$(($(grep -obUa flyrecord "$dir/full.dat" | head -1 | cut -d: -f1) + 10))
data=$(u64 "$dir/full.dat" $table)
size=$(u64 "$dir/full.dat" $((table + 8)))
k=3
[ "$size" -gt $((page * (k + 2))) ] || { echo "CPU 0 has only $size bytes"; exit 1; }
damaged=$((data + k * page))

# What trace-cmd prints of the first k pages: the same file with CPU 0's size cut to them.
cp "$dir/full.dat" "$dir/kpages.dat"
put "$dir/kpages.dat" $((table + 8)) 8 $((k * page))
theirs "$dir/kpages.txt" -i "$dir/kpages.dat"
[ "$(wc -l <"$dir/kpages.txt")" -gt 10 ] || { echo "too few events in $k pages"; exit 1; }

# run CASE FILE: usertp report under a time limit; it must fail and name a byte.
run() {
	rc=0
	timeout 20 "$usertp" report -i "$2" >"$dir/ours" 2>"$dir/ours.err" || rc=$?
	case $rc in
	1) ;;
	124) echo "$1: usertp report hung"; fail=1 ;;
	*) echo "$1: exit status $rc, expected 1"; cat "$dir/ours.err"; fail=1 ;;
	esac
	grep -q 'byte [0-9]' "$dir/ours.err" || { echo "$1: no byte offset in:"; cat "$dir/ours.err"; fail=1; }
}
# intact CASE: the output is the first k pages' events.
intact() {
	cmp -s "$dir/ours" "$dir/kpages.txt" || {
		echo "$1: not the events before the damage:"; diff "$dir/ours" "$dir/kpages.txt" | head -5; fail=1; }
}
variant() { cp "$dir/full.dat" "$dir/$1.dat"; }

# The file cut at a page boundary, and inside a page (whole entries before the cut shown).
head -c $damaged "$dir/full.dat" >"$dir/cut.dat"
run cut "$dir/cut.dat"; intact cut
grep -q "ends at byte $damaged" "$dir/ours.err" || { echo "cut: wrong offset:"; cat "$dir/ours.err"; fail=1; }
head -c $((damaged + 1000)) "$dir/full.dat" >"$dir/cut-mid.dat"
run cut-mid "$dir/cut-mid.dat"
n=$(wc -c <"$dir/ours")
if ! cmp -s -n "$(wc -c <"$dir/kpages.txt")" "$dir/ours" "$dir/kpages.txt" ||
   ! cmp -s -n "$n" "$dir/ours" "$dir/full.txt" ||
   [ "$(wc -l <"$dir/ours")" -le "$(wc -l <"$dir/kpages.txt")" ]; then
	echo "cut-mid: not the events of the whole entries before the cut"; fail=1
fi

# Page k's first entry: a length past the page; padding pointing backwards (a loop for a
# reader that trusts it); then page k's commit larger than a page.
variant len; put "$dir/len.dat" $((damaged + 16)) 4 0; put "$dir/len.dat" $((damaged + 20)) 4 4294967295
run len "$dir/len.dat"; intact len
grep -q "page at byte $damaged" "$dir/ours.err" || { echo "len: wrong offset:"; cat "$dir/ours.err"; fail=1; }
variant loop; put "$dir/loop.dat" $((damaged + 16)) 4 $((29 + 32)); put "$dir/loop.dat" $((damaged + 20)) 4 4294967288
run loop "$dir/loop.dat"; intact loop
variant commit; put "$dir/commit.dat" $((damaged + 8)) 8 65535
run commit "$dir/commit.dat"; intact commit

# An event id without a format: printed as trace-cmd prints it, not damage.
# (The first record's common_type: after its header word, and its length word in the long
# form, type_len 0.)
word=$(od -An -tu4 -j $((data + 16)) -N 4 "$dir/full.dat" | tr -d ' ')
variant unknown; put "$dir/unknown.dat" $((data + 16 + (word % 32 ? 4 : 8))) 2 999
same -i "$dir/unknown.dat"
expect "$dir/ours" 'UNKNOWN EVENT' "event without a format"

# Damage before any event: nothing printed.
head -c 100 "$dir/full.dat" >"$dir/head.dat"
run head "$dir/head.dat"
[ ! -s "$dir/ours" ] || { echo "head: output for a file cut in its header"; fail=1; }
variant magic; put "$dir/magic.dat" 0 1 0
rc=0; "$usertp" report -i "$dir/magic.dat" >/dev/null 2>"$dir/ours.err" || rc=$?
[ $rc -eq 1 ] && grep -q 'not a trace.dat file' "$dir/ours.err" || { echo "magic: status $rc"; fail=1; }

# A zstd version 7 file cut short: trace-cmd puts the table of the data at the end, so
# nothing can be shown, but the error names the byte.
trace-cmd convert -i "$dir/full.dat" -o "$dir/v7.dat" --file-version 7 --compression zstd >/dev/null 2>&1
head -c $(($(wc -c <"$dir/v7.dat") - 3000)) "$dir/v7.dat" >"$dir/v7-cut.dat"
run v7-cut "$dir/v7-cut.dat"

# Version 7 blocks that declare more than they hold (issue 21, item 19: 8 CPUs declaring 256 MiB
# each made usertp report take 2.1 GB): refused before anything is allocated, under a 200 MB
# address-space limit that such an allocation would break.  A block is "u32 compressed size,
# u32 size, zstd frame"; a CPU's chunk holds whole pages.
frames=$(grep -obUa "$(printf '\050\265\057\375')" "$dir/v7.dat" | cut -d: -f1)
chunk= section=
for f in $frames; do
	size=$(od -An -tu4 -j $((f - 4)) -N 4 "$dir/v7.dat" | tr -d ' ')
	if [ $((size % page)) -eq 0 ] && [ -z "$chunk" ]; then chunk=$f; fi
	if [ $((size % page)) -ne 0 ] && [ -z "$section" ]; then section=$f; fi
done
[ -n "$chunk" ] && [ -n "$section" ] || { echo "no chunk or section found in v7.dat"; exit 1; }
# bomb CASE FILE MESSAGE: refused with MESSAGE, within the limit
bomb() {
	rc=0
	# (A sanitizer's runtime reserves its shadow memory beyond any such limit: none then.)
	limit="ulimit -v 200000;"
	! ldd "$usertp" 2>/dev/null | grep -q 'libasan\|libtsan' || limit=
	(eval "$limit"; timeout 20 "$usertp" report -i "$2" >"$dir/ours" 2>"$dir/ours.err") || rc=$?
	[ $rc -eq 1 ] || { echo "$1: exit status $rc, expected 1"; fail=1; }
	grep -q "$3" "$dir/ours.err" || { echo "$1: not '$3':"; cat "$dir/ours.err"; fail=1; }
}
cp "$dir/v7.dat" "$dir/chunk-big.dat"; put "$dir/chunk-big.dat" $((chunk - 4)) 4 $((256 << 20))
bomb chunk-big "$dir/chunk-big.dat" 'chunk: decompressed size 268435456 is too large'
cp "$dir/v7.dat" "$dir/section-ratio.dat"; put "$dir/section-ratio.dat" $((section - 4)) 4 $((200 << 20))
bomb section-ratio "$dir/section-ratio.dat" 'more than 1024 times'
# CPUSTAT counts that do not fit a signed sum (issue 21, item 19: report --stat printed a
# negative total, UBSan's signed overflow): the totals stop at the largest, never wrap.
cp "$dir/full.dat" "$dir/stat.dat"
for at in $(grep -obUa 'overrun: 0                   ' "$dir/stat.dat" | cut -d: -f1); do
	printf 'overrun: 18446744073709551615' | dd of="$dir/stat.dat" bs=1 seek="$at" conv=notrunc status=none
done
rc=0
"$usertp" report --stat -i "$dir/stat.dat" >"$dir/stat.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { echo "report --stat with huge counts: status $rc"; cat "$dir/stat.txt"; fail=1; }
grep -q '^all .* 18446744073709551615$' "$dir/stat.txt" || { echo "report --stat: the total wrapped:"; cat "$dir/stat.txt"; fail=1; }
exit $fail
