#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# containers.bats: per-container profiling from the host. There is no container engine here,
# so containers are built from kernel primitives: a cgroup v2 directory named like a
# containerd scope (JDK 17 inside) and one named like a docker scope (JDK 25 inside), each
# JVM in new pid and mount namespaces with a private tmpfs /tmp, run by its own unprivileged
# user; one more JVM and a native loop run on the host.
bats_require_minimum_version 1.5.0

load helpers

CT_SECS=240 # the workloads outlive every test of the file; teardown_file ends them
# (-Xmx64m: their allocations make a young GC about every second, for the pause band)

hex64() {
	od -An -N32 -tx1 /dev/urandom | tr -d ' \n'
}

# start_ct CGDIR JDK USER [JVM options]: a "container"; prints the host pid of its JVM
start_ct() {
	local cg=$1 home=$2 user=$3 uid gid u jp i=0
	shift 3
	uid=$(id -u "$user") gid=$(id -g "$user")
	# into the cgroup first, then new namespaces: everything below inherits the cgroup
	(
		echo "$BASHPID" >"$cg/cgroup.procs" || exit 1
		exec unshare --pid --fork --mount --mount-proc sh -c \
			'cd "$1" && mount -t tmpfs tmpfs /tmp && cp CtWork.class /tmp/ && cd /tmp &&
			 u=$2 g=$3 h=$4 s=$5 && shift 5 &&
			 exec setpriv --reuid="$u" --regid="$g" --clear-groups "$h/bin/java" "$@" \
				-Xmx64m -cp /tmp CtWork "$s" /tmp/ready' \
			sh "$APPS" "$uid" "$gid" "$home" "$CT_SECS" "$@"
	) >"$WORK/$user.log" 2>&1 3>&- &
	u=$!
	echo "$u" >>"$WORK/pids"
	while ((i++ < 200)); do
		jp=$(pgrep -P "$u" java || true)
		[[ -n $jp ]] && break
		sleep 0.1
	done
	[[ -n $jp ]] || { cat "$WORK/$user.log" >&2; return 1; }
	echo "$jp" >>"$WORK/pids"
	wait_file "/proc/$jp/root/tmp/ready" 60 || { cat "$WORK/$user.log" >&2; return 1; }
	echo "$jp"
}

