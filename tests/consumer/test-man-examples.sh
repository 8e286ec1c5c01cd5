#!/bin/sh
# SPDX-License-Identifier: MIT
# test-man-examples.sh SOURCE_ROOT BUILD_DIR CC CONS-PROG [CXX]: the EXAMPLE of every section 3
# man page of libusertp-consumer, compiled as the page shows it (warnings are errors), as C and,
# with CXX, as C++; the trace.dat example is run on cons-prog too, and its file read back.
set -eu
root=$1 build=$2 cc=$3 prog=$4 cxx=${5:-}
dir=$(mktemp -d /tmp/usertp-man-XXXXXX)
trap 'rm -rf "$dir"' EXIT
export XDG_RUNTIME_DIR="$dir/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"
san=${USERTP_TEST_SANITIZE:+-fsanitize=$USERTP_TEST_SANITIZE}
fail=0
n=0
for page in "$root"/docs/man/*.3; do
	grep -q '^\.B #include <usertp/consumer.h>' "$page" || continue
	name=$(basename "$page" .3)
	# The lines between .nf and .fi after .SH EXAMPLE, with roff's escapes undone.
	awk '/^\.SH EXAMPLE/ { ex = 1 } ex && /^\.fi/ { exit } ex && code { print } ex && /^\.nf/ { code = 1 }' "$page" |
		sed -e 's/\\e/\\/g' -e 's/\\-/-/g' -e 's/\\(dq/"/g' -e "s/\\\\(aq/'/g" >"$dir/$name.c"
	[ -s "$dir/$name.c" ] || { echo "$name: no EXAMPLE"; fail=1; continue; }
	# shellcheck disable=SC2086
	if ! "$cc" -std=gnu11 -Wall -Wextra -Werror $san -I"$root/include" -I/usr/include/traceevent \
		"$dir/$name.c" -o "$dir/$name" -L"$build" -Wl,-rpath,"$build" -lusertp-consumer \
		-ltraceevent 2>"$dir/$name.err"; then
		echo "$name: the EXAMPLE does not compile:"
		cat "$dir/$name.err"
		fail=1
	fi
	# shellcheck disable=SC2086
	if [ -n "$cxx" ] && ! "$cxx" -x c++ -std=c++17 -Wall -Wextra -Werror $san -I"$root/include" \
		-I/usr/include/traceevent "$dir/$name.c" -o "$dir/$name-cxx" -L"$build" \
		-Wl,-rpath,"$build" -lusertp-consumer -ltraceevent 2>"$dir/$name.err"; then
		echo "$name: the EXAMPLE does not compile as C++:"
		cat "$dir/$name.err"
		fail=1
	fi
	n=$((n + 1))
done
[ "$n" -ge 5 ] || { echo "only $n pages with examples"; fail=1; }
# The trace.dat example, run: a command recorded into run.dat, read back.
(cd "$dir" && ./usertp_session_write_dat 'cons:*' "$prog" auto 30 >out 2>err) ||
	{ echo "the trace.dat example failed:"; cat "$dir/err"; fail=1; }
events=$(awk '/^CPU/ { n += $3 } END { print n + 0 }' "$dir/out")
[ "$events" -eq 60 ] || { echo "the trace.dat example: $events events, not 60"; cat "$dir/out"; fail=1; }
"$build/bin/usertp" report -i "$dir/run.dat" >"$dir/report" 2>&1 || { cat "$dir/report"; fail=1; }
[ "$(grep -c ' cons_[ab]: ' "$dir/report")" -eq 60 ] || { echo "report:"; head "$dir/report"; fail=1; }
echo "$n examples compiled"
exit $fail
