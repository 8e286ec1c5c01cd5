#!/bin/sh
# SPDX-License-Identifier: MIT
# Build usertp and run the whole test suite: a normal build, then AddressSanitizer +
# UndefinedBehaviorSanitizer and ThreadSanitizer builds.  This is what CI runs (.ci/run).
#   test.sh [--quick]	--quick: the normal build only
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh" test
# The test programs' control endpoints go to a runtime directory of their own: a
# `usertp record -a` of the user does not see them, and endpoints of the programs the tests
# kill do not pile up in the user's directory.
XDG_RUNTIME_DIR=$(mktemp -d)
export XDG_RUNTIME_DIR
# Root's sessions of every user's programs put their sockets in a system directory (as root:
# /run/usertp): the tests' is inside theirs, where the programs another user runs in a test
# do not find the sessions of the other tests.
export USERTP_SYSTEM_DIR="$XDG_RUNTIME_DIR/system"
trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT
builds="build:"
[ "${1:-}" = --quick ] || builds="$builds build-asan:address,undefined build-tsan:thread"
for b in $builds; do
	dir=${b%%:*}
	sanitize=${b#*:}
	echo "== $dir ${sanitize:+(-fsanitize=$sanitize)}"
	cmake -S "$top" -B "$top/$dir" -G Ninja -DUSERTP_SANITIZE="$sanitize" >/dev/null
	ninja -C "$top/$dir" >/dev/null
	# The installed-tree test only needs the normal build.
	exclude=""
	[ -n "$sanitize" ] && exclude="-LE install|bench|clang|selftests|timeline"
	# Three at a time on two CPUs: many tests wait (for a program, a recorder, FUSE) part of
	# the time, and two at a time left a quarter of the CPU idle.
	(cd "$top/$dir" && ctest --output-on-failure -j3 $exclude)
done
