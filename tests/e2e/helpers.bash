# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# helpers.bash: shared by the e2e tests. In CI (CI set) a missing prerequisite FAILS;
# outside CI a non-root developer run skips, loudly.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
: "${JPROF:=$REPO/build/jprof}"
: "${JPROF_AGENT:=$REPO/build/libjprofagent.so}"
: "${APPS:=$REPO/build/tests/apps}"
JDK17=/usr/lib/jvm/java-17-openjdk-amd64
JDK25=/usr/lib/jvm/temurin-25-jdk-amd64

# missing WHAT: fail in CI, skip loudly elsewhere
missing() {
	if [[ -n "${CI:-}" ]]; then
		echo "e2e prerequisite missing: $*" >&2
		return 1
	fi
	echo "# SKIPPING (not in CI): $*" >&3
	skip "$*"
}

# shellcheck source=tests/e2e/leftovers.bash
source "$BATS_TEST_DIRNAME/leftovers.bash"

require_root_bpf() {
	[[ $EUID -eq 0 ]] || { missing "needs root to load BPF"; return; }
	[[ -r /sys/kernel/btf/vmlinux ]] || { missing "no kernel BTF (/sys/kernel/btf/vmlinux)"; return; }
	[[ -x $JPROF ]] || { missing "jprof not built at $JPROF (run make)"; return; }
	# an earlier test's killed JVM of a pid that comes round again must not block this one's
	remove_jvm_leftovers >/dev/null
}

require_jdk() {
	local home=$1
	[[ -x $home/bin/java ]] || missing "JDK missing: $home/bin/java"
}

# sum of the counts of folded lines matching an extended regex
folded_sum() {
	local re=$1 file=$2
	grep -E -- "$re" "$file" | awk '{ s += $NF } END { printf "%.0f\n", s }'
}

folded_total() {
	awk '{ s += $NF } END { printf "%.0f\n", s }' "$1"
}

# folded_top FILE: the leaf function with the most self weight, without its kind suffix, after
# its weight. A folded line is "frame;frame;... COUNT" and frames may hold spaces ("[no Java
# stack: ...]"), so the stack is the line without its last field, not the first field.
folded_top() {
	awk '{ st = $0; sub(/ [0-9.]+$/, "", st); n = split(st, f, ";"); leaf = f[n]
	       sub(/_\[[kji0]\]$/, "", leaf); s[leaf] += $NF }
	     END { for (k in s) if (s[k] > best) { best = s[k]; top = k }; printf "%.0f %s\n", best, top }' "$1"
}

# wait until the file exists and is non-empty (max $2 s)
wait_file() {
	local f=$1 t=${2:-20}
	for ((i = 0; i < t * 10; i++)); do
		[[ -s $f ]] && return 0
		sleep 0.1
	done
	return 1
}

# wait_line FILE REGEX [SECS]: until FILE has a line matching REGEX (max SECS, 20)
wait_line() {
	local f=$1 re=$2 t=${3:-20} i
	for ((i = 0; i < t * 10; i++)); do
		grep -Eq "$re" "$f" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "no \"$re\" in $f after $t s" >&2
	return 1
}

# wait_ready FILE [SECS]: until a program's output FILE has its "ready" line (max SECS, 20)
wait_ready() {
	wait_line "$1" ready "${2:-20}"
}

# make_test_user NAME: creates a throwaway unprivileged system user (no home, no login) and
# prints its uid. Each test file uses its own NAME so parallel files never collide; pair it
# with drop_test_user NAME in teardown, which also ends every process the user still has.
make_test_user() {
	local name=$1
	id -u "$name" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin \
		--user-group "$name" >/dev/null 2>&1 || { missing "useradd could not create $name"; return; }
	id -u "$name"
}

drop_test_user() {
	local name=$1
	id -u "$name" >/dev/null 2>&1 || return 0
	pkill -KILL -u "$name" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do pgrep -u "$name" >/dev/null || break; sleep 0.1; done
	# what its killed JVMs left in /tmp (hsperfdata_NAME, attach and agent files) goes too:
	# owned by a uid that is gone after userdel, it would stay for good
	find /tmp -maxdepth 1 -user "$name" -exec rm -rf -- {} + 2>/dev/null || true
	userdel "$name" >/dev/null 2>&1 || true
}

# teardown of the tests that start one JVM in the background and keep its pid in JPID
kill_jpid() {
	if [[ -n ${JPID:-} ]]; then
		{ kill -9 "$JPID" && wait "$JPID"; } 2>/dev/null || true
		# a killed JVM leaves its attach socket and agent files in /tmp; the suite wraps the
		# pid space (thread churn), and a later JVM of the same pid and another user could not
		# create its own attach socket over a root-owned one: it would never answer an attach
		rm -f "/tmp/.java_pid$JPID" "/tmp/.attach_pid$JPID" "/tmp/jprof-$JPID-"*.ring \
			"/tmp/jprof-$JPID-"*.dict "/tmp/perf-$JPID.map"
	fi
}

# start_daemon ARGS...: `jprof daemon --store $STORE -F 99 ARGS` in the background (DPID), its
# stderr in $OUT/daemon.err; when the test file defines daemon_is_ready, waits up to 10 s for
# it while the daemon lives (else prints its stderr and fails). The tests count samples at
# 99 Hz, record's rate; DAEMON_OWN_HZ=1: the daemon's own default rate (19 Hz)
start_daemon() {
	local hz=(-F 99)
	[[ -n ${DAEMON_OWN_HZ:-} ]] && hz=()
	"$JPROF" daemon --store "$STORE" "${hz[@]}" "$@" 2>"$OUT/daemon.err" 3>&- &
	DPID=$!
	declare -F daemon_is_ready >/dev/null || return 0
	ready_while_alive "$DPID" daemon_is_ready || { cat "$OUT/daemon.err"; return 1; }
}

