#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# attach_safety.bats: attaches run as the JVM's user in helpers, in the background: a JVM that
# stalls the attach delays no one, and a user who swaps symlinks or mounts under the JVM's /tmp
# never gets root to write a file outside that user's own.
bats_require_minimum_version 1.5.0

load helpers

: "${ATTACH_TEST_DIR_ABS:=$(dirname "$JPROF")/tests/attach}"
T=$ATTACH_TEST_DIR_ABS
DRIVER=$T/attach_test
MARKER_AGENT=$T/marker_agent.so
TUSER=jpt-att-safety

setup_file() {
	[[ $EUID -eq 0 ]] || return 0
	export WORK TUID TGID
	WORK=$(mktemp -d /tmp/jprof-attsafe.XXXXXX)
	chmod 0755 "$WORK"
	TUID=$(make_test_user "$TUSER") || return 1
	TGID=$(id -g "$TUSER")
	# the JVMs' cwd: the user's own directory, where HotSpot looks for the trigger first
	mkdir -m 0755 "$WORK/home" "$WORK/cp"
	chown "$TUID:$TGID" "$WORK/home"
	cp "$T"/*.class "$WORK/cp/" 2>/dev/null || true
	chmod 0644 "$WORK/cp/"* 2>/dev/null || true
}

teardown_file() {
	[[ $EUID -eq 0 ]] || return 0
	drop_test_user "$TUSER"
	rm -rf "$WORK"
	# agent copies the helpers made as the test user, unless a process still maps one
	local f
	for f in /tmp/jprof-agent-*-"$TUID".so /tmp/jprof-agent-*-"$TUID".so.*.tmp \
		/var/tmp/jprof-agent-*-"$TUID".so /var/tmp/jprof-agent-*-"$TUID".so.*.tmp; do
		[[ -e $f ]] || continue
		grep -qsF "$f" /proc/[0-9]*/maps || rm -f "$f"
	done
}

setup() {
	[[ $EUID -eq 0 ]] || { missing "attach safety tests need root"; return; }
	require_root_bpf
	[[ -x $DRIVER && -x $T/fake_jvm && -f $T/fakejdk/lib/server/libjvm.so && -f $WORK/cp/Busy.class ]] ||
		{ missing "attach test programs not built in $T (make attach-test)"; return; }
	command -v setpriv >/dev/null || { missing "setpriv (util-linux)"; return; }
	require_jdk "$JDK17"
	PIDS=()
	N=$BATS_TEST_NUMBER
	OUT=$BATS_TEST_TMPDIR
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
		# what our JVMs and their agents leave in /tmp when killed
		rm -f "/tmp/.java_pid$p" "/tmp/.attach_pid$p" "/tmp/jprof-$p-"*.ring "/tmp/jprof-$p-"*.dict \
			"/tmp/perf-$p.map"
	done
}

# as_user CMD...: runs CMD in the background as the test user, cwd its home; sets LASTPID
as_user() {
	(cd "$WORK/home" && exec setpriv --reuid="$TUID" --regid="$TGID" --init-groups "$@") \
		>"$WORK/out.$N.${#PIDS[@]}" 2>&1 3>&- &
	LASTPID=$!
	PIDS+=("$LASTPID")
}

