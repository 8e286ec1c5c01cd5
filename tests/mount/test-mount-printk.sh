#!/bin/sh
# SPDX-License-Identifier: MIT
# usertp_printk() through usertp mount, as the kernel's trace_printk() through tracefs: a
# program that prints (printk-prog, test-report-printk.sh's) runs; with nothing in set_event,
# the top level's trace_pipe gives its lines as the kernel's trace file gives bprint's (the
# function and the text, no event name); printk_formats lists its formats; events/ftrace/bprint
# has a format and no enable file, and available_events does not list it; options/trace_printk
# is the top level's alone, and `echo 0` to it stops them (nothing after a marker written
# then); an instance never has them; a program started after the first one's lines came, whose
# formats are in a module it dlopen()s, prints too (the mount's reader takes formats as they
# come: libtraceevent's own bprint takes none after its first record).
#   usage: test-mount-printk.sh USERTP PRINTK-PROG DLOPEN-HOST PRINTK-LIB
test_name=mount-printk
usertp=$1 prog=$2 dlopen_host=$3 printk_lib=$4
. "$(dirname "$0")/mount-lib.sh"
set -eu

start_mount
mkdir "$mnt/instances/other"
cat "$mnt/trace_pipe" >"$dir/pipe" &
pids="$pids $!"
cat "$mnt/instances/other/trace_pipe" >"$dir/other" &
pids="$pids $!"
"$prog" 3000 2000 >/dev/null 2>&1 &
pids="$pids $!"
wait_until "the program's usertp_printk() lines in trace_pipe" sh -c "
	grep -q '\\] [^ ]* *[0-9.]*: round_once: round [0-9]* of 3000: ' '$dir/pipe' &&
	grep -q '\\] [^ ]* *[0-9.]*: printk_lib_fire: lib [0-9]* name\$' '$dir/pipe'"
"$dlopen_host" "$printk_lib" 5
wait_until "the later program's module's lines in trace_pipe" sh -c "
	[ \$(grep -c '\\] [^ ]* *[0-9.]*: rec_mod_fire: module [0-4]\$' '$dir/pipe') -eq 5 ]"
grep -q 'NO FORMAT' "$dir/pipe" && bad "a line with no format: $(grep -m1 'NO FORMAT' "$dir/pipe")"
grep -q 'bprint' "$dir/pipe" && bad "trace_pipe names the event (the kernel's does not)"
grep -q '^0x[0-9a-f]* : "round %d of %u: ' "$mnt/printk_formats" ||
	{ bad "printk_formats:"; cat "$mnt/printk_formats"; }
wait_until "events/ftrace/bprint" test -f "$mnt/events/ftrace/bprint/format"
[ ! -e "$mnt/events/ftrace/bprint/enable" ] ||
	bad "events/ftrace/bprint: $(ls "$mnt/events/ftrace/bprint")"
grep -q 'ftrace' "$mnt/available_events" && bad "available_events lists ftrace's"
[ "$(cat "$mnt/options/trace_printk")" = 1 ] || bad "options/trace_printk is not 1"
[ ! -e "$mnt/instances/other/options/trace_printk" ] || bad "an instance has options/trace_printk"
echo 0 >"$mnt/options/trace_printk"
echo after >"$mnt/trace_marker"
sleep 0.2 # (a few more rounds of the program, whose lines must not come)
sed -n '/tracing_mark_write: after$/,$p' "$mnt/trace" >"$dir/after"
grep -q 'round_once' "$dir/after" && { bad "usertp_printk() lines after trace_printk 0:"; head -3 "$dir/after"; }
[ -s "$dir/other" ] && { bad "an instance has usertp_printk() lines:"; head -3 "$dir/other"; }
exit $fail
