#!/bin/sh
# SPDX-License-Identifier: MIT
# readme-test.sh CMAKE BUILD_DIR WORK_DIR SOURCE_ROOT: the README's "Instrument your own program"
# as a user follows it (issue 21, item 4): the build installed into a fresh prefix, every
# snippet marked "<!-- readme-test: FILE -->" written to FILE in an empty directory, then
# build-pkg-config.sh and build-cmake.sh run there as they are, with only what the README says
# to set for a prefix that is not the system's (PKG_CONFIG_PATH, CMAKE_PREFIX_PATH,
# LD_LIBRARY_PATH); each run must print the three events of myapp.c.  Exit 77 without pkg-config.
set -eu
cmake=$1 build=$2 work=$3 root=$4
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }
rm -rf "$work"
mkdir -p "$work/app"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log"; exit 1; }
# The snippets, each into its file.
awk -v dir="$work/app" '
	/^<!-- readme-test: .* -->$/ { file = dir "/" $3; next }
	file && /^```/ { if (inside) { inside = 0; close(file); file = "" } else inside = 1; next }
	inside { print > file }' "$root/README.md"
for f in myapp-trace.h myapp.c build-pkg-config.sh CMakeLists.txt build-cmake.sh; do
	[ -s "$work/app/$f" ] || { echo "FAIL: the README has no snippet $f"; exit 1; }
done
PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name usertp.pc | head -1)")
CMAKE_PREFIX_PATH=$prefix
export PKG_CONFIG_PATH CMAKE_PREFIX_PATH
LD_LIBRARY_PATH=$(pkg-config --variable=libdir usertp)
export LD_LIBRARY_PATH
unset USERTP_EVENTS USERTP_OUTPUT USERTP_SESSION
fail=0
for how in pkg-config cmake; do
	rm -rf "$work/app/build" "$work/app/myapp" "$work/app/trace.txt"
	if ! (cd "$work/app" && sh "build-$how.sh") >"$work/$how.out" 2>&1; then
		echo "FAIL: build-$how.sh:"; cat "$work/$how.out"; fail=1; continue
	fi
	n=$(grep -c ' myapp_step: n=[0-2] what=step$' "$work/$how.out" || true)
	[ "$n" -eq 3 ] || { echo "FAIL: build-$how.sh printed $n events, not 3:"; cat "$work/$how.out"; fail=1; }
done
[ $fail -eq 0 ] && echo "ok: the README's snippets build and trace, with pkg-config and with CMake"
exit $fail
