#!/bin/sh
# SPDX-License-Identifier: MIT
# Build usertp, run the worker-pool example traced by the embedded recorder into a trace.dat
# file, and print that file with `usertp report` (trace-cmd report prints the same lines).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh" build
cmake -S "$top" -B "$top/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$top/build" >/dev/null
USERTP_EVENTS='jobs:*' USERTP_OUTPUT="$top/build/trace.dat" "$top/build/examples/worker-pool" "$@"
"$top/build/bin/usertp" report -i "$top/build/trace.dat"
