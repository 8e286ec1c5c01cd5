#!/bin/sh
# SPDX-License-Identifier: MIT
# <usertp/printk.h>, printk-prog's known arguments (C, C++, the static library; a library it
# links; a module dlopen()ed by a program that knows nothing of usertp), recorded by the
# embedded recorder (trace.dat and the kernel's trace text) and by usertp record:
#   - trace-cmd report prints what usertp report prints, byte for byte, and each line is the
#     text printf() makes of the same arguments, after the caller's function ("round_once:");
#   - the records are ftrace:bprint and ftrace:bputs, their format the kernel's, in the file's
#     ftrace section; the formats are in its printk_formats section, the functions in kallsyms;
#   - the %c format is refused at the start, with its file and line, and records nothing;
#   - formats at their edges (printk-prog edges): the embedded recorder's text (its own
#     printer), usertp report's and trace-cmd's (libtraceevent's) are the same;
#   - the module's formats print after its dlclose();
#   - usertp stream (read live); usertp record -P on the running program; --recover of a
#     recorder killed.
#   usage: test-report-printk.sh USERTP PRINTK-PROG PRINTK-PROG-CXX PRINTK-PROG-STATIC
#          DLOPEN-HOST PRINTK-LIB TEST-MERGE
set -eu
usertp=$1 dlopen_host=$5 printk_lib=$6 testmerge=$7
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../lib.sh"
rounds=5

# expected: the lines' texts, as printf() makes them
expected() {
	i=0
	while [ $i -lt $rounds ]; do
		if [ $((i % 2)) -eq 1 ]; then name=odd; else name=even; fi
		x=$(printf '%#x' $((i << 40)))
		printf 'round_once: round %d of %u: %s x=%s y=%d w=%6d z=%08x s=%.3s tab\t"q" u=%u p=0x%x\n' \
			$i $rounds $name "$x" $((-i)) $((i * 7)) $((i * 255)) abcdef $((i * 3)) $((0x1000 + i))
		printf 'printk_lib_fire: lib %d name\n' $i
		i=$((i + 1))
	done
	printf 'main: done\n'
}
expected >"$dir/expected"

# check WHAT FILE.dat: usertp report's texts are the expected ones, trace-cmd's the same
check() {
	"$usertp" report -i "$2" | sed -n 's/^.*: \(bprint\|bputs\): *//p' >"$dir/texts"
	cmp -s "$dir/texts" "$dir/expected" ||
		{ echo "$1: the texts:"; diff "$dir/texts" "$dir/expected" | head; fail=1; }
	same -i "$2"
	trace-cmd dump --printk "$2" >"$dir/printk" 2>/dev/null
	for f in 'round %d of %u: %s x=%#llx' 'lib %d %s\\n' 'done\\n'; do
		expect "$dir/printk" "$f" "$1: printk format $f"
	done
	trace-cmd dump --kallsyms "$2" >"$dir/kallsyms" 2>/dev/null
	for f in round_once printk_lib_fire main; do
		expect "$dir/kallsyms" " t $f\$" "$1: function $f"
	done
	trace-cmd dump --ftrace-events "$2" >"$dir/ftrace" 2>/dev/null
	expect "$dir/ftrace" 'name: bprint' "$1: the bprint format in the ftrace section"
	expect "$dir/ftrace" 'field:u32 buf\[\];	offset:24;	size:0;	signed:0;' "$1: bprint's buf[]"
}

for prog in "$2" "$3" "$4"; do
	what=$(basename "$prog")
	USERTP_EVENTS='ftrace:*' USERTP_OUTPUT="$dir/e.dat" "$prog" $rounds 2>"$dir/err"
	check "$what, embedded" "$dir/e.dat"
	grep -q 'printk-prog.c:[0-9]*: this usertp_printk() is not recorded: %c' "$dir/err" ||
		{ echo "$what: the %c format is not refused:"; cat "$dir/err"; fail=1; }
	# The kernel's trace text: the text alone after the time, as the kernel prints bprint.
	USERTP_EVENTS='ftrace:*' USERTP_OUTPUT="$dir/e.txt" "$prog" $rounds 2>/dev/null
	sed -n 's/^[^]]*\] [^ ]* *[0-9.]*: //p' "$dir/e.txt" >"$dir/texts"
	cmp -s "$dir/texts" "$dir/expected" ||
		{ echo "$what: the trace text:"; diff "$dir/texts" "$dir/expected" | head; fail=1; }
	"$usertp" record -q -e 'ftrace:*' -o "$dir/r.dat" -- "$prog" $rounds 2>"$dir/err" ||
		{ echo "$what: usertp record:"; cat "$dir/err"; fail=1; }
	check "$what, usertp record" "$dir/r.dat"
	# usertp stream: read live (the session's own printer), the executable's formats told
	# after the library's (its constructors run last) and read as they come.
	"$usertp" stream -q -e 'ftrace:*' -- "$prog" $rounds 2>/dev/null |
		sed -n 's/^.*: \(bprint\|bputs\): *//p' >"$dir/texts"
	cmp -s "$dir/texts" "$dir/expected" ||
		{ echo "$what, usertp stream: the texts:"; diff "$dir/texts" "$dir/expected" | head; fail=1; }
	# ftrace:bprint alone: no bputs.
	"$usertp" record -q -e 'ftrace:bprint' -o "$dir/b.dat" -- "$prog" $rounds 2>/dev/null
	[ "$("$usertp" report -i "$dir/b.dat" | grep -c ' bprint: ')" -eq $((2 * rounds)) ] &&
		! "$usertp" report -i "$dir/b.dat" | grep -q ' bputs: ' ||
		{ echo "$what: ftrace:bprint alone"; fail=1; }
