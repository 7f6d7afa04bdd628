#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# jfr.bats: the JFR files jprof writes are read without error by the `jfr` tool of JDK 17 and
# JDK 25, with the model's number of jdk.ExecutionSample events and its top method. The
# jfr_check_* helpers take any .jfr file and its expected numbers, so a real recording
# (`jprof record -o x.jfr`) can be checked the same way once record writes JFR.
bats_require_minimum_version 1.5.0

load helpers

: "${JFR_DRIVER:=$REPO/build/tests/out/jfr_driver}"

setup() {
	OUT=$BATS_TEST_TMPDIR
	JPID=
}

teardown() {
	kill_jpid
}

require_driver() {
	[[ -x $JFR_DRIVER ]] || missing "JFR driver not built at $JFR_DRIVER (make jfr-test)"
}

# `jprof record -o x.jfr` needs the writer in the writer table (user/out/format.c)
require_jfr_record() {
	require_root_bpf
	grep -q out_jfr_write "$REPO/user/out/format.c" ||
		missing "jprof record does not write JFR yet: no out_jfr_write in user/out/format.c"
}

# start_hot JDK: the JavaHot workload on that JDK, ready to be profiled
start_hot() {
	local jdk=$1
	require_jdk "$jdk"
	[[ -f $APPS/JavaHot.class ]] || { missing "JavaHot not built in $APPS (make apps)"; return; }
	"$jdk/bin/java" -cp "$APPS" JavaHot split 60 >"$OUT/java.out" 2>&1 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1
}

# jfr_tool JDK ARGS...: the JDK's jfr tool; other engineers' tests may attach an agent to any
# JVM on the host, so the JVM is told to accept that quietly (JDK 17 ignores the option)
jfr_tool() {
	local jdk=$1
	shift
	"$jdk/bin/jfr" -J-XX:+IgnoreUnrecognizedVMOptions -J-XX:+EnableDynamicAgentLoading "$@"
}

# runs the tool; fails on a non-zero exit or on anything on stderr but the JVM's
# dynamic-agent warnings. Its stdout is left in $OUT/tool.out
jfr_run() {
	local jdk=$1
	shift
	if ! jfr_tool "$jdk" "$@" >"$OUT/tool.out" 2>"$OUT/tool.err"; then
		echo "jfr $* failed (JDK $jdk):" >&2
		cat "$OUT/tool.err" "$OUT/tool.out" >&2
		return 1
	fi
	if grep -v -E '^WARNING: (A JVM TI agent|If a serviceability|Dynamic loading)' \
		"$OUT/tool.err" | grep -q .; then
		echo "jfr $* wrote to stderr (JDK $jdk):" >&2
		cat "$OUT/tool.err" >&2
		return 1
	fi
}

# count of one event type in `jfr summary`
jfr_summary_count() {
	local type=$1
	awk -v t="$type" '$1 == t { print $2; found = 1 } END { if (!found) print 0 }' "$OUT/tool.out"
}

# jfr_check_file JDK FILE SAMPLES TOP TOP_SAMPLES: summary, print (text and JSON) all read the
# file; SAMPLES jdk.ExecutionSample events, of which TOP_SAMPLES have TOP as their top frame
# (TOP as `jfr print` shows it, e.g. "com.acme.Hot.spin()"); TOP is the most frequent one
jfr_check_file() {
	local jdk=$1 file=$2 samples=$3 top=$4 top_samples=$5 n
	jfr_run "$jdk" summary "$file"
	cat "$OUT/tool.out"
	grep -q '^ *Version: 2\.1' "$OUT/tool.out"
	n=$(jfr_summary_count jdk.ExecutionSample)
	[[ $n -eq $samples ]] || { echo "summary: $n ExecutionSample, expected $samples" >&2; return 1; }
	jfr_run "$jdk" print --json "$file"
	jfr_run "$jdk" print --xml "$file"
	jfr_run "$jdk" print --stack-depth 64 --events jdk.ExecutionSample "$file"
	n=$(grep -c '^jdk.ExecutionSample {' "$OUT/tool.out")
	[[ $n -eq $samples ]] || { echo "print: $n ExecutionSample, expected $samples" >&2; return 1; }
	# the first line after "stackTrace = [" is the top frame; rank them
	awk '/stackTrace = \[/ { getline; sub(/^ +/, ""); sub(/ +line: [0-9]+$/, ""); print }' \
		"$OUT/tool.out" | sort | uniq -c | sort -rn >"$OUT/top.txt"
	head -5 "$OUT/top.txt"
	read -r n frame <"$OUT/top.txt"
	[[ $frame == "$top" && $n -eq $top_samples ]] ||
		{ echo "top frame: $n x $frame, expected $top_samples x $top" >&2; return 1; }
}

