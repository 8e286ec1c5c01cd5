#!/bin/sh
# SPDX-License-Identifier: MIT
# test-layouts.sh MODE USERTP EXE STATIC HOST-LIB HOST-PLUGIN HOST-DLOPEN PLUGIN PLUGIN-STATIC
# PLUGIN-STATIC2: each layout (CMakeLists.txt), with threads from pthread_create() and from std::thread, recorded in MODE:
#   embedded	USERTP_EVENTS=jobs:* USERTP_OUTPUT=F.dat
#   record	usertp record -- CMD
#   attach	usertp record -P PID, the program waiting for it
#   mount	usertp mount, set_event jobs:* (exit 77 without FUSE)
#   other-user	root's usertp record -a, the programs a second user's (usertp-test2), which join
#		root's socket for every user's (exit 77 without root or setpriv)
# Each run must make its threads, and the file (or the mount's trace) must hold exactly the
# events it fired, printable: trace-cmd report and usertp report agree, no UNKNOWN EVENT.
# In record mode, a filter an event does not take stops the command before its main() when
# the event is its executable's or a linked library's (refuse()).
set -eu
mode=$1 usertp=$2 exe=$3 static=$4 hostlib=$5 hostplugin=$6 hostdl=$7 plugin=$8 plugin_static=$9 plugin_static2=${10}
threads=4 n=50
here=$(cd "$(dirname "$0")" && pwd)
case $mode in
mount)
	test_name=layouts
	. "$(dirname "$0")/../mount/mount-lib.sh"
	;;
*)
	# $dir, and same: usertp report against trace-cmd report (exit 77 without trace-cmd)
	. "$(dirname "$0")/../report/lib.sh"
	pids=
	trap 'for q in $pids; do kill -KILL $q 2>/dev/null || true; done; rm -rf "$dir"' EXIT
	export XDG_RUNTIME_DIR="$dir/xdg"
	mkdir -m 700 "$XDG_RUNTIME_DIR"
	. "$(dirname "$0")/../lib.sh"
	bad() {
		echo "FAIL: $*"
		fail=1
	}
	;;
esac
own=$dir/own # the daemon cases' file of their own
if [ "$mode" = other-user ]; then
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to make a second user"; exit 77; }
	command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
	id usertp-test2 >/dev/null 2>&1 || useradd -M -r -s /usr/sbin/nologin usertp-test2 ||
		{ echo "SKIP: cannot add a user"; exit 77; }
	chmod 755 "$dir"
	export USERTP_SYSTEM_DIR="$dir/system"
	mkdir -m 700 "$dir/u2" "$dir/u2/xdg"
	chown -R usertp-test2 "$dir/u2"
	own=$dir/u2/own
	# as_other CMD...: as usertp-test2, in its own runtime directory (exec: run with &,
	# $! is CMD's pid)
	as_other() {
		exec setpriv --reuid=usertp-test2 --regid=usertp-test2 --clear-groups \
			env XDG_RUNTIME_DIR="$dir/u2/xdg" USERTP_SYSTEM_DIR="$USERTP_SYSTEM_DIR" "$@"
	}
fi
unset USERTP_EVENTS USERTP_SESSION USERTP_CONTROL USERTP_OUTPUT

# events FILE: the events of the example in a trace.dat, by trace-cmd report (printable)
events() {
	trace-cmd report -i "$1" >"$dir/report.txt" 2>"$dir/report.err" || { cat "$dir/report.err"; echo -1; return; }
	if grep -q 'UNKNOWN EVENT\|FAILED TO PARSE' "$dir/report.txt"; then
		echo "$1: events trace-cmd cannot print:" >&2
		grep -m3 'UNKNOWN EVENT\|FAILED TO PARSE' "$dir/report.txt" >&2
	fi
	same -i "$1" >&2 || echo "$1: usertp report differs from trace-cmd report" >&2
	grep -c ' job_queued: \| job_done: ' "$dir/report.txt" || true
}

if [ "$mode" = mount ]; then
	start_mount
	# A program that defines the events, so that set_event takes them, waiting till the end.
	mkfifo "$dir/hold"
	"$exe" -w 1 0 <"$dir/hold" >"$dir/holder.out" &
	pids="$pids $!"
	exec 4<>"$dir/hold"
	wait_until "the events" grep -q '^jobs:job_done$' "$mnt/available_events"
	printf 'jobs:*\n' >"$mnt/set_event"
fi

