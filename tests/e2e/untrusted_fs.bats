#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# untrusted_fs.bats: root jprof against names an unprivileged user plants in the filesystem
# and the cgroup tree: a JDK's release symlinked to a root-only file or swapped for a FIFO,
# a directory symlink on the -o path, an hsperfdata flood of fake JVMs under ulimit -n 1024,
# pid files of no process, cgroup names with terminal escapes. Each attack runs as a
# throwaway user; jprof must open nothing it must not, stay within its fds, say one line.
# In CI (CI set) a missing prerequisite fails; outside CI a non-root run skips loudly.
bats_require_minimum_version 1.5.0

load helpers

U=jpt-untrfs

setup_file() {
	require_root_bpf || return
	for a in fakejvm openwatch; do
		[[ -x $APPS/$a ]] || { missing "test app $APPS/$a not built (make apps)"; return; }
	done
	[[ -f $APPS/MathLoop.class ]] || { missing "MathLoop not built in $APPS (make apps)"; return; }
	require_jdk "$JDK17" || return
	command -v setpriv >/dev/null || { missing "setpriv (util-linux)"; return; }
	make_test_user "$U" >/dev/null || return
}

teardown_file() {
	drop_test_user "$U"
}

setup() {
	attack_workdir jpt-untrfs
	CGS=()
}

teardown() {
	local p
	attack_cleanup
	pkill -KILL -u "$U" 2>/dev/null || true
	for p in "${CGS[@]}"; do
		[[ -f $p/cgroup.procs ]] && { xargs -r kill -9 <"$p/cgroup.procs" 2>/dev/null || true; }
		[[ -d $p ]] && { sleep 0.2; find "$p" -depth -type d -exec rmdir {} + 2>/dev/null || true; }
		rmdir "$p" 2>/dev/null || true
	done
	rm -rf "/tmp/hsperfdata_$U"
}

# watch_opens PATH: every real open of PATH's inode (fanotify) in $W/opens as "<pid> <exe>"
watch_opens() {
	"$APPS/openwatch" "$1" >"$W/opens" 3>&- &
	PIDS+=($!)
	wait_file "$W/opens" 10
}

no_open_by_jprof() {
	local exe
	exe=$(readlink -f "$JPROF")
	sleep 0.2
	cat "$W/opens"
	if awk -v e="$exe" '$2 == e { found = 1 } END { exit !found }' "$W/opens"; then return 1; fi
}

@test "untrusted fs: a fake JDK's release symlinked to a root-only file or a FIFO is never opened" {
	local secret=$W/secret
	# the fake JDK: a file named libjvm.so in the user's tree, mapped by a fake JVM
	"${AS_USER[@]}" mkdir -p "$W/jdk/lib/server"
	"${AS_USER[@]}" truncate -s 8192 "$W/jdk/lib/server/libjvm.so"
	printf 'JAVA_VERSION="SECRET_ROOT_ONLY"\n' >"$secret"
	chmod 600 "$secret"
	"${AS_USER[@]}" ln -s "$secret" "$W/jdk/release"
	watch_opens "$secret"
	"${AS_USER[@]}" "$APPS/fakejvm" "$W/jdk/lib/server/libjvm.so" 1 0 1 0 >"$W/fake.out" 3>&- &
	PIDS+=($!)
	wait_ready "$W/fake.out"
	run -0 "$JPROF" list
	echo "$output"
	[[ $output != *SECRET_ROOT_ONLY* ]]
	no_open_by_jprof
	# a FIFO in its place: a plain open would block jprof for good
	"${AS_USER[@]}" rm "$W/jdk/release"
	"${AS_USER[@]}" mkfifo "$W/jdk/release"
	run -0 timeout 20 "$JPROF" list
	[[ $output == *fakejvm* || $output == *"?"* ]]
}

@test "untrusted fs: -o below another user's directory symlink in /tmp: refused, one line, exit 4" {
	mkdir "$W/victim"
	# /tmp is sticky and world-writable: the link is the user's, its target root's
	"${AS_USER[@]}" ln -s "$W/victim" "/tmp/jpt-untrfs-link.$$"
	run -4 "$JPROF" record -a -d 1 -o "/tmp/jpt-untrfs-link.$$/x.folded"
	rm -f "/tmp/jpt-untrfs-link.$$"
	echo "$output"
	[[ $(grep -c . <<<"$output") -eq 1 ]]
	[[ $output == *"/tmp/jpt-untrfs-link.$$ is a symbolic link owned by another user"* ]]
	[[ -z $(ls -A "$W/victim") ]]
}

