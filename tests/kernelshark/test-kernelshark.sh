#!/bin/sh
# SPDX-License-Identifier: MIT
# KernelShark opens a trace.dat file of ours and shows its events.
#   usage: test-kernelshark.sh [-e EVENT=COUNT]... [-l] [-p PLUGIN=R,G,B] KS-ENTRIES FILE.dat
#          [COMMAND...]
# COMMAND, if given, is run first to write FILE.dat ("{}" in an argument stands for its path;
# its exit status 77 skips the test).
# 1. KernelShark's library (ks-entries) loads the file: the same events as `trace-cmd report`
#    (CPU, time, task, name, text read back by offset) and its lost-events marks; -e: EVENT
#    appears COUNT times; -l: the file has lost events.
# 2. The GUI, under Xvfb: `kernelshark FILE` comes up with the file's name in its title,
#    prints no error and stays up; its window, once drawn, has far more colour (the CPU plots)
#    than that of KernelShark with no file.  The screenshot is left in FILE.dat.png.
#    -p: KernelShark again with `-p PLUGIN` (a plugin of ours): it loads without complaint,
#    and its window has at least 100 more pixels of the colour R,G,B (what the plugin draws)
#    than without it.  That screenshot is left in FILE.dat.plugin.png.
# Exits 77 (skip) when kernelshark, trace-cmd, Xvfb, xdotool or ImageMagick is missing.
set -eu
usage() {
	echo "usage: $0 [-e EVENT=COUNT]... [-l] [-p PLUGIN=R,G,B] KS-ENTRIES FILE.dat [COMMAND...]" >&2
	exit 2
}
expect="" lost=0 plugin="" plugin_rgb=""
while getopts e:lp: opt; do
	case $opt in
	e) expect="$expect $OPTARG" ;;
	l) lost=1 ;;
	p) plugin=${OPTARG%=*} plugin_rgb=${OPTARG##*=} ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
entries=$1 dat=$2
shift 2
case $dat in /*) ;; *) dat=$PWD/$dat ;; esac
for tool in kernelshark trace-cmd Xvfb xdotool import convert; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done

dir=$(mktemp -d)
xvfb="" ks=""
cleanup() {
	[ -z "$ks" ] || kill "$ks" 2>/dev/null || true
	[ -z "$xvfb" ] || kill "$xvfb" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE
fail=0

# The file, written now if a command is given.
if [ $# -gt 0 ]; then
	rm -f "$dat" "$dat.png"
	for arg; do
		shift
		case $arg in *"{}"*) arg=${arg%%"{}"*}$dat${arg#*"{}"} ;; esac
		set -- "$@" "$arg"
	done
	rc=0
	timeout 120 "$@" >"$dir/cmd.out" 2>"$dir/cmd.err" || rc=$?
	[ $rc -ne 77 ] || { cat "$dir/cmd.out"; exit 77; }
	[ $rc -eq 0 ] || { cat "$dir/cmd.err"; echo "$* failed"; exit 1; }
	[ -s "$dat" ] || { echo "$* wrote no $dat"; exit 1; }
fi

# 1. Through libkshark, against trace-cmd report, each CPU's entries in file order.
rc=0
timeout 120 "$entries" "$dat" >"$dir/ks.txt" 2>"$dir/ks.err" || rc=$?
[ $rc -ne 77 ] || { cat "$dir/ks.txt"; exit 77; }
[ $rc -eq 0 ] || { cat "$dir/ks.err"; echo "ks-entries failed on $dat (exit $rc)"; exit 1; }
# (-N: no plugins, as the library prints: the kernel's sched_switch then reads the same.)
timeout 120 trace-cmd report -N -t -i "$dat" >"$dir/report.txt" 2>"$dir/report.err" ||
	{ cat "$dir/report.err"; echo "trace-cmd report failed on $dat"; exit 1; }
# "  comm-pid [001]  8310.799712095: name:    text" -> "1 8310.799712095 comm-pid name: text",
# "CPU:1 [76 EVENTS DROPPED]" -> "1 LOST 76" ("?" for an unknown count).
awk '
/^CPU:[0-9]+ \[[0-9]* ?EVENTS DROPPED\]/ {
	cpu = substr($1, 5); n = substr($2, 2)
	print cpu + 0, "LOST", (n ~ /^[0-9]+$/ ? n : "?"); next
}
match($0, / +\[[0-9]+\] +[0-9]+\.[0-9]+: /) {
	task = substr($0, 1, RSTART - 1); sub(/^ +/, "", task)
	split(substr($0, RSTART, RLENGTH), f, /[][ :]+/)
	rest = substr($0, RSTART + RLENGTH)
	i = index(rest, ":"); name = substr(rest, 1, i - 1); text = substr(rest, i + 1)
	sub(/^ +/, "", text)
	print f[2] + 0, f[3], task, name ": " text
}' "$dir/report.txt" >"$dir/tc.txt"
sort -s -n -k1,1 "$dir/tc.txt" >"$dir/tc.sorted"
# A task the file's saved cmdlines do not name (the kernel keeps 128, and a kworker may start
# during the recording): trace-cmd prints "<...>-PID", KernelShark the name it learned from a
# sched_switch of that pid before.  Taken as the same task.
sort -s -n -k1,1 "$dir/ks.txt" | awk 'NR == FNR { tc[FNR] = $3; next }
	tc[FNR] ~ /^<\.\.\.>-[0-9]+$/ && $3 ~ /-[0-9]+$/ {
		pid = tc[FNR]; sub(/.*-/, "", pid); mine = $3; sub(/.*-/, "", mine)
		i = index($0, " " $3 " ")	# (the line kept as it is but for that word)
		if (pid == mine) $0 = substr($0, 1, i) tc[FNR] substr($0, i + 1 + length($3))
	}
	{ print }' "$dir/tc.sorted" - >"$dir/ks.sorted"
n=$(wc -l <"$dir/ks.txt")
if [ "$(wc -l <"$dir/tc.txt")" -eq 0 ]; then
	echo "trace-cmd report shows no event in $dat"; fail=1
elif ! cmp -s "$dir/ks.sorted" "$dir/tc.sorted"; then
	echo "KernelShark's $n entries differ from trace-cmd report (< KernelShark, > trace-cmd):"
	diff "$dir/ks.sorted" "$dir/tc.sorted" | head -20
	fail=1
fi
for e in $expect; do
	c=$(grep -c " ${e%%=*}: " "$dir/ks.txt" || true)
	[ "$c" -eq "${e#*=}" ] || { echo "${e%%=*}: $c in KernelShark, expected ${e#*=}"; fail=1; }
done
if [ $lost -eq 1 ] && ! grep -q '^[0-9]* LOST ' "$dir/ks.txt"; then
	echo "KernelShark shows no lost events"; fail=1
fi
echo "libkshark: $n entries, $(cut -d' ' -f1 "$dir/ks.txt" | sort -u | wc -l) CPUs," \
	"$(grep -c '^[0-9]* LOST ' "$dir/ks.txt" || true) lost-events marks"

# 2. The GUI, on a display of its own.
timeout 600 Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp -noreset 3>"$dir/display" \
	2>"$dir/xvfb.err" &
xvfb=$!
i=0
until [ -s "$dir/display" ]; do
	i=$((i + 1))
	[ $i -le 60 ] && kill -0 "$xvfb" 2>/dev/null ||
		{ cat "$dir/xvfb.err"; echo "Xvfb did not start"; exit 1; }
	sleep 0.5
done
DISPLAY=:$(cat "$dir/display")
export DISPLAY

# Start kernelshark with arguments "$@", its output in $dir/$1.*, in a home of its own (so no
# earlier session or setting is used), and wait up to 60 s for its main window: $wid.  As root
# it first shows a modal "running as root" dialog, closed with Return.
start_ks() {
	tag=$1
	shift
	mkdir -p "$dir/$tag.home" "$dir/$tag.run"
	chmod 700 "$dir/$tag.run"
	env HOME="$dir/$tag.home" XDG_CONFIG_HOME="$dir/$tag.home/.config" \
		XDG_CACHE_HOME="$dir/$tag.home/.cache" XDG_DATA_HOME="$dir/$tag.home/.local" \
		XDG_RUNTIME_DIR="$dir/$tag.run" \
		timeout 300 kernelshark "$@" >"$dir/$tag.out" 2>"$dir/$tag.err" &
	ks=$!
	i=0
	until wid=$(xdotool search --name '^Kernel Shark' 2>/dev/null | head -1) && [ -n "$wid" ]; do
		i=$((i + 1))
		if [ $i -gt 60 ] || ! kill -0 "$ks" 2>/dev/null; then
			cat "$dir/$tag.err"
			echo "kernelshark $*: no main window"
			return 1
		fi
		[ "$(id -u)" -ne 0 ] || xdotool key Return 2>/dev/null || true
		sleep 1
	done
}

# Screenshot of window $wid into $1 once drawn: two shots a second apart are the same (at
# most 30 s).  Prints the number of strongly coloured pixels (HSL saturation above 40 %).
shot() {
	i=0
	import -window "$wid" "$1" 2>/dev/null || return 1
	while :; do
		sleep 1
		import -window "$wid" "$dir/again.png" 2>/dev/null || return 1
		same=$(compare -metric AE "$1" "$dir/again.png" null: 2>&1 || true)
		mv "$dir/again.png" "$1"
		i=$((i + 1))
		[ "$same" != 0 ] && [ $i -lt 30 ] || break
	done
	convert "$1" -colorspace HSL -channel G -separate +channel -threshold 40% \
		-format '%[fx:round(mean*w*h)]' info:
}

# pixels IMAGE R,G,B: how many pixels of IMAGE have exactly that colour
pixels() {
	convert "$1" -alpha off -fill black +opaque "rgb($2)" -fill white -opaque "rgb($2)" \
		-format '%[fx:round(mean*w*h)]' info:
}

stop_ks() {
	kill "$ks" 2>/dev/null || true
	wait "$ks" 2>/dev/null || true
	ks=""
}

# KernelShark with no file: the colour of its bare window.
start_ks empty || exit 1
empty=$(shot "$dir/empty.png") || { echo "no screenshot of an empty KernelShark"; exit 1; }
stop_ks

start_ks file "$dat" || exit 1
# The title names the file once it is loaded.
i=0
named() { case $title in *"$dat"*) true ;; *) false ;; esac; }
until title=$(xdotool getwindowname "$wid" 2>/dev/null) && named; do
	i=$((i + 1))
	[ $i -le 60 ] || { echo "window title '$title' does not name $dat"; fail=1; break; }
	sleep 1
done
colour=$(shot "$dat.png") || { echo "no screenshot of KernelShark on $dat"; exit 1; }
echo "GUI: title '$title', $colour coloured pixels (empty KernelShark: $empty), $dat.png"
kill -0 "$ks" 2>/dev/null || { echo "kernelshark exited while showing $dat"; fail=1; }
# KernelShark's kvm_combo and sched_events plugins fail to initialise on any trace that has
# no kvm or sched events: that line is expected; any other complaint is an error.
if grep -i 'error\|fail\|cannot\|unable\|invalid\|corrupt' "$dir/file.err" |
	grep -v '^plugin "[a-z_]*" failed to initialize on stream '; then
	echo "kernelshark complained on stderr while loading $dat"
	fail=1
fi
# The bare window's only strong colour is its green "Marker A" button; the plots add more: at
# least 3,000 pixels (record-kernel, whose programs' part is short beside the kernel's, gave
# 4,560 to 9,516 in the TSan build, so 3 x empty + 1,000 failed it 1 run in 5).
if [ "$colour" -lt $((empty + 2000)) ]; then
	echo "KernelShark's window on $dat has no more colour than an empty one: nothing plotted?"
	fail=1
fi
stop_ks

# A plugin of ours: loaded, and drawing in its colour.
if [ -n "$plugin" ]; then
	without=$(pixels "$dat.png" "$plugin_rgb")
	start_ks plugin -p "$plugin" "$dat" || exit 1
	i=0
	until title=$(xdotool getwindowname "$wid" 2>/dev/null) && named; do
		i=$((i + 1))
		[ $i -le 60 ] || { echo "window title '$title' does not name $dat"; fail=1; break; }
		sleep 1
	done
	shot "$dat.plugin.png" >/dev/null || { echo "no screenshot of KernelShark with $plugin"; exit 1; }
	with=$(pixels "$dat.plugin.png" "$plugin_rgb")
	echo "plugin $(basename "$plugin"): $with pixels of rgb($plugin_rgb) (without it: $without), $dat.plugin.png"
	name=$(basename "$plugin" .so)
	if grep -i "${name#plugin-}.*fail\|error\|cannot" "$dir/plugin.err"; then
		echo "kernelshark complained about $plugin"; fail=1
	fi
	[ "$with" -ge $((without + 100)) ] || { echo "$plugin drew nothing in rgb($plugin_rgb)"; fail=1; }
	stop_ks
fi
exit $fail
