#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# update-golden.sh: regenerate tests/golden/* on purpose, then review the diff before committing.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build}
make --no-print-directory OUT="$OUT" "$OUT/tests/unit/test_folded"
JPROF_UPDATE_GOLDEN=1 "$OUT/tests/unit/test_folded" golden
git --no-pager diff --stat -- tests/golden/ || true
