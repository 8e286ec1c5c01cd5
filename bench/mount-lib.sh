# SPDX-License-Identifier: MIT
# mount-lib.sh - sourced by the benchmarks that start `usertp mount` (start-mount.sh,
# mount-pump.sh): mount_start USERTP DIR starts USERTP's mount on DIR in the background,
# its pid in $m, and returns once DIR is mounted (exits 1 after 10 s).
mount_start() {
	"$1" mount -f "$2" &
	m=$!
	i=0
	until mountpoint -q "$2"; do
		i=$((i + 1))
		[ $i -lt 200 ] || { echo "$(basename "$0"): the mount did not start" >&2; exit 1; }
		sleep 0.05
	done
}
