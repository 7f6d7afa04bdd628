#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# inlined_names.bats: compiled frames named from the JVM's memory with the methods inlined at
# their pc (issue 31), read from the nmethod's debug info (PcDesc, scopes data, metadata):
# with --java-walk shadow the names BPF's frames get from memory are compared, sample by
# sample, with the agent's names of its own trace; a JVM that refuses agents gets the same
# inlined frames, marked inlined. InlineHot: leaf compiled alone, midA and midB inlined into
# outer at leaf's call; H2 under a JDBC load (tests/apps/H2Load.java). JDK 17 and 25.
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

# the stack the agent's walk gives InlineHot's worker: leaf below its inlined callers
CHAIN='InlineHot\.outer_\[[ji]\];InlineHot\.midA_\[i\];InlineHot\.midB_\[i\];InlineHot\.leaf_\[j\] '

start_inline() {
	local jdk=$1
	shift
	require_jdk "$jdk"
	"$jdk/bin/java" "$@" -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,InlineHot::leaf \
		-cp "$APPS" InlineHot 10 >"$OUT/java.out" 2>&1 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1 # outer compiled with its callees inlined
}

# shadow_run JDK: the agent's stacks have the inlined frames; the names from memory agree
# with the agent's in >= 99% of the stacks compared (as --java-walk shadow's own check
# counts them: the same, or the same but for the inlining at the interrupted pc)
shadow_run() {
	local cmp same leaf frames fsame rsame chain samples
	start_inline "$1"
	run -0 "$JPROF" record -v -p "$JPID" -F 999 -d 4 --java-walk shadow -o "$OUT/s.folded"
	REPORT=$output
	grep -E "^jprof: JVM $JPID: (names from|method names)" <<<"$REPORT"
	samples=$(folded_total "$OUT/s.folded")
	chain=$(folded_sum "$CHAIN" "$OUT/s.folded")
	echo "samples $samples, with the inlined chain (agent) $chain"
	((chain * 100 >= samples * 50))
	read -r cmp same leaf frames fsame rsame < <(cmp_line) || return 1
	echo "compared $cmp, identical $same, but for the leaf's inlining $leaf;" \
		"compiled frames $frames, as the agent's code records $fsame; stacks $rsame"
	((cmp >= 300 && (same + leaf) * 100 >= cmp * 99))
	((frames >= cmp && fsame == frames && rsame == cmp))
}

# cmp_line: the comparison's figures of JVM $JPID in $REPORT: CMP SAME LEAF FRAMES FSAME RSAME
cmp_line() {
	local line re
	line=$(grep -E "^jprof: JVM $JPID: names from its memory against the agent's: " <<<"$REPORT")
	re=':\ ([0-9]+)\ stacks\ compared,\ ([0-9]+)\ identical\ .*\),\ ([0-9]+)\ identical\ but'
	re+='.*code\ records:\ ([0-9]+),\ ([0-9]+)\ the\ same.*all\ are:\ ([0-9]+)\ '
	[[ $line =~ $re ]] || { echo "no comparison line for $JPID"; return 1; }
	echo "${BASH_REMATCH[@]:1:6}"
}

@test "jdk17, --java-walk shadow: names from memory with inlined frames agree with the agent's" {
	shadow_run "$JDK17"
}

@test "jdk25, --java-walk shadow: names from memory with inlined frames agree with the agent's" {
	shadow_run "$JDK25"
}

# noattach_run JDK: no agent (attach disabled): the same inlined frames, marked inlined
noattach_run() {
	local samples chain
	start_inline "$1" -XX:+DisableAttachMechanism
	run -0 "$JPROF" record -v -p "$JPID" -F 999 -d 3 -o "$OUT/n.folded"
	REPORT=$output
	grep -E "^jprof: JVM $JPID: (walked in BPF|method names)" <<<"$REPORT"
	grep -qE "^jprof: JVM $JPID: method names read from its memory: .* [1-9][0-9]* chains read \\([1-9]" \
		<<<"$REPORT"
	samples=$(folded_total "$OUT/n.folded")
	chain=$(folded_sum "Thread\\.run_\\[0\\];.*$CHAIN" "$OUT/n.folded")
	echo "samples $samples, with the inlined chain from memory $chain"
	((chain * 100 >= samples * 50))
}

@test "jdk17: a JVM that refuses agents gets its inlined frames from memory, marked inlined" {
	noattach_run "$JDK17"
}

@test "jdk25: a JVM that refuses agents gets its inlined frames from memory, marked inlined" {
	noattach_run "$JDK25"
}

# h2_run JDK: H2 (Debian libh2-java) under 8 JDBC threads, warm (5 s), --java-walk shadow:
# its compiled frames with their inlined methods named from memory as the agent's code
# records name them (>= 99.5% of frames, >= 99% of stacks), and whole stacks (BPF's walk,
# names from memory) identical to the agent's own walk's in >= 98.5% (measured 99.6-100% in
# 10-s runs; 97.3-97.9% before the agent's fallback walked epilogues, JDK 25's entry barrier
# and stub callers as BPF does). 5 s recorded: 3 s gave 140 stacks compared at host load ~15
h2_run() {
	local jar=/usr/share/java/h2.jar cmp same leaf frames fsame rsame i
	require_jdk "$1"
	[[ -r $jar ]] || { missing "the H2 database $jar (Debian: libh2-java)"; return; }
	(cd "$OUT" && exec "$1/bin/java" -Xmx256m -cp "$jar:$APPS" H2Load 8 12 5 \
		>"$OUT/h2.out" 2>&1 3>&-) &
	JPID=$!
	for ((i = 0; i < 300; i++)); do
		grep -q '^ready' "$OUT/h2.out" 2>/dev/null && break
		sleep 0.1
	done
	grep -q '^ready' "$OUT/h2.out" || { cat "$OUT/h2.out"; return 1; }
	run -0 "$JPROF" record -v -p "$JPID" -F 999 -d 5 --java-walk shadow -o "$OUT/h.folded"
	REPORT=$output
	grep -E "^jprof: JVM $JPID: (names from|method names)" <<<"$REPORT"
	read -r cmp same leaf frames fsame rsame < <(cmp_line) || return 1
	echo "stacks compared $cmp: as the agent's code records $rsame; against AGCT identical" \
		"$same, but for the leaf's inlining $leaf; compiled frames $frames, the same $fsame"
	grep -qE "^jprof: JVM $JPID: method names read .* chains read \([1-9][0-9]{2,} inlined" \
		<<<"$REPORT"
	((cmp >= 200 && rsame * 100 >= cmp * 99 && fsame * 1000 >= frames * 995))
	((same * 1000 >= cmp * 985))
}

@test "jdk17 H2, --java-walk shadow: inlined frames from memory as the agent's code records name them" {
	h2_run "$JDK17"
}

@test "jdk25 H2, --java-walk shadow: inlined frames from memory as the agent's code records name them" {
	h2_run "$JDK25"
}
