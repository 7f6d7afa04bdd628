# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# setup_suite.bash: once per bats run. JVMs the tests start leave files in /tmp: the agent's
# ring and dictionary and its attach socket when a test kills its JVM (-9: no VMDeath), and perf maps, which stay
# after a JVM by design (perf reads them at report time). The run removes those its own
# JVMs left: created after it began, of a pid that no longer runs.

setup_suite() {
	JPT_SUITE_MARK=$(mktemp -t jpt-suite.XXXXXX)
	export JPT_SUITE_MARK
}

teardown_suite() {
	local f pid n=0

	[[ -n ${JPT_SUITE_MARK:-} && -e $JPT_SUITE_MARK ]] || return 0
	while IFS= read -r -d '' f; do
		pid=${f##*/}
		case $pid in
		.java_pid* | .attach_pid*) pid=${pid##*pid} ;;
		*) pid=${pid##*-} pid=${pid%%.*} ;;
		esac
		[[ $pid =~ ^[0-9]+$ && ! -d /proc/$pid ]] || continue
		rm -f -- "$f" && n=$((n + 1))
	done < <(find /tmp -maxdepth 1 -newer "$JPT_SUITE_MARK" \( -name 'perf-*.map' \
		-o -name 'jprof-*.ring' -o -name 'jprof-*.dict' -o -name '.java_pid*' \
		-o -name '.attach_pid*' \) -print0 2>/dev/null)
	echo "# removed $n files the run's JVMs left in /tmp" >&3
	rm -f -- "$JPT_SUITE_MARK"
	return 0
}
