#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerates corpus/, the seed files of the reader's fuzz target: small files of the
# recorder (both CPUs, lost events, every field kind), trace-cmd's version 7 conversions of
# one, and truncations and bit flips of those.   usage: make-corpus.sh BUILD-DIR
set -eu
build=$1
out=$(cd "$(dirname "$0")" && pwd)/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out" && mkdir -p "$out"
fire=$build/tests/report/report-fire

USERTP_EVENTS='usertp-test:*' USERTP_OUTPUT=$out/fire.dat "$fire" 2 8
USERTP_BUFFER_KB=8 USERTP_EVENTS='usertp-test:*' USERTP_OUTPUT=$out/lost.dat "$fire" 4 40
USERTP_EVENTS='usertp-test:*,!t_rel_len' USERTP_OUTPUT=$out/kinds.dat "$build/tests/dat/dat-fire" 2
trace-cmd convert -i "$out/fire.dat" -o "$out/fire-v7-zstd.dat" --file-version 7 --compression zstd
trace-cmd convert -i "$out/fire.dat" -o "$out/fire-v7-none.dat" --file-version 7 --compression none

# flip FILE OFFSET: a copy with the byte at OFFSET inverted.
flip() {
	b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
	cp "$1" "$tmp/f"
	# shellcheck disable=SC2059
	printf "\\$(printf %03o $((b ^ 255)))" | dd of="$tmp/f" bs=1 seek="$2" conv=notrunc status=none
	mv "$tmp/f" "$out/$(basename "$1" .dat)-flip$2.dat"
}
for base in fire fire-v7-zstd; do
	f=$out/$base.dat
	size=$(wc -c <"$f")
	for cut in 11 300 $((size / 3)) $((size / 2)) $((size - 4000)) $((size - 100)); do
		[ "$cut" -gt 0 ] && head -c "$cut" "$f" >"$out/$base-cut$cut.dat"
	done
	for at in 12 40 400 $((size / 2 + 8)) $((size - 4080)) $((size - 1000)); do
		flip "$f" "$at"
	done
done
du -sh "$out"
