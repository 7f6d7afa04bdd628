#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# jfr_read.bats: `jprof report` reads JFR files: jprof's own (a real JVM recorded to .jfr and
# .folded at once gives the same Java stacks back, and an allocation recording its graph
# byte for byte), the JDK's own (JDK 17 and 25,
# -XX:StartFlightRecording with the profile settings: the hot method, its JVM's pid, --top;
# jcmd JFR.dump of a running JVM, one and two chunks),
# and a malformed or truncated file gets one line and exit code 1.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	OUT=$BATS_TEST_TMPDIR
	JPID=
}

teardown() {
	kill_jpid
}

require_apps() {
	[[ -f $APPS/JavaHot.class ]] || missing "JavaHot not built in $APPS (make apps)"
	[[ -x $JPROF ]] || missing "jprof not built at $JPROF (run make)"
}

# java_frames FILE: per folded line its Java frames only (kind suffixes _[j] _[i] _[0]), root
# first, with the line's count; summed by that stack, sorted
java_frames() {
	awk '{ st = $0; sub(/ [0-9]+$/, "", st); n = split(st, f, ";"); s = ""
	       for (i = 1; i <= n; i++) if (f[i] ~ /_\[[ji0]\]$/) s = s (s == "" ? "" : ";") f[i]
	       if (s != "") c[s] += $NF }
	     END { for (k in c) print k, c[k] }' "$1" | LC_ALL=C sort
}

# jdk_record JDK NAME: JavaHot split on that JDK, recorded by the JVM itself to $OUT/NAME.jfr
jdk_record() {
	local jdk=$1 name=$2
	require_jdk "$jdk"
	require_apps
	"$jdk/bin/java" -XX:StartFlightRecording:filename="$OUT/$name.jfr",settings=profile \
		-cp "$APPS" JavaHot split 4 >"$OUT/$name.out" 2>&1 3>&- &
	JPID=$!
	wait "$JPID" || { cat "$OUT/$name.out" >&2; return 1; }
	[[ -s $OUT/$name.jfr ]] || { echo "the JVM wrote no $OUT/$name.jfr" >&2; return 1; }
}

