#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# load.sh: jprof on a saturated host (issue 13): one JVM with THREADS runnable threads,
# `jprof record -p PID -F 999 -d SECS`; prints jprof's CPU time, wall time, time past -d
# and its report. Needs root and `make apps`.
#   bench/load.sh [JPROF] [THREADS] [SECS] [extra jprof options...]
set -euo pipefail

# the timing is done by this script: under load it must not be the one that starves
if [[ -z ${LOAD_NICED:-} && $EUID -eq 0 ]]; then
	LOAD_NICED=1 exec nice -n -15 "$0" "$@"
fi

REPO=$(cd "$(dirname "$0")/.." && pwd)
JPROF=$(realpath "${1:-$REPO/build/jprof}")
THREADS=${2:-200}
SECS=${3:-20}
shift $(($# < 3 ? $# : 3))
JAVA=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
TMP=$(mktemp -d)
JPID=

cleanup() {
	# the JVM's status (killed) must not become the script's
	if [[ -n $JPID ]]; then
		kill -9 "$JPID" 2>/dev/null || true
		wait "$JPID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

cd "$TMP" # the JVM's attach files go here
TO0=$((-$(nice))) # nice increment back to the default priority
nice -n "$TO0" "$JAVA" -cp "$REPO/build/tests/apps" ManyThreads "$THREADS" $((SECS * 10 + 60)) \
	>"$TMP/java.out" 2>&1 &
JPID=$!
for ((i = 0; i < 300; i++)); do
	grep -q ready "$TMP/java.out" 2>/dev/null && break
	sleep 0.1
done
grep -q ready "$TMP/java.out" || { echo "the JVM did not start" >&2; exit 1; }
sleep 2

# jprof starts at the default priority, like from a shell
/usr/bin/time -f '%U %S' -o "$TMP/time" timeout -s KILL 600 nice -n "$TO0" "$JPROF" record -p "$JPID" -F 999 \
	-d "$SECS" -o "$TMP/out.folded" "$@" 2>"$TMP/err" &
PP=$!
# -d counts from the "recording" line (after the agent is attached)
for ((i = 0; i < 6000; i++)); do
	grep -q recording "$TMP/err" 2>/dev/null && break
	sleep 0.01
done
t0=$(date +%s.%N)
# jprof's scheduling: its nice value and how long it waited runnable for a CPU
JP=
for p in $(pgrep -x jprof); do
	grep -qF "$TMP/out.folded" "/proc/$p/cmdline" 2>/dev/null && JP=$p
done
ni=$(ps -o ni= -p "$JP" 2>/dev/null) || true
rd0=$(awk '{ print $2 }' "/proc/$JP/schedstat" 2>/dev/null) || true
rd1=$rd0
while kill -0 "$JP" 2>/dev/null; do
	x=$(awk '{ print $2 }' "/proc/$JP/schedstat" 2>/dev/null) || break
	rd1=$x
	sleep 0.2
done
wait "$PP" || true
t1=$(date +%s.%N)
cat "$TMP/err"
read -r u s <"$TMP/time"
awk -v u="$u" -v s="$s" -v t0="$t0" -v t1="$t1" -v d="$SECS" 'BEGIN {
	printf "load: jprof cpu %.2f s (user %.2f, sys %.2f), %.2f s from start of recording to exit, %.2f s past -d %d\n",
		u + s, u, s, t1 - t0, t1 - t0 - d, d }'
echo "load: jprof nice ${ni:-?}, waited $(((${rd1:-0} - ${rd0:-0}) / 1000000)) ms runnable for a CPU"
