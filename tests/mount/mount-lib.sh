# SPDX-License-Identifier: MIT
# mount-lib.sh - what the usertp mount tests share; sourced, after $test_name, $usertp (and
# $cons, for start_cons) are set:   test_name=NAME; . "$(dirname "$0")/mount-lib.sh"
#
# It exits 77 where FUSE cannot be used; makes $dir (removed at the end), $mnt in it, and a
# runtime directory of the test's own (XDG_RUNTIME_DIR), so that its programs and mounts see
# no one else's; sources ../lib.sh (wait_until); and at the end stops every process it
# started (start_cons, start_mount, and the pids a test adds to $pids), unmounts $mnt, and
# runs $at_exit.
#   start_cons	cons-prog reading commands from a fifo on fd 3 (its pid in $p)
#   start_mount	usertp mount -f $mnt (its pid in $m), once it serves
#   fire N	cons-prog fires N cons_a and N cons_b, and says so
#   sum_stats F	the sum over CPUs of the per_cpu/cpuN/stats fields F (comma-separated)
#   bad WHY	says FAIL and sets fail=1
#   need_second_user	exit 77 unless root can run things as usertp-test2 (added if missing)
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
	echo "$test_name: no /dev/fuse or no fusermount3 (Debian: fuse3): skipped"
	exit 77
fi
dir=$(mktemp -d "/tmp/usertp-$test_name-XXXXXX")
mnt=$dir/mnt
m= p= pids= at_exit=: fail=0
mount_lib_cleanup() {
	exec 3>&- || true
	# A mount that ended before the test did: how, and what it said (CI runs keep nothing else).
	if [ -n "$m" ] && ! kill -0 "$m" 2>/dev/null; then
		wait "$m" 2>/dev/null && mount_status=0 || mount_status=$?
		[ "$fail" -eq 0 ] || echo "the mount (pid $m) had ended, status $mount_status; it said:"
		[ "$fail" -eq 0 ] || tail -n 20 "$dir/mount.err" 2>/dev/null || true
	fi
	for q in $p $pids; do
		kill -CONT $q 2>/dev/null || true
		kill -KILL $q 2>/dev/null || true
	done
	fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
	[ -z "$m" ] || kill -KILL $m 2>/dev/null || true
	eval "$at_exit"
	rm -rf "$dir"
}
trap mount_lib_cleanup EXIT
export XDG_RUNTIME_DIR="$dir/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR" "$mnt"
. "$(dirname "$0")/../lib.sh"

bad() {
	echo "FAIL: $*"
	fail=1
}

start_cons() {
	mkfifo "$dir/in"
	"$cons" <"$dir/in" >"$dir/cons.out" &
	p=$!
	exec 3>"$dir/in"
	wait_until "cons-prog ready" grep -q ready "$dir/cons.out"
}

start_mount() {
	"$usertp" mount -f "$mnt" 2>>"$dir/mount.err" &
	m=$!
	wait_until "the mount" mountpoint -q "$mnt"
}

fire() {
	fired=$(grep -c fired "$dir/cons.out" || true)
	echo "fire $1" >&3
	wait_until "cons-prog fired" sh -c "[ \$(grep -c fired \"$dir/cons.out\") -gt $fired ]"
}

sum_stats() {
	cat "$mnt"/per_cpu/cpu*/stats | awk -v f="$1" 'BEGIN { n = split(f, w, ",") }
		{ for (i = 1; i <= n; i++) if (index($0, w[i] ": ") == 1) s += $NF } END { print s + 0 }'
}

need_second_user() {
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to run as a second user"; exit 77; }
	command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
	id usertp-test2 >/dev/null 2>&1 || useradd -M -r -s /usr/sbin/nologin usertp-test2 ||
		{ echo "SKIP: cannot add a user"; exit 77; }
}
