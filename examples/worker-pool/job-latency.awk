# SPDX-License-Identifier: MIT
#
# job-latency.awk - why was a job slow?  Splits each worker-pool job's latency (job_started
# to job_done) into the time its thread ran and the time it was off its CPU, from the
# kernel's sched_switch and sched_wakeup events recorded in the same file:
#
#   sudo usertp record -e sched:sched_switch -e sched:sched_wakeup -e 'jobs:*' -o run.dat \
#        -- ./worker-pool -w 3 -b 500 3000
#   usertp report -t -i run.dat | awk -f job-latency.awk                # the slowest jobs
#   usertp report -t -i run.dat | awk -f job-latency.awk -v job=869     # one job, its events
#
# (trace-cmd report -t prints the same text.)  Off the CPU, a thread is either preempted
# (switched out runnable, state R: another task took its CPU) or blocked (switched out
# sleeping, S or D); a blocked thread that is woken may then wait for a CPU until it is
# switched in.  So: latency = running + preempted + blocked + waiting.
#
# Variables: top=N (slowest jobs shown, default 5), job=ID (that job's events and its
# breakdown), each=1 (one line per job: "job ID TID LATENCY RUNNING PREEMPTED BLOCKED
# WAITING SWITCHES JUDGED INFERRED", nanoseconds).  A job is not judged when the file lacks a
# sched_switch of its CPU during the job (lost events): its thread's time off the CPU cannot
# then be known.  One gap is filled: this kernel (6.18) does not record about half of the
# switches from the idle task (in its own instances too), so a thread that was woken and
# then shows up running without a recorded switch in is taken to have waited for a CPU until
# that first event of its (an upper bound; INFERRED 1, counted in the summary).

# The parts of an event line: comm-tid [cpu] seconds: event: fields.
function parse(line,   head, at) {
	if (!match(line, /-[0-9]+ +\[[0-9]+\] +[0-9]+\.[0-9]+: +[a-z_0-9]+: /))
		return 0
	head = substr(line, RSTART + 1, RLENGTH - 1)
	fields = substr(line, RSTART + RLENGTH)
	sub(/^ +/, "", fields)
	split(head, at, /[] []+/)
	tid = at[1] + 0
	cpu = at[2] + 0
	now = seconds_to_ns(at[3])
	event = at[4]
	sub(/:$/, "", event)
	return 1
}

# "11309.296904978:" (or microseconds, "11309.296904:") as integer nanoseconds; a double
# holds them exactly for 104 days of uptime.
function seconds_to_ns(text,   part, frac) {
	sub(/:$/, "", text)
	split(text, part, ".")
	frac = part[2]
	while (length(frac) < 9)
		frac = frac "0"
	return part[1] * 1000000000 + frac
}