# ready_while_alive PID CMD...: CMD succeeds within 10 s, tried every 0.1 s while PID lives
ready_while_alive() {
	local pid=$1 i
	shift
	for ((i = 0; i < 100; i++)); do
		"$@" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# stop_daemon: SIGTERM to DPID, its stderr printed; fails unless it exits with 0
stop_daemon() {
	kill -TERM "$DPID"
	local rc=0
	wait "$DPID" || rc=$?
	DPID=
	cat "$OUT/daemon.err"
	return "$rc"
}

# chan_ring PID: the agent's ring of JVM PID (no pid namespace), /tmp/jprof-PID-TOKEN.ring, as
# its maps name it (the token is random); fails while no agent runs there
chan_ring() {
	local f
	f=$(grep -oE "/tmp/jprof-$1-[0-9a-f]{16}\.ring\$" "/proc/$1/maps" | head -1)
	[[ -n $f ]] && echo "$f"
}

# jwalk_check PID MIN_WHOLE_PCT MIN_AGREE_PCT MAX_DIFFER_PCT: jprof's "Java walk in BPF" line
# for JVM PID in $REPORT (--java-walk shadow): walks that reached the entry frame, in percent
# of the samples walked; agreeing with the agent's trace (counting those that differ only in
# the inlining at the interrupted pc), and differing, in percent of those compared
jwalk_check() {
	local line
	line=$(grep -E "^jprof: JVM $1: Java walk in BPF: " <<<"$REPORT" | head -1)
	[[ -n $line ]] || { echo "no Java walk line for JVM $1"; return 1; }
	awk -v line="$line" -v w="$2" -v a="$3" -v d="$4" 'BEGIN {
		n = split(line, f, /[ (),;:]+/)
		for (i = 2; i < n; i++) { # the first of each: "not compared" comes later
			if (f[i + 1] == "samples" && f[i - 1] == "BPF" && walked == "") walked = f[i]
			if (f[i + 1] == "whole" && whole == "") whole = f[i]
			if (f[i + 1] == "compared" && cmp == "") cmp = f[i]
			if (f[i + 1] == "agree" && f[i + 2] != "but" && agree == "") agree = f[i]
			if (f[i + 1] == "agree" && f[i + 2] == "but" && leaf == "") leaf = f[i]
			if (f[i + 1] == "differ" && differ == "") differ = f[i]
		}
		if (!walked || !cmp) { print "no walks compared"; exit 1 }
		pw = 100 * whole / walked; pa = 100 * (agree + leaf) / cmp; pd = 100 * differ / cmp
		printf "walked %d, whole %.1f%% (>= %s), agree %.2f%% (>= %s), differ %.2f%% (<= %s)\n",
			walked, pw, w, pa, a, pd, d
		exit !(pw >= w && pa >= a && pd <= d) }'
}

# percent of the JVM's CPU samples of Java threads with complete Java stacks once its agent
# answered, from jprof's own per-JVM line in $REPORT. jprof's own steady-state figure when
# it prints one ("Y% of the N after the agent connected": samples from before the agent was
# attached or loaded left out); else the CPU-only figure ("CPU samples of Java threads: A of
# B complete (X%)", printed beside off-CPU samples); else, all samples being CPU ones and
# none from before the agent, the line's own "with complete Java stacks (P%)". Every stack
# walk failure after the agent connected counts, "agent not ready" included
complete_pct() {
	local line pct cpu='CPU samples of Java threads: [0-9]+ of [0-9]+ complete'
	line=$(grep -E "^jprof: JVM $JPID \([^)]*\): [0-9]+ samples, " <<<"$REPORT" | head -1)
	[[ -n $line ]] || { echo "no per-JVM line for $JPID" >&2; return 1; }
	pct=$(sed -nE 's/.*, ([0-9.]+)% of the [0-9]+ after the agent connected.*/\1/p' <<<"$line")
	[[ -n $pct ]] ||
		pct=$(sed -nE "s/.*; $cpu \\(([0-9.]+)%\\).*/\\1/p" <<<"$line")
	[[ -n $pct ]] ||
		pct=$(sed -nE 's/.* with complete Java stacks \(([0-9.]+)%\).*/\1/p' <<<"$line")
	[[ -n $pct ]] || { echo "no completeness figure in: $line" >&2; return 1; }
	echo "$pct"
}

# Attacks run as the unprivileged test user $U (untrusted*.bats, hostile_agent.bats).
# attack_workdir PREFIX: $W, a directory of $U's under /tmp; PIDS and TMPS start empty;
# AS_USER runs a command as $U (setpriv execs it: in the background $! is its pid)
attack_workdir() {
	PIDS=()
	TMPS=()
	W=$(mktemp -d "/tmp/$1.XXXXXX")
	chown "$U:$U" "$W"
	chmod 755 "$W"
	AS_USER=(setpriv --reuid="$U" --regid="$U" --clear-groups --inh-caps=-all --)
}

# attack_cleanup: kills and reaps $PIDS, removes $TMPS and $W
attack_cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -f "${TMPS[@]}"
	rm -rf "$W"
}