# check_jdk_file JDK NAME: report reads it: as many samples as the JDK's jfr tool counts, the
# hot method leads, the JVM's pid labels its samples
check_jdk_file() {
	local jdk=$1 name=$2 top n total
	run -0 "$JPROF" report --samples "$OUT/$name.jfr" -o "$OUT/$name.folded"
	total=$(folded_total "$OUT/$name.folded")
	read -r n top < <(folded_top "$OUT/$name.folded")
	echo "$name: $total samples, top $top x $n" >&3
	# 4 s of two busy threads, sampled every 10 ms (the profile settings): over 100 samples
	((total >= 100)) || { echo "only $total samples" >&2; return 1; }
	# every jdk.ExecutionSample is one sample, as the JDK's own tool counts them
	"$jdk/bin/jfr" summary "$OUT/$name.jfr" >"$OUT/$name.summary" 2>&1
	[[ $(awk '$1 == "jdk.ExecutionSample" { print $2 }' "$OUT/$name.summary") == "$total" ]] ||
		{ grep -E 'ExecutionSample' "$OUT/$name.summary" >&2; return 1; }
	# worker-a spins in countedLoop all the time, worker-b half of it in busyB
	[[ $top == JavaHot.countedLoop ]] || { echo "top is $top, not JavaHot.countedLoop" >&2; return 1; }
	((n * 100 >= total * 40)) || { echo "countedLoop has $n of $total" >&2; return 1; }
	grep -q -E '^java;.*JavaHot\.spinA_\[[ji0]\];JavaHot\.countedLoop_\[j\] [0-9]+$' "$OUT/$name.folded"
	# the JVM's pid (jdk.JVMInformation) and its threads' names label the samples
	run -0 "$JPROF" report "$OUT/$name.jfr" -p "$JPID" --per-pid --per-thread -o "$OUT/$name.pid.folded"
	grep -q -E "^java \[$JPID\][^;]*;worker-a \[[0-9]+\];.*JavaHot\.countedLoop_\[j\] [0-9]+$" \
		"$OUT/$name.pid.folded"
	# --top: a table whose first row is the hot method
	run -0 "$JPROF" report "$OUT/$name.jfr" --top 5
	echo "$output" >"$OUT/$name.top"
	[[ ${#lines[@]} -eq 6 ]] || { echo "--top 5 printed ${#lines[@]} lines" >&2; return 1; }
	[[ ${lines[1]} == *JavaHot.countedLoop* ]] || { echo "--top row 1: ${lines[1]}" >&2; return 1; }
}

@test "jfr_read: JDK 17's own recording (settings=profile): every sample, the hot method, its pid, --top" {
	jdk_record "$JDK17" jdk17
	check_jdk_file "$JDK17" jdk17
}

@test "jfr_read: JDK 25's own recording (settings=profile): every sample, the hot method, its pid, --top" {
	jdk_record "$JDK25" jdk25
	check_jdk_file "$JDK25" jdk25
}

@test "jfr_read: jcmd JFR.start/JFR.dump of a running JVM (JDK 25), one and two chunks" {
	local jdk=$JDK25 n1 n2 top
	require_jdk "$jdk"
	require_apps
	# the recording's repository in $OUT: the JVM is killed at the end, and JFR's default
	# (a directory in /tmp) would stay behind
	"$jdk/bin/java" -XX:FlightRecorderOptions:repository="$OUT/jfr-repo" -cp "$APPS" \
		JavaHot split 30 >"$OUT/java.out" 2>&1 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	"$jdk/bin/jcmd" "$JPID" JFR.start name=jr settings=profile >"$OUT/jcmd.out" 2>&1 ||
		{ cat "$OUT/jcmd.out" >&2; return 1; }
	sleep 3
	"$jdk/bin/jcmd" "$JPID" JFR.dump name=jr filename="$OUT/d1.jfr" >>"$OUT/jcmd.out" 2>&1
	sleep 2
	# a second dump of the same recording spans the first one's chunk and a new one
	"$jdk/bin/jcmd" "$JPID" JFR.dump name=jr filename="$OUT/d2.jfr" >>"$OUT/jcmd.out" 2>&1
	run -0 "$JPROF" report --samples "$OUT/d1.jfr" -o "$OUT/d1.folded"
	run -0 "$JPROF" report --samples "$OUT/d2.jfr" -o "$OUT/d2.folded"
	n1=$(folded_total "$OUT/d1.folded")
	n2=$(folded_total "$OUT/d2.folded")
	read -r _ top < <(folded_top "$OUT/d2.folded")
	echo "dumps: $n1 then $n2 samples, top $top" >&3
	((n1 >= 50 && n2 > n1)) || { echo "samples: $n1, then $n2" >&2; return 1; }
	[[ $top == JavaHot.countedLoop ]]
	# each dump ends a chunk: the second file holds two (as the JDK's own tool counts them)
	"$jdk/bin/jfr" summary "$OUT/d2.jfr" >"$OUT/summary" 2>&1
	grep -q -E '^ *Chunks: 2$' "$OUT/summary" || { cat "$OUT/summary" >&2; return 1; }
}

@test "jfr_read: jprof's own JFR of a real JVM reads back to the Java stacks of its folded output" {
	require_root_bpf
	require_apps
	require_jdk "$JDK17"
	[[ -r $JPROF_AGENT ]] || { missing "agent not built at $JPROF_AGENT (run make)"; return; }
	# the agent from the start: no other jprof's (another build's) can be attached first
	"$JDK17/bin/java" -agentpath:"$JPROF_AGENT" -cp "$APPS" JavaHot split 60 >"$OUT/java.out" \
		2>&1 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1
	# one recording, written twice
	run -0 "$JPROF" record --samples -p "$JPID" -F 199 -d 3 -o "$OUT/r.jfr" -o "$OUT/r.folded"
	run -0 "$JPROF" report --samples "$OUT/r.jfr" -o "$OUT/back.folded"
	java_frames "$OUT/r.folded" >"$OUT/r.java"
	java_frames "$OUT/back.folded" >"$OUT/back.java"
	echo "$(wc -l <"$OUT/r.java") Java stacks, $(folded_total "$OUT/r.folded") samples" >&3
	[[ $(wc -l <"$OUT/r.java") -ge 2 ]] || { echo "too few Java stacks" >&2; return 1; }
	diff "$OUT/r.java" "$OUT/back.java"
	# every sample comes back, with or without Java frames
	[[ $(folded_total "$OUT/back.folded") -eq $(folded_total "$OUT/r.folded") ]]
	grep -q -E '^java;.*JavaHot\.countedLoop_\[j\] [0-9]+$' "$OUT/back.folded"
}

@test "jfr_read: jprof's own -e alloc JFR gives its allocation graph back byte for byte" {
	require_root_bpf
	require_apps
	require_jdk "$JDK17"
	[[ -f $APPS/EvAlloc.class ]] || { missing "EvAlloc not built in $APPS (make apps)"; return; }
	[[ -r $JPROF_AGENT ]] || { missing "agent not built at $JPROF_AGENT (run make)"; return; }
	# the agent with its allocation events from the start: another jprof (other tests record
	# the whole host) could otherwise attach its agent first, without them
	"$JDK17/bin/java" -Xmx512m -agentpath:"$JPROF_AGENT"=alloc -cp "$APPS" EvAlloc 1500 5000 \
		>"$OUT/app.out" 2>&1 3>&- &
	JPID=$!
	wait_ready "$OUT/app.out" 10
	# as jvmevents.bats records it: until the JVM has exited
	run -0 "$JPROF" record -p "$JPID" -e alloc -d 9 -o "$OUT/a.folded" -o "$OUT/a.jfr"
	cat "$OUT/a.folded" >&3
	# the recording itself has allocations
	grep -q -E '^java;EvAlloc\.main_\[[ji0]\];EvAlloc\.dying_\[[ji0]\];long\[\]_\[a\] [0-9]+$' \
		"$OUT/a.folded" || { echo "record got no allocations: $output" >&2; return 1; }
	# the JFR file has the recording's CPU samples too: the allocation stacks are those whose
	# leaf is the allocated class (jdk.ObjectAllocationSample's objectClass)
	run -0 "$JPROF" report "$OUT/a.jfr" --include '_\[a\]$' -o "$OUT/back.folded"
	diff "$OUT/a.folded" "$OUT/back.folded"
}

@test "jfr_read: a truncated or malformed JFR file gets one line and exit code 1" {
	require_apps
	# jprof's own writer, through report: a known small file
	printf 'java;JavaHot.main_[0];JavaHot.spin_[j] 7\n' >"$OUT/in.folded"
	run -0 "$JPROF" report "$OUT/in.folded" -o "$OUT/ok.jfr"
	run -0 "$JPROF" report "$OUT/ok.jfr" -o "$OUT/ok.folded"
	grep -q -E 'JavaHot\.spin_\[j\] 7$' "$OUT/ok.folded"
	size=$(stat -c %s "$OUT/ok.jfr")
	for cut in 3 68 100 $((size / 2)) $((size - 1)); do
		head -c "$cut" "$OUT/ok.jfr" >"$OUT/cut.jfr"
		run -1 "$JPROF" report "$OUT/cut.jfr" -o "$OUT/cut.folded"
		echo "cut at $cut: $output" >&3
		[[ ${#lines[@]} -eq 1 ]] || { echo "cut at $cut: ${#lines[@]} lines" >&2; return 1; }
		[[ $output == *"$OUT/cut.jfr"* ]]
		[[ ! -e $OUT/cut.folded ]]
	done
	# a chunk header whose metadata offset points past the chunk; an unfinished chunk (offsets 0)
	cp "$OUT/ok.jfr" "$OUT/bad.jfr"
	printf '\x7f\xff\xff\xff\xff\xff\xff\xff' | dd of="$OUT/bad.jfr" bs=1 seek=24 conv=notrunc 2>/dev/null
	run -1 "$JPROF" report "$OUT/bad.jfr" -o "$OUT/bad.folded"
	[[ ${#lines[@]} -eq 1 && $output == *"not a usable JFR recording"* ]]
	printf '\0\0\0\0\0\0\0\0' | dd of="$OUT/bad.jfr" bs=1 seek=16 conv=notrunc 2>/dev/null
	run -1 "$JPROF" report "$OUT/bad.jfr" --top 5
	[[ ${#lines[@]} -eq 1 && $output == *unfinished* ]]
	[[ ! -e $OUT/bad.folded ]]
}
