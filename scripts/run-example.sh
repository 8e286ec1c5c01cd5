#!/bin/sh
# SPDX-License-Identifier: MIT
# Build usertp and run the worker-pool example with its events printed as they happen.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh" build
cmake -S "$top" -B "$top/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$top/build" >/dev/null
exec "$top/build/examples/worker-pool" -t "$@"
