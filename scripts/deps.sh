#!/bin/sh
# SPDX-License-Identifier: MIT
# Make sure the Debian packages usertp builds and tests with are installed.  As root, missing
# ones are installed with apt-get; otherwise the missing ones are listed and the script fails.
#   deps.sh build	the library and examples
#   deps.sh test	also what the test suite uses (trace-cmd, the kernel's ftrace
#			selftests in linux-source, valgrind, clang's sanitizer
#			runtime)
#   deps.sh kernelshark	also KernelShark, Xvfb, xdotool and ImageMagick, for the optional
#			KernelShark test (ctest -L kernelshark; they pull in Qt), and
#			KernelShark's development files, for the plugin that draws spans
#   deps.sh peers	the build's and the peers bench/peers/run.sh measures usertp against:
#			LTTng-UST and lttng-tools, babeltrace2, <sys/sdt.h>, trace-cmd, valgrind
set -eu
packages="cmake ninja-build gcc g++ pkg-config liburcu-dev libtraceevent-dev libtracefs-dev"
packages="$packages libfuse3-dev fuse3"
if [ "${1:-build}" = test ] || [ "${1:-build}" = kernelshark ]; then
	packages="$packages trace-cmd linux-source valgrind binutils strace"
	# bench/peers' smoke run builds and runs the peers too
	packages="$packages liblttng-ust-dev lttng-tools babeltrace2 systemtap-sdt-dev"
fi
if [ "${1:-build}" = peers ]; then
	packages="$packages trace-cmd valgrind liblttng-ust-dev lttng-tools babeltrace2 systemtap-sdt-dev"
fi
if [ "${1:-build}" = kernelshark ]; then
	# (and what the plugin for usertp's spans builds against: src/kernelshark)
	packages="$packages kernelshark xvfb xdotool imagemagick libkshark-dev libjson-c-dev libtracecmd-dev"
fi
missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "usertp: missing Debian packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "usertp: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq $missing >/dev/null
