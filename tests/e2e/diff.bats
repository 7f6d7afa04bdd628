#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# diff.bats: jprof report --diff BASE NEW: a recording against itself shows no change; a method
# made twice as slow between two runs of a JVM is the function that grew most, by a factor near
# its share's (1/10 -> 2/11: 1.82x); recordings of other events are refused in one line.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	[[ -x $JPROF ]] || missing "jprof not built at $JPROF (run make)"
	OUT=$BATS_TEST_TMPDIR
	JPID=
}

teardown() {
	kill_jpid
}

# top_grew FILE: the first "grew" line of a --top table: "FACTOR NAME"
top_grew() {
	awk '/^grew:/ { on = 1; next } /^shrank:/ { exit } on { print $(NF - 1), $NF; exit }' "$1"
}

# check_no_change FOLDED TOP: every line's base equals its new, no function grew or shrank
check_no_change() {
	[[ -s $1 ]]
	awk '$(NF - 1) != $NF { print "changed: " $0; bad++ } END { exit bad > 0 }' "$1"
	grep -qx 'grew: 0 functions' "$2"
	grep -qx 'shrank: 0 functions' "$2"
	[[ $(top_grew "$2") == "" ]]
}

@test "diff: folded and pprof recordings against themselves show no change; --diff-absolute too" {
	cat >"$OUT/s.folded" <<-'EOF2'
	[process 1 java];Main.main_[0];Main.work_[j];Main.inl_[i] 30
	[process 1 java];Main.main_[0];Main.work_[j] 10
	[process 1 java];Main.main_[0];Other.run_[j];Main.inl_[i] 7
	[process 2 app];main;write_[k] 3
	EOF2
	run -0 "$JPROF" report "$OUT/s.folded" -o "$OUT/s.pb.gz"
	for f in s.folded s.pb.gz; do
		run -0 "$JPROF" report --diff "$OUT/$f" "$OUT/$f" -o "$OUT/d.folded" --top 5
		printf '%s\n' "$output" >"$OUT/top.txt"
		cat "$OUT/d.folded"
		check_no_change "$OUT/d.folded" "$OUT/top.txt"
		[[ $(wc -l <"$OUT/d.folded") -eq 4 ]]
		grep -qx '\[process 1 java\];Main.main_\[0\];Main.work_\[j\];Main.inl_\[i\] 30 30' "$OUT/d.folded"
		run -0 "$JPROF" report --diff "$OUT/$f" "$OUT/$f" --diff-absolute --top 5
		printf '%s\n' "$output" >"$OUT/top.txt"
		grep -qx 'grew: 0 functions' "$OUT/top.txt"
		run -0 "$JPROF" report --diff "$OUT/$f" "$OUT/$f" -o "$OUT/d.html"
		grep -q '"grew":0,"shrank":0,"changes":\[\]' "$OUT/d.html"
	done
}

@test "diff: a changed folded recording: the grown, the shrunk, the removed; filters apply to both" {
	cat >"$OUT/a.folded" <<-'EOF2'
	[process 1 java];Main.main_[0];Main.work_[j];Main.a_[j] 50
	[process 1 java];Main.main_[0];Main.work_[j];Main.b_[j] 10
	[process 1 java];Main.main_[0];Main.gone_[j] 5
	[process 2 app];main;write_[k] 35
	EOF2
	cat >"$OUT/b.folded" <<-'EOF2'
	[process 1 java];Main.main_[0];Main.work_[j];Main.a_[j] 50
	[process 1 java];Main.main_[0];Main.work_[j];Main.b_[j] 20
	[process 1 java];Main.main_[0];Main.fresh_[j] 5
	[process 2 app];main;write_[k] 35
	EOF2
	run -0 "$JPROF" report --diff "$OUT/a.folded" "$OUT/b.folded" --top 3 --diff-absolute -o "$OUT/d.folded"
	printf '%s\n' "$output" >"$OUT/top.txt"
	cat "$OUT/top.txt" "$OUT/d.folded"
	[[ $(top_grew "$OUT/top.txt") == "2.00x Main.b_[j]" ]]
	grep -Eq 'gone +Main.gone_\[j\]$' "$OUT/top.txt"
	# raw weights: stack, base, new
	grep -qx '\[process 1 java\];Main.main_\[0\];Main.gone_\[j\] 5 0' "$OUT/d.folded"
	grep -qx '\[process 1 java\];Main.main_\[0\];Main.fresh_\[j\] 0 5' "$OUT/d.folded"
	grep -qx '\[process 1 java\];Main.main_\[0\];Main.work_\[j\];Main.b_\[j\] 10 20' "$OUT/d.folded"
	# shares (the default): b 10 of 100 -> 20 of 110; base scaled to new's total in folded
	run -0 "$JPROF" report --diff "$OUT/a.folded" "$OUT/b.folded" --top 3 -o "$OUT/n.folded"
	printf '%s\n' "$output" >"$OUT/top.txt"
	[[ $(top_grew "$OUT/top.txt") == "1.82x Main.b_[j]" ]]
	grep -qx '\[process 1 java\];Main.main_\[0\];Main.work_\[j\];Main.b_\[j\] 11 20' "$OUT/n.folded"
	# --include keeps process 1's stacks on both sides: b's share 10/65 -> 20/75
	run -0 "$JPROF" report --diff "$OUT/a.folded" "$OUT/b.folded" --include 'Main' --top 1
	printf '%s\n' "$output" >"$OUT/top.txt"
	[[ $(top_grew "$OUT/top.txt") == "1.73x Main.b_[j]" ]]
	run -0 "$JPROF" report --diff "$OUT/a.folded" "$OUT/b.folded" --exclude 'Main' --top 1
	printf '%s\n' "$output" >"$OUT/top.txt"
	grep -qx 'grew: 0 functions' "$OUT/top.txt"
	# a filter that leaves a side empty is an error, not an empty diff
	run -1 "$JPROF" report --diff "$OUT/a.folded" "$OUT/b.folded" --include 'Main.fresh' -o "$OUT/x.html"
	[[ $output == *"no sample of $OUT/a.folded matches the filters"* ]]
	[[ ! -e $OUT/x.html ]]
}

