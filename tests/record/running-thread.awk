# SPDX-License-Identifier: MIT
# running-thread.awk: trace-cmd report's text of a file with sched_switch and job events.
# Per CPU, the intervals between two sched_switch events where the second's prev is the
# first's next (the kernel recorded both ends): every job event in such an interval must come
# from that thread.  Intervals the kernel left open (a switch it did not record) are not judged.
function cpu_of(line) { match(line, /\[[0-9][0-9][0-9]\]/); return substr(line, RSTART + 1, 3) + 0 }
function pid_field(s,   k, p) { k = split(s, p, ":"); return p[k] }
/ sched_switch: / {
	cpu = cpu_of($0)
	s = $0; sub(/.*sched_switch: +/, "", s); split(s, a, " ==> ")
	split(a[1], pv, " "); prev = pid_field(pv[1])
	split(a[2], nx, " "); nxt = pid_field(nx[1])
	if ((cpu in running) && running[cpu] == prev) {
		checked += pending[cpu]; bad += pending_bad[cpu]
		if (pending_bad[cpu] && shown++ < 5) print "not the running thread (" prev "): " first_bad[cpu]
	} else
		unjudged += pending[cpu]
	running[cpu] = nxt; pending[cpu] = 0; pending_bad[cpu] = 0
	next
}
/ job_[a-z]*: / {
	cpu = cpu_of($0)
	match($0, /-[0-9]+ +\[/); pid = substr($0, RSTART + 1, RLENGTH - 1); sub(/ +\[/, "", pid)
	if (!(cpu in running)) { unjudged++; next }
	pending[cpu]++
	if (pid != running[cpu] && !pending_bad[cpu]++) first_bad[cpu] = $0
}
END { for (c in pending) unjudged += pending[c]; print "checked", checked + 0, "bad", bad + 0, "unjudged", unjudged + 0 }
