# SPDX-License-Identifier: MIT
#
# callgrind-per-event.awk - instructions per event from callgrind's dumps.
#
#   awk -v label=usertp-bench -f callgrind-per-event.awk callgrind.out.*
#
# A benchmark run under valgrind --tool=callgrind dumps its counters twice per case, after N1
# and after N2 events, with CALLGRIND_DUMP_STATS_AT("LABEL CASE EVENTS") (the counters zeroed
# before each).  Each dump file has the trigger in a "desc:" line and the total in "totals:".
# Prints "CASE<TAB>INSTRUCTIONS/EVENT" per case, (Ir(N2) - Ir(N1)) / (N2 - N1): the fixed costs
# of a window (calling the loop, the client requests) cancel exactly.  The two dumps of a case
# are paired by the N they name, not by file order; dumps of other labels are ignored.
FNR == 1 { if (c != "") seen(); c = ""; t = "" }
$1 == "desc:" && $2 == "Trigger:" && $5 == label { c = $6; n = $7 }
/^totals:/ { t = $2 }
function seen() {
	if (!(c in lo) || n + 0 < lo[c]) { lo[c] = n; ilo[c] = t }
	if (!(c in hi) || n + 0 > hi[c]) { hi[c] = n; ihi[c] = t }
}
END {
	if (c != "") seen()
	for (c in hi)
		if (hi[c] > lo[c])
			printf "%s\t%.2f\n", c, (ihi[c] - ilo[c]) / (hi[c] - lo[c])
}