# run_attached NAME CMD...: run's record -P of CMD, which waits for a line (-w) meanwhile;
# ${runner-}: what runs CMD (as_other).  Return: 1 when record failed (said).
run_attached() {
	name=$1
	shift
	rm -f "$dir/go"
	mkfifo "$dir/go"
	${runner-} "$@" -w $threads $n <"$dir/go" >"$dir/out" 2>"$dir/err" &
	prog=$!
	pids="$pids $prog"
	exec 5<>"$dir/go"
	wait_until "$name ready" grep -q ready "$dir/out"
	# (${rec_opts-}: record's options besides; --allow-missing for a plugin loaded later;
	# ${rec_kb-}: a buffer size)
	timeout 60 "$usertp" record -q ${rec_opts-} ${rec_kb:+-b $rec_kb} -e 'jobs:*' -P $prog \
		-o "$dir/x.dat" \
		2>"$dir/rec.err" &
	rec=$!
	pids="$pids $rec"
	wait_dump='echo "record said: $(cat "$dir/rec.err")"; ls -l /proc/$prog/fd'
	wait_source "$dir/x.dat" "$prog"
	wait_dump=
	# Its events' formats are known before it records: a program that fires and ends at
	# once can no longer be asked (before: asked after its start, and under load a
	# program's job_done was left out, "undeclared", 0 or 200 of 400 recorded).
	[ -n "${rec_opts-}" ] ||
		[ "$(grep -ac '^event [0-9]* id=[0-9]* system=jobs ' "$dir"/x.dat.spool-*/meta)" -ge 2 ] ||
		bad "$name: its formats not known when it started recording"
	echo go >&5
	wait $prog || { bad "$name: exit $?: $(cat "$dir/err")"; }
	exec 5>&-
	wait $rec || { bad "$name: usertp record failed: $(cat "$dir/rec.err")"; return 1; }
}

# run NAME CMD...: CMD THREADS N in MODE, checked
run() {
	name=$1
	shift
	rm -rf "$dir"/x.dat* "$dir/out"
	case $mode in
	embedded)
		USERTP_EVENTS='jobs:*' USERTP_OUTPUT="$dir/x.dat" "$@" $threads $n >"$dir/out" 2>"$dir/err" ||
			{ bad "$name: exit $?: $(cat "$dir/err")"; return 0; }
		;;
	record)
		"$usertp" record -q ${rec_kb:+-b $rec_kb} -e 'jobs:*' -o "$dir/x.dat" -- "$@" $threads $n \
			>"$dir/out" 2>"$dir/err" ||
			{ bad "$name: exit $?: $(cat "$dir/err")"; return 0; }
		;;
	attach)
		run_attached "$name" "$@" || return 0
		;;
	other-user)
		# (${by_pid-}: root's record -P of it, not -a)
		if [ -n "${by_pid-}" ]; then
			runner=as_other
			run_attached "$name" "$@" || { runner=; return 0; }
			runner=
		else
			"$usertp" record -q ${rec_kb:+-b $rec_kb} -a -e 'jobs:*' -o "$dir/x.dat" \
				2>"$dir/rec.err" &
			rec=$!
			pids="$pids $rec"
			wait_until "$name's recorder of every user's" \
				sh -c "ls '$USERTP_SYSTEM_DIR' | grep -q '^all\.'"
			(as_other "$@" $threads $n) >"$dir/out" 2>"$dir/err" ||
				bad "$name: exit $?: $(cat "$dir/err")"
			kill -INT $rec
			wait $rec || { bad "$name: usertp record failed: $(cat "$dir/rec.err")"; return 0; }
		fi
		;;
	mount)
		: >"$mnt/trace"
		"$@" $threads $n >"$dir/out" 2>"$dir/err" || { bad "$name: exit $?: $(cat "$dir/err")"; return 0; }
		;;
	esac
	fired=$(sed -n 's/^fired //p' "$dir/out")
	[ "$fired" = $((2 * threads * n)) ] || { bad "$name: fired '$fired'"; return 0; }
	if [ "$mode" = mount ]; then
		# (The mount's pump takes a program's last pages a moment after it ends; a read of
		# trace does not wait for what is being applied.)
		wait_until "$name's $fired events in the mount's trace" sh -c \
			"[ \$(grep -c ' job_queued: \| job_done: ' '$mnt/trace') -ge $fired ]"
		got=$(grep -c ' job_queued: \| job_done: ' "$mnt/trace" || true)
		lost=$(sum_stats "overrun,dropped events")
		[ "$lost" -eq 0 ] || bad "$name: $lost lost"
	else
		got=$(events "$dir/x.dat")
	fi
	[ "$got" = "$fired" ] || bad "$name: $got events recorded of $fired fired"
	echo "$name: $got of $fired"
}

