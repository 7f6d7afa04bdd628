#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# daemon.bats: `jprof daemon` into a store in the test's own directory: one valid pprof
# segment per interval with the programs' frames, adjacent ranges, report --store of a range,
# kill -9 at any moment (roll-ups being made too) leaves a readable store, --max-size holds, a
# full disk is survived; nested roll-ups read for their segments and removed with them.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_root_bpf
	OUT=$BATS_TEST_TMPDIR
	STORE=$OUT/store
	JPID= APP_PID= DPID= MNT=
	command -v go >/dev/null || missing "go (Debian golang-go) for go tool pprof"
}

teardown() {
	if [[ -n ${DPID:-} ]]; then
		{ kill -9 "$DPID" && wait "$DPID"; } 2>/dev/null || true
	fi
	if [[ -n ${APP_PID:-} ]]; then
		{ kill "$APP_PID" && wait "$APP_PID"; } 2>/dev/null || true
	fi
	kill_jpid
	if [[ -n ${MNT:-} ]]; then
		umount "$MNT" 2>/dev/null || true
	fi
}

# the segments, oldest first (their names sort by time)
segments() {
	find "$STORE/segments" -maxdepth 1 -name '*.pb.gz' -printf '%f\n' | sort
}

# same_without_rollups [RANGE...]: report --store of the range (folded) reads, has hotab's
# frames and is what the segments alone give (a copy of them without roll-ups)
same_without_rollups() {
	rm -rf "$OUT/plain"
	mkdir -m 700 "$OUT/plain"
	cp -a "$STORE/segments" "$OUT/plain/"
	run -0 "$JPROF" report --store "$STORE" "$@" -f folded -o "$OUT/r.folded"
	[[ $output != *skipped* ]]
	run -0 "$JPROF" report --store "$OUT/plain" "$@" -f folded -o "$OUT/p.folded"
	grep -q 'hot_a' "$OUT/r.folded"
	cmp "$OUT/r.folded" "$OUT/p.folded" || { echo "range '$*' differs"; false; }
}

# utc_s 20261127T040000Z: its unix seconds
utc_s() {
	date -ud "${1:0:8} ${1:9:2}:${1:11:2}:${1:13:2}" +%s
}

# span_s NAME: the seconds a segment's or roll-up's name (START-END...) covers
span_s() {
	echo $(($(utc_s "${1:17:16}") - $(utc_s "${1:0:16}")))
}

# start_java_and_hotab: JavaHot on JDK 17 (JPID, ready) and hotab (APP_PID), 30 s each
start_java_and_hotab() {
	require_jdk "$JDK17"
	"$JDK17/bin/java" -cp "$APPS" JavaHot split 30 >"$OUT/java.out" 2>&1 3>&- &
	JPID=$!
	"$APPS/hotab" 30 >/dev/null 3>&- &
	APP_PID=$!
	wait_ready "$OUT/java.out" 10
}

