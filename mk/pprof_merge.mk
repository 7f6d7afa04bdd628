# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# pprof_merge.mk: test_pprof_merge reads the pprof fuzzer's corpus (every kind of file, good and bad).
$(OUT)/tests/unit/test_pprof_merge: UNIT_CFLAGS := \
	-DJP_PPROF_CORPUS='"$(CURDIR)/tests/fuzz/corpus/fuzz_pprof"'
