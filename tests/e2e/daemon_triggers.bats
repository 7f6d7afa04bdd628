#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# daemon_triggers.bats: the daemon's automatic marks beside --mark-on-pause (daemon_ctl.bats):
# --mark-on-oom (a process the kernel OOM-kills under a memory cgroup's limit) and
# --mark-on-cpu (a process spinning on a core; 5% is the threshold: a host loaded by other
# builds and tests may give it a fifth of a core or less), each kept once as
# marks/<UTC>-KIND-PID-COMM.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_root_bpf
	OUT=$BATS_TEST_TMPDIR
	STORE=$OUT/store
	APP_PID= DPID= CG=
}

teardown() {
	if [[ -n ${DPID:-} ]]; then
		{ kill -9 "$DPID" && wait "$DPID"; } 2>/dev/null || true
	fi
	if [[ -n ${APP_PID:-} ]]; then
		{ kill "$APP_PID" && wait "$APP_PID"; } 2>/dev/null || true
	fi
	# the cgroup is empty once its process was killed: removed
	[[ -z ${CG:-} ]] || rmdir "$CG" 2>/dev/null || true
}

daemon_is_ready() {
	[[ -S $STORE/control.sock ]]
}

# memory_cgroup LIMIT_BYTES: a cgroup of ours with that memory limit and no swap, in $CG
# (cgroup v2's memory controller where it is enabled, else v1's memory hierarchy)
memory_cgroup() {
	local v2=/sys/fs/cgroup/unified
	[[ -f $v2/cgroup.controllers ]] || v2=/sys/fs/cgroup
	if grep -qw memory "$v2/cgroup.controllers" 2>/dev/null &&
		grep -qw memory "$v2/cgroup.subtree_control" 2>/dev/null; then
		CG=$v2/jprof-oomtest-$$
		mkdir "$CG"
		echo "$1" >"$CG/memory.max"
		[[ ! -f $CG/memory.swap.max ]] || echo 0 >"$CG/memory.swap.max"
	elif [[ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]]; then
		CG=/sys/fs/cgroup/memory/jprof-oomtest-$$
		mkdir "$CG"
		echo "$1" >"$CG/memory.limit_in_bytes"
		echo 0 >"$CG/memory.swappiness"
	else
		missing "a memory cgroup (v2 with the memory controller, or v1's memory hierarchy)"
	fi
}

@test "mark-on-oom: a process the kernel OOM-kills is kept as a mark" {
	"$APPS/hotab" 30 >/dev/null 3>&- &
	APP_PID=$!
	memory_cgroup $((32 << 20))
	start_daemon -p "$APP_PID" --interval 1 --mark-on-oom
	sleep 1.5
	# past its limit: the kernel's OOM killer ends it
	run -137 sh -c "echo \$\$ >'$CG/cgroup.procs' && exec python3 -c 'a = bytearray(256 << 20)'"
	local pid
	for ((i = 0; i < 50; i++)); do
		pid=$(grep -oE 'the OOM killer chose process [0-9]+' "$OUT/daemon.err" | grep -oE '[0-9]+$') && break
		sleep 0.1
	done
	[[ -n $pid ]]
	# the mark is made one interval after the kill
	sleep 2.5
	stop_daemon
	run -0 ls "$STORE/marks"
	echo "$output"
	[[ $output =~ ^[0-9]{8}T[0-9]{6}Z-oom-$pid-python3$ ]]
	(($(find "$STORE/marks/$output/segments" -name '*.pb.gz' | wc -l) >= 2))
	grep -q -- '--mark-on-oom: 1 marks made, 0 failed' "$OUT/daemon.err"
}

@test "mark-on-cpu: a process over the threshold for the seconds asked is kept as a mark, once" {
	"$APPS/hotab" 30 >/dev/null 3>&- &
	APP_PID=$!
	start_daemon -p "$APP_PID" --interval 1 --mark-on-cpu 5:2
	# looks once a second: followed from the second look, over it at the third and fourth,
	# the mark one interval later
	sleep 6
	stop_daemon
	run -0 ls "$STORE/marks"
	echo "$output"
	[[ $output =~ ^[0-9]{8}T[0-9]{6}Z-cpu-$APP_PID-hotab$ ]]
	grep -q "process $APP_PID (hotab) over 5% of a core for 2 s" "$OUT/daemon.err"
	grep -q -- '--mark-on-cpu: 1 marks made, 0 failed' "$OUT/daemon.err"
	run -2 "$JPROF" daemon --mark-on-cpu 50
	[[ $output == *"--mark-on-cpu: '50' is not PCT:SECONDS"* ]]
	run -2 "$JPROF" record -d 1 --mark-on-oom
	[[ $output == *"--mark-on-oom and --mark-on-cpu are daemon options"* ]]
}
