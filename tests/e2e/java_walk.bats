#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# java_walk.bats: the Java walk in BPF (--java-walk shadow) on JDK 17 and JDK 25. BPF walks
# the Java frames of every sample in the code cache by the layout the agent read from
# libjvm's VMStructs, the agent's signal handler still walks the same instant with
# AsyncGetCallTrace, and the join compares both sample by sample. realapps.bats does the
# same on javac, where the walks meet interpreted frames, entry frames and deep inlining.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_root_bpf
	OUT=$BATS_TEST_TMPDIR
	JPID=
}

teardown() {
	kill_jpid
}

# walk_run JDK_HOME MODE: JavaHot split (two threads in compiled loops, their callers
# interpreted) recorded at 999 Hz with --java-walk MODE
walk_run() {
	local home=$1 mode=$2
	require_jdk "$home"
	"$home/bin/java" -cp "$APPS" JavaHot split 12 >"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1
	run -0 "$JPROF" record --samples -v -p "$JPID" -F 999 -d 6 --per-thread \
		--java-walk "$mode" -o "$OUT/w.folded"
	REPORT=$output
	echo "$REPORT" | grep -E "^jprof: JVM $JPID"
	# the same profile as the agent's walks give: whole stacks, from the thread's run
	(($(folded_sum 'Thread\.run_\[0\];.*JavaHot\.spinA_\[[0j]\];JavaHot\.countedLoop_\[j\] ' \
		"$OUT/w.folded") > 1000))
	(($(folded_sum 'Thread\.run_\[0\];.*JavaHot\.spinB_\[[0j]\];JavaHot\.busyB_\[j\]' \
		"$OUT/w.folded") > 300))
	pct=$(complete_pct)
	echo "complete Java stacks: $pct%"
	awk -v p="$pct" 'BEGIN { exit !(p >= 95) }'
}

shadow_run() {
	walk_run "$1" shadow
}

# bpf_run JDK_HOME MODE: --java-walk bpf or check: most samples named from BPF's frames
# without a signal; with check, the checks (1 in 64) agree
bpf_run() {
	local line named samples requests unnamed mode=$2
	walk_run "$1" "$mode"
	line=$(grep -E "^jprof: JVM $JPID \([^)]*\): [0-9]+ samples, " <<<"$REPORT")
	samples=$(sed -nE 's/.* ([0-9]+) in Java threads .*/\1/p' <<<"$line")
	requests=$(sed -nE 's/.*stack requests: ([0-9]+),.*/\1/p' <<<"$line")
	named=$(grep -E "^jprof: JVM $JPID: Java stacks named from BPF's walk without a signal: " \
		<<<"$REPORT" | sed -nE "s/.*without a signal: ([0-9]+);.*/\1/p")
	# code compiled during the recording: its samples wait for the dictionary to name it
	unnamed=$(sed -nE 's/.*[ ,]([0-9]+) walked in BPF, code not named.*/\1/p' <<<"$line")
	echo "samples $samples, stack requests $requests, named from BPF's frames ${named:-?}," \
		"not named ${unnamed:-0}"
	((named * 100 >= samples * 80 && requests * 100 <= samples * 15))
	((${unnamed:-0} * 500 <= samples))
	# the walks counted here are the samples that took a signal: with check every 64th, plus
	# each that BPF could not walk whole (in the interpreter's entry, a stub, a prologue);
	# those are few among all samples (the 80% above) but weigh up to 1 in 20 of these
	[[ $mode == check ]] || return 0
	jwalk_check "$JPID" 90 99.5 0.5
}

@test "jdk17: BPF walks the Java stacks of samples in Java code, the same as the agent's" {
	shadow_run "$JDK17"
	# nearly every sample is in JIT code: walked whole; all agree (main is interpreted:
	# its Method* is named from the first agreeing samples)
	jwalk_check "$JPID" 95 99.5 0.5
}

@test "jdk25: BPF walks the Java stacks of samples in Java code, the same as the agent's" {
	shadow_run "$JDK25"
	jwalk_check "$JPID" 95 99.5 0.5
}

@test "jdk17, --java-walk bpf: most Java stacks without a signal, the same profile" {
	bpf_run "$JDK17" bpf
}

@test "jdk25, --java-walk check: most Java stacks without a signal, the checks agree" {
	bpf_run "$JDK25" check
}

