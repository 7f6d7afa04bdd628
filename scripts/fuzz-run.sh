#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# fuzz-run.sh OUT FUZZER...: runs each libFuzzer binary for FUZZ_SECONDS (default 60) on its
# corpus (OUT/fuzz-corpus/NAME, then tests/fuzz/corpus/NAME), FUZZ_JOBS at a time (default:
# the CPUs). Each fuzzer is one process on one core, so two cores run two of them in the
# time of one: the same fuzzing in half the wall time. A crash prints the end of its log and
# the run fails once the others have ended; every fuzzer gets one line, in the order given.
set -u

out=$1
shift
secs=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-$(nproc)}
((jobs >= 1)) || jobs=1

# one fuzzer: its log in OUT/fuzz-corpus/NAME.log, its status in NAME.rc
run_one() {
	local f=$1 n
	n=$(basename "$f")
	mkdir -p "$out/fuzz-corpus/$n"
	"$f" -max_total_time="$secs" -timeout=5 -max_len="${FUZZ_MAX_LEN:-262144}" \
		-artifact_prefix="$out/fuzz-corpus/$n-" \
		-rss_limit_mb="${FUZZ_RSS_MB:-1024}" -malloc_limit_mb="${FUZZ_RSS_MB:-1024}" \
		"$out/fuzz-corpus/$n" "tests/fuzz/corpus/$n" 2>"$out/fuzz-corpus/$n.log"
	echo $? >"$out/fuzz-corpus/$n.rc"
}

running=0
for f in "$@"; do
	if ((running >= jobs)); then
		wait -n
		running=$((running - 1))
	fi
	run_one "$f" &
	running=$((running + 1))
done
wait

rc=0
for f in "$@"; do
	n=$(basename "$f")
	if [[ $(cat "$out/fuzz-corpus/$n.rc" 2>/dev/null) == 0 ]]; then
		echo "fuzz: $n: $(grep -c . "$out/fuzz-corpus/$n.log") log lines, no crash"
	else
		tail -50 "$out/fuzz-corpus/$n.log"
		echo "fuzz: $n: FAILED (log: $out/fuzz-corpus/$n.log)"
		rc=1
	fi
done
exit $rc
