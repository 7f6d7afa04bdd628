#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# gcpauses.bats: GC and safepoint pauses read from the JVM's hsperfdata file. A JVM that forces
# GCs (System.gc() and allocation pressure) with -Xlog:gc to a file: jprof's pause count and
# total agree with the JVM's own log within 10%; -f json carries the table; the JFR output
# has jdk.GarbageCollection events that the JDK's `jfr` reads. JDK 17 and 25.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	OUT=$BATS_TEST_TMPDIR
	JPROF_PID=
	JPID=
}

teardown() {
	local p
	for p in ${JPID:-} ${JPROF_PID:-}; do
		{ kill -9 "$p" && wait "$p"; } 2>/dev/null || true
	done
}

# record_gc JDK ARGS...: jprof record -a (ARGS) while GcPauses runs on JDK with -Xlog:gc
# (GC_ARGS: its pauses and their gap in ms); SIGTERM ends the recording 1.5 s after the JVM's
# exit (its last pauses were read at the latest a second after they happened; -d caps it);
# leaves jprof's report in $OUT/err, the GC log in $OUT/gc.log and the JVM's pid in $GCPID
record_gc() {
	local jdk=$1
	shift
	require_root_bpf
	require_jdk "$jdk"
	[[ -f $APPS/GcPauses.class ]] || { missing "GcPauses not built in $APPS (make apps)"; return; }
	"$JPROF" record -v -a -d 60 "$@" >"$OUT/stdout" 2>"$OUT/err" 3>&- &
	JPROF_PID=$!
	# sampling runs once jprof says it records (its first line)
	for ((i = 0; i < 100; i++)); do
		grep -q "recording" "$OUT/err" 2>/dev/null && break
		sleep 0.1
	done
	"$jdk/bin/java" -XX:+IgnoreUnrecognizedVMOptions -XX:+EnableDynamicAgentLoading \
		-Xlog:gc:file="$OUT/gc.log" -cp "$APPS" GcPauses ${GC_ARGS:-25 80} >"$OUT/java.out" 2>&1 3>&- &
	JPID=$!
	GCPID=$JPID
	wait "$JPID"
	JPID=
	grep -q done "$OUT/java.out"
	sleep 1.5
	kill -TERM "$JPROF_PID"
	wait "$JPROF_PID"
	JPROF_PID=
	cat "$OUT/err"
}

# sum of count and total_ms of the GC rows (not safepoints) of pid's pause table: "COUNT MS"
jprof_gc_totals() {
	awk -v pid="$1" '
		$0 ~ "^jprof: JVM " pid " .* pauses \\(hsperfdata" { on = 1; next }
		on && /^  kind / { next }
		on && /^  [^ (]/ { if ($1 != "safepoints") { c += $(NF-5); t += $(NF-4) } next }
		on { on = 0 }
		END { printf "%d %.3f\n", c, t }' "$OUT/err"
}

# pauses in the JVM's own log: "COUNT MS" (every "Pause ... N.NNNms" line)
log_gc_totals() {
	grep -E 'Pause .*[0-9.]+ms$' "$OUT/gc.log" |
		awk '{ v = $NF; sub(/ms$/, "", v); c++; t += v } END { printf "%d %.3f\n", c, t }'
}

# within A B PCT [ABS]: A and B within PCT percent of each other (of the larger), or ABS apart
within() {
	awk -v a="$1" -v b="$2" -v p="$3" -v abs="${4:-0}" 'BEGIN { m = a > b ? a : b; d = a - b
		if (d < 0) d = -d; exit !(m > 0 && (d <= m * p / 100 || d <= abs)) }'
}

check_against_log() {
	local got want
	read -r got_n got_ms < <(jprof_gc_totals "$GCPID")
	read -r want_n want_ms < <(log_gc_totals)
	echo "jprof: $got_n pauses, $got_ms ms; -Xlog:gc: $want_n pauses, $want_ms ms"
	((want_n >= 25)) # every System.gc() is logged
	within "$got_n" "$want_n" 10
	within "$got_ms" "$want_ms" 10
	# safepoints are counted too
	grep -Eq '^  safepoints +[1-9][0-9]* ' "$OUT/err"
}


# -e wall: the JVM's stop-the-world time as a [GC pause] frame under its process (no thread
# root), within 10% of the -Xlog:gc total; the threads' own time is not in it
check_wall_band() {
	local got want_n want_ms
	check_against_log
	got=$(folded_sum "^[^;]+ \\[$GCPID\\] GcPauses;\\[GC pause\\] " "$OUT/w.folded")
	read -r want_n want_ms < <(log_gc_totals)
	echo "[GC pause] band: $got ns; -Xlog:gc: $want_ms ms"
	within "$got" "$(awk -v m="$want_ms" 'BEGIN { printf "%.0f", m * 1e6 }')" 10
	# one line, right under the process: the band is no thread and holds nothing else
	[[ $(grep -c '\[GC pause\]' "$OUT/w.folded") == 1 ]]
	grep -Eq "^[^;]+ \\[$GCPID\\] GcPauses;[^;]+ \\[[0-9]+\\];" "$OUT/w.folded"
	# one root for the process, the band's and the threads' (named by the main class)
	! grep -Eq "^[^;]+ \\[$GCPID\\];" "$OUT/w.folded"
	grep -Eq 'JVM pauses beside them \(hsperfdata\): \[GC pause\] [0-9.]+ s' "$OUT/err"
}

