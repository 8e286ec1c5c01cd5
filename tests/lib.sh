# SPDX-License-Identifier: MIT
# lib.sh - what the shell tests share; sourced: . "$(dirname "$0")/../lib.sh"

# wait_until WHAT CMD...: until CMD succeeds, every 50 ms; after 10 s the test fails, saying WHAT
# (and, where the test has set wait_dump to a command, what that prints: the state it waited on).
wait_until() {
	what=$1
	shift
	wait_tries=0 # (not i: the loops of the tests that call it)
	until "$@" 2>/dev/null; do
		wait_tries=$((wait_tries + 1))
		[ $wait_tries -lt 200 ] || {
			echo "timed out waiting for $what"
			[ -z "${wait_dump:-}" ] || eval "$wait_dump"
			exit 1
		}
		sleep 0.05
	done
}

# check_count WHAT GOT WANT
check_count() {
	[ "$2" -eq "$3" ] || { echo "$1: $2, expected $3"; fail=1; }
}

# exact FILE ERR FIRED: recorded + lost = fired in trace.dat FILE (FIRED -: not known), per
# CPU the same in its CPUSTAT options (trace-cmd report --stat), its records (trace-cmd
# report), usertp report --stat and, when ERR has one, usertp record's summary.  (Uses $dir,
# $usertp, and sets fail=1.)
exact() {
	trace-cmd report --stat -i "$1" >"$dir/tstat" 2>&1
	trace-cmd report -i "$1" 2>/dev/null | grep -v 'EVENTS DROPPED\]' >"$dir/lines"
	"$usertp" report --stat "$1" >"$dir/ustat"
	awk '/^CPU: /{c=$2} /^overrun:/{o[c]=$2} /^dropped events:/{d[c]=$3} /^read events:/{r[c]=$3}
	     END {for (c in r) print c, r[c], o[c] + d[c]}' "$dir/tstat" | sort -n >"$dir/cpustat"
	[ -s "$dir/cpustat" ] || { echo "$1: no CPUSTAT options"; fail=1; return; }
	total=0
	while read -r cpu read lost; do
		total=$((total + read + lost))
		lines=$(grep -c "\[$(printf %03d "$cpu")\]" "$dir/lines" || true)
		check_count "$1 CPU $cpu: records against the CPUSTAT's read events" "$lines" "$read"
		grep -q "^ *$cpu *$read *$lost\$" "$dir/ustat" ||
			{ echo "$1 CPU $cpu: usertp report --stat is not $read $lost:"; cat "$dir/ustat"; fail=1; }
		if grep -q '^  CPU ' "$2"; then
			grep -q "^  CPU $cpu: $read events, $lost lost\$" "$2" ||
				{ echo "$1 CPU $cpu: the summary is not $read, $lost:"; cat "$2"; fail=1; }
		fi
	done <"$dir/cpustat"
	[ "$3" = - ] || check_count "$1: recorded + lost" "$total" "$3"
}

# This file, for the shells a test starts (sh -c ". '$tests_lib'; ...")
tests_lib="$(cd "$(dirname "$0")/.." && pwd)/lib.sh"

# wait_source OUTPUT PID: the recording into OUTPUT (usertp record -o OUTPUT) has taken the
# program PID in (its spool's meta has its source line: src/consumer/spool.h)
wait_source() {
	wait_until "$2 in the recording of $1" sh -c "grep -qs '^source [0-9]* pid=$2 ' $1.spool-*/meta"
}

# spool_through SPOOL: the bytes that went through spool SPOOL, given back (-m) or not: its CPU
# files' sizes, and the direct file's end less its first region's start (all its pages when
# only the first CPU has some: run the program on CPU 0)
spool_through() {
	base=$(sed -n 's/^direct [0-9]* base=\([0-9]*\) .*/\1/p' "$1/meta")
	{
		stat -c %s "$1"/*.cpu* 2>/dev/null
		[ -z "$base" ] || echo $(($(stat -c %s "$1/direct") - base))
	} | awk '{ if ($1 > 0) n += $1 } END { print n + 0 }'
}

# recover_foreign SPOOL: SPOOL (a killed recorder's) made another user's (usertp-test2) and
# hostile (issue 21, item 15b): its meta names an output in $dir/root-only, one of its CPU
# files is a link to a secret there; then root recovers it three times: without -o (refused:
# the meta does not choose root's output), to a link (refused, not followed), to
# $dir/recovered.dat (written, nothing of the secret in it).  Needs $dir 0755, $usertp;
# sets fail=1.
recover_foreign() {
	mkdir -p -m 700 "$dir/root-only"
	printf 'SECRET-MARKER-4711\n' >"$dir/root-only/secret"
	sed -i "1s| output=.*| output=$dir/root-only/chosen.dat|" "$1/meta"
	cpu0=$(ls "$1"/*.cpu0 "$1"/direct 2>/dev/null | head -1)
	rm "$cpu0"
	ln -s "$dir/root-only/secret" "$cpu0"
	chown -hR usertp-test2 "$1"
	set +e
	"$usertp" record --recover "$1" 2>"$dir/recover1.err"
	s1=$?
	ln -s "$dir/root-only/target.dat" "$dir/link.dat"
	"$usertp" record --recover "$1" -o "$dir/link.dat" 2>"$dir/recover2.err"
	s2=$?
	"$usertp" record --recover "$1" -o "$dir/recovered.dat" 2>"$dir/recover3.err"
	s3=$?
	set -e
	check_count "status of --recover of another user's spool without -o" "$s1" 1
	grep -q "belongs to another user.*give the output with -o" "$dir/recover1.err" ||
		{ echo "not refused without -o:"; cat "$dir/recover1.err"; fail=1; }
	[ ! -e "$dir/root-only/chosen.dat" ] || { echo "root wrote where the user's meta said"; fail=1; }
	check_count "status of --recover to a link" "$s2" 1
	grep -q "link.dat: a symbolic link, not followed" "$dir/recover2.err" ||
		{ echo "the link not refused:"; cat "$dir/recover2.err"; fail=1; }
	[ ! -e "$dir/root-only/target.dat" ] || { echo "root wrote through the link"; fail=1; }
	check_count "status of --recover with -o" "$s3" 0
	! grep -q SECRET-MARKER "$dir/recovered.dat" || { echo "a link in the spool was read"; fail=1; }
}
