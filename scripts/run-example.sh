#!/bin/sh
# SPDX-License-Identifier: MIT
# Build usertp, run the worker-pool example traced by the embedded recorder, show the trace.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh" build
cmake -S "$top" -B "$top/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$top/build" >/dev/null
USERTP_EVENTS='jobs:*' USERTP_OUTPUT="$top/build/trace.txt" "$top/build/examples/worker-pool" "$@"
cat "$top/build/trace.txt"
