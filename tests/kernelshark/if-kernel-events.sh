#!/bin/sh
# SPDX-License-Identifier: MIT
# if-kernel-events.sh COMMAND...: run COMMAND where usertp record can take the kernel's events
# (root, tracefs writable); exit 77 (skip) elsewhere.
[ "$(id -u)" -eq 0 ] && [ -w /sys/kernel/tracing/instances ] ||
	{ echo "SKIP: kernel events need root and tracefs at /sys/kernel/tracing"; exit 77; }
exec "$@"
