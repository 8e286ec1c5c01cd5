#!/bin/sh
# SPDX-License-Identifier: MIT
#
# install-test.sh CMAKE BUILD_DIR WORK_DIR SOURCE_ROOT CC CXX GENERATOR MAKE_PROGRAM
#
# Installs the build in BUILD_DIR into a fresh prefix under WORK_DIR (cmake --install
# --prefix), then builds the program in tests/compile/install against the installed tree
# only, and runs it (it records an event through a listener and calls a registered probe):
#
#   1. pkg-config --cflags --libs usertp          C and C++, linked with libusertp.so
#   2. pkg-config --static --cflags --libs usertp  libusertp.a; and fully -static if the
#                                                  toolchain has the static libraries
#   3. find_package(usertp) in a CMake project      usertp::usertp and usertp::usertp_static,
#                                                  usertp::usertp-consumer
#   and pkg-config usertp-consumer: a program of libusertp-consumer (not linked with libusertp),
#   and one of both static libraries together (a session of its own on itself)
#
# Needs no network and no root.  Exit status 0 on success, 77 (skipped) without pkg-config.
# USERTP_TEST_SANITIZE=<value> in the environment (set by the build when it was configured
# with USERTP_SANITIZE) builds the programs with -fsanitize=<value> too, as a library built
# with a sanitizer needs, and leaves out the fully static link, which sanitizers do not support.
#
# A known bug of the package is reported as "KNOWN BUG: ..." and worked around so that the
# rest is still tested; with USERTP_INSTALL_TEST_STRICT=1 in the environment it fails instead.
set -eu

if [ $# -ne 8 ]; then
	echo "usage: $0 CMAKE BUILD_DIR WORK_DIR SOURCE_ROOT CC CXX GENERATOR MAKE_PROGRAM" >&2
	exit 2
fi
cmake=$1 build=$2 work=$3 root=$4 cc=$5 cxx=$6 generator=$7 make_program=$8
src=$root/tests/compile/install
warn="-Wall -Wextra -Werror"
san=${USERTP_TEST_SANITIZE:+-fsanitize=$USERTP_TEST_SANITIZE -fno-omit-frame-pointer}
warn="$warn${san:+ $san}"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
known_bug() {
	echo "KNOWN BUG: $*"
	[ "${USERTP_INSTALL_TEST_STRICT:-0}" = 0 ] || fail "known bug (USERTP_INSTALL_TEST_STRICT)"
}
step() {
	echo
	echo "== $*"
}
# run LOG CMD...: run a command with its output in LOG, shown when it fails.
run() {
	log=$1
	shift
	echo "+ $*" >"$log"
	if ! "$@" >>"$log" 2>&1; then
		cat "$log" >&2
		fail "$*"
	fi
}

command -v pkg-config >/dev/null 2>&1 || {
	echo "SKIP: pkg-config not found"
	exit 77
}

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

step "cmake --install $build --prefix $prefix"
run "$work/install.log" "$cmake" --install "$build" --prefix "$prefix"
pc=$(find "$prefix" -name usertp.pc | head -n 1)
[ -n "$pc" ] || fail "no usertp.pc under $prefix"
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
for f in libusertp.so libusertp.a libusertp-consumer.so libusertp-consumer.a \
	pkgconfig/usertp-consumer.pc cmake/usertp/usertpConfig.cmake \
	cmake/usertp/usertpConfigVersion.cmake cmake/usertp/usertpTargets.cmake; do
	[ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
(cd "$prefix" && find . -type f -o -type l | sort)

# --- 1 and 2: pkg-config ------------------------------------------------------------------
PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
pc_prefix=$(pkg-config --variable=prefix usertp) || fail "pkg-config does not find usertp"
# usertp.pc names its prefix relative to itself, so it follows the tree wherever installed.
[ "$(cd "$pc_prefix" && pwd -P)" = "$(cd "$prefix" && pwd -P)" ] ||
	fail "$pc has prefix=$pc_prefix, not $prefix where it was installed"
pkgconfig=pkg-config
includedir=$($pkgconfig --variable=includedir usertp)
for h in usertp/usertp.h usertp/tracepoint.h usertp/trace-event.h usertp/compiler.h; do
	[ -f "$includedir/$h" ] || fail "$includedir/$h not installed"
done
cflags=$($pkgconfig --cflags usertp)
libs=$($pkgconfig --libs usertp)
static_libs=$($pkgconfig --static --libs usertp)
echo "cflags:      $cflags"
echo "libs:        $libs"
echo "static libs: $static_libs"
case " $cflags $libs $static_libs " in
*"$prefix"*) ;;
*) fail "pkg-config flags do not point into $prefix" ;;
esac

