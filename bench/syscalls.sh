#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# bench/syscalls.sh [RUNS] [CALLS]: cost of the syscall and off-CPU programs on a
# syscall-heavy workload (1-byte writes to /dev/null, tests/apps/sc_writes). Each run
# measures a baseline and each configuration back to back (interleaved), with the
# programs attached system-wide through tests/kernel/sc_driver; prints ns per call
# and the ratio to that run's baseline, then the median ratios. Needs root.
set -euo pipefail

OUT=${OUT:-build}
RUNS=${1:-5}
CALLS=${2:-2000000}
APP=$OUT/tests/apps/sc_writes
DRV=$OUT/tests/kernel/sc_driver
TMP=$(mktemp -d)
DRV_PID=

cleanup() {
	if [[ -n $DRV_PID ]]; then
		kill "$DRV_PID" 2>/dev/null || true
		wait "$DRV_PID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

[[ $EUID -eq 0 ]] || { echo "bench/syscalls.sh: needs root" >&2; exit 1; }
for f in "$APP" "$DRV"; do
	[[ -x $f ]] || { echo "bench/syscalls.sh: $f missing (make OUT=$OUT apps sc-driver)" >&2; exit 1; }
done

ns_per_call() {
	"$APP" "$CALLS" | sed -n 's/^ns_per_call=//p'
}

# measure EV: ns per call with the driver loaded for EV (syscalls|offcpu|both)
measure() {
	rm -f "$TMP/ready"
	"$DRV" -e "$1" -d 600 -q --ready "$TMP/ready" >/dev/null 2>"$TMP/err" &
	DRV_PID=$!
	for ((i = 0; i < 100; i++)); do
		[[ -s $TMP/ready ]] && break
		kill -0 "$DRV_PID" 2>/dev/null || { cat "$TMP/err" >&2; exit 1; }
		sleep 0.1
	done
	ns_per_call
	kill -INT "$DRV_PID"
	wait "$DRV_PID" || true
	DRV_PID=
}

configs=(syscalls offcpu both)
declare -A ratios
printf '%-4s %10s' run base
printf ' %18s' "${configs[@]}"
printf '\n'
for ((r = 1; r <= RUNS; r++)); do
	base=$(ns_per_call)
	printf '%-4s %10s' "$r" "$base"
	for c in "${configs[@]}"; do
		v=$(measure "$c")
		ratio=$(awk -v a="$v" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
		ratios[$c]+="$ratio "
		printf ' %10s (x%s)' "$v" "$ratio"
	done
	printf '\n'
done
echo "ns per 1-byte write to /dev/null, $CALLS calls per measurement; x = ratio to the run's baseline"
for c in "${configs[@]}"; do
	med=$(tr ' ' '\n' <<<"${ratios[$c]}" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	echo "median ratio $c: x$med"
done
