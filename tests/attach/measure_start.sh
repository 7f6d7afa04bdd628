#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# measure_start.sh: time to first sample and per-JVM attach outcome with N busy JVMs present.
#   measure_start.sh JPROF NJVMS THREADS SECONDS [JDK_HOME]
# Starts NJVMS `Busy THREADS` JVMs (tests/attach/Busy.java), records them (-p; the whole host
# with -a when NJVMS is 0 or TARGET=all) for SECONDS and prints jprof's own summary lines
# plus the number of Busy.spin samples (samples with Java frames).
set -euo pipefail
jprof=$1 n=$2 threads=$3 secs=$4 home=${5:-/usr/lib/jvm/java-17-openjdk-amd64}
cls=${ATTACH_CLASSES:-$(cd "$(dirname "$0")/../.." && pwd)/build/tests/attach}
work=$(mktemp -d /tmp/jprof-measure.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
cd "$work" # the JVMs' cwd: whatever they leave (hs_err files) goes away with it
for ((i = 0; i < n; i++)); do
	"$home/bin/java" -Xss256k -cp "$cls" Busy "$threads" "$work/ready.$i" >"$work/jvm.$i.log" 2>&1 3>&- &
	pids+=("$!")
done
for ((i = 0; i < n; i++)); do
	for ((t = 0; t < 600; t++)); do [[ -s $work/ready.$i ]] && break; sleep 0.1; done
	[[ -s $work/ready.$i ]] || { echo "JVM $i not ready" >&2; exit 1; }
done
# other profilers on the host may have loaded an agent already: say so, it changes the attach
pre=0
for p in "${pids[@]}"; do grep -q jprof-agent "/proc/$p/maps" && pre=$((pre + 1)); done
echo "JVMs with a jprof agent before the recording: $pre of $n"
targets=(-a)
if ((n > 0)) && [[ ${TARGET:-} != all ]]; then
	targets=(-p "$(IFS=,; echo "${pids[*]}")")
fi
"$jprof" record "${targets[@]}" -d "$secs" -o "$work/out.folded" 2>"$work/err" || { cat "$work/err"; exit 1; }
grep -E 'first sample|no sample|samples \(|attach|Java stacks from|no Java stacks' "$work/err" | grep -v 'late: in code' || true
busy=$(grep -F 'Busy' "$work/out.folded" | awk '{ s += $NF } END { print s + 0 }')
echo "Busy.* samples: $busy"
