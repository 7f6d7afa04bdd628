#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# join_bench.sh: bench/join_bench.c linked with this tree's join and with REV's (default
# main), run in turns in the same run; prints ns per sample and the ratio old/new.
#   bench/join_bench.sh [REV] [THREADS] [ROUNDS] [LAG]   (after make)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$REPO/build}
REV=${1:-main}
shift || true
B=$OUT/bench/join
CC=${CC:-cc}
FLAGS=(-std=gnu11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror
       -Iuser -I"$OUT/bpf" -Ibpf -Ijvmagent)
LIBS=(-lbpf -lelf -lz -llzma -lpthread)
cd "$REPO"
mkdir -p "$B/old"
OBJS=$(ls "$OUT"/user/*.o "$OUT"/user/*/*.o | grep -v -e '/main\.o$' -e '/join\.o$')
git show "$REV:user/join.c" >"$B/old/join.c"
git show "$REV:user/join.h" >"$B/old/join.h"
"$CC" "${FLAGS[@]}" -I"$B/old" -c "$B/old/join.c" -o "$B/old/join.o"
"$CC" "${FLAGS[@]}" -I"$B/old" bench/join_bench.c "$B/old/join.o" $OBJS "${LIBS[@]}" -o "$B/old/join_bench"
"$CC" "${FLAGS[@]}" bench/join_bench.c "$OUT/user/join.o" $OBJS "${LIBS[@]}" -o "$B/join_bench"
for i in 1 2 3; do
	o=$("$B/old/join_bench" "$@")
	n=$("$B/join_bench" "$@")
	echo "old ($REV): $o"
	echo "new:        $n"
	awk -v o="$o" -v n="$n" 'BEGIN {
		match(o, /[0-9]+ ns per sample/); a = substr(o, RSTART, RLENGTH) + 0
		match(n, /[0-9]+ ns per sample/); b = substr(n, RSTART, RLENGTH) + 0
		printf "ratio old/new: %.1f\n", a / b }'
done
