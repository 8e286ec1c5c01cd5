#!/bin/sh
# SPDX-License-Identifier: MIT
# test-man-pages.sh MANDIR LIB...: every function a library exports has a man page, or a link
# page (".so man3/PAGE.3") to an existing page that names it (issue 21, item 9: `man
# usertp_session_set_filter` said "No manual entry").  With man(1), each opens.
set -eu
mandir=$1
shift
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/man3"
cp "$mandir"/*.3 "$tmp/man3/"
for lib in "$@"; do
	for sym in $(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
		grep '^usertp_[a-z]' | sort -u); do
		page=$mandir/$sym.3
		if [ ! -f "$page" ]; then
			echo "FAIL: $sym ($(basename "$lib")): no man page"; fail=1; continue
		fi
		target=$(sed -n 's|^\.so man3/||p' "$page")
		if [ -n "$target" ]; then
			[ -f "$mandir/$target" ] || { echo "FAIL: $sym: links to $target, which is not there"; fail=1; continue; }
			grep -q "\\b$sym\\b" "$mandir/$target" || { echo "FAIL: $sym: $target does not name it"; fail=1; }
		fi
		if command -v man >/dev/null; then
			MANPATH=$tmp man "$sym" 2>/dev/null | grep -q . || { echo "FAIL: man $sym shows nothing"; fail=1; }
		fi
	done
done
[ $fail -eq 0 ] && echo "ok: every exported function has its man page"
exit $fail
