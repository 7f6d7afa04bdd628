#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# untrusted.bats: root jprof against files an unprivileged user controls. Each test mounts
# one attack as a throwaway user (truncated library, FIFO swapped in, planted perf map,
# hostile ELF, hostile agent dictionary) and checks that jprof survives, opens nothing it
# must not, keeps the planted names out and stays under a memory bound.
# In CI (CI set) a missing prerequisite fails; outside CI a non-root run skips loudly.
bats_require_minimum_version 1.5.0

load helpers

U=jpt-untr1
# peak RSS bounds (KiB) jprof must stay under; measured peaks are in the report
RSS_SMALL_KB=$((300 * 1024))
RSS_BUDGET_KB=$((600 * 1024))

setup_file() {
	require_root_bpf || return
	for a in mapspin jitspin elfgen dictbomb openwatch; do
		[[ -x $APPS/$a ]] || { missing "test app $APPS/$a not built (make apps)"; return; }
	done
	[[ -x /usr/bin/time ]] || { missing "/usr/bin/time (Debian package time)"; return; }
	command -v setpriv >/dev/null || { missing "setpriv (util-linux)"; return; }
	make_test_user "$U" >/dev/null || return
}

teardown_file() {
	drop_test_user "$U"
}

setup() {
	attack_workdir jpt-untr
}

teardown() {
	attack_cleanup
}

# watch_opens PATH: records every real open of PATH's inode (fanotify; O_PATH is not one)
# in $W/opens as "<pid> <exe>"
watch_opens() {
	"$APPS/openwatch" "$1" >"$W/opens" 3>&- &
	PIDS+=($!)
	wait_file "$W/opens" 10
}

# no_open_by_jprof: this jprof binary never opened the watched file. Other jprofs on the
# machine (a shared CI host) may: only ours is judged.
no_open_by_jprof() {
	local exe
	exe=$(readlink -f "$JPROF")
	sleep 0.2
	cat "$W/opens"
	if awk -v e="$exe" '$2 == e { found = 1 } END { exit !found }' "$W/opens"; then return 1; fi
}

# jprof_rss ARGS...: jprof record ARGS under /usr/bin/time; sets status, output, RSS_KB
jprof_rss() {
	run /usr/bin/time -v -o "$W/time.txt" "$JPROF" record "$@"
	RSS_KB=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$W/time.txt")
	echo "# jprof $*: exit $status, peak RSS ${RSS_KB:-?} KiB" >&3
}

@test "untrusted: a library truncated over and over while jprof reads it: jprof survives" {
	# a 7 MiB ELF (300k symbols) that takes libelf a while to walk
	"$APPS/elfgen" "$W/orig.so" 300000 64
	cp "$W/orig.so" "$W/lib.so"
	chown "$U:$U" "$W/orig.so" "$W/lib.so"
	# a new process (pid) maps it every 150 ms: each one makes jprof read it again
	"${AS_USER[@]}" "$APPS/mapspin" "$W/lib.so" 30 150 >"$W/mapspin.out" 3>&- &
	PIDS+=($!)
	# ...while its owner empties and refills it (same inode, new size and mtime)
	"${AS_USER[@]}" bash -c "while :; do : >'$W/lib.so'; sleep 0.01; cat '$W/orig.so' >'$W/lib.so'; sleep 0.02; done" 3>&- &
	PIDS+=($!)
	wait_file "$W/mapspin.out" 10
	jprof_rss -a -e cpu,offcpu -d 5 -o "$W/out.folded"
	[[ $status -eq 0 ]] || { echo "$output"; return 1; }
	# the output was written, with the attacker's own process in it (on or off CPU: a loaded host may run it rarely)
	grep -Eq ';mapspin_burn[; ]' "$W/out.folded" || { grep mapspin "$W/out.folded"; return 1; }
	[[ $RSS_KB -lt $RSS_SMALL_KB ]]
}

@test "untrusted: a FIFO bind-mounted over a mapped library is never opened by root" {
	"${AS_USER[@]}" unshare -Urm true 2>/dev/null || { missing "unprivileged user namespaces (unshare -Urm)"; return; }
	"$APPS/elfgen" "$W/lib.so" 1000 16
	mkfifo "$W/fifo"
	chown "$U:$U" "$W/lib.so" "$W/fifo"
	watch_opens "$W/fifo"
	# in its own mount namespace the user maps the library, then puts the FIFO over its path
	"${AS_USER[@]}" unshare -Urm bash -c "'$APPS/mapspin' '$W/lib.so' 30 >'$W/mapspin.out' & echo \$! >'$W/mapspin.pid'; sleep 0.5;
		mount --bind '$W/fifo' '$W/lib.so' && echo bound >'$W/bound'; wait" 3>&- &
	PIDS+=($!)
	wait_file "$W/bound" 10
	PIDS+=($(cat "$W/mapspin.pid"))
	jprof_rss -a -e cpu,offcpu -d 3 -o "$W/out.folded"
	[[ $status -eq 0 ]] || { echo "$output"; return 1; }
	# its samples were read (the library is found through map_files instead)...
	grep -Eq ';mapspin_burn[; ]' "$W/out.folded"
	# ...and root never opened the FIFO
	no_open_by_jprof
}

