#!/bin/sh
# SPDX-License-Identifier: MIT
# Build usertp and run the whole test suite: a normal build, then AddressSanitizer +
# UndefinedBehaviorSanitizer and ThreadSanitizer builds.  This is what CI runs (.ci/run).
#   test.sh [--quick]	--quick: the normal build only
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh" test
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
	[ -n "$sanitize" ] && exclude="-LE install|bench|clang"
	(cd "$top/$dir" && ctest --output-on-failure -j2 $exclude)
done