# io_run JDK_HOME: JavaHot jni (thread worker-j in write(2) from a JNI method: outside the
# code cache at nearly every sample) with its agent, --java-walk bpf (the default): BPF walks
# it from the thread's frame anchor, the join names BPF's frames: the same stacks as the
# agent's walk gives (native method without suffix, its C function and write(2) on top), and a
# signal only for what BPF cannot name yet (an interpreted method's first samples, until a
# check taught it). Before the walk from the anchor each of these samples took a signal.
io_run() {
	local home=$1 line samples requests whole
	require_jdk "$home"
	"$home/bin/java" -Djava.library.path="$APPS" -cp "$APPS" JavaHot jni 10 \
		>"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 0.5
	run -0 "$JPROF" record --samples -v -p "$JPID" -F 999 -d 4 -o "$OUT/io.folded"
	REPORT=$output
	grep -E "^jprof: (JVM $JPID|samples of walked JVMs|debug: bpf:)" <<<"$REPORT"
	line=$(grep -E "^jprof: JVM $JPID \([^)]*\): [0-9]+ samples, " <<<"$REPORT")
	samples=$(sed -nE 's/.* ([0-9]+) in Java threads .*/\1/p' <<<"$line")
	requests=$(sed -nE 's/.*stack requests: ([0-9]+),.*/\1/p' <<<"$line")
	whole=$(folded_sum 'Thread\.run_\[0\];.*JavaHot\.jniLoop_\[[0j]\];JavaHot\.nativeWrites;Java_JavaHot_nativeWrites;([^;]*;)*write' \
		"$OUT/io.folded")
	echo "samples $samples, stack requests ${requests:-0}, JNI write under its Java callers $whole"
	((${requests:-0} * 100 <= samples * 10))
	((whole * 100 >= samples * 80))
	pct=$(complete_pct)
	echo "complete Java stacks: $pct%"
	awk -v p="$pct" 'BEGIN { exit !(p >= 95) }'
}

@test "jdk17, --java-walk bpf: a thread in JNI and write(2) walked from its frame anchor, no signal" {
	io_run "$JDK17"
}

@test "jdk25, --java-walk bpf: a thread in JNI and write(2) walked from its frame anchor, no signal" {
	io_run "$JDK25"
}

@test "--java-walk: a bad mode is refused with a clear error" {
	run -2 "$JPROF" record -v -a -d 1 --java-walk sometimes -o "$OUT/x.folded"
	[[ $output == *"--java-walk: 'sometimes': expected signal, bpf, check or shadow"* ]]
	[[ ! -e $OUT/x.folded ]]
}

# calls_run JDK_HOME MODE: JavaHot calls, its tiny methods kept out of line: a thread making
# megamorphic calls, sampled in the callees' prologues and in itable and vtable stubs, where
# AGCT often finds no frame (the agent's fallback recovers some). BPF walks those from the
# prologue's bytes and the stub's return address: shadow, the walks agree with what the agent
# found (but the callee in its prologue, which the agent drops); bpf, whole stacks without
# a signal
calls_run() {
	local home=$1 mode=$2 line samples requests pct
	require_jdk "$home"
	"$home/bin/java" -XX:CompileCommand=quiet '-XX:CompileCommand=dontinline,JavaHot$*::*' \
		-cp "$APPS" JavaHot calls 10 >"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1
	run -0 "$JPROF" record --samples -v -p "$JPID" -F 999 -d 4 --java-walk "$mode" \
		-o "$OUT/c.folded"
	REPORT=$output
	grep -E "^jprof: (JVM $JPID|debug: bpf:)" <<<"$REPORT"
	if [[ $mode == shadow ]]; then
		# whole in BPF, none different from a stack the agent found (the profile is the
		# agent's: a quarter of it without Java frames, where AGCT found none)
		jwalk_check "$JPID" 97 99 0.5
		return
	fi
	(($(folded_sum 'Thread\.run_\[0\];.*JavaHot\.callLoop_\[[0j]\];JavaHot\$(Op|Fn)[A-D]\.(op|fn)_\[j\] ' \
		"$OUT/c.folded") > 500))
	line=$(grep -E "^jprof: JVM $JPID \([^)]*\): [0-9]+ samples, " <<<"$REPORT")
	samples=$(sed -nE 's/.* ([0-9]+) in Java threads .*/\1/p' <<<"$line")
	requests=$(sed -nE 's/.*stack requests: ([0-9]+),.*/\1/p' <<<"$line")
	echo "samples $samples, stack requests ${requests:-0}"
	((${requests:-0} * 100 <= samples * 10))
	pct=$(complete_pct)
	echo "complete Java stacks: $pct%"
	awk -v p="$pct" 'BEGIN { exit !(p >= 95) }'
}

@test "jdk17, --java-walk shadow: prologues and stubs walked in BPF agree with the agent" {
	calls_run "$JDK17" shadow
}