# start_busy [JDK_HOME]: a real JVM of the test user with two threads in Busy.spin; sets BUSY
start_busy() {
	local home=${1:-$JDK17} ready=$WORK/home/busy.$N.${#PIDS[@]}.ready
	as_user "$home/bin/java" -cp "$WORK/cp" Busy 2 "$ready"
	BUSY=$LASTPID
	wait_file "$ready" 60 || { cat "$WORK/out.$N."*; return 1; }
}

# start_fake: a process of the test user that looks like a JVM, catches SIGQUIT, never answers
start_fake() {
	local ready=$WORK/home/fake.$N.${#PIDS[@]}.ready
	as_user "$T/fake_jvm" "$T/fakejdk/lib/server/libjvm.so" "$ready"
	FAKES+=("$LASTPID")
	wait_file "$ready" 10
	grep -q '/lib/server/libjvm.so' "/proc/$LASTPID/maps"
}

@test "attach safety: stalling fake JVMs delay no sample, a real JVM next to them gets Java frames" {
	FAKES=()
	start_fake
	start_fake
	start_fake
	start_busy
	run -0 "$DRIVER" --probe "${FAKES[0]}"
	[[ $output == *"uid=$TUID "* ]] # discovery takes the fake for a JVM of the test user
	# -p, not -a: only our processes, whatever else runs on the host meanwhile
	local list
	list=$(IFS=,; echo "${FAKES[*]},$BUSY")
	run -0 "$JPROF" record -v -p "$list" -d 6 -o "$OUT/all.folded"
	echo "$output"
	# jprof's own measure: the first sample comes within 1 s of sampling's start, and sampling
	# starts before any attach (what precedes it is loading BPF, the same with or without JVMs)
	local line first from
	line=$(grep -E '^jprof: first sample [0-9]+ ms after start \(sampling from [0-9]+ ms\)' <<<"$output")
	first=$(sed -E 's/.*first sample ([0-9]+) ms.*/\1/' <<<"$line")
	from=$(sed -E 's/.*sampling from ([0-9]+) ms.*/\1/' <<<"$line")
	echo "first sample at $first ms, sampling from $from ms"
	((first - from < 1000))
	((from < 5000))
	# the fakes were asked (SIGQUIT, sent only because they catch it) and never answered: each
	# one is reported, still being retried, and not one of them held up the others
	local f i
	for f in "${FAKES[@]}"; do
		[[ $output == *"JVM $f ("*"): no Java stacks by the end ("*"), still trying after "* ]]
		kill -0 "$f"
	done
	for i in 0 1 2; do grep -q '^SIGQUIT' "$WORK/out.$N.$i"; done
	# the real JVM, started alongside, was attached and its samples have Java frames
	[[ $output == *"JVM $BUSY (Busy): Java stacks from "*"agent attached"* ]]
	grep -Eq '^java;.*Busy\.spin' "$OUT/all.folded"
	kill -0 "$BUSY"
}

@test "attach safety: the helper is the JVM's user with no capabilities; the copy is that user's (JDK 17, 25)" {
	local home copy
	for home in "$JDK17" "$JDK25"; do
		[[ -x $home/bin/java ]] || { require_jdk "$home"; return; }
		start_busy "$home"
		run -0 "$JPROF" record -v -p "$BUSY" -d 2 -o "$OUT/p.folded"
		echo "$output" | grep -v libbpf
		[[ $output == *"helper "*" runs as uid $TUID gid $TGID with 1 groups, CapEff 0, in the JVM's mount namespace"* ]]
		[[ $output == *"JVM $BUSY (Busy): Java stacks from "*"agent attached"* ]]
		copy=$(grep -o "/tmp/jprof-agent-[0-9a-f]*-$TUID\\.so" "/proc/$BUSY/maps" | head -1)
		[[ -n $copy ]]
		[[ $(stat -c '%u %g %a' "$copy") == "$TUID $TGID 644" ]]
		grep -Eq '^java;.*Busy\.spin' "$OUT/p.folded"
	done
}

@test "attach safety: symlinks planted in the JVM's /tmp and cwd never make root write through them" {
	local watched=$WORK/watched sum copy_name
	printf 'root owns this\n' >"$watched"
	chmod 0644 "$watched"
	sum=$(stat -c '%s %Y %i %u' "$watched"; sha256sum <"$watched")
	# the agent copy's name is content- and uid-derived: learn it from a first JVM of the user
	start_busy
	"$DRIVER" "$BUSY" "$JPROF_AGENT" >/dev/null
	copy_name=$(grep -o "/tmp/jprof-agent-[0-9a-f]*-$TUID\\.so" "/proc/$BUSY/maps" | head -1)
	[[ -n $copy_name ]]
	kill -9 "$BUSY"
	wait "$BUSY" 2>/dev/null || true
	rm -f "$copy_name"
	# the next JVM of the user; before the attach the user plants symlinks to the watched file
	# under every name the attach creates or opens: agent copy, socket, trigger in cwd and /tmp
	start_busy
	local ns
	ns=$(awk '/^NSpid:/ { print $NF }' "/proc/$BUSY/status")
	setpriv --reuid="$TUID" --regid="$TGID" --init-groups sh -c '
		ln -s "$1" "$2" && ln -s "$1" "/tmp/.java_pid$3" && ln -s "$1" "/tmp/.attach_pid$3" &&
		ln -s "$1" "$4/.attach_pid$3"' sh "$watched" "$copy_name" "$ns" "$WORK/home"
	[[ -L $copy_name && -L /tmp/.java_pid$ns && -L $WORK/home/.attach_pid$ns ]]
	run -0 "$JPROF" record -v -p "$BUSY" -d 3 -o "$OUT/s.folded"
	echo "$output"
	[[ $(stat -c '%s %Y %i %u' "$watched"; sha256sum <"$watched") == "$sum" ]]
	# attached cleanly all the same: HotSpot replaced its socket path, the copy got a new name
	[[ $output == *"JVM $BUSY (Busy): Java stacks from "* ]]
	grep -Eq '^java;.*Busy\.spin' "$OUT/s.folded"
	rm -f "$copy_name" "$WORK/home/.attach_pid$ns"
}

@test "attach safety: a root-owned directory mounted over the JVM's /tmp gets no file from root" {
	[[ $(sysctl -n user.max_user_namespaces 2>/dev/null || echo 0) -gt 0 ]] ||
		{ missing "unprivileged user namespaces (user.max_user_namespaces)"; return; }
	command -v unshare >/dev/null || { missing "unshare (util-linux)"; return; }
	# a root-owned directory the user may read but not write; its listing must not change
	# (its own entries: "..", $WORK, changes when the JVM's log is created there)
	local rootdir=$WORK/rootdir before after
	mkdir -m 0755 "$rootdir"
	printf 'x\n' >"$rootdir/keep"
	before=$(ls -la --time-style=+%s "$rootdir" | grep -v ' \.\.$'; sha256sum "$rootdir/keep")
	# the user, in its own user + mount namespace, binds that directory over /tmp, then runs a JVM
	# (the mount hides $WORK below /tmp: class and ready file go through the cwd, which stays
	# reachable as /proc/self/cwd while its path does not)
	local ready=$WORK/home/mnt.$N.ready
	cp "$WORK/cp/Busy.class" "$WORK/home/"
	(cd "$WORK/home" && exec setpriv --reuid="$TUID" --regid="$TGID" --init-groups \
		unshare --user --map-root-user --mount sh -c \
		'mount --bind "$1" /tmp && shift && exec "$@"' sh "$rootdir" \
		"$JDK17/bin/java" -XX:-UsePerfData -cp /proc/self/cwd Busy 2 "/proc/self/cwd/mnt.$N.ready") \
		>"$WORK/mnt.$N.log" 2>&1 3>&- &
	PIDS+=("$!")
	local jpid="" i
	for ((i = 0; i < 300; i++)); do
		jpid=$(pgrep -u "$TUID" -f "Busy 2 /proc/self/cwd/mnt.$N.ready" | head -1 || true)
		[[ -n $jpid && -s $ready ]] && break
		sleep 0.1
	done
	[[ -n $jpid ]] || { cat "$WORK/mnt.$N.log"; return 1; }
	PIDS+=("$jpid")
	# the attack is in place: the JVM's /tmp is the root-owned directory
	[[ $(stat -c %i "/proc/$jpid/root/tmp") == $(stat -c %i "$rootdir") ]]
	run -0 "$JPROF" record -v -p "$jpid" -d 3 -o "$OUT/m.folded"
	echo "$output"
	after=$(ls -la --time-style=+%s "$rootdir" | grep -v ' \.\.$'; sha256sum "$rootdir/keep")
	[[ $after == "$before" ]] || { echo "before: $before"; echo "after: $after"; return 1; }
	# attach fails cleanly (the JVM itself cannot create its socket there) and says why
	[[ $output == *"JVM $jpid (Busy): "* ]]
	kill -0 "$jpid"
}

# ring_file PATH START_NS: a ring header (version 4) of START_NS with an empty 64 KiB data area
ring_file() {
	python3 - "$1" "$2" <<-'PY'
	import struct, sys
	hdr = struct.pack("<IHHIIiIII", 0x4a505247, 4, 4096, 65536, 1, 0, 2048, 0, 0) + struct.pack("<Q", int(sys.argv[2]))
	open(sys.argv[1], "wb").write(hdr + b"\0" * (4096 + 65536 - len(hdr)))
	PY
}

# Issue 26: the agent's channel names carry a random token and jprof finds them in the JVM's
# maps, so files another user creates for the JVM's pid (the names of before, or made-up
# tokens) neither stop its agent nor are opened, used or removed by root. A channel of the
# JVM's own user that began before the JVM did (a killed JVM of that pid left it) is removed.
@test "attach safety: channel files another user squats for the JVM's pid are neither used nor touched" {
	local squatter=jpt-att-squat suid f t before after ring
	suid=$(make_test_user "$squatter")
	start_busy
	local -a sq=("/tmp/jprof-$BUSY.ring" "/tmp/jprof-$BUSY.dict")
	for t in 0123456789abcdef fedcba9876543210 00000000deadbeef; do
		sq+=("/tmp/jprof-$BUSY-$t.ring" "/tmp/jprof-$BUSY-$t.dict")
	done
	rm -f "${sq[@]}" # what earlier runs left
	for f in "${sq[@]}"; do
		if [[ $f == *.ring ]]; then
			setpriv --reuid="$suid" --regid="$suid" --clear-groups bash -c "$(declare -f ring_file); ring_file $f 1"
		else
			setpriv --reuid="$suid" --regid="$suid" --clear-groups sh -c "printf squat >$f"
		fi
	done
	setpriv --reuid="$suid" --regid="$suid" --clear-groups chmod 0666 "${sq[@]}"
	# what a killed JVM of this pid and user left: a ring that began at boot, and its dictionary
	local stale=/tmp/jprof-$BUSY-5555555555555555
	setpriv --reuid="$TUID" --regid="$TGID" --clear-groups bash -c "$(declare -f ring_file); ring_file $stale.ring 1; printf stale >$stale.dict"
	before=$(stat -c '%n %u %a %s %Y %i' "${sq[@]}"; sha256sum "${sq[@]}")
	run -0 "$JPROF" record -v -p "$BUSY" -d 3 -o "$OUT/p.folded"
	after=$(stat -c '%n %u %a %s %Y %i' "${sq[@]}"; sha256sum "${sq[@]}")
	rm -f "${sq[@]}" "$stale.ring" "$stale.dict"
	drop_test_user "$squatter"
	echo "$output" | grep -v libbpf | grep -E "attach|JVM $BUSY"
	[[ $after == "$before" ]] || { echo "before: $before"; echo "after: $after"; return 1; }
	[[ $output == *"removed 2 agent files an earlier process of its pid left in its /tmp"* ]]
	[[ ! -e $stale.ring && ! -e $stale.dict ]]
	[[ $output == *"JVM $BUSY (Busy): Java stacks from "*"agent attached"* ]]
	grep -Eq '^java;.*Busy\.spin' "$OUT/p.folded"
	# the channel is the JVM's own agent's: its user's, readable by it (and root) only
	ring=$(chan_ring "$BUSY")
	[[ $ring =~ ^/tmp/jprof-$BUSY-[0-9a-f]{16}\.ring$ ]]
	[[ $(stat -c '%u %a' "$ring" "${ring%.ring}.dict") == "$TUID 600"$'\n'"$TUID 600" ]]
	# a second recording keeps it
	run -0 "$JPROF" record -v -p "$BUSY" -d 2 -o "$OUT/q.folded"
	[[ $output != *"removed"*"agent file"* ]]
	[[ $(chan_ring "$BUSY") == "$ring" ]]
	grep -Eq '^java;.*Busy\.spin' "$OUT/q.folded"
}

# An agent that cannot start says why in jprof's report, not only in the JVM's stderr
@test "attach safety: an agent that cannot create its files says why in jprof's report" {
	# files of at most 1 MiB: the agent's ring (4 MiB) cannot be allocated (EFBIG; HotSpot
	# ignores SIGXFSZ), the JVM's own 32 KiB hsperfdata can
	local ready=$WORK/home/busy.$N.fsize.ready
	as_user prlimit --fsize=1048576 -- "$JDK17/bin/java" -cp "$WORK/cp" Busy 2 "$ready"
	BUSY=$LASTPID
	wait_file "$ready" 60 || { cat "$WORK/out.$N."*; return 1; }
	run -0 "$JPROF" record -v -p "$BUSY" -d 2 -o "$OUT/p.folded"
	echo "$output" | grep -E "JVM $BUSY"
	[[ $output == *"JVM $BUSY (Busy): no Java stacks"*"the agent could not create its files jprof-PID-TOKEN.ring/.dict in the JVM's /tmp: File too large)"* ]] ||
		{ cat "$WORK/out.$N."*; return 1; }
	grep -Eq '^java;' "$OUT/p.folded" # still profiled, with native frames
	kill -0 "$BUSY"
	! compgen -G "/tmp/jprof-$BUSY-*.ring"
}