@test "gc pauses (JDK 17): an idle JVM is read once a second; its pauses are all counted" {
	local reads
	# 3 bursts 6 s apart: after 2 s without a pause its file is read once a second
	GC_ARGS="3 6000" record_gc "$JDK17"
	read -r got_n got_ms < <(jprof_gc_totals "$GCPID")
	read -r want_n want_ms < <(log_gc_totals)
	reads=$(grep -Eo "^jprof: JVM $GCPID \(.*\) pauses \(hsperfdata, [0-9]+ reads" "$OUT/err" |
		grep -Eo '[0-9]+ reads' | cut -d' ' -f1)
	echo "jprof: $got_n pauses, $got_ms ms, $reads reads; -Xlog:gc: $want_n pauses, $want_ms ms"
	((want_n >= 3))
	((got_n == want_n))
	# JDK 17's log adds up to 3.9-5.1 ms more than its counters over a run, whatever the
	# number of pauses (9 or 67; 5 runs under 2 busy loops): 10% of the 27-54 ms these 9
	# pauses take is not always that (13% once in 3 runs there), so 6 ms is allowed too
	within "$got_ms" "$want_ms" 10 6
	# ~18.5 s of JVM: 185 reads at 10 a second; about 3 x (20 + 4) + the safepoints' 20s
	((reads >= 20 && reads <= 130))
}

@test "gc pauses (JDK 17): -e wall has a [GC pause] band within 10% of -Xlog:gc" {
	record_gc "$JDK17" -e wall -o "$OUT/w.folded"
	check_wall_band
}

@test "gc pauses (JDK 25): -e wall has a [GC pause] band within 10% of -Xlog:gc" {
	record_gc "$JDK25" -e wall -o "$OUT/w.folded"
	check_wall_band
}

@test "gc pauses (JDK 17): -f json carries the table" {
	command -v python3 >/dev/null || { missing "python3"; return; }
	record_gc "$JDK17" -e syscalls -f json
	check_against_log
	read -r got_n got_ms < <(jprof_gc_totals "$GCPID")
	python3 - "$OUT/stdout" "$GCPID" "$got_n" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
jvm = [j for j in doc["jvm_pauses"] if j["pid"] == int(sys.argv[2])]
assert len(jvm) == 1, doc["jvm_pauses"]
kinds = {k["name"]: k for k in jvm[0]["kinds"]}
gc = sum(k["count"] for n, k in kinds.items() if n != "safepoints")
assert gc == int(sys.argv[3]), (gc, sys.argv[3])
assert kinds["safepoints"]["count"] > 0
assert all(k["p50_ns"] <= k["p99_ns"] <= k["max_ns"] for k in kinds.values())
PY
}

# jfr_gc JDK: the JFR file has jdk.GarbageCollection events of the JVM, as many as pauses
# jprof observed one by one, with a name, a cause and a pause length
jfr_gc() {
	local jdk=$1 n observed
	"$jdk/bin/jfr" -J-XX:+IgnoreUnrecognizedVMOptions -J-XX:+EnableDynamicAgentLoading \
		print --events jdk.GarbageCollection "$OUT/p.jfr" >"$OUT/jfr.txt" 2>"$OUT/jfr.err"
	n=$(grep -c "pid = $GCPID\$" "$OUT/jfr.txt" || true)
	observed=$(awk -v pid="$GCPID" '
		$0 ~ "^jprof: JVM " pid " .* pauses \\(hsperfdata" { on = 1; next }
		on && /^  kind / { next }
		on && /^  [^ (]/ { if ($1 != "safepoints") o += $NF; next }
		on { on = 0 }
		END { print o + 0 }' "$OUT/err")
	echo "JFR: $n jdk.GarbageCollection events of pid $GCPID; observed pauses: $observed"
	((n > 0 && n == observed))
	grep -q 'name = "G1 ' "$OUT/jfr.txt"
	grep -q 'cause = "System.gc()"' "$OUT/jfr.txt"
	grep -Eq 'longestPause = [0-9.]+ ms|longestPause = PT' "$OUT/jfr.txt"
}

# one recording each: the report's table against the JVM's log, then its JFR output
@test "gc pauses (JDK 17): count and total match -Xlog:gc within 10%; JFR has them, jfr 17 reads it" {
	record_gc "$JDK17" -o "$OUT/p.folded" -o "$OUT/p.jfr"
	check_against_log
	jfr_gc "$JDK17"
}

@test "gc pauses (JDK 25): count and total match -Xlog:gc within 10%; JFR has them, jfr 25 reads it" {
	record_gc "$JDK25" -o "$OUT/p.folded" -o "$OUT/p.jfr"
	check_against_log
	jfr_gc "$JDK25"
}