# check_deps DEPFILE: the program was compiled from the installed headers, none of the
# source tree's.
check_deps() {
	grep -qF "$includedir/usertp/kernel/trace/define_trace.h" "$1" ||
		fail "$1: not compiled with the installed <trace/define_trace.h>"
	grep -qF "$includedir/usertp/usertp.h" "$1" ||
		fail "$1: not compiled with the installed <usertp/usertp.h>"
	if grep -qF "$root/include" "$1"; then
		fail "$1: compiled with headers of the source tree $root/include"
	fi
}

# needs PROGRAM: the shared libraries PROGRAM needs, "?" without readelf.
needs() {
	if command -v readelf >/dev/null 2>&1; then
		readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '
	else
		echo "?"
	fi
}
# needs_usertp PROGRAM yes|no: PROGRAM is (or is not) linked with libusertp.so.0.
needs_usertp() {
	n=" $(needs "$1") "
	echo "$(basename "$1") needs:$n"
	case $n in
	*" ? "*) return 0 ;;
	*" libusertp.so.0 "*) [ "$2" = yes ] || fail "$1 is linked with libusertp.so" ;;
	*) [ "$2" = no ] || fail "$1 is not linked with libusertp.so.0" ;;
	esac
}

step "pkg-config, shared: C"
# shellcheck disable=SC2086 # flags are word lists
run "$work/shared.log" "$cc" -std=gnu11 $warn -I"$src" -MD -MF "$work/consumer-shared.d" \
	"$src/consumer.c" -o "$work/consumer-shared" $cflags $libs
check_deps "$work/consumer-shared.d"
needs_usertp "$work/consumer-shared" yes
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$work/consumer-shared" ||
	fail "consumer-shared"

step "pkg-config: a probe in a library of its own (LD_PRELOAD)"
# shellcheck disable=SC2086
run "$work/probe.log" "$cc" -std=gnu11 $warn -fPIC -shared -I"$src" "$src/probe.c" \
	-o "$work/probe.so" $cflags $libs
LD_PRELOAD=$work/probe.so LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	"$work/consumer-shared" >"$work/probe.out" 2>&1 || { cat "$work/probe.out"; fail "consumer with probe.so"; }
grep -q '^probe.so: 4 calls$' "$work/probe.out" || { cat "$work/probe.out"; fail "probe.so was not called"; }

step "pkg-config, shared: C++17"
# shellcheck disable=SC2086
run "$work/shared-cxx.log" "$cxx" -x c++ -std=c++17 $warn -I"$src" -MD \
	-MF "$work/consumer-shared-cxx.d" "$src/consumer.c" -o "$work/consumer-shared-cxx" \
	-x none $cflags $libs
check_deps "$work/consumer-shared-cxx.d"
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$work/consumer-shared-cxx" ||
	fail "consumer-shared-cxx"

step "pkg-config usertp-consumer: libusertp-consumer"
[ -f "$includedir/usertp/consumer.h" ] || fail "$includedir/usertp/consumer.h not installed"
ccflags=$($pkgconfig --cflags usertp-consumer)
clibs=$($pkgconfig --libs usertp-consumer)
echo "cflags: $ccflags"
echo "libs:   $clibs"
# shellcheck disable=SC2086
run "$work/follower.log" "$cc" -std=gnu11 $warn "$src/follower.c" -o "$work/follower" \
	$ccflags $clibs
case " $(needs "$work/follower") " in
*" libusertp.so.0 "*) fail "follower is linked with libusertp.so (traced programs' library)" ;;
esac
XDG_RUNTIME_DIR=$work LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	"$work/follower" || fail "follower"

step "pkg-config --static: libusertp.a"
# The linker takes libusertp.so for -lusertp when both exist: name the archive.
static_a=$(echo " $static_libs " | sed 's/ -lusertp / -l:libusertp.a /')
[ "$static_a" != " $static_libs " ] || fail "no -lusertp in: $static_libs"
# shellcheck disable=SC2086
run "$work/static.log" "$cc" -std=gnu11 $warn -I"$src" -MD -MF "$work/consumer-static.d" \
	"$src/consumer.c" -o "$work/consumer-static" $cflags $static_a
check_deps "$work/consumer-static.d"
needs_usertp "$work/consumer-static" no
"$work/consumer-static" || fail "consumer-static"

step "pkg-config --static: libusertp.a and libusertp-consumer.a in one program"
# (Both archives hold src/common's objects: the link must take one copy, and work.)
both_libs=$($pkgconfig --static --libs usertp-consumer usertp |
	sed 's/ -lusertp-consumer / -l:libusertp-consumer.a /; s/ -lusertp / -l:libusertp.a /; s/^-lusertp-consumer /-l:libusertp-consumer.a /')
case " $both_libs " in
*" -l:libusertp-consumer.a "*" -l:libusertp.a "* | *" -l:libusertp.a "*" -l:libusertp-consumer.a "*) ;;
*) fail "no -lusertp and -lusertp-consumer in: $both_libs" ;;
esac
# shellcheck disable=SC2086
run "$work/both.log" "$cc" -std=gnu11 $warn -I"$src" "$src/both.c" -o "$work/both" \
	$cflags $ccflags $both_libs