@test "daemon: a valid pprof segment per interval, adjacent ranges, the programs' frames; report --store" {
	start_java_and_hotab
	start_daemon -p "$APP_PID,$JPID" --interval 1
	sleep 7
	stop_daemon
	grep -q 'wrote [0-9]* segments' "$OUT/daemon.err"
	mapfile -t segs < <(segments)
	echo "segments: ${segs[*]}"
	((${#segs[@]} >= 5))
	# private: 0700 directories, 0600 files, nothing unfinished left
	[[ $(stat -c %a "$STORE") == 700 && $(stat -c %a "$STORE/segments") == 700 ]]
	[[ -z $(find "$STORE/segments" -type f ! -perm 600) ]]
	[[ -z $(find "$STORE/segments" -name '.tmp-*') ]]
	local prev_end= hot=0 java=0 sum=0 n secs start end
	for s in "${segs[@]}"; do
		# START-END.pb.gz: each starts where the one before ended
		[[ $s =~ ^([0-9]{8}T[0-9]{6}Z)-([0-9]{8}T[0-9]{6}Z)\.pb\.gz$ ]]
		start=${BASH_REMATCH[1]} end=${BASH_REMATCH[2]}
		[[ $start < $end ]]
		[[ -z $prev_end || $start == "$prev_end" ]] || { echo "gap or overlap at $s"; false; }
		prev_end=$end
		# every one a standard pprof, for go tool pprof
		run -0 go tool pprof -raw "$STORE/segments/$s"
		[[ $output == *"jprof:host="* && $output == *"jprof:events=cpu"* ]]
		[[ $output == *"hot_a"* ]] && hot=$((hot + 1))
		[[ $output == *"JavaHot.spin"* ]] && java=$((java + 1))
		# hotab's samples in it (one thread at 99 Hz): pprof's "of N total" is the whole
		# segment's, JavaHot's too, so jprof's own pid filter counts them
		run "$JPROF" report --samples "$STORE/segments/$s" -p "$APP_PID" \
			-o "$OUT/seg.folded"
		if ((status == 0)); then
			n=$(folded_total "$OUT/seg.folded")
		else
			# the last one ends at the stop, which may come a few ms after the
			# rotation before it: then it may hold none of hotab's samples
			[[ $s == "${segs[-1]}" && $output == *"matches the filters"* ]] ||
				{ echo "$output"; false; }
			n=0
		fi
		echo "$s: hotab ${n:-0} samples"
		sum=$((sum + ${n:-0}))
	done
	# each segment holds only what its interval added, not what came before (a model never
	# cleared would count the first seconds again in every later segment): over the whole
	# run, hotab's samples are at most one thread's 99 a second. Per segment they are not
	# bounded: a sample counts where it was read and joined, a stalled round's in the next
	local first=${segs[0]:0:16} last=${segs[-1]:17:16}
	secs=$(($(utc_s "$last") - $(utc_s "$first")))
	echo "hotab: $sum samples in $secs s of segments"
	((sum > 0 && sum <= 110 * secs + 15))
	echo "segments with hot_a: $hot, with JavaHot frames: $java"
	((hot >= ${#segs[@]} - 2 && java >= 2))
	# the store read back for a range: both programs' frames, as folded
	run -0 "$JPROF" report --store "$STORE" --since 1h -o "$OUT/all.folded"
	grep -Eq '^hotab;.*;run;hot_a [0-9]+$' "$OUT/all.folded"
	grep -Eq ';JavaHot\.spinA_' "$OUT/all.folded"
	# a range of two segments holds fewer samples than the whole
	run -0 "$JPROF" report --store "$STORE" --since "${segs[2]:0:16}" --until "${segs[3]:17:16}" \
		-o "$OUT/two.folded"
	(($(folded_total "$OUT/two.folded") < $(folded_total "$OUT/all.folded")))
	# and in any format
	run -0 "$JPROF" report --store "$STORE" -o "$OUT/all.html"
	grep -q 'hot_a' "$OUT/all.html"
}

# KILL_ROUNDS=20 (3 in the suite) for the issue's 20 kills at least, in about 90 s
@test "daemon: kill -9 at any moment leaves a readable store; the next daemon sweeps and goes on" {
	local rounds=${KILL_ROUNDS:-3}
	"$APPS/hotab" $((20 + 5 * rounds)) >/dev/null 3>&- &
	APP_PID=$!
	sleep 0.3
	# random moments in the first 3 s (printed, to replay one: the checks hold at any)
	for ((round = 1; round <= rounds; round++)); do
		delay=$(printf '0.%03d' $((RANDOM % 1000)))
		delay=$(awk -v d="$delay" -v r=$((RANDOM % 3)) 'BEGIN { print d + r }')
		echo "round $round: kill -9 after $delay s"
		# roll-ups of 2 s (2 segments) made all along: a kill may come in the middle of one
		JPROF_ROLLUP_S=12 start_daemon -p "$APP_PID" --interval 1
		sleep "$delay"
		{ kill -9 "$DPID" && wait "$DPID"; } 2>/dev/null || true
		DPID=
		# whatever is there is whole: every segment and roll-up reads, and so does the
		# store, as its segments alone would
		for s in $(segments); do
			gzip -t "$STORE/segments/$s"
		done
		[[ ! -d $STORE/rollups ]] || find "$STORE/rollups" -maxdepth 1 -name '2*.pb.gz' -exec gzip -t {} +
		if [[ -n $(segments) ]]; then
			same_without_rollups
		fi
	done
	# a restart removes what a kill left half-written and continues after the newest segment
	mkdir -p "$STORE/segments" "$STORE/rollups"
	touch "$STORE/segments/.tmp-20261127T040000Z-20261127T040001Z.pb.gz"
	echo "half a roll-up" >"$STORE/rollups/.tmp-20261127T040000Z-20261127T040002Z.0123456789abcdef.pb.gz"
	before=$(segments | tail -1)
	start_daemon -p "$APP_PID" --interval 1
	sleep 2.5
	stop_daemon
	grep -Eq 'removed ([2-9]|[1-9][0-9]+) unfinished segments' "$OUT/daemon.err"
	[[ -z $(find "$STORE/segments" "$STORE/rollups" -name '.tmp-*') ]]
	# its segments come after the newest one before it, without overlap
	after=$(segments | awk -v b="$before" '$0 > b' | head -1)
	[[ -n $after ]]
	[[ -z $before || ${after:0:16} == "${before:17:16}" || ${after:0:16} > "${before:17:16}" ]]
	run -0 "$JPROF" report --store "$STORE" -o "$OUT/k.folded"
	grep -q 'hot_a' "$OUT/k.folded"
}

# The model's tables past their budget (16 MB; 64 KB here) are replaced by an empty model at
# an interval's end and the join forgets the ids it held: the segments after stay whole. At
# the daemon's own rate (19 Hz)
@test "daemon: a model past its budget is replaced, and the segments after it keep every frame" {
	start_java_and_hotab
	DAEMON_OWN_HZ=1 JPROF_MODEL_MAX_KB=64 start_daemon -v -p "$APP_PID,$JPID" --interval 1
	sleep 6
	stop_daemon
	# the daemon's own rate, always on
	grep -Eq '^jprof: [0-9]+ samples \(cpu-clock, 19 Hz' "$OUT/daemon.err"
	n=$(grep -c "the model's tables took .* replaced by an empty one" "$OUT/daemon.err")
	echo "models replaced: $n"
	((n >= 2))
	mapfile -t segs < <(segments)
	((${#segs[@]} >= 4))
	# the last full segments, written after replacements: both programs, named
	local java=0 hot=0
	for s in "${segs[@]:2}"; do
		run -0 go tool pprof -raw "$STORE/segments/$s"
		[[ $output == *"hot_a"* ]] && hot=$((hot + 1))
		[[ $output == *"JavaHot.spin"* ]] && java=$((java + 1))
	done
	echo "later segments: ${#segs[@]} - 2, with hot_a $hot, with JavaHot $java"
	((hot >= ${#segs[@]} - 4 && java >= 1))
	run -0 "$JPROF" report --store "$STORE" -o "$OUT/all.folded"
	grep -Eq '^hotab;.*;run;hot_a [0-9]+$' "$OUT/all.folded"
	grep -Eq ';JavaHot\.spinA_' "$OUT/all.folded"
}

@test "daemon: a tiny --max-size keeps the store under it, oldest segments removed first" {
	"$APPS/hotab" 30 >/dev/null 3>&- &
	APP_PID=$!
	sleep 0.3
	start_daemon -p "$APP_PID" --interval 1 --max-size 4K
	for _ in 1 2 3 4 5 6; do
		sleep 1
		bytes=$(find "$STORE/segments" -maxdepth 1 -name '*.pb.gz' -printf '%s\n' 2>/dev/null |
			awk '{ s += $1 } END { print s + 0 }')
		echo "store: $bytes bytes"
		((bytes <= 4096))
	done
	stop_daemon
	grep -Eq 'removed 0 by age, [1-9][0-9]* by size' "$OUT/daemon.err"
	bytes=$(find "$STORE/segments" -name '*.pb.gz' -printf '%s\n' | awk '{ s += $1 } END { print s }')
	((bytes <= 4096))
	# what is left is the newest
	run -0 "$JPROF" report --store "$STORE" --since 10s -o "$OUT/m.folded"
	grep -q 'hot_a' "$OUT/m.folded"
}

@test "daemon: a full disk is survived: segments dropped and counted, writing resumes with space" {
	"$APPS/hotab" 30 >/dev/null 3>&- &
	APP_PID=$!
	MNT=$OUT/mnt
	mkdir -p "$MNT"
	mount -t tmpfs -o size=256k,mode=0700 jprof-daemon-test "$MNT" || { missing "a tmpfs mount"; return; }
	STORE=$MNT/store
	sleep 0.3
	start_daemon -p "$APP_PID" --interval 1
	sleep 1.5
	# fill the disk to the last block
	dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null || true
	sleep 2.5
	kill -0 "$DPID"
	grep -q 'not written: No space left on device; the daemon goes on' "$OUT/daemon.err"
	full=$(segments | wc -l)
	rm -f "$MNT/fill"
	sleep 2.5
	stop_daemon
	grep -Eq 'writing again; [0-9]+ segments? dropped meanwhile' "$OUT/daemon.err"
	grep -Eq '[0-9]+ segments \([0-9]+ samples\) dropped: [1-9][0-9]* no space' "$OUT/daemon.err"
	(($(segments | wc -l) > full))
	[[ -z $(find "$STORE/segments" -name '.tmp-*') ]]
	run -0 "$JPROF" report --store "$STORE" -o "$OUT/f.folded"
	grep -q 'hot_a' "$OUT/f.folded"
}

@test "daemon: roll-ups (test periods of 2 s and 12 s, nested): read for their segments, removed with them" {
	"$APPS/hotab" 30 >/dev/null 3>&- &
	APP_PID=$!
	sleep 0.3
	# an "hour" of 12 s in 6 parts of 2 s (2 segments each), made of its parts' roll-ups
	JPROF_ROLLUP_S=12 start_daemon -p "$APP_PID" --interval 1 --max-age 6s
	# on until the first roll-up is gone with its segments (the age limit), another is there
	# and a period's was made
	local i r first= period= rolls=()
	local -A seen=()
	for ((i = 0; i < 125; i++)); do
		sleep 0.2
		mapfile -t rolls < <(find "$STORE/rollups" -maxdepth 1 -name '2*.pb.gz' -printf '%f\n' 2>/dev/null | sort)
		for r in "${rolls[@]}"; do # each new one's span once (date is slow on a busy host)
			[[ -n ${seen[$r]:-} ]] && continue
			seen[$r]=$(span_s "$r")
			[[ ${seen[$r]} == 12 ]] && period=$r
			# the first part's: a daemon started in a period's last part writes that part's
			# and the period's at once, and the period's name sorts first
			[[ -z $first && ${seen[$r]} == 2 ]] && first=$r
		done
		[[ -n $first && -n $period && ${#rolls[@]} -gt 0 && ${rolls[0]} != "$first" && ! -e $STORE/rollups/$first ]] && break
	done
	echo "first roll-up $first, a period's $period, after $((i / 5)) s"
	stop_daemon
	[[ -n $period && $(span_s "$first") == 2 ]]
	grep -Eq '; [1-9][0-9]* roll-ups written \([1-9][0-9]* removed' "$OUT/daemon.err"
	[[ -z $(find "$STORE/rollups" -name '.tmp-*') ]]
	[[ -z $(find "$STORE/rollups" -type f ! -perm 600) && $(stat -c %a "$STORE/rollups") == 700 ]]
	mapfile -t rolls < <(find "$STORE/rollups" -maxdepth 1 -name '2*.pb.gz' -printf '%f\n' | sort)
	mapfile -t segs < <(segments)
	echo "roll-ups: ${rolls[*]}"
	echo "segments: ${segs[*]}"
	((${#rolls[@]} >= 1))
	# none outlives its segments: each lies over 2 segments or more of those left
	local s n
	for r in "${rolls[@]}"; do
		n=0
		for s in "${segs[@]}"; do
			[[ ! ${s:0:16} < ${r:0:16} && ! ${s:17:16} > ${r:17:16} ]] && n=$((n + 1))
		done
		((n >= 2)) || { echo "$r: $n segments"; false; }
		run -0 go tool pprof -raw "$STORE/rollups/$r"
		[[ $output == *"hot_a"* && $output == *"jprof:host="* ]]
	done
	# the same flame graph with and without them: whole periods, cut ones, all
	r=${rolls[-1]}
	local a=${r:0:16} b=${r:17:16} s=${segs[0]:0:16}
	for range in "--since $a --until $b" "--since $s --until $b" "--since ${segs[1]:0:16}" ""; do
		# shellcheck disable=SC2086
		same_without_rollups $range
	done
	# and it is read: its bytes swapped for one segment's, the period's graph is that segment's
	cp "$STORE/segments/${segs[-2]}" "$STORE/rollups/$r"
	run -0 "$JPROF" report --store "$STORE" --since "$a" --until "$b" -f folded -o "$OUT/r.folded"
	run -0 "$JPROF" report "$STORE/segments/${segs[-2]}" -f folded -o "$OUT/s.folded"
	cmp "$OUT/r.folded" "$OUT/s.folded"
}
