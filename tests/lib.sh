# SPDX-License-Identifier: MIT
# lib.sh - what the shell tests share; sourced: . "$(dirname "$0")/../lib.sh"

# wait_until WHAT CMD...: until CMD succeeds, every 50 ms; after 10 s the test fails, saying WHAT
# (and, where the test has set wait_dump to a command, what that prints: the state it waited on).
wait_until() {
	what=$1
	shift
	i=0
	until "$@" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 200 ] || {
			echo "timed out waiting for $what"
			[ -z "${wait_dump:-}" ] || eval "$wait_dump"
			exit 1
		}
		sleep 0.05
	done
}