@test "diff: an unreadable recording and a format --diff cannot write fail in one line" {
	printf 'a;b 1\n' >"$OUT/a.folded"
	run -1 "$JPROF" report --diff "$OUT/nope.pb.gz" "$OUT/a.folded" -o "$OUT/x.html"
	[[ ${#lines[@]} -eq 1 && $output == *"cannot read $OUT/nope.pb.gz: No such file or directory"* ]]
	printf 'a;b 1\nnot folded\n' >"$OUT/bad.folded"
	run -1 "$JPROF" report --diff "$OUT/a.folded" "$OUT/bad.folded" -o "$OUT/x.html"
	[[ ${#lines[@]} -eq 1 && $output == *"bad.folded:2: not a folded-stack line"* ]]
	run -2 "$JPROF" report --diff "$OUT/a.folded" "$OUT/a.folded" -o "$OUT/x.pb.gz"
	[[ ${#lines[@]} -eq 1 && $output == *"--diff writes html or folded, not pprof"* ]]
	[[ ! -e $OUT/x.html && ! -e $OUT/x.pb.gz ]]
}

# record_regress MODE NAME [record flags]: a Regress run (no inlining of its two methods, so each
# is its own frame), recorded for 5 s at 999 Hz into $OUT/NAME.pb.gz
record_regress() {
	local mode=$1 name=$2
	shift 2
	"$JDK17/bin/java" -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,Regress::* \
		-cp "$APPS" Regress "$mode" 30 >"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1 # compiled by then
	run -0 "$JPROF" record -p "$JPID" -F 999 -d 5 "$@" -o "$OUT/$name.pb.gz"
	kill_jpid
	JPID=
}

@test "diff: a method made twice as slow is the top grown function, factor 1.5-2.8; other events are refused" {
	require_root_bpf
	require_jdk "$JDK17"
	[[ -f $APPS/Regress.class ]] || missing "test apps not built (make apps)"
	record_regress base base -o "$OUT/base.jfr" -o "$OUT/base.folded"
	record_regress slow slow
	# against itself (pprof, JFR), and pprof against the same recording's folded: nothing
	# changed (JFR has no place for marker frames such as "[no Java stack: ...]": not compared)
	for f in base.pb.gz:base.pb.gz base.jfr:base.jfr base.pb.gz:base.folded; do
		run -0 "$JPROF" report --diff "$OUT/${f%%:*}" "$OUT/${f#*:}" --top 5 -o "$OUT/self.folded"
		printf '%s\n' "$output" >"$OUT/self.txt"
		check_no_change "$OUT/self.folded" "$OUT/self.txt"
	done
	# the slowed method grew most; its share's factor is 2/11 over 1/10, 1.82, give or take sampling
	run -0 "$JPROF" report --diff "$OUT/base.pb.gz" "$OUT/slow.pb.gz" --top 5 -o "$OUT/d.html"
	printf '%s\n' "$output" | tee "$OUT/top.txt"
	local top factor
	top=$(top_grew "$OUT/top.txt")
	factor=${top%%x *}
	echo "top grown: $top"
	[[ $top == *" Regress.slowed_[j]" ]]
	awk -v f="$factor" 'BEGIN { exit !(f >= 1.5 && f <= 2.8) }'
	# steady's share shrank (9/10 -> 9/11 of the loop)
	grep -A5 '^shrank:' "$OUT/top.txt" | grep -q 'Regress.steady_\[j\]'
	grep -q '"diff":{"absolute":false,"base_meta":{' "$OUT/d.html"
	# the same filters on both sides (the two runs are two pids: --comm selects both)
	run -0 "$JPROF" report --diff "$OUT/base.pb.gz" "$OUT/slow.pb.gz" --comm java --top 1
	printf '%s\n' "$output" >"$OUT/top.txt"
	[[ $(top_grew "$OUT/top.txt") == *" Regress.slowed_[j]" ]]
	# off-CPU time (ns) is no CPU sample count: refused in one line, nothing written
	record_regress base offcpu -e cpu,offcpu
	run -1 "$JPROF" report --diff "$OUT/base.pb.gz" "$OUT/offcpu.pb.gz" -o "$OUT/x.html"
	echo "$output"
	[[ ${#lines[@]} -eq 1 && $output == *"a diff compares recordings of the same events"* ]]
	[[ ! -e $OUT/x.html ]]
}