# The pid in "comm:pid [prio] ..." (the form trace-cmd's sched plugin prints), or after KEY=.
function pid_of(text, key,   at) {
	if (match(text, key "=[0-9]+"))
		return substr(text, RSTART + length(key) + 1, RLENGTH - length(key) - 1) + 0
	sub(/ +\[.*/, "", text)
	return substr(text, match(text, /:[0-9]+$/) + 1) + 0
}

function field(name,   at) {
	if (!match(fields, "(^| )" name "=[^ ]*"))
		return ""
	at = substr(fields, RSTART, RLENGTH)
	sub(/^ /, "", at)
	return substr(at, length(name) + 2)
}

function us(ns) { return sprintf("%.1f", ns / 1000) }

# Thread T's current job is not judged: part of its time cannot be known.
function unjudge(t) { if (t in job_of) judged[t] = 0 }

function show(line, t) { if (t == watched) shown[++nr_shown] = line }

function job_started(t) {
	job_of[t] = field("id")
	started[t] = now
	judged[t] = !(cpu in running) || running[cpu] == t
	running[cpu] = t
	preempted[t] = blocked[t] = waiting[t] = switches[t] = inferred[t] = 0
	if (job != "" && job_of[t] == job)
		watched = t
}

function job_done(t,   id, latency, ran, rank, k) {
	if (!(t in job_of))
		return
	if ((cpu in running) && running[cpu] != t)
		unjudge(t)
	id = job_of[t]
	latency = now - started[t]
	ran = latency - preempted[t] - blocked[t] - waiting[t]
	nr_jobs++
	nr_inferred += judged[t] && inferred[t]
	if (!judged[t]) {
		nr_unjudged++
	} else {
		total["latency"] += latency; total["running"] += ran; total["preempted"] += preempted[t]
		total["blocked"] += blocked[t]; total["waiting"] += waiting[t]
		# The slowest TOP jobs, kept in order by insertion.
		for (rank = nr_top; rank > 0 && top_latency[rank] < latency; rank--)
			if (rank < top) {
				top_latency[rank + 1] = top_latency[rank]; top_line[rank + 1] = top_line[rank]
			}
		if (rank < top) {
			top_latency[rank + 1] = latency
			top_line[rank + 1] = sprintf("%8s %11s %10s %10s %10s %10s %9d  %s", id,
				us(latency), us(ran), us(preempted[t]), us(blocked[t]), us(waiting[t]),
				switches[t], comm[t] "-" t)
			if (nr_top < top)
				nr_top++
		}
	}
	if (each)
		printf "job %s %d %d %d %d %d %d %d %d %d\n", id, t, latency, ran, preempted[t],
			blocked[t], waiting[t], switches[t], judged[t], inferred[t]
	if (t == watched) {
		for (k = 1; k <= nr_shown; k++)
			print shown[k]
		printf "\njob %s: %s us from job_started to job_done", id, us(latency)
		if (!judged[t])
			print " (not judged: a sched_switch of its CPU is missing)"
		else
			printf ": running %s, preempted %s, blocked %s, waiting for a CPU %s%s (us), %d switches\n",
				us(ran), us(preempted[t]), us(blocked[t]), us(waiting[t]),
				inferred[t] ? " at most" : "", switches[t]
		watched = ""
		found = 1
	}
	delete job_of[t]
}

# Thread T, off its CPU, shows up running now (an event of its own, or its switch out)
# though no recorded switch put it back.  Woken: it waited for a CPU at most until now (the
# switch from idle the kernel did not record).  Otherwise its time off cannot be known.
function back_on_cpu(t) {
	if (t in woken) {
		blocked[t] += woken[t] - off_since[t]
		waiting[t] += now - woken[t]
		switches[t]++
		inferred[t] = 1
		if (running[cpu] == 0)
			running[cpu] = t	# from the idle task
	} else
		unjudge(t)
	delete off_since[t]
	delete woken[t]
}

# A switch on CPU: PREV leaves it in STATE, NEXT takes it.
function switched(prev, state, next_t) {
	if ((cpu in running) && running[cpu] != prev)
		unjudge(running[cpu])	# a switch on this CPU was not recorded
	if (prev in off_since)
		back_on_cpu(prev)	# the switch that put it back was not recorded
	if (prev in job_of) {
		off_since[prev] = now
		off_state[prev] = state
		delete woken[prev]
	}
	if (next_t in off_since) {
		if (off_state[next_t] ~ /^R/)
			preempted[next_t] += now - off_since[next_t]
		else if (next_t in woken) {
			blocked[next_t] += woken[next_t] - off_since[next_t]
			waiting[next_t] += now - woken[next_t]
		} else
			blocked[next_t] += now - off_since[next_t]
		switches[next_t]++
		delete off_since[next_t]
	}
	running[cpu] = next_t
}

BEGIN {
	watched = ""	# a string: an unset variable would equal tid 0, the idle task
	if (top == "")
		top = 5
}

!parse($0) { next }

event == "sched_switch" {
	split(fields, side, " ==> ")
	prev = pid_of(side[1], "prev_pid")
	if (match(side[1], /prev_state=[^ ]*/))
		state = substr(side[1], RSTART + 11, RLENGTH - 11)
	else {
		state = side[1]
		sub(/ +$/, "", state)
		sub(/.* /, "", state)
	}
	next_t = pid_of(side[2], "next_pid")
	show($0, prev)
	show($0, next_t)
	switched(prev, state, next_t)
	next
}

event == "sched_wakeup" || event == "sched_waking" {
	woke = pid_of(fields, "pid")
	if ((woke in off_since) && !(woke in woken) && off_state[woke] !~ /^R/)
		woken[woke] = now
	show($0, woke)
	next
}

event ~ /^job_/ {
	comm[tid] = $1
	sub(/-[0-9]+$/, "", comm[tid])
	if (tid in off_since)
		back_on_cpu(tid)
	if (event == "job_started")
		job_started(tid)
	show($0, tid)
	if (event == "job_done")
		job_done(tid)
}

END {
	if (job != "") {
		if (!found)
			print "job " job ": no job_started and job_done of it in the input"
		exit !found
	}
	if (each)
		exit 0
	if (!nr_jobs) {
		print "no job_started and job_done events in the input"
		exit 1
	}
	printf "%d jobs", nr_jobs
	if (nr_unjudged)
		printf ", %d not judged (a sched_switch of their CPU is missing)", nr_unjudged
	if (nr_inferred)
		printf ", %d with a switch in inferred (waiting: at most)", nr_inferred
	printf "\ntime in jobs %s us: running %s, preempted %s, blocked %s, waiting for a CPU %s\n",
		us(total["latency"]), us(total["running"]), us(total["preempted"]),
		us(total["blocked"]), us(total["waiting"])
	printf "\n%8s %11s %10s %10s %10s %10s %9s  %s\n", "job", "latency_us", "running",
		"preempted", "blocked", "waiting", "switches", "thread"
	for (k = 1; k <= nr_top; k++)
		print top_line[k]
}
