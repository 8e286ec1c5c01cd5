# SPDX-License-Identifier: MIT
# split-parts.awk ORDER ORIG PARTS: are the parts of a `trace-cmd split -r` the original's lines?
# ORIG: trace-cmd report's event lines of the original file; PARTS: "PART<TAB>LINE", the event
# lines of each part, parts in order.  ORDER=1: the parts one after the other are the original
# (split by events or by time); ORDER=0: the same lines in another order (by pages).
#
# trace-cmd split (3.1.6 and upstream as of 3.4) reads, to close a part, the record after it,
# and puts back for the next part only the CPUs that have records in the part closed: when the
# record that closes a part is on a CPU with none in it, that record is in no part.  A kernel
# file loses the same way.  So a line may be missing, and only so: the first of its CPU after a
# whole part without that CPU, the next line of its CPU (if any) the first of its CPU in the
# next part.  Anything else missing, any line added, twice or out of order, is a fault.
# Prints "lines N parts P dropped-by-split D bad B" and up to 5 faults.
function cpu_of(line) {
	match(line, /\[[0-9]+\]/)
	return substr(line, RSTART + 1, RLENGTH - 2) + 0
}
function fault(what) {
	if (bad++ < 5)
		print what
}
FILENAME == ARGV[1] { orig[++n] = $0; index_of[$0] = n; next }
{
	tab = index($0, "\t"); p = substr($0, 1, tab - 1) + 0; line = substr($0, tab + 1)
	if (!(line in index_of)) { fault("not in the original: " line); next }
	if (line in part_of) { fault("twice: " line); next }
	part_of[line] = p; in_part[p, cpu_of(line)] = 1; parts = p > parts ? p : parts
	seq[++m] = index_of[line]
}
END {
	# Per CPU, each missing line: the line of its CPU before it (if any) in a part before a
	# part without the CPU, the line after it (if any) that part's successor's first of the CPU.
	for (i = 1; i <= n; i++) {
		if (orig[i] in part_of)
			continue
		c = cpu_of(orig[i]); prev = 0; next_line = 0
		for (k = i - 1; k >= 1 && !prev; k--)
			if (cpu_of(orig[k]) == c)
				prev = k
		for (k = i + 1; k <= n && !next_line; k++)
			if (cpu_of(orig[k]) == c)
				next_line = k
		if (prev && !(orig[prev] in part_of)) { fault("two missing in a row: " orig[i]); continue }
		if (next_line && !(orig[next_line] in part_of)) { fault("two missing in a row: " orig[i]); continue }
		q = next_line ? part_of[orig[next_line]] : parts + 1
		from = prev ? part_of[orig[prev]] : 0
		if (q - 1 <= from || in_part[q - 1, c]) { fault("missing: " orig[i]); continue }
		dropped++
	}
	# In order: the parts' lines one after the other, ascending in the original.
	if (ORDER)
		for (k = 2; k <= m; k++)
			if (seq[k] < seq[k - 1]) { fault("out of order: " orig[seq[k]]); break }
	printf "lines %d parts %d dropped-by-split %d bad %d\n", n, parts, dropped, bad
}
