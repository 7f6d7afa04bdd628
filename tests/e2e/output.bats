#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# output.bats: the -o file is safe and atomic: no write through another user's planted link,
# a failed run leaves the previous file as it was, unknown extensions are refused.
bats_require_minimum_version 1.5.0

load helpers

TUSER=jpt-out

setup() {
	require_root_bpf
	OUT=$BATS_TEST_TMPDIR
	MNT=
}

teardown() {
	if [[ -n ${APP_PID:-} ]]; then
		{ kill "$APP_PID" && wait "$APP_PID"; } 2>/dev/null || true
	fi
	[[ -n ${STICKY:-} ]] && rm -rf "$STICKY"
	[[ -n ${MNT:-} ]] && { umount "$MNT" 2>/dev/null || true; rmdir "$MNT" 2>/dev/null || true; }
	drop_test_user "$TUSER"
}

@test "output: a symlink planted by another user in a sticky world-writable dir is not followed" {
	make_test_user "$TUSER" >/dev/null
	# a /tmp-like directory: world-writable and sticky, owned by root
	STICKY=$(mktemp -d)
	chmod 1777 "$STICKY"
	echo "precious" >"$OUT/victim"
	chmod 644 "$OUT/victim"
	chmod o+x "$OUT" "$(dirname "$OUT")" 2>/dev/null || true
	setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups \
		ln -s "$OUT/victim" "$STICKY/profile.folded"
	[[ $(stat -c %U "$STICKY/profile.folded") == "$TUSER" ]]
	"$APPS/hotab" 3 >/dev/null 3>&- &
	APP_PID=$!
	run -4 "$JPROF" record -p "$APP_PID" -d 1 -o "$STICKY/profile.folded"
	echo "$output"
	[[ $output == *"refusing to write through it"* ]]
	[[ $(cat "$OUT/victim") == "precious" ]]
	# a FIFO planted the same way is refused too (the kernel's protected_fifos rule)
	setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups mkfifo "$STICKY/fifo"
	run -4 "$JPROF" record -p "$APP_PID" -d 1 -o "$STICKY/fifo"
	[[ $output == *"refusing to write through it"* ]]
	# root's own link in the same directory is followed, and its target replaced atomically
	ln -s "$OUT/mine.folded" "$STICKY/root.folded"
	run -0 "$JPROF" record -p "$APP_PID" -d 1 -o "$STICKY/root.folded"
	[[ -L $STICKY/root.folded ]]
	grep -Eq 'hot_a [0-9]+$' "$OUT/mine.folded"
}

@test "output: a full disk leaves the previous file intact and says so" {
	MNT=$(mktemp -d)
	mount -t tmpfs -o size=64k jprof-test-full "$MNT"
	printf 'old;profile 1\n' >"$MNT/p.folded"
	# fill the rest of the filesystem
	dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null || true
	"$APPS/hotab" 4 >/dev/null 3>&- &
	APP_PID=$!
	run -4 "$JPROF" record -a -F 999 -d 2 -o "$MNT/p.folded"
	echo "$output"
	[[ $output == *"No space left on device"* ]]
	[[ $output == *"not saved (the previous file is unchanged)"* ]]
	[[ $(cat "$MNT/p.folded") == "old;profile 1" ]]
	# no temporary file left behind
	[[ $(ls -A "$MNT" | sort | tr '\n' ' ') == "filler p.folded " ]]
}

@test "output: an unknown extension is refused before recording" {
	run -2 "$JPROF" record -d 1 -o "$OUT/x.bin"
	[[ $output == *"unknown file extension"* ]]
	[[ ! -e $OUT/x.bin ]]
}

@test "output: events of different units are refused for a one-graph format, before recording" {
	run -2 "$JPROF" record -e lock,alloc -d 1 -o "$OUT/x.html"
	echo "$output"
	[[ $output == *"lock (nanoseconds waited) and alloc (bytes allocated) cannot share one graph"* ]]
	[[ ! -e $OUT/x.html ]]
}