# jfr_check_hot_methods JDK FILE TOP TOP_SAMPLES: `jfr view hot-methods` (JDK 21+) ranks TOP first
jfr_check_hot_methods() {
	local jdk=$1 file=$2 top=$3 top_samples=$4
	jfr_run "$jdk" view --width 200 hot-methods "$file"
	cat "$OUT/tool.out"
	# the first row after the dashes
	awk '/^-+ /{ getline; print; exit }' "$OUT/tool.out" >"$OUT/hot.txt"
	grep -q -F "$top" "$OUT/hot.txt" || { echo "hot-methods does not rank $top first" >&2; return 1; }
	[[ $(awk '{ print $(NF-1) }' "$OUT/hot.txt") -eq $top_samples ]]
}

known() {
	"$JFR_DRIVER" known "$OUT/known.jfr" >"$OUT/expected"
	# shellcheck disable=SC1091
	source "$OUT/expected"
}

check_known() {
	local jdk=$1
	require_driver
	require_jdk "$jdk"
	known
	jfr_check_file "$jdk" "$OUT/known.jfr" "$cpu_samples" "$top_method()" "$top_samples"
	# native and kernel frames are Native frames, with the DSO or [kernel] as their class
	jfr_run "$jdk" print --events jprof.Syscall "$OUT/known.jfr"
	grep -q -F '[kernel].ksys_write()' "$OUT/tool.out"
	grep -q -F 'libc.so.6.__libc_write()' "$OUT/tool.out"
	grep -q -F "calls = $syscalls" "$OUT/tool.out"
	jfr_run "$jdk" print --events jprof.OffCPU "$OUT/known.jfr"
	grep -q -F 'duration = PT2.5S' "$OUT/tool.out"
	grep -q -F 'libjvm.so.JVM_MonitorWait()' "$OUT/tool.out"
	# marker frames are left out: the kernel's schedule is the top frame
	[[ $(awk '/stackTrace = \[/ { getline; sub(/^ +/, ""); print; exit }' "$OUT/tool.out") == \
		"[kernel].schedule()" ]]
	! grep -q -F 'off-cpu' "$OUT/tool.out"
	jfr_run "$jdk" summary "$OUT/known.jfr"
	[[ $(jfr_summary_count jprof.ThreadInfo) -eq $threads ]]
	[[ $(jfr_summary_count jprof.OffCPU) -eq 1 ]]
	jfr_run "$jdk" print --json --events jdk.ExecutionSample "$OUT/known.jfr"
	# the frame types JFR knows, as JMC shows them
	grep -q -F '"type": "JIT compiled"' "$OUT/tool.out"
	grep -q -F '"type": "Inlined"' "$OUT/tool.out"
	grep -q -F '"type": "Interpreted"' "$OUT/tool.out"
	grep -q -F '"type": "Native"' "$OUT/tool.out"
}

@test "jfr: JDK 17 reads the known model: samples, top method, native and kernel frames" {
	check_known "$JDK17"
}