@test "jdk25, --java-walk bpf: prologues and stubs walked in BPF, whole stacks without a signal" {
	calls_run "$JDK25" bpf
}

# copies_run JDK_HOME MODE: JavaHot copies (System.arraycopy of long[] and Object[] from
# compiled code): most samples in the arraycopy stubs (or in the GC barrier code they call),
# whose rbp frame BPF passes once it proves itself (jwalk.bpf.h jw_stub_fp). shadow: those
# walks agree with the agent's, none differs; bpf: whole stacks without a signal
copies_run() {
	local home=$1 mode=$2 line samples requests passed cmp differ pct
	require_jdk "$home"
	"$home/bin/java" -cp "$APPS" JavaHot copies 8 >"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1
	run -0 "$JPROF" record --samples -v -p "$JPID" -F 999 -d 3 --java-walk "$mode" \
		-o "$OUT/y.folded"
	REPORT=$output
	grep -E "^jprof: (JVM $JPID|stubs the Java walk|debug: bpf:)" <<<"$REPORT"
	line=$(grep -E "^jprof: JVM $JPID \([^)]*\): [0-9]+ samples, " <<<"$REPORT")
	samples=$(sed -nE 's/.* ([0-9]+) in Java threads .*/\1/p' <<<"$line")
	passed=$(grep -E "^jprof: stubs the Java walk passed by their rbp frame: " <<<"$REPORT" |
		sed -nE 's/.*rbp frame: ([0-9]+) .*/\1/p')
	echo "samples of Java threads $samples, stubs passed by their rbp frame ${passed:-0}"
	((${passed:-0} * 2 >= samples))
	(($(folded_sum 'Thread\.run_\[0\];.*JavaHot\.copyLoop_\[[0j]\]( |;)' "$OUT/y.folded") * 100 >= samples * 90))
	if [[ $mode == shadow ]]; then
		line=$(grep -E "^jprof: JVM $JPID: of the walks compared, past a stub's rbp frame: " <<<"$REPORT")
		[[ $line =~ rbp\ frame:\ ([0-9]+),\ ([0-9]+)\ of\ them\ differ ]]
		cmp=${BASH_REMATCH[1]} differ=${BASH_REMATCH[2]}
		((cmp * 2 >= samples && differ * 200 <= cmp))
		return
	fi
	requests=$(sed -nE 's/.*stack requests: ([0-9]+),.*/\1/p' <<<"$line")
	echo "stack requests ${requests:-0}"
	((${requests:-0} * 100 <= samples * 5))
	pct=$(complete_pct)
	echo "complete Java stacks: $pct%"
	awk -v p="$pct" 'BEGIN { exit !(p >= 98) }'
}

@test "jdk17, --java-walk shadow: arraycopy stubs passed by their rbp frame agree with the agent" {
	copies_run "$JDK17" shadow
}

@test "jdk25, --java-walk bpf: arraycopy stubs passed by their rbp frame, no signal" {
	copies_run "$JDK25" bpf
}

