# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# leftovers.bash: JVMs the tests start leave files in /tmp: the agent's ring, dictionary and
# trace file (jprof-PID-TOKEN.ext) and its attach socket when a test kills its JVM (-9: no
# VMDeath), and perf maps, which stay after a JVM by design (perf reads them at report
# time). A pid comes round again in a long run (thread churn uses them up): a later JVM of
# that pid run as the test user cannot replace a root JVM's files in the sticky /tmp, and
# its agent rightly declines.

# remove_jvm_leftovers: removes the files this run's JVMs left (created after the suite
# began, of a pid that no longer runs); prints how many
remove_jvm_leftovers() {
	local f pid n=0

	[[ -n ${JPT_SUITE_MARK:-} && -e $JPT_SUITE_MARK ]] || { echo 0; return 0; }
	while IFS= read -r -d '' f; do
		pid=${f##*/}
		case $pid in
		.java_pid* | .attach_pid*) pid=${pid##*pid} ;;
		jprof-*) pid=${pid#jprof-} pid=${pid%%[-.]*} ;; # jprof-PID-TOKEN.ring, jprof-PID.ring
		*) pid=${pid##*-} pid=${pid%%.*} ;;		# perf-PID.map
		esac
		[[ $pid =~ ^[0-9]+$ && ! -d /proc/$pid ]] || continue
		rm -f -- "$f" && n=$((n + 1))
	done < <(find /tmp -maxdepth 1 -newer "$JPT_SUITE_MARK" \( -name 'perf-*.map' \
		-o -name 'jprof-*.ring' -o -name 'jprof-*.dict' -o -name 'jprof-*.trace' \
		-o -name '.java_pid*' \
		-o -name '.attach_pid*' \) -print0 2>/dev/null)
	echo "$n"
}