# refuse NAME WHEN CMD...: under record --, a filter that an event does not take.  WHEN
# start: the event is the executable's or a linked library's: the command is stopped before
# its main() (it prints nothing), status 2, no file.  later: a dlopen()ed plugin's: the
# command runs, that event is left out (the others recorded), status 1.
refuse() {
	name=$1 when=$2
	shift 2
	rm -rf "$dir"/x.dat* "$dir/out"
	set +e
	"$usertp" record -q -e jobs:job_done -f 'nosuch == 1' -e jobs:job_queued -o "$dir/x.dat" \
		-- "$@" $threads $n >"$dir/out" 2>"$dir/err"
	status=$?
	set -e
	grep -q "the filter of jobs:job_done does not fit jobs:job_done" "$dir/err" &&
		grep -q '^       \^$' "$dir/err" && grep -q '^parse_error: Field not found$' "$dir/err" ||
		bad "$name refused: $(cat "$dir/err")"
	if [ $when = start ]; then
		[ $status -eq 2 ] && [ ! -s "$dir/out" ] && [ ! -e "$dir/x.dat" ] &&
			grep -q "stopped before its main()" "$dir/err" ||
			bad "$name refused at its start: status $status, out '$(cat "$dir/out")', $(ls "$dir")"
	else
		fired=$(sed -n 's/^fired //p' "$dir/out")
		[ $status -eq 1 ] && [ "$fired" = $((2 * threads * n)) ] &&
			[ "$(events "$dir/x.dat")" = $((threads * n)) ] ||
			bad "$name refused later: status $status, fired '$fired'"
	fi
	echo "$name: refused ($when)"
}

# late_refused: under -P, a host whose plugin is not loaded when the recorder attaches (it
# loads it when it needs it; libusertp stays): the spec matches no event of the program now,
# which is refused (status 1) with the way to allow it.  (run, with --allow-missing: the
# events of the plugin loaded after the recorder attached, all recorded.)
late_refused() {
	rm -rf "$dir"/x.dat* "$dir/out" "$dir/go"
	mkfifo "$dir/go"
	"$hostdl" -d "$plugin" -u -w $threads $n <"$dir/go" >"$dir/out" 2>"$dir/err" &
	prog=$!
	pids="$pids $prog"
	exec 5<>"$dir/go"
	wait_until "dlopen-late ready" grep -q ready "$dir/out"
	set +e
	timeout 60 "$usertp" record -q -e 'jobs:*' -P $prog -o "$dir/x.dat" 2>"$dir/rec.err"
	status=$?
	set -e
	echo go >&5
	wait $prog || bad "dlopen-late: exit $?: $(cat "$dir/err")"
	exec 5>&-
	[ $status -eq 1 ] && grep -q "no event jobs:\* in process $prog" "$dir/rec.err" &&
		grep -q "not loaded now.*--allow-missing" "$dir/rec.err" && [ ! -e "$dir/x.dat" ] ||
		bad "dlopen-late without --allow-missing: status $status, $(cat "$dir/rec.err")"
	echo "dlopen-late: refused without --allow-missing"
}

# joining_listed: a daemon's session, recording on while the program joins its recorder again
# (too busy to take it: -r 1000, its connect()s fail), is listed by usertp list -v, marked
# "joining-again" (before: left out, as if nothing recorded the program).
joining_listed() {
	rm -rf "$dir"/x.dat*
	TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$here/daemon.tsan" \
		"$usertp" record -q -e 'jobs:*' -o "$dir/x.dat" -- "$exe" -c "$own" -r 1000 1 1 \
		>"$dir/out" 2>"$dir/err" &
	rec=$!
	pids="$pids $rec"
	# (By its name: the recorder has children of its own a moment, checking formats.)
	wait_until "the command of record" sh -c "pgrep -P $rec -x layout-exe >/dev/null"
	prog=$(pgrep -P $rec -x layout-exe)
	pids="$pids $prog"
	wait_dump='"$usertp" list -v -P $prog || true'
	wait_until "its session listed joining again" sh -c \
		"'$usertp' list -v -P $prog | grep -q '^  session 1 tracing=1 joining-again\$'"
	wait_dump=
	"$usertp" list -v -P $prog >"$dir/list"
	grep -q '^    events=jobs:\*$' "$dir/list" || bad "joining-again: $(cat "$dir/list")"
	kill $prog
	wait $rec || true
	echo "joining-again: listed"
}

if [ "$mode" = attach ]; then
	late_refused
	rec_opts=--allow-missing run dlopen-late "$hostdl" -d "$plugin" -u
fi

if [ "$mode" = record ]; then
	refuse exe start "$exe"
	refuse static start "$static"
	refuse lib start "$hostlib"
	refuse plugin start "$hostplugin"
	refuse dlopen-local later "$hostdl" -d "$plugin"
	joining_listed
fi