@test "untrusted: a FIFO planted as a process's perf map is never opened by root" {
	"${AS_USER[@]}" "$APPS/jitspin" 30 >"$W/jit.out" 3>&- &
	PIDS+=($!)
	local jpid=$!
	wait_file "$W/jit.out" 10
	"${AS_USER[@]}" mkfifo "/tmp/perf-$jpid.map"
	TMPS+=("/tmp/perf-$jpid.map")
	watch_opens "/tmp/perf-$jpid.map"
	jprof_rss -p "$jpid" -F 997 -d 3 -o "$W/out.folded"
	[[ $status -eq 0 ]] || { echo "$output"; return 1; }
	[[ $(folded_total "$W/out.folded") -gt 0 ]]
	no_open_by_jprof
}

@test "untrusted: names planted in another user's perf map never reach its profile" {
	# root's own JIT-like process...
	"$APPS/jitspin" 30 >"$W/jit.out" 3>&- &
	PIDS+=($!)
	local jpid=$! start size
	wait_file "$W/jit.out" 10
	read -r _ start size <"$W/jit.out"
	TMPS+=("/tmp/perf-$jpid.map")
	# ...and a perf map for it written by the unprivileged user (a map an earlier process
	# with this pid left in /tmp would be in the way: sticky /tmp)
	rm -f "/tmp/perf-$jpid.map"
	"${AS_USER[@]}" bash -c "echo '$start $size PLANTED_BY_ATTACKER' >/tmp/perf-$jpid.map"
	jprof_rss -p "$jpid" -F 997 -d 3 -o "$W/planted.folded"
	[[ $status -eq 0 ]] || { echo "$output"; return 1; }
	[[ $(folded_total "$W/planted.folded") -gt 0 ]]
	# (a bare "! grep" would not fail a bats test)
	if grep PLANTED_BY_ATTACKER "$W/planted.folded"; then return 1; fi
	# the same map written by the process's own user is used: the test can see a name
	rm -f "/tmp/perf-$jpid.map"
	echo "$start $size jit_loop_of_root" >"/tmp/perf-$jpid.map"
	run -0 "$JPROF" record -p "$jpid" -F 997 -d 3 -o "$W/own.folded"
	grep -Eq 'jit_loop_of_root [0-9]+$' "$W/own.folded"
}

@test "untrusted: ELFs whose million symbols share one 1 MiB name keep jprof small" {
	# every symbol names the same string / a different suffix of it
	"$APPS/elfgen" "$W/same.so" 1000000 $((1024 * 1024 - 16))
	"$APPS/elfgen" "$W/suffix.so" 1000000 $((1024 * 1024 - 16)) suffix
	chown "$U:$U" "$W/same.so" "$W/suffix.so"
	"${AS_USER[@]}" "$APPS/mapspin" "$W/same.so" 30 >"$W/m1.out" 3>&- &
	PIDS+=($!)
	"${AS_USER[@]}" "$APPS/mapspin" "$W/suffix.so" 30 >"$W/m2.out" 3>&- &
	PIDS+=($!)
	wait_file "$W/m1.out" 10
	wait_file "$W/m2.out" 10
	jprof_rss -a -e cpu,offcpu -d 4 -o "$W/out.folded"
	[[ $status -eq 0 ]] || { echo "$output"; return 1; }
	grep -Eq ';mapspin_burn[; ]' "$W/out.folded"
	[[ $RSS_KB -lt $RSS_BUDGET_KB ]]
}

# dict_bomb JDK_HOME: a real JVM with the agent, whose user appends 48 MiB of class records
# (64 KiB names, 2.9 million methods) to its agent dictionary
dict_bomb() {
	local home=$1 jpid i ring
	require_jdk "$home" || return
	cp "$APPS"/JavaHot*.class "$W/"
	"${AS_USER[@]}" "$home/bin/java" -agentpath:"$JPROF_AGENT" -cp "$W" JavaHot split 20 \
		>"$W/jvm.out" 2>&1 3>&- &
	PIDS+=($!)
	jpid=$!
	TMPS+=("/tmp/perf-$jpid.map")
	wait_ready "$W/jvm.out" || { cat "$W/jvm.out"; return 1; }
	ring=$(chan_ring "$jpid")
	TMPS+=("$ring" "${ring%.ring}.dict")
	[[ -f ${ring%.ring}.dict ]]
	"${AS_USER[@]}" "$APPS/dictbomb" "${ring%.ring}.dict" 6
	jprof_rss -p "$jpid" -F 199 -d 5 -o "$W/out.folded"
	[[ $status -eq 0 ]] || { echo "$output"; return 1; }
	# the JVM's real methods, read before the bomb, still name its samples
	grep -Eq ';JavaHot\.spinA_' "$W/out.folded"
	[[ $RSS_KB -lt $RSS_BUDGET_KB ]]
}

# one JDK: the dictionary is the agent's own file, written alike on JDK 17 and 25, and the
# attack is on jprof's reading of it
@test "untrusted: a hostile agent dictionary keeps jprof under its budget (JDK 25)" {
	dict_bomb "$JDK25"
}
