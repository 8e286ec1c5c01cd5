#!/bin/sh
# SPDX-License-Identifier: MIT
# test-setuid.sh PROG: the embedded recorder's output and secure mode (issue 21, item 16).
#   - PROG installed setuid root and run by a second user with USERTP_EVENTS and a
#     USERTP_OUTPUT that is a link (in a directory that user owns) to a root-owned file: every
#     USERTP_* variable is ignored (as secure_getenv() does), the file stays as it was, and
#     nothing is written;
#   - run normally, an output that is a symbolic link is refused at the start, with one line
#     saying so, and the program runs untraced; a file that is there is written in place.
# PROG: layouts' layout-exe (THREADS N).  Root only (exit 77 otherwise, or without setpriv).
set -eu
prog=$1
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
id usertp-test2 >/dev/null 2>&1 || useradd -M -r -s /usr/sbin/nologin usertp-test2 ||
	{ echo "SKIP: cannot add a user"; exit 77; }
dir=$(mktemp -d /tmp/usertp-setuid-XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
unset USERTP_EVENTS USERTP_OUTPUT USERTP_SESSION USERTP_CONTROL
export XDG_RUNTIME_DIR="$dir/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"

cp "$prog" "$dir/suid-prog"
chown root:root "$dir/suid-prog"
chmod 4755 "$dir/suid-prog"
printf 'precious\n' >"$dir/root-file"
chmod 600 "$dir/root-file"
mkdir "$dir/user"
chown usertp-test2 "$dir/user"
as_user() {
	(cd "$dir/user" && setpriv --reuid=usertp-test2 --regid=usertp-test2 --clear-groups \
		env XDG_RUNTIME_DIR="$dir/user" "$@")
}
as_user ln -s "$dir/root-file" "$dir/user/out.txt"
as_user env USERTP_EVENTS='jobs:*' USERTP_OUTPUT="$dir/user/out.txt" USERTP_DEBUG=1 \
	"$dir/suid-prog" 2 10 >"$dir/out" 2>"$dir/err" || bad "the setuid program failed: $(cat "$dir/err")"
[ "$(cat "$dir/root-file")" = precious ] || bad "the root-owned file was written through the link: $(head -3 "$dir/root-file")"
grep -q '^fired 40$' "$dir/out" || bad "the setuid program did not fire: $(cat "$dir/out")"
[ ! -e "$dir/user/trace.txt" ] || bad "the setuid program wrote trace.txt"
# A link to a file to be made in a directory only root writes in.
mkdir -m 700 "$dir/root-dir"
as_user ln -s "$dir/root-dir/new.txt" "$dir/user/new.txt"
as_user env USERTP_EVENTS='jobs:*' USERTP_OUTPUT="$dir/user/new.txt" \
	"$dir/suid-prog" 2 10 >"$dir/out" 2>>"$dir/err" || bad "the setuid program failed: $(cat "$dir/err")"
[ ! -e "$dir/root-dir/new.txt" ] || bad "a root-owned file was made through the link: $(head -3 "$dir/root-dir/new.txt")"
[ ! -s "$dir/err" ] || bad "the setuid program said something: $(cat "$dir/err")"

# Not setuid: a link as the output is refused at the start; the program runs untraced.
ln -s "$dir/root-file" "$dir/link.txt"
USERTP_EVENTS='jobs:*' USERTP_OUTPUT="$dir/link.txt" "$prog" 2 10 >"$dir/out" 2>"$dir/err" ||
	bad "the program failed with a link as its output"
grep -q "USERTP_OUTPUT.*symbolic link" "$dir/err" || bad "no word of the link: $(cat "$dir/err")"
[ "$(cat "$dir/root-file")" = precious ] || bad "written through a link"
# A regular file that is there is written in place (its inode stays).
: >"$dir/plain.txt"
inode=$(stat -c %i "$dir/plain.txt")
USERTP_EVENTS='jobs:*' USERTP_OUTPUT="$dir/plain.txt" "$prog" 2 10 >"$dir/out" 2>"$dir/err" || bad "plain output: $(cat "$dir/err")"
[ "$(grep -c ' job_queued: \| job_done: ' "$dir/plain.txt")" -eq 40 ] || bad "plain output: $(grep -c . "$dir/plain.txt") lines"
[ "$(stat -c %i "$dir/plain.txt")" = "$inode" ] || bad "the output was replaced, not written in place"
[ $fail -eq 0 ] && echo "ok: secure mode ignores USERTP_*, links are not followed"
exit $fail
