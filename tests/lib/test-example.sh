#!/bin/sh
# SPDX-License-Identifier: MIT
# The worker-pool example traced in-process: every call appears once, matching the counts the
# program keeps itself.   usage: test-example.sh PATH-TO-worker-pool
set -eu
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$1" -t -w 3 200 >"$out" 2>"$err"
summary=$(cat "$err")
echo "$summary"
count() { grep -c " $1: " "$out" || true; }
num() { echo "$summary" | sed -n "s/.* \([0-9]*\) $1.*/\1/p"; }
fail=0
for ev in queued started done; do
	[ "$(count job_$ev)" = "$(num "$ev")" ] || { echo "job_$ev: $(count job_$ev) lines, program says $(num "$ev")"; fail=1; }
done
[ "$(count job_slow)" = "$(num slow)" ] || { echo "job_slow: $(count job_slow) lines, program says $(num slow)"; fail=1; }
[ "$(count job_queued)" = 200 ] || fail=1
# every job id once per event
for ev in queued started done; do
	ids=$(sed -n "s/.* job_$ev: id=\([0-9]*\) .*/\1/p" "$out" | sort -n | uniq | wc -l)
	[ "$ids" = 200 ] || { echo "job_$ev: $ids distinct ids"; fail=1; }
done

# The embedded recorder with buffers too small for the run (issue 21: it kept the end and said
# nothing): one line says how many the file holds, of how many, and what to change; the
# numbers are the program's own counts and the file's.
for overwrite in 1 0; do
	dat=$(mktemp --suffix=.dat)
	USERTP_EVENTS='jobs:*' USERTP_OUTPUT=$dat USERTP_BUFFER_KB=8 USERTP_OVERWRITE=$overwrite \
		"$1" -w 2 3000 >/dev/null 2>"$err"
	summary=$(grep '^worker-pool:' "$err")
	all=$(($(num queued) + $(num started) + $(num done) + $(num slow)))
	line=$(grep '^usertp: ' "$err" || true)
	word=overwritten
	[ "$overwrite" = 1 ] || word=dropped
	case $line in
	"usertp: $dat holds "*" of $all events recorded: "*" $word in full buffers of 8 KiB per CPU (raise USERTP_BUFFER_KB, or record with \`usertp record\`, which keeps every page)") ;;
	*) echo "overwrite=$overwrite: not the line of the losses: '$line' (fired $all)"; fail=1 ;;
	esac
	held=$(echo "$line" | sed -n 's/.* holds \([0-9]*\) of .*/\1/p')
	lost=$(echo "$line" | sed -n 's/.* recorded: \([0-9]*\) .*/\1/p')
	[ "$((held + lost))" = "$all" ] || { echo "held $held + lost $lost != $all"; fail=1; }
	rm -f "$dat"
done
# Nothing lost: nothing said.
"$1" -w 2 50 >/dev/null 2>"$err"
USERTP_EVENTS='jobs:*' USERTP_OUTPUT=$out.dat "$1" -w 2 50 >/dev/null 2>"$err"
rm -f "$out.dat"
! grep -q '^usertp: ' "$err" || { echo "a run that lost nothing said: $(cat "$err")"; fail=1; }
exit $fail