case " $(needs "$work/both") " in
*" libusertp.so.0 "* | *" libusertp-consumer.so.0 "*) fail "both is linked with a shared usertp library" ;;
esac
XDG_RUNTIME_DIR=$work "$work/both" || fail "both (libusertp.a with libusertp-consumer.a)"

step "pkg-config --static: fully static (-static)"
have_static=yes
if [ -n "$san" ]; then
	echo "built with $san: fully static link not tried"
	have_static=no
else
	for a in libc.a libpthread.a liburcu-bp.a liburcu-common.a; do
		case $("$cc" -print-file-name=$a) in
		/*) ;;
		*)
			echo "no $a for $cc: fully static link not tried"
			have_static=no
			;;
		esac
	done
fi
if [ $have_static = yes ]; then
	# shellcheck disable=SC2086
	run "$work/full-static.log" "$cc" -static -std=gnu11 $warn -I"$src" "$src/consumer.c" \
		-o "$work/consumer-full-static" $cflags $static_a
	case " $(needs "$work/consumer-full-static") " in
	"  " | *" ? "*) ;;
	*) fail "consumer-full-static needs shared libraries: $(needs "$work/consumer-full-static")" ;;
	esac
	"$work/consumer-full-static" || fail "consumer-full-static"
fi

# --- 3: find_package(usertp) ----------------------------------------------------------------
step "find_package(usertp): configure"
run "$work/cmake-configure.log" "$cmake" -S "$src" -B "$work/cmake-build" -G "$generator" \
	-DCMAKE_MAKE_PROGRAM="$make_program" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix" -DEXPECTED_PREFIX="$prefix" \
	-DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" \
	-DCMAKE_EXE_LINKER_FLAGS="$san"
grep -E "usertp .* from" "$work/cmake-configure.log" || true
if grep -q "KNOWN BUG" "$work/cmake-configure.log"; then
	known_bug "$(grep -A2 "KNOWN BUG" "$work/cmake-configure.log" | sed 's/^ *//' | tr '\n' ' ')"
fi

step "find_package(usertp): build"
run "$work/cmake-build.log" "$cmake" --build "$work/cmake-build"
needs_usertp "$work/cmake-build/consumer" yes
needs_usertp "$work/cmake-build/consumer-cxx" yes
needs_usertp "$work/cmake-build/consumer-static" no
# The build tree's RPATH names $libdir: no LD_LIBRARY_PATH needed.
for p in consumer consumer-cxx consumer-static; do
	"$work/cmake-build/$p" || fail "$p (find_package)"
done
XDG_RUNTIME_DIR=$work "$work/cmake-build/follower" || fail "follower (find_package)"
LD_PRELOAD=$work/cmake-build/libconsumer-probe.so "$work/cmake-build/consumer" >"$work/probe.out" 2>&1 ||
	{ cat "$work/probe.out"; fail "consumer with libconsumer-probe.so (find_package)"; }
grep -q '^probe.so: 4 calls$' "$work/probe.out" || { cat "$work/probe.out"; fail "probe not called (find_package)"; }

# --- man pages: where man(1) looks ------------------------------------------------------
step "man pages"
for page in man1/usertp.1 man1/usertp-record.1 man3/libusertp.3; do
	[ -f "$prefix/share/man/$page" ] || fail "$prefix/share/man/$page not installed"
done
if command -v man >/dev/null 2>&1; then
	MANPATH=$prefix/share/man man -w usertp >/dev/null 2>&1 || fail "man -w usertp does not find it"
fi

# --- 4: the build tree, not installed ------------------------------------------------------
step "the build tree: pkg-config (usertp-uninstalled.pc)"
btcflags=$(PKG_CONFIG_PATH=$build pkg-config --cflags usertp)
btlibs=$(PKG_CONFIG_PATH=$build pkg-config --libs usertp)
echo "cflags: $btcflags"
case " $btcflags " in
*" -I$root/include "*) ;;
*) fail "the build tree's pkg-config does not point at $root/include: $btcflags" ;;
esac
# shellcheck disable=SC2086
run "$work/buildtree.log" "$cc" -std=gnu11 $warn -I"$src" "$src/consumer.c" \
	-o "$work/consumer-buildtree" $btcflags $btlibs
"$work/consumer-buildtree" || fail "consumer-buildtree"

step "the build tree: find_package with usertp_DIR"
run "$work/bt-configure.log" "$cmake" -S "$src" -B "$work/bt-build" -G "$generator" \
	-DCMAKE_MAKE_PROGRAM="$make_program" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
	-Dusertp_DIR="$build" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON \
	-DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san"
run "$work/bt-build.log" "$cmake" --build "$work/bt-build" --target consumer
"$work/bt-build/consumer" || fail "consumer (usertp_DIR=$build)"

echo
echo "install test passed"