# i2c_run JDK_HOME MODE: JavaHot i2c (an interpreted loop calling a compiled method of 20
# arguments: each call passes the I2C adapter, ~4% of the samples in it; and a compiled loop
# calling an interpreted method of 20 arguments: the C2I adapter, 2-5%; C1 only, so that the
# loop is compiled at once and stays so). BPF passes an I2C adapter at the interrupted pc to
# its interpreted caller, rbp's frame, when the word at sp is the return address the
# caller's last_sp leads to (jwalk.bpf.h jw_i2c), a C2I adapter to its compiled caller by
# where in the adapter pc is (jw_c2i), the callee's interpreted frame still being built
# (its entry, 1-4% here) to its caller by the sender sp the entry saved; before, those
# samples were signalled "in a stub" (10 of 42 signals on H2, JDK 17). shadow: the agent's
# walk decides both cases as BPF's does (it used to guess the caller's sp as rbp + 2 and
# AGCT then walked into a wrong frame: 2 of 6 frames in 3% of the samples): the walks
# agree (0 differed in 7 runs of JDK 17 and 25 each; 1% allowed); bpf: whole stacks
# without a signal
i2c_run() {
	local home=$1 mode=$2 line samples requests passed c2i cmp differ ccmp cdiffer pct entries
	require_jdk "$home"
	"$home/bin/java" -XX:TieredStopAtLevel=1 -XX:CompileCommand=quiet \
		-XX:CompileCommand=exclude,JavaHot::i2cLoop \
		-XX:CompileCommand=exclude,JavaHot::manyInterp \
		-cp "$APPS" JavaHot i2c 8 >"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1
	run -0 "$JPROF" record --samples -v -p "$JPID" -F 999 -d 3 --java-walk "$mode" \
		-o "$OUT/i.folded"
	REPORT=$output
	grep -E "^jprof: (JVM $JPID|I2C adapters|C2I adapters|debug: bpf:)" <<<"$REPORT"
	line=$(grep -E "^jprof: JVM $JPID \([^)]*\): [0-9]+ samples, " <<<"$REPORT")
	samples=$(sed -nE 's/.* ([0-9]+) in Java threads .*/\1/p' <<<"$line")
	passed=$(grep -E "^jprof: I2C adapters at the interrupted pc passed" <<<"$REPORT" |
		sed -nE 's/.*caller: ([0-9]+)$/\1/p')
	c2i=$(sed -nE 's/^jprof: C2I adapters at the interrupted pc passed .*caller: ([0-9]+);.*/\1/p' \
		<<<"$REPORT")
	entries=$(sed -nE 's/^jprof: interpreted frames at the interrupted pc not whole yet, passed to their caller: ([0-9]+)$/\1/p' \
		<<<"$REPORT")
	echo "samples of Java threads $samples, I2C adapters passed ${passed:-0}, C2I ${c2i:-0}," \
		"interpreted entries ${entries:-0}"
	((${passed:-0} >= 3 && ${c2i:-0} >= 3 && ${entries:-0} >= 3))
	(($(folded_sum 'JavaHot\.(i2cLoop_\[0|c2iLoop_\[[0j])\]' "$OUT/i.folded") * 10 >= samples * 9))
	if [[ $mode == shadow ]]; then
		line=$(grep -E "^jprof: JVM $JPID: Java walk in BPF: " <<<"$REPORT")
		cmp=$(sed -nE "s/.*\); ([0-9]+) compared with the agent's.*/\1/p" <<<"$line")
		differ=$(sed -nE 's/.*, ([0-9]+) differ \(.*/\1/p' <<<"$line")
		read -r ccmp cdiffer < <(sed -nE \
			's/^jprof: JVM [0-9]+: of the walks compared, past a C2I adapter at the top: ([0-9]+), ([0-9]+) of them differ$/\1 \2/p' \
			<<<"$REPORT")
		echo "compared $cmp, differ $differ; past a C2I adapter ${ccmp:-0}, differ ${cdiffer:-0}"
		((cmp * 2 >= samples && differ * 100 <= cmp && ${cdiffer:-0} * 100 <= ${ccmp:-0}))
		return
	fi
	requests=$(sed -nE 's/.*stack requests: ([0-9]+),.*/\1/p' <<<"$line")
	echo "stack requests ${requests:-0}"
	((${requests:-0} * 100 <= samples * 5))
	pct=$(complete_pct)
	echo "complete Java stacks: $pct%"
	awk -v p="$pct" 'BEGIN { exit !(p >= 98) }'
}

@test "jdk17, --java-walk shadow: I2C and C2I adapters at the top passed to their callers" {
	i2c_run "$JDK17" shadow
}

@test "jdk25, --java-walk bpf: I2C and C2I adapters at the top passed, whole stacks without a signal" {
	i2c_run "$JDK25" bpf
}

