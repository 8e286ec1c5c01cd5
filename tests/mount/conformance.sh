#!/bin/sh
# SPDX-License-Identifier: MIT
# conformance.sh TFS TFS-WRITE S1 E1 E2 S2 E3 F1 FIRE...: tracefs's scenarios (docs/tracefs.md
# §2, §3.1, §3.2, §4, §6, §7, §8, §13) replayed on the instance directory TFS, printing one
# line per outcome, with the events' names put back as S1, E1, E2, S2, E3, F1: the kernel's
# tracefs (an instance, kernel events) and usertp mount (user events) must print the same
# transcript.  S1 has the events E1 and E2 and at least one more, S2 has E3 and more; F1 is
# an integer field of E1 that E2 lacks; FIRE is a command that makes E1 fire at least once.
# TFS-WRITE is tfs-write (one open, one write, its result).  With ROOT set (the tree whose
# instances/ TFS may use), instances/ is replayed too (§16): mkdir, rmdir, EBUSY, isolation.
set -u
t=$1 w=$2 s1=$3 e1=$4 e2=$5 s2=$6 e3=$7 f1=$8
shift 8

# names back to placeholders
norm() {
	sed "s/\b$s1:$e1\b/S1:E1/g; s/\b$s1:$e2\b/S1:E2/g; s/\b$s2:$e3\b/S2:E3/g;
	     s/\b$e1\b/E1/g; s/\b$e2\b/E2/g; s/\b$e3\b/E3/g; s/\b$s1\b/S1/g; s/\b$s2\b/S2/g;
	     s/\b$f1\b/F1/g; s/\[ *[0-9]*\.[0-9]\{6\}\] event/[TIME] event/g"
}
# real TEMPLATE: S1, E1, E2, S2, E3 in TEMPLATE replaced by the names
real() {
	printf '%s' "$1" | sed "s/S1/$s1/g; s/E1/$e1/g; s/E2/$e2/g; s/S2/$s2/g; s/E3/$e3/g; s/F1/$f1/g"
}
# say LABEL VALUE
say() {
	printf '%s: %s\n' "$1" "$2" | norm
}
# wr LABEL [-t] FILE TEXT: one write; the bytes it took as "all", "N of M", or the errno
wr() {
	label=$1
	shift
	r=$("$w" "$@")
	eval "text=\${$#}"
	len=$(printf '%b' "$text" | wc -c)
	first=$(printf '%s' "$text" | sed 's/ .*//')
	case $r in
	"$len") [ "$len" -eq 0 ] && r="0 bytes" || r=all ;;
	"$((${#first} + 1))") r="the first token and a space" ;;
	[0-9]*) r="$r of $len" ;;
	esac
	say "$label" "$r"
}
# op LABEL FILE: an open with O_TRUNC, no write
op() {
	say "$1" "$("$w" -t "$2")"
}
# rd LABEL FILE: the file's text on one line
rd() {
	say "$1" "$(tr '\n' '|' <"$2")"
}
# states: the enable files of E1, E2, E3, S1, S2 and events/
states() {
	say "$1" "E1=$(cat "$t/events/$s1/$e1/enable") E2=$(cat "$t/events/$s1/$e2/enable") E3=$(cat "$t/events/$s2/$e3/enable") S1=$(cat "$t/events/$s1/enable") S2=$(cat "$t/events/$s2/enable") all=$(cat "$t/events/enable")"
}
# every: is every event on (each enable file and set_event say so)?
every() {
	off=$(cat "$t"/events/*/*/enable | grep -c '^0')
	say "every event on" "$([ "$off" -eq 0 ] && [ "$(wc -l <"$t/set_event")" -eq "$(ls "$t"/events/*/*/enable | wc -l)" ] && echo yes || echo no)"
}
# The trace header, with the counts as A/B (or 0/0) and #P:N.
header() {
	grep '^#' "$t/trace" | sed 's/entries-written: [1-9][0-9]*\/[1-9][0-9]*   #P:[0-9]*/entries-written: A\/B   #P:N/; s/   #P:[0-9][0-9]*/   #P:N/' |
		tr '\n' '|'
}
# Lines of trace or trace_pipe that are not as docs/tracefs.md §6 lays them out (with TGID:
# record-tgid on; NOIRQ: irq-info off).
bad_lines() {
	tgid= flags='[.dDbNnpBLlZzHhs0-9]{5}'
	[ "${1:-}" != TGID ] || tgid='\(( *[0-9]+|-------)\) '
	[ "${2:-}" != NOIRQ ] || flags=
	grep -v '^#' | grep -Ecv "^ {0,16}.{1,16}-[0-9]+ +$tgid\[[0-9]{3}\] $flags +[0-9]+\.[0-9]{6}: [a-z_0-9]+: "
}

