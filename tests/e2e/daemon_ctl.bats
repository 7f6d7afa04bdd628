#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# daemon_ctl.bats: `jprof dump` through the daemon's control socket: the open interval (not
# yet in any segment) with the segments before it, in every format, how long it takes; the
# errors a user meets (no store, no daemon, a stale socket, a bad range, permission); clients
# that send nothing or garbage never stop the daemon's segments; SIGTERM keeps the open interval.
bats_require_minimum_version 1.5.0

load helpers

TEST_USER=jprof-dumpctl

setup() {
	require_root_bpf
	OUT=$BATS_TEST_TMPDIR
	STORE=$OUT/store
	APP_PID= DPID= HOLD_PID= LOAD_PIDS= PUBDIR=
}

teardown() {
	# shellcheck disable=SC2086 # a list of pids
	[[ -z ${LOAD_PIDS:-} ]] || kill $LOAD_PIDS 2>/dev/null || true
	[[ -z ${PUBDIR:-} ]] || rm -rf -- "$PUBDIR"
	if [[ -n ${HOLD_PID:-} ]]; then
		{ kill -9 "$HOLD_PID" && wait "$HOLD_PID"; } 2>/dev/null || true
	fi
	if [[ -n ${DPID:-} ]]; then
		{ kill -9 "$DPID" && wait "$DPID"; } 2>/dev/null || true
	fi
	if [[ -n ${APP_PID:-} ]]; then
		{ kill "$APP_PID" && wait "$APP_PID"; } 2>/dev/null || true
	fi
	drop_test_user "$TEST_USER"
}

# start_daemon (helpers.bash) waits for this: the daemon is up once its control socket is there
daemon_is_ready() {
	[[ -S $STORE/control.sock ]]
}

segments() {
	find "$STORE/segments" -maxdepth 1 -name '*.pb.gz' -printf '%f\n' 2>/dev/null | sort
}

# timed_dump ARGS...: jprof dump, its wall time in ms in $DUMP_MS (printed)
timed_dump() {
	local t0 t1
	t0=$(date +%s%N)
	run "$JPROF" dump --store "$STORE" "$@"
	t1=$(date +%s%N)
	DUMP_MS=$(((t1 - t0) / 1000000))
	echo "jprof dump $*: exit $status in $DUMP_MS ms: $output"
}

