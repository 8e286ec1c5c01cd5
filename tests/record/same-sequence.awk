# SPDX-License-Identifier: MIT
# same-sequence.awk K U: lines "[CPU] SECONDS: EVENT: TEXT" of two files (trace-cmd report -t
# with the task column cut).  Per CPU, U's lines must be a run of consecutive lines of K's, in
# order, text for text, each stamped within 1 ms of its counterpart (two tracefs instances
# stamp one event each with its own clock reading; a run starts at the line of K nearest in
# time to U's first with its text).  Prints "checked N bad M".
# The kernel fills an event's fields once per instance: an exiting task's state read by one as
# Z (zombie) may be X (dead) by the next, so the two are taken as one.
function split_line(line, out) {
	out["cpu"] = substr(line, 2, 3) + 0
	out["t"] = $2; sub(/:$/, "", out["t"])
	out["text"] = line; sub(/^\[[0-9]+\] +[0-9.]+: +/, "", out["text"])
	sub(/\] [ZX] ==> /, "] Z|X ==> ", out["text"])
}
NR == FNR { split_line($0, f); c = f["cpu"]; kt[c, ++kn[c]] = f["t"]; kx[c, kn[c]] = f["text"]; next }
{
	split_line($0, f); c = f["cpu"]
	if (!(c in at)) {	# the first of this CPU: find it in K, the nearest in time of
		# those with its text (the same text may come again within 1 ms: a task woken
		# over and over; the first of them within 1 ms put the whole run out of step)
		at[c] = kn[c] + 1; best = 1e-6
		for (i = 1; i <= kn[c]; i++)
			if (kx[c, i] == f["text"] && (kt[c, i] - f["t"]) ^ 2 < best) {
				best = (kt[c, i] - f["t"]) ^ 2; at[c] = i
			}
	}
	checked++
	i = at[c]++
	if (i > kn[c] || kx[c, i] != f["text"] || (kt[c, i] - f["t"]) ^ 2 >= 1e-6) {
		if (bad++ < 5) print "cpu " c ": " $0 "  against  " kx[c, i] " at " kt[c, i]
	}
}
END { print "checked", checked + 0, "bad", bad + 0 }