for x in "" -x; do
	run "exe$x" "$exe" $x
	run "static$x" "$static" $x
	run "lib$x" "$hostlib" $x
	run "plugin$x" "$hostplugin" $x
	run "dlopen-local$x" "$hostdl" -d "$plugin" $x
	run "dlopen-global$x" "$hostdl" -d "$plugin" -g $x
	# (dlclose()d and opened again: it must stay loaded, its thread runs its code; before,
	# it was unloaded, and the host died of SIGSEGV in 4 runs of 60)
	run "dlopen-static$x" "$hostdl" -d "$plugin_static" -u -k $x
	# Two copies of libusertp, one serving: a plugin linked with the shared one in the
	# program linked with the static one (before: nothing recorded), and the reverse.
	run "static+plugin$x" "$static" -d "$plugin" $x
	run "exe+plugin-static$x" "$exe" -d "$plugin_static" $x
done

# daemon NAME CMD...: CMD closes every descriptor above 2 before it fires, as a daemon does
# (libusertp's too: its control endpoint, its sessions' connections), at once as it starts
# (-c), while libusertp's thread may be making its endpoint, or 100 ms later (-C), that thread
# asleep on what is closed; then it opens a file of its own under their numbers, and eventfds
# as an event loop does.  libusertp must never touch them (CMD checks: exit 4; before, under
# record, a buffer small enough to wake the recorder wrote to the eventfd under the number of
# the recorder's, 3 runs in 4), and records on, every event: embedded;
# under record --, where the program joins the recorder again, which resumes its session;
# under -P, attached after the closing (the endpoint is made again; the recorder's first
# knock, on the old one, is turned away and asked again); under the mount, and root's
# record -a of another user's program (other-user), which joins again through root's socket
# for every user's.
# (Before: libusertp closed the program's file, spun in poll(), and record kept 1 event of
# 400, saying nothing.)
daemon() {
	case_name=$1 # (run sets name)
	shift
	# (Under ThreadSanitizer, the program's closing and its use of its file racing with
	# libusertp's thread are that case, made on purpose: daemon.tsan names them.)
	tsan_before=${TSAN_OPTIONS-}
	export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$here/daemon.tsan"
	# (32 KiB per CPU: the recorder is woken, a quarter's pages filled, and can lose none.)
	rec_kb=32
	run "$case_name" "$@" -c "$own"
	run "$case_name-late" "$@" -C "$own"
	# Closing once record -P has attached: the program joins it again, another user's program
	# through root's again.* socket (before: it could not reach root's own socket, ended its
	# session, and record -P stopped at once with 0 of 400, "0 lost").
	if [ "$mode" = attach ]; then
		run "$case_name-attached" "$@" -A "$own"
	elif [ "$mode" = other-user ]; then
		by_pid=1
		run "$case_name-attached" "$@" -A "$own"
		by_pid=
	fi
	# The recorder too busy to take the program's joining again (-r 8: its next 8 connect()s
	# say EAGAIN, as when the recorder's backlog is full): the session records on meanwhile,
	# read on by the recorder, and is joined again later.  (Before: given up after 5 tries
	# 10 ms apart, the session ended, and what the program fired was recorded nowhere and
	# counted as lost nowhere, "0 lost": CI's ASan run of static-daemon, once.)
	case $mode in
	record | mount | other-user) run "$case_name-busy" "$@" -c "$own" -r 8 ;;
	attach) run "$case_name-busy" "$@" -A "$own" -r 8 ;;
	esac
	rec_kb=
	if [ -n "$tsan_before" ]; then TSAN_OPTIONS=$tsan_before; else unset TSAN_OPTIONS; fi
}

daemon exe-daemon "$exe"
daemon static-daemon "$static"
daemon dlopen-daemon "$hostdl" -d "$plugin"

# A forked child fires the events (-F), its recorder too busy to hear of the child's buffers
# as it forks (-r 3: the child's first 3 connect()s fail, as when the recorder's backlog is
# full, a burst of forks): they record meanwhile, and are announced later.  (Before: the
# child's session stayed off, what it fired recorded nowhere and counted nowhere, 0 of 400.)
# (Not under ThreadSanitizer: a child that makes threads after a multi-threaded fork is
# stopped by it.)
if [ "$mode" != embedded ] && ! ldd "$exe" | grep -q libtsan; then
	run exe-fork-busy "$exe" -F -r 3
	run static-fork-busy "$static" -F -r 3
	run dlopen-fork-busy "$hostdl" -d "$plugin" -F -r 3
fi

# Two plugins that each hold the static libusertp, in a host that knows nothing of usertp:
# the first serves; the second stays off (no second control endpoint, no second file written
# over the first), and says so once, naming both.
if [ "$mode" != mount ]; then
	run "two-static-plugins" "$hostdl" -d "$plugin_static" -D "$plugin_static2"
	[ "$(grep -c "libusertp is twice in this process: in $plugin_static, and in $plugin_static2, loaded later, whose events are not traced" "$dir/err")" = 1 ] ||
		bad "two-static-plugins: not said once: $(cat "$dir/err")"
fi
exit $fail
