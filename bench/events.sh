#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# events.sh: overhead of -e alloc, -e live and -e lock on an allocation-heavy and a lock-heavy
# JVM, against a baseline and JFR (settings=profile) in the same run, interleaved rounds.
#
# Each run works WARM_MS unmeasured (JIT, the attach), then SECS measured. Two figures per
# run, each as the median of per-round ratios to that round's baseline:
#   throughput  ops in the window (higher is better; jprof's own CPU competes for the cores)
#   CPU per op  the JVM's CPU time (every thread) per op in the window: the cost inside the
#               JVM, which waiting for a core on a shared machine does not move
# A second baseline in every round ("baseline again") shows the machine's noise in the same
# figures. The agent's own callback time per event comes from jprof's report.
# Usage (root): bench/events.sh [ROUNDS] [SECS]; OUT=build, JAVA_HOME=JDK 17 by default.
set -euo pipefail
ROUNDS=${1:-5}
SECS=${2:-6}
OUT=${OUT:-build}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JPROF=$OUT/jprof
WARM_MS=${WARM_MS:-3000}
TMP=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT
[[ -x $JPROF ]] || { echo "events.sh: $JPROF not built (make)" >&2; exit 1; }
"$JAVA_HOME/bin/javac" -d "$TMP" bench/EventWork.java

# run MODE CONFIG: "ops cpu_ns" of one EventWork run under CONFIG (none, none2, jfr, or a
# jprof -e value); the agent's callback cost goes to $TMP/cb-CONFIG
run() {
	local mode=$1 cfg=$2 jflags=() pid jp=
	[[ $cfg == jfr ]] && jflags=(-XX:StartFlightRecording=settings=profile,filename="$TMP/x.jfr")
	"$JAVA_HOME/bin/java" "${jflags[@]}" -cp "$TMP" EventWork "$mode" "$WARM_MS" "$SECS" \
		>"$TMP/out" 2>/dev/null &
	pid=$!
	pids+=("$pid")
	if [[ $cfg != none* && $cfg != jfr ]]; then
		sleep 0.5
		"$JPROF" record -p "$pid" -e "$cfg" -d $((SECS + WARM_MS / 1000 + 2)) \
			-o "$TMP/p.folded" >/dev/null 2>"$TMP/jprof.err" &
		jp=$!
		pids+=("$jp")
	fi
	wait "$pid"
	if [[ -n $jp ]]; then
		kill -INT "$jp" 2>/dev/null || true
		wait "$jp" || true
		# the events really flowed: jprof's own report line for them
		case $cfg in
		alloc | live) grep -q '^jprof: allocations: [1-9]' "$TMP/jprof.err" ;;
		lock) grep -q '^jprof: monitor contention: [1-9]' "$TMP/jprof.err" ;;
		esac || { echo "events.sh: no $cfg events in jprof's report:" >&2; cat "$TMP/jprof.err" >&2; exit 1; }
		sed -nE 's/.*agent events: ([0-9]+) allocation samples, ([0-9]+) frees, ([0-9]+) monitor waits.*; callbacks ([0-9.]+) us each, ([0-9.]+) ms in all.*/\1 \2 \3 \4 \5/p' \
			"$TMP/jprof.err" >>"$TMP/cb-$mode-$cfg"
	fi
	awk '/^ops/ {print $2, $4}' "$TMP/out"
}

# median of the numbers on stdin
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

declare -A res
for mode in alloc lock; do
	cfgs=(none none2 jfr)
	[[ $mode == alloc ]] && cfgs+=(alloc live) || cfgs+=(lock)
	for ((r = 0; r < ROUNDS; r++)); do
		order=("${cfgs[@]}")
		# every other round backwards: no configuration always runs after the same one
		((r % 2)) && order=($(printf '%s\n' "${cfgs[@]}" | tac))
		for c in "${order[@]}"; do
			res[$mode/$c/$r]=$(run "$mode" "$c")
		done
	done
	for c in "${cfgs[@]}"; do
		[[ $c == none ]] && continue
		tp=() cpu=()
		for ((r = 0; r < ROUNDS; r++)); do
			read -r o c_ns <<<"${res[$mode/$c/$r]}"
			read -r bo b_ns <<<"${res[$mode/none/$r]}"
			tp+=("$(awk -v a="$o" -v b="$bo" 'BEGIN {printf "%.3f", a / b}')")
			cpu+=("$(awk -v a="$c_ns" -v ao="$o" -v b="$b_ns" -v bo="$bo" \
				'BEGIN {printf "%.3f", (a / ao) / (b / bo)}')")
		done
		name=$c
		[[ $c == none2 ]] && name="baseline again"
		echo "events: $mode workload, $name: throughput x$(printf '%s\n' "${tp[@]}" | median)" \
			"(rounds: ${tp[*]}), CPU per op x$(printf '%s\n' "${cpu[@]}" | median)" \
			"(rounds: ${cpu[*]})"
		if [[ -s $TMP/cb-$mode-$c ]]; then
			# allocs frees waits us-each ms-in-all, per run: medians
			echo "events: $mode workload, $c: agent callbacks $(cut -d' ' -f4 "$TMP/cb-$mode-$c" | median) us" \
				"each, $(cut -d' ' -f5 "$TMP/cb-$mode-$c" | median) ms per run of" \
				"$((SECS + WARM_MS / 1000)) s ($(cut -d' ' -f1 "$TMP/cb-$mode-$c" | median) allocation samples," \
				"$(cut -d' ' -f2 "$TMP/cb-$mode-$c" | median) frees, $(cut -d' ' -f3 "$TMP/cb-$mode-$c" | median) monitor waits)"
		fi
	done
done