# pause_check: with pause-on-trace, nothing is recorded while trace is open for reading (§11).
pause_check() {
	wr "set_event > S1:E1" -t "$t/set_event" "$s1:$e1"
	wr "tracing_on < 0" "$t/tracing_on" 0
	op "trace > (cleared)" "$t/trace"
	wr "options/pause-on-trace < 1" "$t/options/pause-on-trace" 1
	wr "tracing_on < 1" "$t/tracing_on" 1
	exec 8<"$t/trace"
	before=$(grep -c " $e1: " "$t/trace")
	"$@" >/dev/null 2>&1
	after=$(grep -c " $e1: " "$t/trace")
	say "tracing_on, trace open" "$(cat "$t/tracing_on")"
	exec 8<&-
	say "trace: E1 recorded while trace was open" "$((after - before))"
	wr "options/pause-on-trace < 0" "$t/options/pause-on-trace" 0
	"$@" >/dev/null 2>&1
	wr "tracing_on < 0" "$t/tracing_on" 0
	say "trace: E1 held, no pause" "$(grep -q " $e1: " "$t/trace" && echo some || echo none)"
	op "trace > (cleared)" "$t/trace"
	wr "tracing_on < 1" "$t/tracing_on" 1
	op "set_event > (nothing)" "$t/set_event"
}