done

# Formats at their edges: the embedded recorder's text is libtraceevent's.
USERTP_EVENTS='ftrace:*' USERTP_OUTPUT="$dir/x.dat" "$2" edges 2>/dev/null
USERTP_EVENTS='ftrace:*' USERTP_OUTPUT="$dir/x.txt" "$2" edges 2>/dev/null
same -i "$dir/x.dat"
# (the texts, and the line a newline inside a format makes)
"$usertp" report -i "$dir/x.dat" | tail -n +2 | sed 's/^.*: bprint: *//' >"$dir/texts"
grep -v '^#' "$dir/x.txt" | sed 's/^[^]]*\] [^ ]* *[0-9.]*: //' >"$dir/own"
[ "$(wc -l <"$dir/texts")" -eq 8 ] && cmp -s "$dir/texts" "$dir/own" &&
	grep -q '^edges: big=xxx*|7$' "$dir/texts" && ! grep -q 'FAILED' "$dir/texts" ||
	{ echo "edges: libtraceevent's texts and the embedded recorder's:"; diff "$dir/texts" "$dir/own" | cut -c1-100 | head; fail=1; }

# usertp record -P: a running program's, from when the recorder joined (each line one of
# the expected ones, in order).
rounds=150
expected >"$dir/expected"
"$2" $rounds 10000 2>/dev/null &
running=$!
"$usertp" record -q -e 'ftrace:*' -P "$running" -o "$dir/p.dat" 2>"$dir/err" ||
	{ echo "usertp record -P:"; cat "$dir/err"; fail=1; }
wait "$running" || true
"$usertp" report -i "$dir/p.dat" | sed -n 's/^.*: \(bprint\|bputs\): *//p' >"$dir/texts"
first=$(head -1 "$dir/texts")
[ -s "$dir/texts" ] && grep -nxF -- "$first" "$dir/expected" >/dev/null &&
	tail -n "$(wc -l <"$dir/texts")" "$dir/expected" | cmp -s - "$dir/texts" ||
	{ echo "record -P: the texts are not the expected ones' end:"; head -3 "$dir/texts"; fail=1; }
same -i "$dir/p.dat"

# With the kernel's events (where tracefs can be written): one file, the kernel's kallsyms and
# printk formats and the program's together; the texts as before.
if [ -w /sys/kernel/tracing/instances ]; then
	rounds=5
	expected >"$dir/expected"
	"$usertp" record -q -e 'ftrace:*' -e sched:sched_switch -o "$dir/kr.dat" -- "$2" $rounds \
		2>/dev/null || { echo "usertp record with sched_switch failed"; fail=1; }
	"$usertp" report -i "$dir/kr.dat" | sed -n 's/^.*: \(bprint\|bputs\): *//p' >"$dir/texts"
	cmp -s "$dir/texts" "$dir/expected" ||
		{ echo "with kernel events: the texts:"; diff "$dir/texts" "$dir/expected" | head; fail=1; }
	"$usertp" report -i "$dir/kr.dat" | grep -q ' sched_switch: ' || { echo "no sched_switch"; fail=1; }
	same -i "$dir/kr.dat"
	rounds=150
	expected >"$dir/expected"
fi

# A recorder killed once its spool holds pages of them: --recover prints them (the formats
# kept in the spool's meta), the first lines of the expected ones (the program kept to one
# CPU: another CPU's page still being written is not in the spool).
"$usertp" record -q -e 'ftrace:*' -o "$dir/k.dat" -- taskset -c 0 "$2" $rounds 10000 2>/dev/null &
rec=$!
wait_until "a spool with the first records" sh -c "[ \$('$testmerge' spool-bytes '$dir'/k.dat.spool-*) -ge 8192 ]"
kill -KILL "$rec"
wait "$rec" 2>/dev/null || true
pkill -f "$2 $rounds 10000" || true
"$usertp" record --recover "$(ls -d "$dir"/k.dat.spool-*)" -o "$dir/k.dat" 2>"$dir/err" ||
	{ echo "--recover failed:"; cat "$dir/err"; fail=1; }
"$usertp" report -i "$dir/k.dat" | sed -n 's/^.*: \(bprint\|bputs\): *//p' >"$dir/texts"
[ "$(wc -l <"$dir/texts")" -ge 20 ] && head -n "$(wc -l <"$dir/texts")" "$dir/expected" | cmp -s - "$dir/texts" ||
	{ echo "--recover: the texts are not the expected ones' start:"; head -3 "$dir/texts"; fail=1; }
same -i "$dir/k.dat"

# The module, dlopen()ed and dlclose()d: 4 calls, embedded and recorded.
USERTP_EVENTS='ftrace:*' USERTP_OUTPUT="$dir/m.dat" "$dlopen_host" "$printk_lib" 4
"$usertp" record -q -e 'ftrace:*' --allow-missing -o "$dir/m2.dat" -- "$dlopen_host" "$printk_lib" 4 \
	2>"$dir/err" || { echo "usertp record of the module:"; cat "$dir/err"; fail=1; }
printf 'rec_mod_fire: module %d\n' 0 1 2 3 >"$dir/expected"
for f in m m2; do
	"$usertp" report -i "$dir/$f.dat" | sed -n 's/^.*: bprint: *//p' >"$dir/texts"
	cmp -s "$dir/texts" "$dir/expected" ||
		{ echo "$f: the module's texts:"; diff "$dir/texts" "$dir/expected" | head; fail=1; }
	same -i "$dir/$f.dat"
done
[ $compared -gt 0 ] || { echo "nothing compared"; fail=1; }
exit $fail