@test "output: an --agent that cannot be read is refused before recording" {
	run -2 "$JPROF" record --agent "$OUT/no-such-agent.so" -d 1 -o "$OUT/x.folded"
	echo "$output"
	[[ $output == *"--agent $OUT/no-such-agent.so: No such file or directory"* ]]
	[[ ! -e $OUT/x.folded ]]
}

# as perf does: a -p recording ends when its processes have exited, and its output is written
@test "output: -p: the recording ends when the process exits" {
	"$APPS/hotab" 2 >/dev/null 3>&- &
	APP_PID=$!
	SECONDS=0
	run -0 "$JPROF" record -p "$APP_PID" -d 60 -o "$OUT/p.folded"
	echo "$output (after ${SECONDS} s)"
	((SECONDS < 30))
	[[ $output == *"the -p process exited: stopping"* ]]
	grep -q 'hotab' "$OUT/p.folded"
}

@test "output: report with filters that match nothing says so and writes nothing" {
	"$APPS/hotab" 3 >/dev/null 3>&- &
	APP_PID=$!
	run -0 "$JPROF" record -p "$APP_PID" -d 1 -o "$OUT/r.pb.gz"
	run -1 "$JPROF" report "$OUT/r.pb.gz" --comm no-such-comm -o "$OUT/r.folded"
	echo "$output"
	[[ $output == *"no sample of $OUT/r.pb.gz matches the filters"* ]]
	[[ ! -e $OUT/r.folded ]]
	run -0 "$JPROF" report "$OUT/r.pb.gz" --comm hotab -o "$OUT/r.folded"
	grep -q '^hotab' "$OUT/r.folded"
}

# record -> pprof -> report -> any format keeps when, where, what and how it was recorded,
# and what each report selected (it was 1970 in JFR, no header in HTML, no command in pprof)
@test "output: report keeps the recording's metadata through pprof and JFR, and its filters" {
	local start
	"$APPS/hotab" 4 >/dev/null 3>&- &
	APP_PID=$!
	run -0 "$JPROF" record -p "$APP_PID" -d 1 -o "$OUT/r.pb.gz" -o "$OUT/r.jfr"
	run -0 "$JPROF" report "$OUT/r.pb.gz" -p "$APP_PID" -o "$OUT/a.pb.gz"
	run -0 "$JPROF" report "$OUT/a.pb.gz" --comm hotab -o "$OUT/b.html"
	grep -o '"meta":{[^}]*}' "$OUT/b.html" | tee "$OUT/meta"
	grep -q "\"command\":\"[^\"]*record -p $APP_PID -d 1 " "$OUT/meta"
	grep -q "\"filters\":\"--pid $APP_PID; then --comm 'hotab'\"" "$OUT/meta"
	grep -q '"title":"jprof: CPU (ns)"' "$OUT/meta"
	grep -q "\"host\":\"$(hostname)\"" "$OUT/meta"
	grep -q '"freq":99,' "$OUT/meta"
	grep -Eq '"duration_ns":(9[0-9]{8}|1[0-9]{9}),' "$OUT/meta"
	start=$(sed -nE 's/.*"start":"([^"]+)".*/\1/p' "$OUT/meta")
	[[ $start == "$(date -u +%Y-%m-%d)"* ]]
	# JFR from pprof starts when the recording did, as jprof's own JFR of it does
	run -0 "$JPROF" report "$OUT/a.pb.gz" -o "$OUT/c.jfr"
	require_jdk "$JDK17"
	[[ $("$JDK17/bin/jfr" summary "$OUT/c.jfr" | grep ' Start:') == \
		$("$JDK17/bin/jfr" summary "$OUT/r.jfr" | grep ' Start:') ]]
	# and the JFR reads back with its header
	run -0 "$JPROF" report "$OUT/r.jfr" -o "$OUT/d.html"
	grep -q "\"command\":\"[^\"]*record -p $APP_PID -d 1 " "$OUT/d.html"
	grep -q "\"start\":\"$start\"" "$OUT/d.html"
}