# --- set_event (§2) and the enable files (§3) --------------------------------------------
states "at first"
rd "set_event at first" "$t/set_event"
say "tracing_on at first" "$(cat "$t/tracing_on")"
wr "set_event > S1:E1" -t "$t/set_event" "$s1:$e1"
rd "set_event" "$t/set_event"
states "S1:E1 on"
wr "set_event >> 'S1:E2 S2:E3' (one token per write)" "$t/set_event" "$s1:$e2 $s2:$e3"
states "then"
wr "set_event >> white space only" "$t/set_event" "  \t"
wr "set_event >> nothing" "$t/set_event" ""
wr "set_event >> !S1:E1" "$t/set_event" "!$s1:$e1"
wr "set_event >> ' !S1:E2' (white space first)" "$t/set_event" " !$s1:$e2"
states "both off"
wr "set_event >> !S1:E1 again" "$t/set_event" "!$s1:$e1"
for bad in usertp_no_such S1:E1:extra '*' '!' !!S1:E1 'S1:*E1' 'S1:E1*' '*S1*' S1:usertp_no_such \
	ftrace:print ftrace "128 bytes|$(printf '%0128d' 0)" "E1 and 124 bytes|E1$(printf '%0124d' 0)"; do
	wr "set_event >> ${bad%%|*}" "$t/set_event" "$(real "${bad#*|}")"
done
states "after the errors"
wr "set_event > usertp_no_such (O_TRUNC first)" -t "$t/set_event" usertp_no_such
rd "set_event" "$t/set_event"
wr "set_event > S1 (a system)" -t "$t/set_event" "$s1"
states "S1"
say "set_event lists S1's events" "$([ "$(grep -c "^$s1:" "$t/set_event")" -eq "$(ls -d "$t/events/$s1"/*/ | wc -l)" ] && echo all || echo not all)"
wr "set_event > E3 (an event's name)" -t "$t/set_event" "$e3"
states "E3"
for spec in ':' '*:*' '*:' ':*'; do
	wr "set_event > $spec" -t "$t/set_event" "$spec"
	states "$spec"
	every
	wr "set_event >> !$spec" "$t/set_event" "!$spec"
	states "!$spec"
done
wr "set_event > S1:" -t "$t/set_event" "$s1:"
states "S1:"
wr "set_event > :E2" -t "$t/set_event" ":$e2"
wr "set_event >> *:E3" "$t/set_event" "*:$e3"
states ":E2 *:E3"
wr "set_event > 'S1 :E1' (first token S1)" -t "$t/set_event" "$s1 :$e1"
states "S1 :E1"
op "set_event >" "$t/set_event"
states "set_event truncated"

# enable files: numbers (§0, §3.1)
for v in 1 0 01 +1 '1\n' 00; do
	wr "E1/enable < '$v'" "$t/events/$s1/$e1/enable" "$v"
	states "then"
done
for v in 2 -1 abc 0x1 ' 1' '1 ' '' '1\n\n' 99999999999999999999; do
	wr "E1/enable < '$v'" "$t/events/$s1/$e1/enable" "$v"
done
states "after the errors"
wr "S1/enable < 1" "$t/events/$s1/enable" 1
states "S1 on"
wr "S1/enable < X" "$t/events/$s1/enable" X
wr "events/enable < 1" "$t/events/enable" 1
states "all on"
every
wr "E2/enable < 0" "$t/events/$s1/$e2/enable" 0
states "E2 off"
wr "events/enable < 0" "$t/events/enable" 0
states "all off"
wr "events/enable < 2" "$t/events/enable" 2

# --- filters (§4) and error_log (§13) -----------------------------------------------------
f=$t/events/$s1/$e1/filter
op "error_log >" "$t/error_log"
rd "E1/filter at first" "$f"
wr "E1/filter < common_pid != 1" "$f" "common_pid != 1"
rd "E1/filter" "$f"
wr "E1/filter < '  F1 > 0 && common_pid != 1  \n'" "$f" "  $f1 > 0 && common_pid != 1  \n"
rd "E1/filter (trailing white space gone)" "$f"
wr "E1/filter >> common_pid != 2 (replaces)" "$f" "common_pid != 2"
rd "E1/filter" "$f"
op "E1/filter > (O_TRUNC alone: nothing)" "$f"
rd "E1/filter" "$f"
for bad in 'nosuchfield == 1' 'common_pid == abc' 'common_pid =! 1' 'common_pid' 'common_pid !~ "x"' \
	'COMM < "a"' 'common_pid ~ 1' 'common_pid == "1"' 'COMM == 1' '(common_pid == 1' 'common_pid == 1)' \
	'COMM == "abc' 'common_pid == 1 | common_pid == 2' 'common_pid == 1 common_pid == 2' \
	'common_pid == 0x' 'common_pid == 1x' 'common_pid == 08' 'common_pid == 99999999999999999999' \
	'common_pid == 1234567890123456789012345' '!' 'CPU & CPUS{' 'CPUS{}' 'CPUS{99}' 'CPUS0' \
	'   ' '()' '&& common_pid == 1' 'common_pid == 1 && ()' '00'; do
	wr "E1/filter < $bad" "$f" "$bad"
	rd "E1/filter" "$f"
done
say "error_log: entries" "$(grep -c '^\[' "$t/error_log")"
rd "error_log: the last" "$t/error_log"
wr "E1/filter < common_pid != 1" "$f" "common_pid != 1"
wr "E1/filter < 4096 bytes" "$f" "common_pid != 1 $(printf '%04080d' 0)"
rd "E1/filter (kept)" "$f"
wr "E1/filter < ' 0 '" "$f" " 0 "
rd "E1/filter (removed)" "$f"
op "error_log > (cleared)" "$t/error_log"
rd "error_log" "$t/error_log"
wr "error_log << x (ignored)" "$t/error_log" x
rd "S1/filter" "$t/events/$s1/filter"
wr "S1/filter < common_pid != 1" "$t/events/$s1/filter" "common_pid != 1"
rd "S1/filter" "$t/events/$s1/filter"
rd "E1/filter" "$f"
rd "E2/filter" "$t/events/$s1/$e2/filter"
wr "S1/filter < F1 == 1 (E1 has F1, E2 not)" "$t/events/$s1/filter" "$f1 == 1"
rd "E1/filter" "$f"
rd "E2/filter" "$t/events/$s1/$e2/filter"
say "error_log: the last" "$(tail -n 3 "$t/error_log" | tr '\n' '|' | norm)"
wr "S1/filter < 'common_pid == (' (broken everywhere: taken)" "$t/events/$s1/filter" "common_pid == ("
rd "E1/filter" "$f"
wr "S1/filter < 0" "$t/events/$s1/filter" 0
rd "E1/filter" "$f"
rd "E2/filter" "$t/events/$s1/$e2/filter"
wr "S1/filter < 4096 bytes" "$t/events/$s1/filter" "common_pid != 1 $(printf '%04080d' 0)"
op "error_log > (cleared)" "$t/error_log"

# --- set_event_pid, set_event_notrace_pid (§12) -----------------------------------------------
for file in set_event_pid set_event_notrace_pid; do
	rd "$file at first" "$t/$file"
	wr "$file > '12 13'" -t "$t/$file" "12 13"
	rd "$file" "$t/$file"
	for v in '7 x' abc -5 '!100' 2000000000 1073741824; do
		wr "$file >> '$v'" "$t/$file" "$v"
	done
	rd "$file (unchanged)" "$t/$file"
	for v in 0x10 010 +9 '13 12\n' '' '  ' 0 1073741823; do
		wr "$file >> '$v'" "$t/$file" "$v"
	done
	rd "$file" "$t/$file"
	op "$file > (cleared)" "$t/$file"
	rd "$file" "$t/$file"
	wr "$file > 'abc' (cleared, then refused)" -t "$t/$file" abc
	rd "$file" "$t/$file"
done

# --- options/ and trace_options (§11) ---------------------------------------------------------
opts='record-tgid overwrite irq-info markers event-fork pause-on-trace function-trace'
ours() {
	grep -Ex "(no)?($(echo "$opts" | tr ' ' '|'))" "$t/trace_options" | tr '\n' ' '
}
for o in $opts; do
	rd "options/$o" "$t/options/$o"
done
say "trace_options (ours)" "$(ours)"
for v in norecord-tgid record-tgid ' nooverwrite' 'overwrite ' 'noevent-fork\n' nosuch '' no noirq-info irq-info; do
	wr "trace_options < '$v'" "$t/trace_options" "$v"
done
say "trace_options (ours)" "$(ours)"
for v in 1 0 2 abc ' 1' '1\n'; do
	wr "options/event-fork < '$v'" "$t/options/event-fork" "$v"
	rd "options/event-fork" "$t/options/event-fork"
done
wr "options/record-tgid < 0" "$t/options/record-tgid" 0
wr "options/event-fork < 0" "$t/options/event-fork" 0

# --- buffer_size_kb, buffer_total_size_kb, per_cpu/ (§9) --------------------------------------
ncpu=$(ls -d "$t"/per_cpu/cpu* | wc -l)
say "per_cpu: a cpuN for each CPU" "$([ "$ncpu" -eq "$(getconf _NPROCESSORS_CONF)" ] && echo yes || echo no)"
say "per_cpu/cpu0" "$(ls "$t/per_cpu/cpu0" | grep -Ex 'buffer_size_kb|stats|trace|trace_pipe' | tr '\n' ' ')"
rd "buffer_size_kb" "$t/buffer_size_kb"
say "buffer_total_size_kb is the sum" "$([ "$(cat "$t/buffer_total_size_kb")" -eq $((ncpu * $(cat "$t/buffer_size_kb"))) ] && echo yes || echo no)"
for v in 100 1408 64 8 1 '7\n' 0 abc -1 4k ' 8' 99999999999999999999; do
	wr "buffer_size_kb < '$v'" "$t/buffer_size_kb" "$v"
	rd "buffer_size_kb" "$t/buffer_size_kb"
done
wr "per_cpu/cpu0/buffer_size_kb < 100" "$t/per_cpu/cpu0/buffer_size_kb" 100
rd "per_cpu/cpu0/buffer_size_kb" "$t/per_cpu/cpu0/buffer_size_kb"
rd "buffer_size_kb (CPUs differ)" "$t/buffer_size_kb"
wr "buffer_size_kb < 1408" "$t/buffer_size_kb" 1408
rd "buffer_size_kb" "$t/buffer_size_kb"
say "per_cpu/cpu0/stats" "$(sed 's/: .*//' "$t/per_cpu/cpu0/stats" | tr '\n' '|')"
say "stats: ts as the kernel's" "$(grep -Ec '^(oldest event ts|now ts): +[0-9]+\.[0-9]{6}$' "$t/per_cpu/cpu0/stats")"

# --- trace_clock (§10): mono, selected and read back (the rest: mount-trace-clock) -----------
wr "trace_clock < mono" "$t/trace_clock" mono
say "trace_clock: current" "$(sed 's/.*\[\(.*\)\].*/\1/' "$t/trace_clock")"
for v in '  mono  ' '[mono]' nosuch ''; do
	wr "trace_clock < '$v'" "$t/trace_clock" "$v"
done
say "trace_clock: current" "$(sed 's/.*\[\(.*\)\].*/\1/' "$t/trace_clock")"

# --- triggers (§5) ------------------------------------------------------------------------------
tf=$t/events/$s1/$e1/trigger
op "error_log > (cleared)" "$t/error_log"
say "E1/trigger at first" "$(head -1 "$tf")"
for v in traceoff traceoff 'traceon:3' 'traceoff if common_pid > 1' 'enable_event:S2:E3' \
	'disable_event:S2:E3:2' nosuch 'traceon if nosuch == 1' 'enable_event:S1:usertp_no_such' \
	'enable_event:S1' 'traceoff:abc' 'traceoff:3if common_pid>1' 'traceoff if' \
	'disable_event:S1:E2:5 if common_pid == 2'; do
	wr "E1/trigger < '$v'" "$tf" "$(real "$v")"
done
rd "E1/trigger" "$tf"
"$@" >/dev/null 2>&1
say "enable, E1 fired: E1, E2, E3" "$(cat "$t/events/$s1/$e1/enable" "$t/events/$s1/$e2/enable" "$t/events/$s2/$e3/enable" | tr '\n' ' ')"
states "with triggers"
say "set_event lists E1, E2, E3" "$(grep -cE "^($s1:$e1|$s1:$e2|$s2:$e3)\$" "$t/set_event")"
say "error_log: the last" "$(tail -n 3 "$t/error_log" | tr '\n' '|' | norm)"
op "E1/trigger > (O_TRUNC alone: nothing)" "$tf"
say "E1/trigger: triggers" "$(grep -vc '^#' "$tf")"
for v in '!traceoff' '!traceoff' '!nosuch' '!enable_event:S2:E3' '!disable_event:S1:E2'; do
	wr "E1/trigger < '$v'" "$tf" "$(real "$v")"
done
rd "E1/trigger, all removed" "$tf"
states "triggers removed"
# What they do: traceoff stops tracing when E1 fires; traceon starts it; a count runs out.
wr "set_event > S1:E1" -t "$t/set_event" "$s1:$e1"
wr "tracing_on < 1" "$t/tracing_on" 1
wr "E1/trigger < traceoff:1" "$tf" traceoff:1
"$@" >/dev/null 2>&1
say "tracing_on after E1 fired (traceoff)" "$(cat "$t/tracing_on")"
rd "E1/trigger (the count used)" "$tf"
wr "E1/trigger < !traceoff" "$tf" '!traceoff'
wr "E1/trigger < traceon" "$tf" traceon
"$@" >/dev/null 2>&1
say "tracing_on after E1 fired (traceon)" "$(cat "$t/tracing_on")"
wr "E1/trigger < !traceon" "$tf" '!traceon'
wr "tracing_on < 0" "$t/tracing_on" 0
op "set_event > (nothing)" "$t/set_event"
op "trace > (cleared)" "$t/trace"
op "error_log > (cleared)" "$t/error_log"
wr "tracing_on < 1" "$t/tracing_on" 1

# --- tracing_on (§8) ----------------------------------------------------------------------
for v in 0 2 100 '0\n' 1; do
	wr "tracing_on < '$v'" "$t/tracing_on" "$v"
	say "tracing_on" "$(cat "$t/tracing_on")"
done
for v in abc -1 ' 1' 0x1 ''; do
	wr "tracing_on < '$v'" "$t/tracing_on" "$v"
done
say "tracing_on" "$(cat "$t/tracing_on")"

# --- trace and trace_pipe (§6, §7) --------------------------------------------------------
wr "set_event > S1:E1" -t "$t/set_event" "$s1:$e1"
wr "tracing_on < 0" "$t/tracing_on" 0
op "trace >" "$t/trace"
say "trace, cleared" "$(header)"
wr "tracing_on < 1" "$t/tracing_on" 1
"$@" >/dev/null 2>&1
wr "tracing_on < 0" "$t/tracing_on" 0
say "trace, E1 fired" "$(header)"
say "trace: lines not as tracefs's" "$(bad_lines <"$t/trace")"
say "trace: E1 in it" "$(grep -q " $e1: " "$t/trace" && echo yes || echo no)"
wr "trace << x (not truncated: ignored)" "$t/trace" x
say "trace: still E1 in it" "$(grep -q " $e1: " "$t/trace" && echo yes || echo no)"
dd if="$t/trace_pipe" iflag=nonblock bs=65536 2>/dev/null >"${TMPDIR:-/tmp}/conf-pipe.$$"
say "trace_pipe: lines not as tracefs's" "$(bad_lines <"${TMPDIR:-/tmp}/conf-pipe.$$")"
say "trace_pipe: E1 in it" "$(grep -q " $e1: " "${TMPDIR:-/tmp}/conf-pipe.$$" && echo yes || echo no)"
rm -f "${TMPDIR:-/tmp}/conf-pipe.$$"
say "trace after trace_pipe (consumed)" "$(header)"
say "trace_pipe, nothing held, O_NONBLOCK" "$(dd if="$t/trace_pipe" iflag=nonblock bs=4096 2>&1 >/dev/null | grep -o 'Resource temporarily unavailable' || echo data)"
wr "tracing_on < 1" "$t/tracing_on" 1
"$@" >/dev/null 2>&1
wr "tracing_on < 0" "$t/tracing_on" 0
op "trace > (cleared)" "$t/trace"
say "trace, cleared" "$(header)"
# A filter decides what is held.
wr "E1/filter < common_pid == 1 (refuses the fired ones)" "$f" "common_pid == 1"
wr "tracing_on < 1" "$t/tracing_on" 1
"$@" >/dev/null 2>&1
wr "tracing_on < 0" "$t/tracing_on" 0
say "trace: E1 held" "$(grep -c " $e1: " "$t/trace")"
wr "E1/filter < common_pid != 1 (takes them)" "$f" "common_pid != 1"
wr "tracing_on < 1" "$t/tracing_on" 1
"$@" >/dev/null 2>&1
wr "tracing_on < 0" "$t/tracing_on" 0
say "trace: E1 held" "$(grep -q " $e1: " "$t/trace" && echo some || echo none)"
wr "E1/filter < 0" "$f" 0
op "trace > (cleared)" "$t/trace"
# The layout as the options say (§6, §11): record-tgid, irq-info.
wr "tracing_on < 1" "$t/tracing_on" 1
"$@" >/dev/null 2>&1
wr "tracing_on < 0" "$t/tracing_on" 0
for tg in 1 0; do
	for irq in 0 1; do
		wr "options/record-tgid < $tg" "$t/options/record-tgid" $tg
		wr "options/irq-info < $irq" "$t/options/irq-info" $irq
		say "trace, record-tgid=$tg irq-info=$irq" "$(header)"
		say "lines not so" "$(bad_lines "$([ $tg = 1 ] && echo TGID)" "$([ $irq = 0 ] && echo NOIRQ)" <"$t/trace")"
	done
done
pause_check "$@"
op "trace > (cleared)" "$t/trace"
# trace_marker (§15): a write is a tracing_mark_write record.
wr "tracing_on < 1" "$t/tracing_on" 1
wr "trace_marker < hello" "$t/trace_marker" hello
wr "trace_marker < 'two\nlines\n'" "$t/trace_marker" 'two\nlines\n'
wr "trace_marker < 5000 bytes" "$t/trace_marker" "$(printf '%05000d' 0)"
say "trace: the markers" "$(grep -v '^#' "$t/trace" | sed 's/^.*\] \(.....\) .*: tracing_mark_write: /\1 /' | cut -c1-20 | tr '\n' '|')"
say "trace: the longest marker" "$(grep -o '0*$' "$t/trace" | awk '{ print length }' | sort -n | tail -1)"
say "trace: marker lines not as tracefs's" "$(grep ': tracing_mark_write: ' "$t/trace" | bad_lines)"
wr "options/markers < 0" "$t/options/markers" 0
wr "trace_marker < off (markers off)" "$t/trace_marker" off
wr "options/markers < 1" "$t/options/markers" 1
wr "tracing_on < 0" "$t/tracing_on" 0
wr "trace_marker < off (tracing off)" "$t/trace_marker" off
say "trace_marker, read" "$(cat "$t/trace_marker" 2>&1 | sed 's/.*: //')"
# per_cpu/cpuN/trace and trace_pipe: one CPU's records.
say "per_cpu/cpuN/trace: the markers, all CPUs" "$(cat "$t"/per_cpu/cpu*/trace | grep -c ': tracing_mark_write: ')"
for c in $(seq 0 $((ncpu - 1))); do
	n=$(grep -c ': tracing_mark_write: ' "$t/per_cpu/cpu$c/trace")
	m=$(grep -c " \[$(printf %03d $c)\] .*: tracing_mark_write: " "$t/trace")
	[ "$n" -eq "$m" ] || say "per_cpu/cpu$c/trace" "$n markers, trace has $m on it"
	dd if="$t/per_cpu/cpu$c/trace_pipe" iflag=nonblock bs=65536 2>/dev/null | grep -v " \[$(printf %03d $c)\] " | grep -c ': ' | sed "s/^[1-9].*/per_cpu\/cpu$c\/trace_pipe gave other CPUs' records/; /^0\$/d"
done
say "trace after every per_cpu/cpuN/trace_pipe" "$(grep -vc '^#' "$t/trace")"
op "per_cpu/cpu0/trace > (cleared)" "$t/per_cpu/cpu0/trace"
op "trace > (cleared)" "$t/trace"
op "set_event > (nothing)" "$t/set_event"
wr "tracing_on < 1" "$t/tracing_on" 1

# --- instances/ (§16) ---------------------------------------------------------------------
[ -n "${ROOT:-}" ] || exit 0
i=$ROOT/instances/usertp-conf-i
# res CMD...: what a mkdir or rmdir said: ok, or its error
res() {
	out=$("$@" 2>&1) && echo ok || echo "$out" | sed 's/.*: //'
}
say "mkdir instances/I" "$(res mkdir "$i")"
say "mkdir instances/I again" "$(res mkdir "$i")"
say "mkdir events/x" "$(res mkdir "$ROOT/events/usertp-conf-x")"
say "mkdir instances/I/x" "$(res mkdir "$i/x")"
say "rmdir instances/none" "$(res rmdir "$ROOT/instances/usertp-conf-none")"
say "rmdir events/S1" "$(res rmdir "$ROOT/events/$s1")"
say "instances/I listed" "$(ls "$ROOT/instances" | grep -cx usertp-conf-i)"
states "instances/I at first" # (of TFS)
say "I: set_event, tracing_on, E1/enable" "$(cat "$i/set_event" "$i/tracing_on" "$i/events/$s1/$e1/enable" | tr '\n' '|')"
# Isolation: E1 on in I only; what fires is in I's trace, not in TFS's.
wr "I: set_event > S1:E1" -t "$i/set_event" "$s1:$e1"
states "TFS, unchanged"
wr "tracing_on < 0" "$t/tracing_on" 0
op "trace > (cleared)" "$t/trace"
wr "tracing_on < 1" "$t/tracing_on" 1
TFS_TRACE=$i/trace "$@" >/dev/null 2>&1
say "I: trace: E1 in it" "$(grep -q " $e1: " "$i/trace" && echo yes || echo no)"
say "TFS: trace: E1 in it" "$(grep -q " $e1: " "$t/trace" && echo yes || echo no)"
wr "I: E1/filter < common_pid == 1" "$i/events/$s1/$e1/filter" "common_pid == 1"
rd "TFS: E1/filter" "$t/events/$s1/$e1/filter"
exec 7<"$i/trace_pipe"
say "rmdir instances/I, trace_pipe open" "$(res rmdir "$i")"
exec 7<&-
say "rmdir instances/I" "$(res rmdir "$i")"
say "instances/I listed" "$(ls "$ROOT/instances" | grep -cx usertp-conf-i)"