@test "dump: the open interval, which no segment holds yet, in every format" {
	command -v go >/dev/null || missing "go (Debian golang-go) for go tool pprof"
	"$APPS/hotab" 60 >/dev/null 3>&- &
	APP_PID=$!
	# an hour's interval: nothing reaches a segment during the test (unless an hour ends)
	start_daemon -p "$APP_PID" --interval 3600
	sleep 3
	# samples counted (--samples), for their rate: the default weighs CPU time
	timed_dump --samples -o "$OUT/open.folded"
	((status == 0))
	[[ $output == *"the open interval"* ]]
	grep -Eq '^hotab;.*;run;hot_a [0-9]+$' "$OUT/open.folded"
	n=$(folded_total "$OUT/open.folded")
	echo "open interval: $n samples of hotab in about 3 s (one thread at 99 Hz)"
	((n >= 99 && n <= 110 * 5))
	# the interval goes on: a second dump has more
	sleep 1
	timed_dump --samples -o "$OUT/open2.folded"
	((status == 0))
	(($(folded_total "$OUT/open2.folded") > n))
	# every format report writes, opened by jprof dump (the daemon writes no file of ours)
	timed_dump -o "$OUT/open.html"
	((status == 0)) && grep -q 'hot_a' "$OUT/open.html"
	timed_dump -o "$OUT/open.pb.gz"
	((status == 0))
	run -0 go tool pprof -raw "$OUT/open.pb.gz"
	[[ $output == *hot_a* && $output == *"jprof:host="* ]]
	timed_dump -o "$OUT/open.jfr"
	((status == 0)) && [[ -s $OUT/open.jfr ]]
	timed_dump -o "$OUT/open.speedscope.json"
	((status == 0)) && grep -q 'hot_a' "$OUT/open.speedscope.json"
	# report's filters and --top
	timed_dump -p "$APP_PID" --top 3
	((status == 0)) && [[ $output == *hot_a* ]]
	# the daemon still owns its store alone: no file of the dumps in it
	[[ -z $(find "$STORE" -newer "$STORE/lock" -type f ! -name '*.pb.gz') ]]
	stop_daemon
	# SIGTERM wrote the open interval as the last segment
	mapfile -t segs < <(segments)
	((${#segs[@]} >= 1))
	run -0 "$JPROF" report --samples --store "$STORE" -o "$OUT/last.folded"
	grep -q 'hot_a' "$OUT/last.folded"
	(($(folded_total "$OUT/last.folded") >= $(folded_total "$OUT/open2.folded")))
	# gone with the daemon: its socket too
	[[ ! -e $STORE/control.sock ]]
}

@test "dump: segments and the open interval, each sample once, under load; how long it takes" {
	"$APPS/hotab" 60 >/dev/null 3>&- &
	APP_PID=$!
	# a busy host: both CPUs taken by spinners beside hotab
	for _ in 1 2 3; do
		"$APPS/hotab" 60 >/dev/null 3>&- &
		LOAD_PIDS+=" $!"
	done
	start_daemon -p "$APP_PID" --interval 1
	sleep 6
	local worst=0 ms=()
	for i in 1 2 3 4 5; do
		timed_dump --samples --last 4s -o "$OUT/d$i.folded"
		((status == 0))
		ms+=("$DUMP_MS")
		((DUMP_MS > worst)) && worst=$DUMP_MS
		grep -q 'hot_a' "$OUT/d$i.folded"
		sleep 0.3
	done
	echo "jprof dump --last 4s, interval 1 s, 3 spinners beside hotab: ${ms[*]} ms (worst $worst)"
	# the segments of the last 4 s and the open interval: each sample once, so at most one
	# thread's 99 a second over 4 s and the open second (and a round's margin)
	n=$(folded_total "$OUT/d5.folded")
	echo "hotab: $n samples in the last dump"
	((n > 0 && n <= 110 * 6))
	# --last 1h holds more than --last 2s
	timed_dump --last 2s -o "$OUT/short.folded"
	timed_dump --last 1h -o "$OUT/long.folded"
	(($(folded_total "$OUT/short.folded") < $(folded_total "$OUT/long.folded")))
	# shellcheck disable=SC2086 # a list of pids
	kill $LOAD_PIDS 2>/dev/null || true
	LOAD_PIDS=
	stop_daemon
}

@test "dump: one clear line for no store, no daemon, a stale socket, a bad range" {
	run -1 "$JPROF" dump --store "$OUT/nowhere" -o "$OUT/x.folded"
	echo "$output"
	[[ $output == *"no such store"* ]]
	[[ ${#lines[@]} -eq 1 ]]
	run -2 "$JPROF" dump --store "$STORE" --last 0
	[[ $output == *"--last: '0' is not a duration"* ]]
	run -2 "$JPROF" dump --store "$STORE" --last soon
	[[ $output == *"--last"* ]]
	run -2 "$JPROF" dump --store "$STORE" --since 1h
	"$APPS/hotab" 30 >/dev/null 3>&- &
	APP_PID=$!
	start_daemon -p "$APP_PID" --interval 1
	sleep 1.5
	stop_daemon
	# the daemon stopped: its socket went with it
	run -1 "$JPROF" dump --store "$STORE" -o "$OUT/x.folded"
	echo "$output"
	[[ $output == *"no jprof daemon runs on this store"* ]]
	# killed: its socket stays, nobody listens
	start_daemon -p "$APP_PID" --interval 1
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null || true
	DPID=
	[[ -S $STORE/control.sock ]]
	run -1 "$JPROF" dump --store "$STORE" -o "$OUT/x.folded"
	echo "$output"
	[[ $output == *"stale"* ]]
	[[ ! -e $OUT/x.folded ]]
	# the next daemon takes its place
	start_daemon -p "$APP_PID" --interval 1
	sleep 1
	run -0 "$JPROF" dump --store "$STORE" -o "$OUT/x.folded"
	grep -q hot_a "$OUT/x.folded"
	stop_daemon
}

@test "dump: only root and the daemon's user; others get permission denied, from the store or the daemon" {
	local uid
	uid=$(make_test_user "$TEST_USER")
	# a store the test user can reach the path of (the test's own directory is root's alone)
	PUBDIR=$(mktemp -d /tmp/jprof-dumpctl-XXXXXX)
	chmod 0711 "$PUBDIR"
	STORE=$PUBDIR/store
	"$APPS/hotab" 30 >/dev/null 3>&- &
	APP_PID=$!
	start_daemon -p "$APP_PID" --interval 1
	sleep 1
	# the store is 0700: another user does not reach the socket
	run -1 setpriv --reuid "$uid" --regid "$uid" --clear-groups "$JPROF" dump --store "$STORE" \
		-o /dev/null
	echo "$output"
	[[ $output == *"permission denied"* ]]
	# opened up by hand (as a careless admin might): the daemon itself refuses the peer
	chmod 0755 "$STORE" "$STORE/segments"
	chmod 0666 "$STORE/control.sock"
	run -1 setpriv --reuid "$uid" --regid "$uid" --clear-groups "$JPROF" dump --store "$STORE" \
		-o /dev/null
	echo "$output"
	[[ $output == *"permission denied: only root and uid 0 may ask this daemon"* ]]
	# nor may it keep a mark
	run -1 setpriv --reuid "$uid" --regid "$uid" --clear-groups "$JPROF" dump --store "$STORE" \
		--mark theirs
	[[ $output == *"permission denied: only root and uid 0 may ask this daemon"* ]]
	[[ ! -e $STORE/marks ]]
	chmod 0700 "$STORE" "$STORE/segments"
	kill -0 "$DPID"
	run -0 "$JPROF" dump --store "$STORE" -o "$OUT/ok.folded"
	grep -q hot_a "$OUT/ok.folded"
	stop_daemon
}

@test "dump: clients that send nothing, too much or garbage neither hang the daemon nor stop its segments" {
	"$APPS/hotab" 30 >/dev/null 3>&- &
	APP_PID=$!
	start_daemon -p "$APP_PID" --interval 1
	sleep 1.2
	local before
	before=$(segments | wc -l)
	# eight clients that connect and say nothing for 6 s, one that floods, one of garbage
	python3 - "$STORE/control.sock" <<'PY' 3>&- &
import socket, sys, time
path = sys.argv[1]
held = []
for _ in range(8):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    held.append(s)
for data in (b"A" * 100000, b"\x00\xff garbage\n"):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.setblocking(False)
    try:
        s.send(data)
    except BlockingIOError:
        pass
    held.append(s)
time.sleep(6)
PY
	HOLD_PID=$!
	sleep 4
	# the daemon went on writing a segment a second meanwhile
	after=$(segments | wc -l)
	echo "segments: $before before the clients, $after 4 s later"
	((after >= before + 3))
	kill -0 "$DPID"
	# each silent client is dropped after its second; a dump gets through once they are
	timed_dump -o "$OUT/after.folded"
	((status == 0))
	grep -q hot_a "$OUT/after.folded"
	# checked: the clients go (the rest of their 6 s proves nothing more)
	kill "$HOLD_PID" 2>/dev/null || true
	wait "$HOLD_PID" || true
	HOLD_PID=
	stop_daemon
}

@test "SIGHUP: --config read again, the interval, limits and rate change, the open interval is kept" {
	"$APPS/hotab" 60 >/dev/null 3>&- &
	APP_PID=$!
	# a bad file is refused at the start, naming its line; so is one others may write
	printf 'interval = 10\nbogus = 1\n' >"$OUT/jprof.conf"
	run -2 "$JPROF" daemon --store "$STORE" --config "$OUT/jprof.conf"
	[[ $output == *"line 2: unknown key 'bogus'"* ]]
	printf 'interval = 3600\n' >"$OUT/jprof.conf"
	chmod 0666 "$OUT/jprof.conf"
	run -2 "$JPROF" daemon --store "$STORE" --config "$OUT/jprof.conf"
	[[ $output == *"writable by it alone"* ]]
	chmod 0644 "$OUT/jprof.conf"
	# the file wins over the command line: an hour, not a second
	start_daemon -p "$APP_PID" --interval 1 --config "$OUT/jprof.conf"
	sleep 2.5
	[[ -z $(segments) ]]
	run -0 "$JPROF" dump --samples --store "$STORE" -o "$OUT/before.folded"
	before=$(folded_total "$OUT/before.folded")
	((before > 0))
	# a second from now on, and a size limit: the open interval is not lost
	printf '# reloaded\ninterval = 1\nmax-size = 1M\n' >"$OUT/jprof.conf"
	kill -HUP "$DPID"
	# the open interval is written at once, a segment a second follows
	segments_over() { (($(segments | wc -l) > $1)); }
	ready_while_alive "$DPID" segments_over 1
	kill -0 "$DPID"
	grep -q 'SIGHUP: read .* again: a segment every 1 s, kept 86400 s and under 1048576 bytes' \
		"$OUT/daemon.err"
	mapfile -t segs < <(segments)
	echo "segments after SIGHUP: ${segs[*]}"
	((${#segs[@]} >= 2))
	# the first segment holds what the open interval had before SIGHUP
	run -0 "$JPROF" report --samples "$STORE/segments/${segs[0]}" -p "$APP_PID" \
		-o "$OUT/first.folded"
	echo "before SIGHUP: $before samples; the first segment: $(folded_total "$OUT/first.folded")"
	(($(folded_total "$OUT/first.folded") >= before))
	# a bad file on SIGHUP: said, and the daemon goes on as it was
	printf 'interval = 0\n' >"$OUT/jprof.conf"
	kill -HUP "$DPID"
	ready_while_alive "$DPID" grep -q "SIGHUP: --config line 1: interval: '0'.*goes on as it was" \
		"$OUT/daemon.err"
	kill -0 "$DPID"
	# the rate changes now: the open interval is written at the old one, the segments after
	# it say the new one (their pprof period, read by protoc's own decoder); the events wait
	# for the next start, and say so
	command -v protoc >/dev/null || missing "protoc (Debian protobuf-compiler)"
	n=$(segments | wc -l)
	printf 'interval = 1\nrate = 49\nevents = cpu,offcpu\n' >"$OUT/jprof.conf"
	kill -HUP "$DPID"
	sleep 3.5
	grep -q 'SIGHUP: sampling at 49 Hz from now (was 99 Hz)' "$OUT/daemon.err"
	grep -q 'SIGHUP: events cpu,offcpu: off-CPU at the daemon.s next start (it started without it' "$OUT/daemon.err"
	mapfile -t segs < <(segments)
	period() { gzip -dc "$STORE/segments/$1" | protoc --decode_raw | sed -n 's/^12: //p'; }
	# the old period up to the segment the SIGHUP cut short (n, or n + 1 when an interval
	# ended meanwhile), the new one (1e9 / 49) from the next on
	local k=-1 i p=()
	for ((i = 0; i < ${#segs[@]}; i++)); do
		p[i]=$(period "${segs[i]}")
		echo "${segs[i]} ${p[i]}"
		[[ ${p[i]} != 20408163 ]] || ((k >= 0)) || k=$i
	done
	((k == n + 1 || k == n + 2))
	for ((i = 0; i < ${#segs[@]}; i++)); do
		[[ ${p[i]} == $((i < k ? 10101010 : 20408163)) ]]
	done
	# hotab is one thread: 49 samples a second at most now, over the segments after the
	# first one since (the cut's end is rounded up to a second: the first one holds the rest
	# of that second too; a segment's edges may take a few of the next one's: 10% more
	# allowed); it had up to 99
	local total=0 secs=0
	((${#segs[@]} >= k + 2))
	for ((i = k + 1; i < ${#segs[@]}; i++)); do
		"$JPROF" report --samples "$STORE/segments/${segs[i]}" -p "$APP_PID" \
			-o "$OUT/seg.folded"
		total=$((total + $(folded_total "$OUT/seg.folded")))
		secs=$((secs + 1))
	done
	echo "at 49 Hz: $total samples in $secs one-second segments"
	((total > 0 && total * 10 <= secs * 49 * 11))
	n=$(segments | wc -l)
	ready_while_alive "$DPID" segments_over "$n"
	# SIGINT, like SIGTERM, writes the open interval as the last segment and exits 0
	n=$(segments | wc -l)
	last=$(segments | tail -1)
	kill -INT "$DPID"
	wait "$DPID"
	DPID=
	grep -q 'Interrupt: stopping and writing what was recorded' "$OUT/daemon.err"
	(($(segments | wc -l) >= n + 1))
	[[ $(segments | tail -1) > $last ]]
	# the last line says both rates
	grep -Eq '^jprof: [0-9]+ samples \(cpu-clock, 99 Hz then 49 Hz \(SIGHUP\)' "$OUT/daemon.err"
}

@test "mark: dump --mark keeps the last window and the open interval outside the limits; marks lists it; report reads it" {
	local dir n
	"$APPS/hotab" 60 >/dev/null 3>&- &
	APP_PID=$!
	start_daemon -p "$APP_PID" --interval 1 --max-age 3s
	sleep 4
	run -0 "$JPROF" dump --store "$STORE" --mark incident-1 --last 3s
	echo "$output"
	dir=$(sed -nE 's/.* as ([^ ]+) \(([0-9]+) segments\).*/\1/p' <<<"$output")
	n=$(sed -nE 's/.* as ([^ ]+) \(([0-9]+) segments\).*/\2/p' <<<"$output")
	[[ $dir == "$STORE/marks/"*-incident-1 ]]
	# the window's segments (about 3 of 1 s) and the open interval beside them
	((n >= 3 && n <= 5))
	[[ $(find "$dir/segments" -name '*.pb.gz' | wc -l) -eq $n ]]
	[[ $(stat -c %a "$dir" "$dir/segments" | sort -u) == 700 ]]
	# the segments are the store's own files (hard links), not copies
	[[ $(find "$dir/segments" -name '*.pb.gz' -links 2 | wc -l) -ge 1 ]]
	first=$(find "$dir/segments" -name '*.pb.gz' -printf '%f\n' | sort | head -1)
	# the limits (3 s) remove the originals; the mark keeps them
	sleep 4
	[[ ! -e $STORE/segments/$first ]]
	[[ -s $dir/segments/$first ]]
	run -0 "$JPROF" marks --store "$STORE"
	echo "$output"
	[[ $output == *"$(basename "$dir")"*" $n "* ]]
	run -0 "$JPROF" report --store "$dir" -o "$OUT/mark.folded"
	grep -q 'hotab;.*;hot_a ' "$OUT/mark.folded"
	# one clear line for a bad name, a mark with no daemon, a store with no marks
	run -2 "$JPROF" dump --store "$STORE" --mark ../x
	[[ $output == *"--mark: '../x' is not 1 to 48 letters"* ]]
	run -2 "$JPROF" dump --store "$STORE" --mark x -o "$OUT/x.html"
	[[ $output == *"dump --mark keeps the window in the store"* ]]
	stop_daemon
	run -1 "$JPROF" dump --store "$STORE" --mark late
	[[ $output == *"no jprof daemon runs on this store"* ]]
	mkdir -m 700 "$OUT/empty" "$OUT/empty/segments"
	run -0 "$JPROF" marks --store "$OUT/empty"
	[[ $output == *"no marks (jprof dump --mark NAME keeps one)"* ]]
}

@test "mark-on-pause: a JVM's GC pause over the threshold keeps the interval around it as a mark, one in 10 minutes" {
	require_jdk "$JDK17"
	local dir
	# System.gc() every 200 ms: every one of them a pause over 1 ms
	"$JDK17/bin/java" -Xmx256m -cp "$APPS" GcPauses 40 200 >"$OUT/gc.out" 2>&1 3>&- &
	APP_PID=$!
	wait_ready "$OUT/gc.out" 10
	start_daemon -p "$APP_PID" --interval 1 --mark-on-pause 1
	sleep 5
	run -0 "$JPROF" marks --store "$STORE"
	echo "$output"
	dir=$(ls "$STORE/marks")
	# one mark (the pauses after it are within 10 minutes of it), named by the JVM's pid
	[[ $dir == *"-gc-pause-$APP_PID-"*ms ]]
	[[ $(wc -w <<<"$dir") -eq 1 ]]
	# the interval before the pause, the pause and the one after: the JVM's own frames
	[[ $(find "$STORE/marks/$dir/segments" -name '*.pb.gz' | wc -l) -ge 2 ]]
	run -0 "$JPROF" report --store "$STORE/marks/$dir" -o "$OUT/m.folded"
	grep -q 'GcPauses' "$OUT/m.folded"
	stop_daemon
	grep -q "daemon: a GC pause of [0-9]* ms in JVM $APP_PID: the [0-9]* s around it kept as marks/$dir" \
		"$OUT/daemon.err"
	grep -Eq -- '--mark-on-pause: 1 marks made, 0 failed; [1-9][0-9]* more pauses' "$OUT/daemon.err"
	run -2 "$JPROF" record -d 1 --mark-on-pause 5
	[[ $output == *"--mark-on-pause are daemon options"* ]]
}

# seg_total SEGMENT TYPE: the sum of a segment's sample type TYPE (offcpu, alloc_space), as go
# tool pprof reads it (0: none)
seg_total() {
	go tool pprof -raw "$STORE/segments/$1" 2>/dev/null | awk -v ty="$2" '
		/^Samples:/ { s = 1; next }
		s == 1 { for (i = 1; i <= NF; i++) if (index($i, ty "/") == 1) c = i; s = 2; next }
		s == 2 && /^Locations/ { s = 0 }
		s == 2 && c && $c ~ /^[0-9]+:?$/ { sub(/:$/, "", $c); t += $c }
		END { printf "%.0f\n", t }'
}

# seg_events SEGMENT: the events the segment says it holds
seg_events() {
	go tool pprof -raw "$STORE/segments/$1" 2>/dev/null | sed -n 's/^Comment: jprof:events=//p'
}

@test "SIGHUP: off-CPU detached and attached again while it runs" {
	command -v go >/dev/null || missing "go (Debian golang-go) for go tool pprof"
	# a thread that blocks 10 ms at a time: off-CPU time in every second
	python3 -c 'import time
while True: time.sleep(0.01)' 3>&- &
	APP_PID=$!
	printf 'interval = 1\nevents = cpu,offcpu\n' >"$OUT/jprof.conf"
	start_daemon -p "$APP_PID" --config "$OUT/jprof.conf"
	sleep 2.2
	local n1 i
	n1=$(segments | wc -l)
	printf 'interval = 1\nevents = cpu\n' >"$OUT/jprof.conf"
	kill -HUP "$DPID"
	sleep 3
	printf 'interval = 1\nevents = cpu,offcpu\n' >"$OUT/jprof.conf"
	kill -HUP "$DPID"
	sleep 2.2
	stop_daemon
	grep -q 'SIGHUP: events cpu: off-CPU programs detached' "$OUT/daemon.err"
	grep -q 'SIGHUP: events cpu,offcpu: off-CPU programs attached' "$OUT/daemon.err"
	! grep -q "next start" "$OUT/daemon.err"
	mapfile -t segs < <(segments)
	local ev=() ns=() k1=-1 k2=-1 before=0 after=0
	for ((i = 0; i < ${#segs[@]}; i++)); do
		ev[i]=$(seg_events "${segs[i]}")
		ns[i]=$(seg_total "${segs[i]}" offcpu)
		echo "${segs[i]} ${ev[i]} ${ns[i]}"
		[[ ${ev[i]} != cpu ]] || ((k1 >= 0)) || k1=$i
		[[ ${ev[i]} != cpu,offcpu ]] || ((k1 < 0 || k2 >= 0)) || k2=$i
	done
	# off-CPU time before the first SIGHUP, in segments that say cpu,offcpu (the one it cut
	# short among them)
	((k1 >= n1 && k2 > k1))
	for ((i = 0; i < k1; i++)); do
		[[ ${ev[i]} == cpu,offcpu ]]
		before=$((before + ns[i]))
	done
	((before > 0))
	# detached: the segments say cpu and hold none (but the first: intervals that ended
	# before the detach may reach it through the ring buffer and the join)
	((k2 >= k1 + 2))
	for ((i = k1; i < k2; i++)); do
		[[ ${ev[i]} == cpu ]]
		((i == k1 || ns[i] == 0))
	done
	# attached again: cpu,offcpu and off-CPU time
	for ((i = k2; i < ${#segs[@]}; i++)); do
		[[ ${ev[i]} == cpu,offcpu ]]
		after=$((after + ns[i]))
	done
	((after > 0))
}

@test "SIGHUP: allocation sampling added to a running JVM's agent, then switched off again" {
	command -v go >/dev/null || missing "go (Debian golang-go) for go tool pprof"
	[[ -r $APPS/EvAlloc.class ]] || missing "EvAlloc not built in $APPS (make apps)"
	require_jdk "$JDK17"
	# 3 MiB of dying arrays and 1 MiB kept per round, for a minute
	"$JDK17/bin/java" -Xmx256m -cp "$APPS" EvAlloc 0 60000 >"$OUT/app.out" 2>&1 3>&- &
	APP_PID=$!
	wait_ready "$OUT/app.out" 10
	printf 'interval = 1\nevents = cpu\n' >"$OUT/jprof.conf"
	start_daemon -p "$APP_PID" --config "$OUT/jprof.conf"
	# the agent attached and connected, without allocation sampling
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "JVM $APP_PID (EvAlloc): Java stacks from" "$OUT/daemon.err" && break
		sleep 0.1
	done
	"$JPROF" list >"$OUT/list.0"
	cat "$OUT/list.0"
	grep -Eq "^$APP_PID .* loaded +- +" "$OUT/list.0"
	printf 'interval = 1\nevents = cpu,alloc\n' >"$OUT/jprof.conf"
	kill -HUP "$DPID"
	for ((i = 0; i < 100; i++)); do
		"$JPROF" list >"$OUT/list.1" && grep -Eq "^$APP_PID .* alloc +" "$OUT/list.1" && break
		sleep 0.1
	done
	cat "$OUT/list.1"
	grep -Eq "^$APP_PID .* loaded +alloc +" "$OUT/list.1" || { cat "$OUT/daemon.err"; false; }
	sleep 3
	printf 'interval = 1\nevents = cpu\n' >"$OUT/jprof.conf"
	kill -HUP "$DPID"
	# the agent switches it off once the daemon's stamps stop (a second)
	for ((i = 0; i < 50; i++)); do
		"$JPROF" list >"$OUT/list.2" && grep -Eq "^$APP_PID .* loaded +- +" "$OUT/list.2" && break
		sleep 0.1
	done
	cat "$OUT/list.2"
	grep -Eq "^$APP_PID .* loaded +- +" "$OUT/list.2"
	sleep 2.2
	stop_daemon
	cat "$OUT/daemon.err"
	grep -q 'SIGHUP: events cpu,alloc: allocation sampling on from now (1 JVM load' "$OUT/daemon.err"
	grep -q 'SIGHUP: events cpu: allocation sampling off from now' "$OUT/daemon.err"
	! grep -q "at the daemon's next start" "$OUT/daemon.err"
	mapfile -t segs < <(segments)
	local ev=() b=() k1=-1 k2=-1 on=0
	for ((i = 0; i < ${#segs[@]}; i++)); do
		ev[i]=$(seg_events "${segs[i]}")
		b[i]=$(seg_total "${segs[i]}" alloc_space)
		echo "${segs[i]} ${ev[i]} ${b[i]}"
		[[ ${ev[i]} != cpu,alloc ]] || ((k1 >= 0)) || k1=$i
		[[ ${ev[i]} != cpu ]] || ((k1 < 0 || k2 >= 0)) || k2=$i
	done
	((k1 > 0 && k2 > k1))
	# before: cpu, no allocations; while on: cpu,alloc and EvAlloc's bytes; after: cpu again
	for ((i = 0; i < k1; i++)); do
		[[ ${ev[i]} == cpu && ${b[i]} == 0 ]]
	done
	for ((i = k1; i < k2; i++)); do
		[[ ${ev[i]} == cpu,alloc ]]
		on=$((on + b[i]))
	done
	for ((i = k2; i < ${#segs[@]}; i++)); do
		[[ ${ev[i]} == cpu ]]
	done
	echo "allocation bytes sampled while on: $on"
	((on > 10000000))
	# the allocated class, the leaf of an allocation's stack
	for ((i = k1; i < k2; i++)); do
		go tool pprof -raw "$STORE/segments/${segs[i]}" | grep -q 'long\[\]' && break
	done
	((i < k2))
}

# wait_list PID REGEX: until `jprof list` shows PID's agent events matching REGEX (5 s)
wait_list() {
	local i
	for ((i = 0; i < 50; i++)); do
		"$JPROF" list >"$OUT/list" && grep -Eq "^$1 .* loaded +$2 +" "$OUT/list" && return 0
		sleep 0.1
	done
	cat "$OUT/list" "$OUT/daemon.err"
	return 1
}

@test "SIGHUP: lock contention switched on in running JVMs (monitors and parks), then off" {
	command -v go >/dev/null || missing "go (Debian golang-go) for go tool pprof"
	[[ -r $APPS/EvContend.class && -r $APPS/EvPark.class ]] ||
		missing "EvContend/EvPark not built in $APPS (make apps)"
	require_jdk "$JDK17"
	# a monitor held 100 ms while another thread blocks on it; a ReentrantLock the same;
	# from 10 s after their start (monitor events switched on after a thread blocked are
	# not posted for that wait: the contention starts once lock is on)
	local t0=$SECONDS
	"$JDK17/bin/java" -cp "$APPS" EvContend 600 100 10000 >"$OUT/contend.out" 2>&1 3>&- &
	APP_PID=$!
	"$JDK17/bin/java" -cp "$APPS" EvPark 600 100 10000 >"$OUT/park.out" 2>&1 3>&- &
	LOAD_PIDS=$!
	wait_ready "$OUT/contend.out" 10
	wait_ready "$OUT/park.out" 10
	printf 'interval = 1\nevents = cpu\n' >"$OUT/jprof.conf"
	start_daemon -p "$APP_PID,$LOAD_PIDS" --config "$OUT/jprof.conf"
	local i p
	for ((i = 0; i < 100; i++)); do
		grep -q "JVM $APP_PID (EvContend): Java stacks from" "$OUT/daemon.err" &&
			grep -q "JVM $LOAD_PIDS (EvPark): Java stacks from" "$OUT/daemon.err" && break
		sleep 0.1
	done
	wait_list "$APP_PID" - && wait_list "$LOAD_PIDS" -
	# off-CPU time waits for a start with it; lock comes now
	printf 'interval = 1\nevents = cpu,lock,offcpu\n' >"$OUT/jprof.conf"
	kill -HUP "$DPID"
	wait_list "$APP_PID" lock && wait_list "$LOAD_PIDS" lock
	# on before the contention starts, and on for 4 s of it
	((SECONDS - t0 < 10)) || { echo "lock went on $((SECONDS - t0)) s after the JVMs' start"; false; }
	sleep $((t0 + 14 - SECONDS))
	printf 'interval = 1\nevents = cpu\n' >"$OUT/jprof.conf"
	kill -HUP "$DPID"
	# each agent switches it off once the daemon's stamps stop (a second)
	wait_list "$APP_PID" - && wait_list "$LOAD_PIDS" -
	sleep 2.2
	stop_daemon
	cat "$OUT/daemon.err"
	grep -q "SIGHUP: events cpu,lock,offcpu: off-CPU at the daemon's next start (it started without it)" "$OUT/daemon.err"
	grep -q 'SIGHUP: events cpu,lock,offcpu: off-CPU programs attached; segments from now hold the parks of -e lock, no other off-CPU time' "$OUT/daemon.err"
	grep -q 'SIGHUP: events cpu,lock,offcpu: lock contention on from now (2 JVMs load' "$OUT/daemon.err"
	grep -q 'SIGHUP: events cpu: off-CPU programs detached' "$OUT/daemon.err"
	grep -q 'SIGHUP: events cpu: lock contention off from now' "$OUT/daemon.err"
	mapfile -t segs < <(segments)
	local ev=() d=() k1=-1 k2=-1 gate=0 park=0
	for ((i = 0; i < ${#segs[@]}; i++)); do
		ev[i]=$(seg_events "${segs[i]}")
		d[i]=$(seg_total "${segs[i]}" delay)
		echo "${segs[i]} ${ev[i]} ${d[i]}"
		[[ ${ev[i]} != cpu,lock ]] || ((k1 >= 0)) || k1=$i
		[[ ${ev[i]} != cpu ]] || ((k1 < 0 || k2 >= 0)) || k2=$i
	done
	((k1 > 0 && k2 > k1))
	# before: no waits; while on: both kinds of wait, named as -e lock names them; after: none
	for ((i = 0; i < k1; i++)); do
		[[ ${ev[i]} == cpu && ${d[i]} == 0 ]]
	done
	for ((i = k1; i < k2; i++)); do
		[[ ${ev[i]} == cpu,lock ]]
		p=$(go tool pprof -raw "$STORE/segments/${segs[i]}")
		grep -q 'EvContend\$Gate' <<<"$p" && gate=1
		grep -q '\[park\]' <<<"$p" && park=1
	done
	((gate && park))
	for ((i = k2; i < ${#segs[@]}; i++)); do
		[[ ${ev[i]} == cpu ]]
	done
	# no off-CPU time in any segment: the start had none
	for ((i = 0; i < ${#segs[@]}; i++)); do
		[[ $(seg_total "${segs[i]}" offcpu) == 0 ]]
	done
}

# the requests fake_pyroscope.py logged that it took (status 200): "FROM UNTIL" lines
pushed() {
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["status"] == 200 and d["path"] == "/ingest":
        print(d["q"]["from"], d["q"]["until"])' "$OUT/push.log"
}

# the OTLP bodies fake_pyroscope.py kept, in the order they came, decoded by protoc against the
# published schema: "FROM UNTIL SAMPLES HOST" lines (the profile's range in UTC seconds, its
# "samples" values added up, its resource's host.name)
otlp_sent() {
	python3 - "$OUT/push.log" "$BATS_TEST_DIRNAME/../../third_party/opentelemetry-proto" <<'PY'
import json, re, subprocess, sys
log, proto = sys.argv[1], sys.argv[2]
for line in open(log):
    d = json.loads(line)
    if d["path"] != "/v1development/profiles" or d["status"] != 200:
        continue
    assert d["type"] == "application/x-protobuf" and d["encoding"] == "gzip", d
    txt = subprocess.run(["protoc", "-I", proto, "--decode",
                          "opentelemetry.proto.collector.profiles.v1development."
                          "ExportProfilesServiceRequest",
                          "opentelemetry/proto/collector/profiles/v1development/"
                          "profiles_service.proto"], stdin=open(d["kept"], "rb"),
                         capture_output=True, text=True, check=True).stdout
    strs = re.findall(r'^  string_table: "(.*)"$', txt, re.M)
    assert strs and strs[0] == "", "string_table[0] is not the empty string"
    host = re.search(r'key: "host.name"\s*value \{\s*string_value: "([^"]*)"', txt).group(1)
    total, t0, dur = 0, None, None
    # each profile: its sample type, then its samples' values, then its time
    for prof in re.findall(r"^    profiles \{\n(.*?)^    \}$", txt, re.M | re.S):
        ty = int(re.search(r"type_strindex: (\d+)", prof).group(1))
        t0 = int(re.search(r"time_unix_nano: (\d+)", prof).group(1))
        dur = int(re.search(r"duration_nano: (\d+)", prof).group(1))
        if strs[ty] == "samples":
            total += sum(int(v) for v in re.findall(r"^        values: (\d+)$", prof, re.M))
    print(t0 // 10**9, (t0 + dur) // 10**9, total, host)
PY
}

# the Parca bodies fake_pyroscope.py kept, in the order they came: the segment each one's raw
# profile is, byte for byte, as "FROM UNTIL" (its labels checked on the way)
parca_sent() {
	python3 - "$OUT/push.log" "$STORE/segments" <<'PY'
import base64, calendar, json, os, sys, time
log, segdir = sys.argv[1], sys.argv[2]
segs = {open(os.path.join(segdir, n), "rb").read(): n for n in os.listdir(segdir)}
for line in open(log):
    d = json.loads(line)
    if d["path"] != "/profiles/writeraw" or d["status"] != 200:
        continue
    assert d["type"] == "application/json", d
    req = json.load(open(d["kept"]))
    (series,) = req["series"]
    labels = {l["name"]: l["value"] for l in series["labels"]["labels"]}
    assert labels == {"__name__": "jprof.test", "host": "ci"}, labels
    (sample,) = series["samples"]
    raw = base64.b64decode(sample["rawProfile"], validate=True)
    assert raw in segs, "a raw profile that is no segment of the store"
    a, b = segs[raw][:16], segs[raw][17:33]
    print(*(calendar.timegm(time.strptime(x, "%Y%m%dT%H%M%SZ")) for x in (a, b)))
PY
}

# sent_in_order FILE: FILE's "FROM UNTIL" lines are the store's segments from the first on,
# in order, each once: none skipped (a restart may leave a gap in the store: nothing was
# recorded then; the newest ones may be unsent yet)
sent_in_order() {
	local n
	n=$(wc -l <"$1")
	((n > 0))
	[[ -z $(sort "$1" | uniq -d) ]]
	segments | python3 -c '
import calendar, sys, time
for name in sys.stdin:
    print(*(calendar.timegm(time.strptime(x, "%Y%m%dT%H%M%SZ")) for x in (name[:16], name[17:33])))' |
		head -n "$n" | diff - "$1"
}

# seg_name FROM UNTIL: the store's segment of that range
seg_name() {
	echo "$(date -u -d "@$1" +%Y%m%dT%H%M%SZ)-$(date -u -d "@$2" +%Y%m%dT%H%M%SZ).pb.gz"
}

@test "push: every segment reaches Pyroscope, OTLP and Parca once and in order, across an outage and a restart" {
	command -v protoc >/dev/null || missing "protoc (Debian protobuf-compiler)"
	local port=$((20000 + RANDOM % 20000)) n
	mkdir "$OUT/bodies"
	python3 "$BATS_TEST_DIRNAME/fake_pyroscope.py" "$port" "$OUT/push.log" "$OUT/down" \
		"$OUT/bodies" 3>&- &
	PY_PID=$!
	LOAD_PIDS=$PY_PID
	"$APPS/hotab" 60 >/dev/null 3>&- &
	APP_PID=$!
	start_daemon -p "$APP_PID" --interval 1 --push-pyroscope "http://127.0.0.1:$port" \
		--push-name 'jprof.test{host=ci}' --push-otlp "http://127.0.0.1:$port/" \
		--push-parca "http://127.0.0.1:$port"
	sleep 3
	# the server down for 3 s: the segments wait, the tries back off
	touch "$OUT/down"
	sleep 3
	rm "$OUT/down"
	sleep 4
	stop_daemon
	cat "$OUT/push.log" | head -3
	grep -q '"status": 503' "$OUT/push.log"
	# each Pyroscope request: /ingest, the name, format pprof, a gzip'ed profile as the body
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["path"] in ("/v1development/profiles", "/profiles/writeraw"):
        continue
    assert d["path"] == "/ingest" and d["q"]["name"] == "jprof.test{host=ci}", d
    assert d["q"]["format"] == "pprof" and d["pprof"] and d["type"] == "binary/octet-stream", d' \
		"$OUT/push.log"
	# taken once each, in order: no segment twice, none skipped
	pushed >"$OUT/sent"
	sent_in_order "$OUT/sent"
	n=$(wc -l <"$OUT/sent")
	((n >= 6))
	# what the daemon wrote and did not send before it stopped goes at its next start
	segments >"$OUT/segs"
	start_daemon -p "$APP_PID" --interval 1 --push-pyroscope "http://127.0.0.1:$port" \
		--push-name 'jprof.test{host=ci}' --push-otlp "http://127.0.0.1:$port/" \
		--push-parca "http://127.0.0.1:$port"
	sleep 2.5
	stop_daemon
	pushed >"$OUT/sent2"
	sent_in_order "$OUT/sent2"
	# OTLP and Parca, each with its own cursor, over both runs: once, in order
	otlp_sent >"$OUT/otlp"
	cat "$OUT/otlp"
	cut -d' ' -f1,2 "$OUT/otlp" >"$OUT/osent2"
	parca_sent >"$OUT/psent2"
	sent_in_order "$OUT/osent2"
	sent_in_order "$OUT/psent2"
	(($(wc -l <"$OUT/osent2") >= n && $(wc -l <"$OUT/psent2") >= n))
	# each OTLP body decodes with the published schema, and its samples add up to its
	# segment's (jprof report of the segment itself); each Parca raw profile is its segment
	local from until samples host seg total
	while read -r from until samples host; do
		[[ $host == "$(hostname)" ]]
		seg=$STORE/segments/$(seg_name "$from" "$until")
		total=$("$JPROF" report --samples "$seg" -f folded | awk '{ s += $NF } END { print s }')
		[[ $samples == "$total" ]] || { echo "$seg: OTLP $samples samples, segment $total"; false; }
	done <"$OUT/otlp"
	# every segment of the first run was taken by the end of the second
	while read -r seg; do
		from=$(date -u -d "$(sed -E 's/^(....)(..)(..)T(..)(..)(..)Z-.*/\1-\2-\3 \4:\5:\6/' <<<"$seg")" +%s)
		grep -q "^$from " "$OUT/sent2" || { echo "not sent: $seg"; false; }
		grep -q "^$from " "$OUT/osent2" || { echo "not sent by OTLP: $seg"; false; }
		grep -q "^$from " "$OUT/psent2" || { echo "not sent to Parca: $seg"; false; }
	done <"$OUT/segs"
	grep -q 'push-pyroscope: [0-9]* segments sent' "$OUT/daemon.err"
	grep -q 'push-otlp: [0-9]* segments sent' "$OUT/daemon.err"
	grep -q 'push-parca: [0-9]* segments sent' "$OUT/daemon.err"
	[[ -s $STORE/push/pyroscope.cursor && -s $STORE/push/otlp.cursor ]]
	[[ -s $STORE/push/parca.cursor ]]
	run -2 "$JPROF" daemon --push-pyroscope "ftp://x"
	[[ $output == *"--push-pyroscope: 'ftp://x' is not an http:// or https:// address"* ]]
}
