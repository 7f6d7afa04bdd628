#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# measure-containers.sh: the cost of the in-kernel cgroup filter and the time to first sample
# and to Java stacks with 5 containerised JVMs (root; docs/DESIGN.md "Containers").
#   1. four jprof at once, -F 499: A no filter, B --cgroup / (every task passes the filter),
#      C -p 1 (all out by pid), D an empty cgroup (all out by cgroup); on_cpu_sample's
#      run_time_ns/run_cnt over the same 12 s (kernel.bpf_stats_enabled, restored after).
#   2. jprof -a, then 5 JVMs (JDK 17) each in its own cgroup, pid+mount namespace, tmpfs /tmp,
#      as a throwaway user: first sample, and when each JVM had Java stacks.
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
J=$REPO/build/jprof
APPS=$REPO/build/tests/apps
JDK=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
F=${F:-499}
MNT=$(awk '$4 == "/" { for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
[[ $EUID -eq 0 && -x $J && -f $APPS/CtWork.class && -n $MNT ]] ||
	{ echo "needs root, make, make apps and a cgroup2 mount" >&2; exit 1; }
TMP=$(mktemp -d)
CGS=()
KILL=()
OLD=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	local p cg
	for p in "${KILL[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	id -u jpt-ctm >/dev/null 2>&1 && { pkill -KILL -u jpt-ctm; sleep 0.5; userdel jpt-ctm; }
	for cg in "${CGS[@]}"; do rmdir "$cg" 2>/dev/null; done
	sysctl -q kernel.bpf_stats_enabled="$OLD"
	rm -rf "$TMP"
}
trap cleanup EXIT
hex64() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }

# the on_cpu_sample program of jprof process $1, through its fds (bpftool here lists no pids)
progof() {
	local fd id
	for fd in /proc/$1/fd/*; do
		[[ $(readlink "$fd") == anon_inode:bpf-prog ]] || continue
		id=$(awk '/^prog_id:/ { print $2 }' "/proc/$1/fdinfo/${fd##*/}")
		bpftool prog show id "$id" 2>/dev/null | grep -q ' name on_cpu_sample ' && { echo "$id"; return; }
	done
}

echo "== 1. BPF run time per sample, same run (-F $F)"
CGE=$MNT/docker-$(hex64).scope
mkdir "$CGE" && CGS+=("$CGE")
sysctl -q kernel.bpf_stats_enabled=1
"$J" record -a -F "$F" -d 22 --no-attach -o /dev/null 2>"$TMP/A" & A=$!; KILL+=($A); sleep 2
"$J" record -a -F "$F" -d 20 --no-attach --cgroup / -o /dev/null 2>"$TMP/B" & B=$!; KILL+=($B); sleep 2
"$J" record -F "$F" -d 18 --no-attach -p 1 -o /dev/null 2>"$TMP/C" & C=$!; KILL+=($C); sleep 2
"$J" record -a -F "$F" -d 16 --no-attach --cgroup "$CGE" -o /dev/null 2>"$TMP/D" & D=$!; KILL+=($D); sleep 2
IDS="$(progof $A) $(progof $B) $(progof $C) $(progof $D)"
bpftool prog show --json >"$TMP/p0"
sleep 12
bpftool prog show --json >"$TMP/p1"
wait $A $B $C $D
sysctl -q kernel.bpf_stats_enabled="$OLD"
python3 - "$TMP/p0" "$TMP/p1" $IDS <<'PY'
import json, sys
p0 = {p["id"]: p for p in json.load(open(sys.argv[1]))}
p1 = {p["id"]: p for p in json.load(open(sys.argv[2]))}
names = ("A no filter", "B --cgroup / (filter passes)", "C -p 1 (all filtered, pid)",
         "D empty cgroup (all filtered)")
for label, i in zip(names, sys.argv[3:]):
    i = int(i)
    rc = p1[i].get("run_cnt", 0) - p0[i].get("run_cnt", 0)
    rt = p1[i].get("run_time_ns", 0) - p0[i].get("run_time_ns", 0)
    print("%-32s runs %7d  avg %5.0f ns/run" % (label, rc, rt / rc if rc else 0))
PY

echo "== 2. 5 containerised JVMs started 0.5 s after jprof"
useradd --system --no-create-home --shell /usr/sbin/nologin --user-group jpt-ctm 2>/dev/null
U=$(id -u jpt-ctm) G=$(id -g jpt-ctm)
"$J" record -a --per-container -d 10 -o "$TMP/f.folded" 2>"$TMP/rec" & JP=$!; KILL+=($JP)
sleep 0.5
for i in 1 2 3 4 5; do
	cg=$MNT/cri-containerd-$(hex64).scope
	mkdir "$cg" && CGS+=("$cg")
	(
		echo "$BASHPID" >"$cg/cgroup.procs"
		exec unshare --pid --fork --mount --mount-proc sh -c \
			'cd "$1" && mount -t tmpfs tmpfs /tmp && cp CtWork.class /tmp/ && cd /tmp &&
			 exec setpriv --reuid="$2" --regid="$3" --clear-groups "$4/bin/java" -cp /tmp CtWork 30 /tmp/ready' \
			sh "$APPS" "$U" "$G" "$JDK"
	) >/dev/null 2>&1 3>&- &
	KILL+=($!)
done
wait $JP
grep -E "first sample|JVM [0-9]+ \(CtWork" "$TMP/rec"
echo "samples per root frame:"
cut -d';' -f1 "$TMP/f.folded" | sort | uniq -c