# A JVM busy collecting garbage (GcPauses: System.gc() every 50 ms, allocation between):
# its GC and VM threads are in no entry of its thread list, which jprof reads from outside,
# so they are marked in BPF as no Java threads at once (two looks at its task directory)
# and never signalled; the agent's own "not a Java thread" answers took 200 ms of signals
# per thread and a re-ask every 64 samples (84 signals of 1189 samples before, 3 of 1098
# after, JDK 25). A native thread that attaches later is taken back (java.bats jniattach).
# The GC workers beyond the first start with the first pause (G1 starts them on demand), 2 s
# after ready, once the agent is in: until jprof's looks mark them, BPF sees that the thread
# list gained no thread since jprof stored it whole, and does not signal them either. The
# signals still sent are mostly interpreted methods BPF's walk cannot name yet (the JVM has
# just started). 10 runs at load 10-12: 0 signalled as "thread not known" (10-47 samples not
# signalled so), 1.4-4.5% of samples signalled in all; before (the list not checked): 18-46
# as "thread not known" (1.9-5.9% of samples), 4.4-9.5% in all.
@test "jdk25: GC and VM threads, in no entry of the JVM's thread list, are never signalled" {
	local line samples signals marked unlisted walks notknown
	require_jdk "$JDK25"
	"$JDK25/bin/java" -Xmx256m -XX:ParallelGCThreads=8 -cp "$APPS" GcPauses 100 50 2000 \
		>"$OUT/gc.out" 2>&1 3>&- &
	JPID=$!
	wait_ready "$OUT/gc.out" 10
	run -0 "$JPROF" record --samples -v -p "$JPID" -F 999 -d 4 -o "$OUT/gc.folded"
	REPORT=$output
	grep -E "^jprof: (JVM $JPID \(|threads in no|debug: bpf:)" <<<"$REPORT"
	line=$(grep -E "^jprof: debug: bpf: [0-9]+ samples, " <<<"$REPORT")
	samples=$(sed -nE 's/.*bpf: ([0-9]+) samples, .*/\1/p' <<<"$line")
	signals=$(sed -nE 's/.* ([0-9]+) signals .*/\1/p' <<<"$line")
	line=$(grep -E "^jprof: threads in no JVM's thread list" <<<"$REPORT")
	marked=$(sed -nE 's/.*stack: ([0-9]+) marked.*/\1/p' <<<"$line")
	unlisted=$(sed -nE 's/.* ([0-9]+) samples of threads not marked yet not signalled.*/\1/p' \
		<<<"$line")
	# the signalled samples by how BPF's walk ended
	walks=$(grep -E "^jprof: JVM $JPID: Java walk in BPF: " <<<"$REPORT" || true)
	notknown=$(sed -nE 's/.*[(,] ?([0-9]+) thread not known.*/\1/p' <<<"$walks")
	echo "samples $samples, signals $signals (${notknown:-0} thread not known)," \
		"not signalled unmarked: ${unlisted:-?}, threads marked ${marked:-0}"
	echo "signalled: $((signals * 1000 / samples))/1000 of samples," \
		"$((${notknown:-0} * 1000 / samples))/1000 thread not known" >&3
	((${marked:-0} >= 2))
	((${notknown:-0} * 200 <= samples && signals * 100 <= samples * 7))
	# the GC's own frames are there, as JVM-internal stacks
	(($(folded_sum ';[^;]*G1[^;]*' "$OUT/gc.folded") > 100))
	# and the Java threads keep their stacks: some 300 samples of a JVM just started, of which
	# a few fall in interpreted methods not learned yet or before the agent is ready (a
	# rehearsal: 294 of 302, 97.4%, 7 "code not named", 1 "agent not ready")
	pct=$(complete_pct)
	echo "complete Java stacks: $pct%"
	awk -v p="$pct" 'BEGIN { exit !(p >= 95) }'
}

# handles_run JDK_HOME: JavaHot handles (calls through method handles picked at run time,
# their targets not inlined): a third of the samples in MethodHandle.linkToStatic, a frameless
# nmethod that jumps to its target; BPF passes it (the return address at sp) and gives no
# frame for it, as AGCT does (with the frame every such walk differed on H2). shadow: none
# of those walks differs from the agent's (JDK 17: 354 compared, JDK 25: 278)
handles_run() {
	local home=$1 line samples cmp differ
	require_jdk "$home"
	"$home/bin/java" -XX:CompileCommand=quiet '-XX:CompileCommand=dontinline,JavaHot::mh*' \
		-cp "$APPS" JavaHot handles 8 >"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1
	run -0 "$JPROF" record -v -p "$JPID" -F 999 -d 3 --java-walk shadow -o "$OUT/h.folded"
	REPORT=$output
	grep -E "^jprof: (JVM $JPID|debug: bpf:)" <<<"$REPORT"
	line=$(grep -E "^jprof: JVM $JPID \([^)]*\): [0-9]+ samples, " <<<"$REPORT")
	samples=$(sed -nE 's/.* ([0-9]+) in Java threads .*/\1/p' <<<"$line")
	line=$(grep -E "^jprof: JVM $JPID: of the walks compared, past a method handle intrinsic: " \
		<<<"$REPORT")
	[[ $line =~ intrinsic:\ ([0-9]+),\ ([0-9]+)\ of\ them\ differ ]]
	cmp=${BASH_REMATCH[1]} differ=${BASH_REMATCH[2]}
	echo "samples of Java threads $samples, past a method handle intrinsic $cmp, differ $differ"
	((cmp * 10 >= samples && differ * 200 <= cmp))
}

@test "jdk17, --java-walk shadow: a method handle intrinsic at the top passed as AGCT does" {
	handles_run "$JDK17"
}

@test "jdk25, --java-walk shadow: a method handle intrinsic at the top passed as AGCT does" {
	handles_run "$JDK25"
}