@test "jfr: JDK 25 reads the known model, and jfr view hot-methods ranks its top method" {
	check_known "$JDK25"
	jfr_check_hot_methods "$JDK25" "$OUT/known.jfr" "$top_method()" "$top_samples"
	jfr_run "$JDK25" metadata "$OUT/known.jfr"
	grep -q 'class OffCPU' "$OUT/tool.out"
	# the JDK parses every event and writes them again: the copy keeps all samples
	jfr_run "$JDK25" scrub --exclude-events jprof.Recording "$OUT/known.jfr" "$OUT/scrubbed.jfr"
	jfr_run "$JDK25" summary "$OUT/scrubbed.jfr"
	[[ $(jfr_summary_count jdk.ExecutionSample) -eq $cpu_samples ]]
	[[ $(jfr_summary_count jprof.Recording) -eq 0 ]]
}

@test "jfr: 1 million samples over 100,000 stacks are all read by JDK 17 and 25" {
	require_driver
	require_jdk "$JDK17"
	require_jdk "$JDK25"
	run -0 "$JFR_DRIVER" bench "$OUT/bench.jfr" 1000000 100000
	echo "# $output" >&3
	for jdk in "$JDK17" "$JDK25"; do
		jfr_run "$jdk" summary "$OUT/bench.jfr"
		[[ $(jfr_summary_count jdk.ExecutionSample) -eq 1000000 ]]
	done
}

@test "jfr: a real JVM recording as JFR: JDK 17 and 25 read jprof's sample count and the folded top" {
	require_jfr_record
	start_hot "$JDK25"
	# the same profile twice: folded from record, JFR from that folded file through the model
	run -0 "$JPROF" record --samples -p "$JPID" -F 199 -d 3 -o "$OUT/r.folded"
	echo "$output"
	total=$(folded_total "$OUT/r.folded")
	read -r top_n top < <(folded_top "$OUT/r.folded")
	echo "folded: $total samples, top $top_n x $top"
	((total > 20)) # few on a loaded machine; enough to rank the top
	[[ $top == JavaHot.* ]]
	run -0 "$JPROF" report "$OUT/r.folded" -o "$OUT/r.jfr"
	for jdk in "$JDK17" "$JDK25"; do
		jfr_check_file "$jdk" "$OUT/r.jfr" "$total" "$top()" "$top_n"
	done
	jfr_check_hot_methods "$JDK25" "$OUT/r.jfr" "$top()" "$top_n"

	# straight from record, with every event: as many ExecutionSample as jprof counted CPU
	# samples, and off-CPU and syscall events with Java and kernel frames
	run -0 "$JPROF" record -p "$JPID" -F 199 -d 3 -e cpu,offcpu,syscalls -o "$OUT/all.jfr"
	echo "$output"
	cpu=$(sed -nE 's/^jprof: ([0-9]+) CPU samples \(.*/\1/p' <<<"$output")
	echo "jprof: $cpu CPU samples"
	for jdk in "$JDK17" "$JDK25"; do
		jfr_run "$jdk" summary "$OUT/all.jfr"
		cat "$OUT/tool.out"
		[[ $(jfr_summary_count jdk.ExecutionSample) -eq $cpu ]]
		(($(jfr_summary_count jprof.OffCPU) > 0))
		jfr_run "$jdk" print --stack-depth 64 --events jprof.OffCPU,jdk.ExecutionSample "$OUT/all.jfr"
		grep -q -F '[kernel].schedule()' "$OUT/tool.out"
		grep -q -E '^ +JavaHot\.[A-Za-z]+\(\)' "$OUT/tool.out"
		# the JVM's main class labels its threads (jprof.ThreadInfo), as other outputs do
		jfr_run "$jdk" print --events jprof.ThreadInfo "$OUT/all.jfr"
		grep -q -F 'mainClass = "JavaHot"' "$OUT/tool.out"
	done
	# and report reads it back: the process root names it, as record's own roots do
	run -0 "$JPROF" report "$OUT/all.jfr" --per-pid -o "$OUT/back.folded"
	grep -q -E "^java \[$JPID\] JavaHot;.*JavaHot\.[A-Za-z]+_\[[ji0]\] [0-9]+$" "$OUT/back.folded"
}
