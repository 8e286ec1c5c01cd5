#!/bin/sh
# SPDX-License-Identifier: MIT
# Build usertp, run the worker-pool example traced by the embedded recorder into a trace.dat
# file, and print that file with `usertp report` (trace-cmd report prints the same lines).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh" build
echo "run-example.sh: building usertp in build/ (the first time takes a minute or two)" >&2
cmake -S "$top" -B "$top/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# ninja's progress: one line rewritten on a terminal, a line per step otherwise.
ninja -C "$top/build" >&2
echo "run-example.sh: running build/examples/worker-pool traced by the embedded recorder" >&2
USERTP_EVENTS='jobs:*' USERTP_OUTPUT="$top/build/trace.dat" "$top/build/examples/worker-pool" "$@"
"$top/build/bin/usertp" report -i "$top/build/trace.dat"
