#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# events.sh: overhead of -e alloc, -e live and -e lock on an allocation-heavy and a lock-heavy
# JVM, against a baseline and JFR (settings=profile) in the same run, interleaved rounds.
# Usage (root): bench/events.sh [ROUNDS] [SECS]; OUT=build, JAVA_HOME=JDK 17 by default.
set -euo pipefail
ROUNDS=${1:-3}
SECS=${2:-8}
OUT=${OUT:-build}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JPROF=$OUT/jprof
WARM_MS=1500
TMP=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT
[[ -x $JPROF ]] || { echo "events.sh: $JPROF not built (make)" >&2; exit 1; }
"$JAVA_HOME/bin/javac" -d "$TMP" bench/EventWork.java

# run MODE CONFIG: ops of one EventWork run under CONFIG (none, jfr, or a jprof -e value)
run() {
	local mode=$1 cfg=$2 jflags=() pid jp=
	[[ $cfg == jfr ]] && jflags=(-XX:StartFlightRecording=settings=profile,filename="$TMP/x.jfr")
	"$JAVA_HOME/bin/java" "${jflags[@]}" -cp "$TMP" EventWork "$mode" "$WARM_MS" "$SECS" \
		>"$TMP/out" 2>/dev/null &
	pid=$!
	pids+=("$pid")
	if [[ $cfg != none && $cfg != jfr ]]; then
		sleep 0.5
		"$JPROF" record -p "$pid" -e "$cfg" -d $((SECS + 2)) -o "$TMP/p.folded" \
			>/dev/null 2>"$TMP/jprof.err" &
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
	fi
	awk '/^ops/ {print $2}' "$TMP/out"
}

declare -A ops
for mode in alloc lock; do
	cfgs=(none jfr)
	[[ $mode == alloc ]] && cfgs+=(alloc live) || cfgs+=(lock)
	for ((r = 0; r < ROUNDS; r++)); do
		for c in "${cfgs[@]}"; do
			ops[$mode/$c/$r]=$(run "$mode" "$c")
		done
	done
	for c in "${cfgs[@]}"; do
		[[ $c == none ]] && continue
		ratios=()
		for ((r = 0; r < ROUNDS; r++)); do
			ratios+=("$(awk -v a="${ops[$mode/$c/$r]}" -v b="${ops[$mode/none/$r]}" \
				'BEGIN {printf "%.3f", a / b}')")
		done
		med=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
		echo "events: $mode workload, $c: throughput x$med of the baseline (rounds: ${ratios[*]})"
	done
done
