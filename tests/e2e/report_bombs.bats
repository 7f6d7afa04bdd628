#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# report_bombs.bats: root `jprof report` on recordings an unprivileged user wrote (issue 26).
# A throwaway user makes each bomb with gen_folded.py (built at run time, nothing large is
# committed); root reports it and must refuse it in one stderr line naming the file, the
# budget and its limit, exit 1, within TIME_S seconds and under RSS_KB of peak RSS. Before
# the budgets: the zip bomb took >2 GB (the issue saw 5.2 GB), 64M strings 1.18 GB, 16M
# locations 1.31 GB, a 2M-frame stack 472 MB, 2M random roots over 60 s, and a 1 MiB frame
# name exited 1 with nothing on stderr.
# In CI (CI set) a missing prerequisite fails; outside CI a non-root run skips loudly.
bats_require_minimum_version 1.5.0

load helpers

U=jpt-bombs1
RSS_KB=$((350 * 1024))
TIME_S=30

setup_file() {
	[[ $EUID -eq 0 ]] || { missing "needs root (a throwaway user writes the bombs)"; return; }
	[[ -x $JPROF ]] || { missing "jprof not built at $JPROF (run make)"; return; }
	[[ -x /usr/bin/time ]] || { missing "/usr/bin/time (Debian package time)"; return; }
	command -v setpriv >/dev/null || { missing "setpriv (util-linux)"; return; }
	[[ -x /usr/bin/python3 ]] || { missing "/usr/bin/python3 (the test user runs it)"; return; }
	make_test_user "$U" >/dev/null || return
}

teardown_file() {
	drop_test_user "$U"
}

setup() {
	W=$(mktemp -d /tmp/jpt-bombs.XXXXXX)
	chown "$U:$U" "$W"
	chmod 755 "$W"
}

teardown() {
	rm -rf -- "$W"
}

# bomb KIND: the user writes the bomb into $W; root reports it. Sets RSS (KiB), ERR (stderr).
bomb() {
	local kind=$1 rc
	# the script on stdin: the user need not be able to read the work tree
	setpriv --reuid="$U" --regid="$U" --clear-groups --inh-caps=-all -- \
		/usr/bin/python3 - bomb "$kind" "$W/$kind.bomb" <"$BATS_TEST_DIRNAME/gen_folded.py" ||
		fail "gen_folded.py bomb $kind"
	rc=0
	timeout -s KILL "$TIME_S" /usr/bin/time -o "$W/rss" -f %M \
		"$JPROF" report "$W/$kind.bomb" -o "$W/out.folded" 2>"$W/err" || rc=$?
	ERR=$(cat "$W/err")
	echo "bomb $kind: exit $rc, stderr: $ERR"
	[[ $rc -ne 137 ]] || fail "jprof report ran past ${TIME_S}s on the $kind bomb"
	RSS=$(tail -1 "$W/rss")
	echo "bomb $kind: peak RSS ${RSS} KiB"
	[[ $rc -eq 1 ]] || fail "exit $rc, want 1"
	((RSS < RSS_KB)) || fail "peak RSS ${RSS} KiB >= ${RSS_KB} KiB"
	[[ $(wc -l <"$W/err") -eq 1 ]] || fail "want one stderr line"
}

fail() {
	echo "$*" >&2
	return 1
}

@test "report bombs: 1 MB .pb.gz of 1000 MiB is refused at 256 MiB uncompressed" {
	bomb zip
	[[ $ERR == *"$W/zip.bomb: not a usable pprof profile: more than 268435456 bytes uncompressed (a budget of jprof report)" ]]
}

@test "report bombs: 64M strings in a .pb.gz stop at the string budget" {
	bomb strings
	[[ $ERR == *"$W/strings.bomb: not a usable pprof profile: more than 2097152 strings (a budget of jprof report)" ]]
}

@test "report bombs: 16M locations in a .pb.gz stop at the location budget" {
	bomb locs
	[[ $ERR == *"$W/locs.bomb: not a usable pprof profile: more than 2097152 locations (a budget of jprof report)" ]]
}

@test "report bombs: 2M distinct roots in random order stop at the node budget, fast" {
	bomb roots
	[[ $ERR == *"$W/roots.bomb:1048577: more distinct frames in the tree than 1048576 (a budget of jprof report)" ]]
}

@test "report bombs: a stack of 2M frames stops at the depth budget" {
	bomb deep
	[[ $ERR == *"$W/deep.bomb:1: a stack deeper than 8192 (a budget of jprof report)" ]]
}

@test "report bombs: a 1 MiB frame name is refused in one line" {
	bomb longname
	[[ $ERR == *"$W/longname.bomb:1: a frame name longer than 65536 (a budget of jprof report)" ]]
}