@test "untrusted fs: 1,100 fake JVMs under ulimit -n 1024: fds follow live JVMs, a real JVM still gets Java stacks" {
	local jp fds peak=0 after i
	"${AS_USER[@]}" truncate -s 8192 "$W/libjvm.so"
	(ulimit -n 1024 && exec "$JPROF" record -a -d 30 -o "$W/out.folded") 2>"$W/err" 3>&- &
	jp=$!
	PIDS+=($jp)
	for ((i = 0; i < 100; i++)); do grep -q recording "$W/err" && break; sleep 0.1; done
	# JVMs of 300 ms, 30 at once, each leaving its hsperfdata file as a killed JVM does
	"${AS_USER[@]}" "$APPS/fakejvm" "$W/libjvm.so" 1100 300 30 0 >"$W/fake.out" 3>&- &
	PIDS+=($!)
	while kill -0 "${PIDS[-1]}" 2>/dev/null; do
		fds=$(ls "/proc/$jp/fd" | wc -l)
		((fds > peak)) && peak=$fds
		sleep 1
	done
	sleep 3
	after=$(ls "/proc/$jp/fd" | wc -l)
	echo "# fds of jprof: peak $peak during the flood, $after after it" >&3
	# a real JVM started after the flood is walked and attached; the recording ends (SIGTERM)
	# after 6 s of it (-d 30 is the bound)
	"$JDK17/bin/java" -cp "$APPS" MathLoop 10 >"$W/java.out" 2>&1 3>&- &
	PIDS+=($!)
	sleep 6
	kill -TERM "$jp"
	wait "$jp"
	grep -E 'descriptor|pauses:' "$W/err" || true
	[[ $after -lt 200 ]]
	[[ $peak -lt 900 ]]
	grep -Eq ';MathLoop\.kernel' "$W/out.folded"
}

@test "untrusted fs: pid files of no process in a user's hsperfdata directory add no JVM line" {
	"${AS_USER[@]}" truncate -s 8192 "$W/libjvm.so"
	local jp i
	"$JPROF" record -a -d 6 -o "$W/out.folded" 2>"$W/err" 3>&- &
	jp=$!
	PIDS+=($jp)
	for ((i = 0; i < 100; i++)); do grep -q recording "$W/err" && break; sleep 0.1; done
	# 20,000 names of pids that do not run (beyond pid_max), while root records
	"${AS_USER[@]}" "$APPS/fakejvm" "$W/libjvm.so" 0 0 1 0 20000 >"$W/fake.out" 3>&-
	[[ $(ls "/tmp/hsperfdata_$U" | wc -l) -eq 20000 ]]
	wait "$jp"
	echo "# phantom JVM lines: $(grep -Ec 'JVM 3[0-9]{6}' "$W/err")" >&3
	[[ $(grep -Ec 'JVM 3[0-9]{6}' "$W/err") -eq 0 ]]
}

@test "untrusted fs: cgroup names with terminal escapes are printed escaped by list --containers" {
	local mnt esc d id=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
	mnt=$(awk '$4 == "/" { for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
	[[ -n $mnt ]] || { missing "a cgroup2 mount"; return; }
	# a subtree delegated to the user, who names a cgroup with escapes and a container below it
	d=$mnt/jpt-untrfs.$$
	mkdir "$d" || { missing "cannot create cgroups under $mnt"; return; }
	chown "$U" "$d"
	esc=$'x\e[2J\e]0;pwned\a'
	CGS=("$d/$esc/docker-$id.scope" "$d/$esc" "$d")
	"${AS_USER[@]}" mkdir "$d/$esc" "$d/$esc/docker-$id.scope"
	run -0 "$JPROF" list --containers
	echo "$output" | cat -v
	[[ $output == *"docker-$id.scope"* ]]
	[[ $output != *$'\e'* && $output != *$'\a'* ]]
	[[ $output == *'x\x1b[2J'* ]]
	# the user's cgroup named after a container is told apart from a real one
	[[ $output == *"fedcba987654~u$(id -u "$U")"* ]]
}
