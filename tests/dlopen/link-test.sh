#!/bin/sh
# SPDX-License-Identifier: MIT
#
# link-test.sh - the kernel's rule for CREATE_TRACE_POINTS, checked with the real compiler
# and linker:
#
#   single      link-main.c (CREATE_TRACE_POINTS) + link-user.c (header only, calls
#               trace_link_ev()): must compile, link and run, and the event fired in
#               link-user.c must be recorded.
#   duplicate   link-main.c + link-define2.c, CREATE_TRACE_POINTS in both: both files
#               compile, but the link must fail with a multiple definition of the tracepoint.
#
# usage: link-test.sh single|duplicate CC SRCDIR WORKDIR LIBUSERTP --sanitize=[LIST] INCDIR...
set -u

mode=$1 cc=$2 src=$3 work=$4 lib=$5 san=$6
shift 6
# The remaining arguments are include directories: turn each into -I<dir>.
for d do
	set -- "$@" "-I$d"
	shift
done

fail() {
	echo "FAIL: $*"
	exit 1
}

sanflags=
case $san in
--sanitize=) ;;
--sanitize=*) sanflags="-fsanitize=${san#--sanitize=} -fno-omit-frame-pointer" ;;
*) fail "bad sanitizer argument '$san'" ;;
esac

rm -rf "$work"
mkdir -p "$work" || fail "cannot create $work"
cd "$work" || fail "cannot enter $work"

compile() {
	# shellcheck disable=SC2086 # sanflags is a list of flags
	"$cc" -std=gnu11 -O2 -Wall -Wextra -Werror -pthread $sanflags -I"$src" "$@" \
		-c "$src/$obj.c" -o "$obj.o" >"$obj.log" 2>&1 || {
		cat "$obj.log"
		fail "$obj.c does not compile"
	}
}

link() {
	out=$1
	shift
	# shellcheck disable=SC2086
	"$cc" -pthread $sanflags "$@" "$lib" -Wl,-rpath,"$(dirname "$lib")" -o "$out" \
		>"$out.log" 2>&1
}

case $mode in
single)
	for obj in link-main link-user; do compile "$@"; done
	link link-single link-main.o link-user.o || {
		cat link-single.log
		fail "CREATE_TRACE_POINTS in one file: the program does not link"
	}
	./link-single >run.log 2>&1 || {
		cat run.log
		fail "link-single failed"
	}
	cat run.log
	grep -q '^recorded: a=42 s=other-file$' run.log || fail "unexpected output"
	echo "PASS: CREATE_TRACE_POINTS in one file, trace_link_ev() called from another"
	;;
duplicate)
	for obj in link-main link-define2; do compile "$@"; done
	if link link-duplicate link-main.o link-define2.o; then
		fail "CREATE_TRACE_POINTS in two files: the program linked"
	fi
	cat link-duplicate.log
	[ ! -e link-duplicate ] || fail "the linker left an executable"
	# GNU ld and gold: "multiple definition of `__tracepoint_link_ev'"; lld: "duplicate symbol".
	grep -Eq "(multiple definition of|duplicate symbol:) .?__tracepoint_link_ev" \
		link-duplicate.log || fail "no 'multiple definition' of __tracepoint_link_ev"
	echo "PASS: CREATE_TRACE_POINTS in two files does not link"
	;;
*)
	fail "unknown mode '$mode'"
	;;
esac
exit 0
