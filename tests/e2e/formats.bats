#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# formats.bats: one recording, every format: pprof read by `go tool pprof`, speedscope JSON,
# and the folded output agree on totals and on the hottest function.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_root_bpf
	OUT=$BATS_TEST_TMPDIR
	JPID=
	command -v go >/dev/null || missing "go (Debian golang-go) for go tool pprof"
}

teardown() {
	kill_jpid
}

start_hot() {
	require_jdk "$JDK17"
	"$JDK17/bin/java" -cp "$APPS" JavaHot split 30 >"$OUT/java.out" 2>&1 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1
}

@test "formats: pprof of a real JVM recording is read by go tool pprof with Java frames and labels" {
	start_hot
	run -0 "$JPROF" record -p "$JPID" -F 199 -d 3 -o "$OUT/p.pb.gz"
	echo "$output"
	samples=$(sed -nE 's/^jprof: ([0-9]+) samples .*/\1/p' <<<"$output")
	(( samples > 50 ))
	run -0 go tool pprof -top -sample_index=samples "$OUT/p.pb.gz"
	echo "$output"
	[[ $output == *"Total samples = $samples"* ]]
	# the hot loop is the top function
	top=$(awk '/flat%/ { getline; print $NF; exit }' <<<"$output")
	[[ $top == JavaHot.* ]]
	run -0 go tool pprof -raw "$OUT/p.pb.gz"
	[[ $output == *"pid:[$JPID]"* ]]
	[[ $output == *"(java-jit)"* ]]
	[[ $output == *"JavaHot.java"* || $output == *"JavaHot."* ]]
	run -0 go tool pprof -top -sample_index=cpu "$OUT/p.pb.gz"
	[[ $output == *"Type: cpu"* ]]
}

@test "formats: folded, pprof and speedscope of the same profile agree on total and top" {
	start_hot
	run -0 "$JPROF" record -p "$JPID" -F 199 -d 3 -o "$OUT/a.folded"
	total=$(folded_total "$OUT/a.folded")
	read -r _ top < <(folded_top "$OUT/a.folded")
	echo "folded: total $total, top $top"
	run -0 "$JPROF" report "$OUT/a.folded" -o "$OUT/a.pb.gz"
	run -0 go tool pprof -top "$OUT/a.pb.gz"
	echo "$output"
	[[ $output == *"of $total total"* ]]
	ptop=$(awk '/flat%/ { getline; print $NF; exit }' <<<"$output")
	[[ $ptop == "$top" ]]
	run -0 "$JPROF" report "$OUT/a.folded" -o "$OUT/a.speedscope.json"
	python3 - "$OUT/a.speedscope.json" "$total" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["profiles"][0]
assert p["type"] == "sampled" and len(p["samples"]) == len(p["weights"]), "shape"
assert sum(p["weights"]) == int(sys.argv[2]), (sum(p["weights"]), sys.argv[2])
assert all(0 <= i < len(d["shared"]["frames"]) for s in p["samples"] for i in s), "frame index"
PY
}

@test "formats: one recording as folded and pprof; report of the pprof gives the same folded bytes" {
	start_hot
	"$APPS/hotab" 6 >/dev/null 3>&- &
	local hp=$!
	run -0 "$JPROF" record -p "$JPID,$hp" -e cpu,offcpu -F 199 -d 3 --per-thread --lines \
		-o "$OUT/r.folded" -o "$OUT/r.pb.gz" -o "$OUT/r.html"
	echo "$output"
	kill "$hp" 2>/dev/null || true
	[[ $output == *"wrote $OUT/r.folded (folded), wrote $OUT/r.pb.gz (pprof), wrote $OUT/r.html (html)"* ]]
	run -0 "$JPROF" report "$OUT/r.pb.gz" --per-thread --lines -o "$OUT/again.folded"
	cmp "$OUT/r.folded" "$OUT/again.folded"
	# filters: only the JVM; only the C program; frames matching a regex
	run -0 "$JPROF" report "$OUT/r.pb.gz" -p "$JPID" -o "$OUT/jvm.folded"
	grep -q '^java;' "$OUT/jvm.folded"
	! grep -q '^hotab;' "$OUT/jvm.folded"
	run -0 "$JPROF" report "$OUT/r.pb.gz" --comm hotab -o "$OUT/c.folded"
	grep -q '^hotab;.*hot_a' "$OUT/c.folded"
	! grep -q '^java;' "$OUT/c.folded"
	run -0 "$JPROF" report "$OUT/r.pb.gz" --include 'JavaHot\.spin' -o "$OUT/i.folded"
	! grep -vq 'JavaHot\.spin' "$OUT/i.folded"
	run -0 "$JPROF" report "$OUT/r.pb.gz" --exclude 'JavaHot' --reverse -o "$OUT/x.folded"
	! grep -q 'JavaHot' "$OUT/x.folded"
	# the top table names the hot loop among the hottest Java frames
	run -0 "$JPROF" report "$OUT/r.pb.gz" -p "$JPID" --top 5
	echo "$output"
	[[ ${lines[0]} == *"self%"*"total%"*"function"* ]]
	[[ $output == *"JavaHot."*"[jit]"* ]]
}

@test "formats: report refuses a malformed recording with one line" {
	printf '\x1f\x8b\x08\x00garbage' >"$OUT/bad.pb.gz"
	run -1 "$JPROF" report "$OUT/bad.pb.gz"
	[[ $output == *"bad.pb.gz: not a usable pprof profile"* ]]
	(( ${#lines[@]} == 1 ))
	printf '\x0a\x05\x08\x01' >"$OUT/trunc.pb"
	run -1 "$JPROF" report "$OUT/trunc.pb"
	[[ $output == *"not a usable pprof profile"* ]]
	run -1 "$JPROF" report "$OUT/missing.pb.gz"
	[[ $output == *"cannot read"* ]]
}