setup_file() {
	[[ $EUID -eq 0 ]] || { missing "container tests need root (cgroups, namespaces)"; return; }
	[[ -r /sys/kernel/btf/vmlinux && -x $JPROF ]] || { missing "BTF or jprof (make)"; return; }
	[[ -f $APPS/CtWork.class ]] || { missing "test apps not built ($APPS/CtWork.class: make apps)"; return; }
	command -v unshare >/dev/null && command -v setpriv >/dev/null ||
		{ missing "unshare and setpriv (util-linux)"; return; }
	[[ -x $JDK17/bin/java && -x $JDK25/bin/java ]] || { missing "JDK 17 and 25 ($JDK17, $JDK25)"; return; }
	export CGMNT WORK ID_A ID_B CG_A CG_B PID_A PID_B PID_H PID_N
	CGMNT=$(awk '$4 == "/" { for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
	[[ -n $CGMNT ]] || { missing "a cgroup2 mount (mount -t cgroup2 none /sys/fs/cgroup/unified)"; return; }
	WORK=$(mktemp -d /tmp/jprof-ct.XXXXXX)
	: >"$WORK/pids"
	ID_A=$(hex64) ID_B=$(hex64)
	CG_A=$CGMNT/cri-containerd-$ID_A.scope
	CG_B=$CGMNT/docker-$ID_B.scope
	echo "$CG_A $CG_B" >"$WORK/cgroups"
	mkdir "$CG_A" "$CG_B"
	make_test_user jpt-ct1 >/dev/null
	make_test_user jpt-ct2 >/dev/null
	PID_A=$(start_ct "$CG_A" "$JDK17" jpt-ct1)
	PID_B=$(start_ct "$CG_B" "$JDK25" jpt-ct2)
	# the host: a JVM and a native loop, both busy while the containers are profiled
	"$JDK17/bin/java" -Xmx64m -cp "$APPS" CtWork "$CT_SECS" "$WORK/host-ready" >"$WORK/host.log" 2>&1 3>&- &
	PID_H=$!
	echo "$PID_H" >>"$WORK/pids"
	sh -c 'while :; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.02; done' 3>&- &
	PID_N=$!
	echo "$PID_N" >>"$WORK/pids"
	wait_file "$WORK/host-ready" 60
}

teardown_file() {
	local p cg
	[[ -n ${WORK:-} && -d $WORK ]] || return 0
	while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$WORK/pids"
	drop_test_user jpt-ct1
	drop_test_user jpt-ct2
	for cg in $(cat "$WORK/cgroups" 2>/dev/null) $(cat "$WORK/cgroups.extra" 2>/dev/null); do
		[[ -d $cg ]] || continue
		while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$cg/cgroup.procs"
		for ((i = 0; i < 50; i++)); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
	done
	rm -rf "$WORK"
}

setup() {
	OUT=$BATS_TEST_TMPDIR
}

# nothing of the host or of the other container, not even a native sample
only_pid() {
	local pid=$1 file=$2
	grep -Eq "^java \[$pid\][^;]*;" "$file"
	! grep -Ev "^java \[$pid\][^;]*;" "$file"
}

@test "containers: --cgroup (relative) profiles only the containerd one, Java frames across namespaces (JDK 17)" {
	run -0 "$JPROF" record -v --cgroup "cri-containerd-$ID_A.scope" --per-pid -d 4 -o "$OUT/a.folded"
	echo "$output"
	only_pid "$PID_A" "$OUT/a.folded"
	# the agent was attached into its pid+mount namespace, as its user
	(($(folded_sum ';CtWork\.burn' "$OUT/a.folded") > 0))
	[[ $output == *"cgroup filter: $CG_A (id "* ]]
	# the host's loop and JVM were sampled and dropped in the kernel, and counted
	[[ $output =~ jprof:\ ([0-9]+)\ CPU\ samples\ of\ other\ processes\ left\ out\ in\ the\ kernel\ \(--cgroup/--container\) ]]
	((BASH_REMATCH[1] > 0))
}

@test "containers: --container <prefix> profiles only the docker one with Java frames (JDK 25); absolute --cgroup too" {
	run -0 "$JPROF" record --container "${ID_B:0:10}" --per-pid -d 4 -o "$OUT/b.folded"
	echo "$output"
	only_pid "$PID_B" "$OUT/b.folded"
	(($(folded_sum ';CtWork\.burn' "$OUT/b.folded") > 0))
	run -0 "$JPROF" record --cgroup "$CG_B" --per-pid -d 2 -e cpu,offcpu --no-attach -o "$OUT/b2.folded"
	only_pid "$PID_B" "$OUT/b2.folded"
	# as /proc/PID/cgroup shows it
	run -0 "$JPROF" record --cgroup "/docker-$ID_B.scope" --per-pid -d 2 --no-attach -o "$OUT/b2.folded"
	only_pid "$PID_B" "$OUT/b2.folded"
}

@test "containers: --per-container groups two containers and the host in folded, HTML, pprof and JFR" {
	command -v go >/dev/null || { missing "go (Debian golang-go) for go tool pprof"; return; }
	run -0 "$JPROF" record -a --per-container --per-pid -d 8 -o "$OUT/all.folded" \
		-o "$OUT/all.html" -o "$OUT/all.pb.gz" -o "$OUT/all.jfr"
	echo "$output"
	local a=${ID_A:0:12} b=${ID_B:0:12}
	# each JVM under its own group, with Java frames, and nowhere else
	grep -Eq "^\[container $a\];java \[$PID_A\][^;]*;.*CtWork\.burn" "$OUT/all.folded"
	grep -Eq "^\[container $b\];java \[$PID_B\][^;]*;.*CtWork\.burn" "$OUT/all.folded"
	grep -Eq "^\[host\];java \[$PID_H\][^;]*;.*CtWork\.burn" "$OUT/all.folded"
	grep -Eq "^\[host\];sh \[$PID_N\];" "$OUT/all.folded"
	! grep -E "^\[container $a\];" "$OUT/all.folded" | grep -Ev "^\[container $a\];java \[$PID_A\][^;]*;"
	! grep -E "^\[container $b\];" "$OUT/all.folded" | grep -Ev "^\[container $b\];java \[$PID_B\][^;]*;"
	! grep -E "java \[($PID_A|$PID_B)\]" "$OUT/all.folded" | grep -E '^\[host\]'
	# every line has one of the three roots
	! grep -Ev '^\[(container [0-9a-f]{12}|host)\];' "$OUT/all.folded"
	# HTML: the same groups as root frames
	grep -qF "[container $a]" "$OUT/all.html"
	grep -qF "[container $b]" "$OUT/all.html"
	grep -qF "[host]" "$OUT/all.html"
	# pprof: a "container" label; each container's samples are its JVM's
	run -0 go tool pprof -tags "$OUT/all.pb.gz"
	[[ $output == *"container"* && $output == *"$a"* && $output == *"$b"* ]]
	# anchored: a bare id like 5848969dbbbb is read by pprof as a number range, not a regexp
	run -0 go tool pprof -tags -tagfocus="container=^$a" "$OUT/all.pb.gz"
	echo "$output"
	[[ $output == *"$PID_A"* && $output != *"$PID_B"* && $output != *"$PID_H"* ]]
	run -0 go tool pprof -tags -tagfocus="container=^$b" "$OUT/all.pb.gz"
	[[ $output == *"$PID_B"* && $output != *"$PID_A"* && $output != *"$PID_H"* ]]
	# JFR: jprof.ThreadInfo carries each thread's pid and container
	run -0 "$JDK17/bin/jfr" print --events jprof.ThreadInfo "$OUT/all.jfr"
	python3 -c '
import re, sys
want = {int(sys.argv[1]): sys.argv[2], int(sys.argv[3]): sys.argv[4], int(sys.argv[5]): ""}
seen = {}
for ev in sys.stdin.read().split("jprof.ThreadInfo")[1:]:
    pid = int(re.search(r"pid = (\d+)", ev).group(1))
    cont = re.search(r"container = \"([^\"]*)\"", ev)
    if pid in want:
        seen[pid] = cont.group(1) if cont else ""
assert seen == want, (seen, want)
' "$PID_A" "$a" "$PID_B" "$b" "$PID_H" <<<"$output"
	# report regroups a saved recording and filters by container
	run -0 "$JPROF" report "$OUT/all.pb.gz" --container "$ID_A" --per-container --per-pid -o "$OUT/r.folded"
	only_pid "$PID_A" <(sed "s/^\[container $a\];//" "$OUT/r.folded")
	! grep -Ev "^\[container $a\];" "$OUT/r.folded"
}

@test "containers: --per-container puts a containerised JVM's allocation events and GC band under its container" {
	run -0 "$JPROF" record -a --per-container --per-pid -e alloc -d 6 -o "$OUT/alloc.folded"
	echo "$output"
	local a=${ID_A:0:12} b=${ID_B:0:12}
	grep -Eq "^\[container $a\];java \[$PID_A\][^;]*;.*CtWork\.fill" "$OUT/alloc.folded"
	grep -Eq "^\[container $b\];java \[$PID_B\][^;]*;.*CtWork\.fill" "$OUT/alloc.folded"
	grep -Eq "^\[host\];java \[$PID_H\][^;]*;.*CtWork\.fill" "$OUT/alloc.folded"
	# before: the agents' events were labelled with no container, all under [host]
	! grep -E "java \[($PID_A|$PID_B)\]" "$OUT/alloc.folded" | grep -E '^\[host\]'
	# -e wall: each JVM's pause band ([GC pause], [safepoint]) under its own group too
	run -0 "$JPROF" record -p "$PID_A,$PID_H" -e wall --per-container --per-pid -d 4 \
		-o "$OUT/wall.folded"
	echo "$output"
	grep -E "^\[container $a\];java \[$PID_A\][^;]*;\[(GC pause|safepoint)\]" "$OUT/wall.folded"
	grep -E "^\[host\];java \[$PID_H\][^;]*;\[(GC pause|safepoint)\]" "$OUT/wall.folded"
	! grep -E "java \[$PID_A\][^;]*;\[(GC pause|safepoint)\]" "$OUT/wall.folded" | grep -E '^\[host\]'
	! grep -E "java \[$PID_H\][^;]*;\[(GC pause|safepoint)\]" "$OUT/wall.folded" | grep -Ev '^\[host\]'
}

# the pids of the processes under a group heading of the syscall table
sc_group_pids() {
	awk -v g="$1" '$0 == g { on = 1; next } /^\[/ { on = 0 }
		on && /^ [^ ].* \([0-9]+\), [0-9]+ calls/ { sub(/.*\(/, ""); sub(/\).*/, ""); print }'
}

@test "containers: --per-container groups the syscall table (text and JSON)" {
	local a=${ID_A:0:12} b=${ID_B:0:12}
	run -0 --separate-stderr "$JPROF" record -a --per-container -e syscalls --slow 0 -d 3
	echo "$output"
	[[ $(sc_group_pids "[container $a]" <<<"$output") == "$PID_A" ]]
	[[ $(sc_group_pids "[container $b]" <<<"$output") == "$PID_B" ]]
	sc_group_pids "[host]" <<<"$output" | grep -qx "$PID_H"
	! sc_group_pids "[host]" <<<"$output" | grep -Eqx "$PID_A|$PID_B"
	# the host comes last
	[[ $(grep -E '^\[' <<<"$output" | tail -1) == "[host]" ]]
	run -0 --separate-stderr "$JPROF" record -a --per-container -e syscalls --slow 0 -f json -d 2
	python3 -c '
import json, sys
d = json.load(sys.stdin)
c = {p["pid"]: p["container"] for p in d["processes"] if p["tid"] == 0}
assert c[int(sys.argv[2])] == sys.argv[3] and c[int(sys.argv[4])] == sys.argv[5], c
assert c[int(sys.argv[6])] == "", c
' "" "$PID_A" "$a" "$PID_B" "$b" "$PID_H" <<<"$output"
}

@test "containers: list shows each JVM's container; list --containers the containers with their JVMs" {
	run -0 "$JPROF" list
	echo "$output"
	grep -Eq "^$PID_A +1 +jpt-ct1 +17[^ ]* +[a-z-]+ +[a-z,!?-]+ +${ID_A:0:12} +CtWork" <<<"$output"
	grep -Eq "^$PID_B +1 +jpt-ct2 +25[^ ]* +[a-z-]+ +[a-z,!?-]+ +${ID_B:0:12} +CtWork" <<<"$output"
	grep -Eq "^$PID_H +$PID_H +root +.* - +CtWork" <<<"$output"
	run -0 "$JPROF" list --containers
	echo "$output"
	grep -Eq "^${ID_A:0:12} +container +1 +/cri-containerd-$ID_A\.scope$" <<<"$output"
	grep -Eq "^${ID_B:0:12} +container +1 +/docker-$ID_B\.scope$" <<<"$output"
	grep -Eq "JVM pid $PID_A \(nspid 1, user jpt-ct1" <<<"$output"
	grep -Eq "JVM pid $PID_B \(nspid 1, user jpt-ct2" <<<"$output"
	! grep -q "JVM pid $PID_H " <<<"$output"
}

@test "containers: clear errors: no such cgroup or container, ambiguous prefix, no cgroup v2" {
	run -3 "$JPROF" record --container "0000000000deadbeef" -d 1 -o /dev/null
	[[ $output == *"--container 0000000000deadbeef: no such container"* ]]
	run -3 "$JPROF" record --cgroup "jpt-ct-no-such.scope" -d 1 -o /dev/null
	[[ $output == *"--cgroup jpt-ct-no-such.scope: no such cgroup under $CGMNT"* ]]
	# two empty scopes whose ids share a prefix
	local p ix iy x y
	p=$(hex64 | cut -c1-20)
	ix=$p$(hex64 | cut -c1-44) iy=$p$(hex64 | cut -c1-44)
	x=$CGMNT/crio-$ix.scope y=$CGMNT/libpod-$iy.scope
	echo "$x $y" >>"$WORK/cgroups.extra"
	mkdir "$x" "$y"
	run -2 "$JPROF" record --container "$p" -d 1 -o /dev/null
	echo "$output"
	[[ $output == *"--container $p: ambiguous prefix; it matches "* ]]
	[[ $output == *"$ix"* && $output == *"$iy"* ]]
	rmdir "$x" "$y"
	# cgroup v2 unmounted in a private mount namespace only
	run -1 unshare --mount sh -c "umount '$CGMNT' && exec '$JPROF' record --cgroup / -d 1 -o /dev/null"
	echo "$output"
	[[ $output == *"--cgroup needs cgroup v2, which is not mounted: mount it, e.g. \`mount -t cgroup2"* ]]
}

@test "containers: a container whose JVM refuses attach gets Java frames read from its memory, with a line saying why" {
	local id cg pid
	id=$(hex64)
	cg=$CGMNT/docker-$id.scope
	echo "$cg" >>"$WORK/cgroups.extra"
	mkdir "$cg"
	pid=$(start_ct "$cg" "$JDK17" jpt-ct1 -XX:+DisableAttachMechanism)
	run -0 "$JPROF" record --container "${id:0:16}" --per-pid -d 3 -o "$OUT/n.folded"
	echo "$output"
	only_pid "$pid" "$OUT/n.folded"
	# no agent: BPF walks it (never a signal), the frames named from the JVM's memory
	grep -Eq "^java \[$pid\][^;]*;.*CtWork\.burn" "$OUT/n.folded"
	[[ $output == *"JVM $pid (CtWork): "*"attach mechanism disabled (-XX:+DisableAttachMechanism)"* ]]
	while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$cg/cgroup.procs"
}

# Issue 26: a user with a delegated subtree creates cgroups that look like containers, more
# than its owner's budget; the walk's budgets (65,536 directories, 4,096 per non-root owner)
# keep --container and list --containers working for root, in seconds, and say what they left
# out. 5,000 of them: the walk reads 4,096 of the user's directories and not the rest of its
# directory, whether it holds 5,000 or 66,000 (the issue's flood: 87 s of making and removing
# cgroups on a loaded host, where 5,000 take a few). Every cgroup made here is removed.
@test "containers: 5,000 cgroups of a user's delegated subtree: --container and list --containers still work, within the user's budget" {
	local deleg=$CGMNT/jpt-deleg.slice uid t0 t1 t2
	uid=$(id -u jpt-ct1)
	echo "$deleg" >>"$WORK/cgroups.extra"
	mkdir "$deleg"
	chown "$uid" "$deleg" "$deleg/cgroup.procs" "$deleg/cgroup.subtree_control" \
		"$deleg/cgroup.threads"
	local made=ok
	setpriv --reuid="$uid" --regid="$uid" --clear-groups /usr/bin/python3 - "$deleg" <<-'PY' || made=
	import hashlib, os, sys
	for i in range(5000):
	    os.mkdir(os.path.join(sys.argv[1], "docker-%s.scope" % hashlib.sha256(b"%d" % i).hexdigest()))
	PY
	[[ $made && $(find "$deleg" -mindepth 1 -maxdepth 1 -type d | wc -l) == 5000 ]] || made=
	t0=$(date +%s.%N)
	run "$JPROF" list --containers
	t1=$(date +%s.%N)
	local list_rc=$status list_out=$output
	run "$JPROF" record --container "${ID_A:0:12}" --per-pid -d 2 -o "$OUT/d.folded"
	t2=$(date +%s.%N)
	local rec_rc=$status rec_out=$output
	# every cgroup made here goes, whatever came of the test
	python3 - "$deleg" <<-'PY'
	import os, sys
	for e in os.scandir(sys.argv[1]):
	    if e.is_dir(follow_symlinks=False):
	        os.rmdir(e.path)
	os.rmdir(sys.argv[1])
	PY
	[[ ! -e $deleg ]]
	[[ $made ]] || { echo "the test user could not create 5,000 cgroups"; return 1; }
	echo "list --containers: exit $list_rc, $(echo "$t1 - $t0" | bc) s, $(wc -l <<<"$list_out") lines"
	echo "record --container: exit $rec_rc, $(echo "$t2 - $t1" | bc) s (2 s recording)"
	grep -v '^[0-9a-f]\{12\} \+container .*/jpt-deleg.slice/' <<<"$list_out" | head -20
	echo "$rec_out" | tail -5
	[[ $list_rc == 0 && $rec_rc == 0 ]]
	# the user's budget: some of its cgroups listed, at most 4,096, the rest said left out
	local listed
	listed=$(grep -c '/jpt-deleg\.slice/docker-[0-9a-f]\{64\}\.scope$' <<<"$list_out" || true)
	echo "the user's container cgroups listed: $listed of 5,000"
	((listed > 0 && listed <= 4096))
	local said="cgroup directories not looked at (budget: 65,536 in all, 4,096 per owner"
	[[ $list_out == *" $said of a delegated subtree)"* ]]
	grep -Eq "^${ID_A:0:12} +container +1 +/cri-containerd-$ID_A\.scope$" <<<"$list_out"
	grep -Eq "^${ID_B:0:12} +container +1 +/docker-$ID_B\.scope$" <<<"$list_out"
	grep -Eq "JVM pid $PID_A \(nspid 1, user jpt-ct1" <<<"$list_out"
	only_pid "$PID_A" "$OUT/d.folded"
	grep -Eq "^java \[$PID_A\][^;]*;.*CtWork\.burn" "$OUT/d.folded"
}
