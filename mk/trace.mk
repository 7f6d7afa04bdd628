# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# trace.mk: the method trace's rewriter tests. test_bytecode and fuzz_bytecode #include the
# agent's rewriter, jvmagent/bytecode.c and bc_*.c (plain C); test_bytecode also rewrites
# javac's classes of tests/apps.

$(OUT)/tests/unit/test_bytecode: $(OUT)/tests/apps/.java-stamp
$(OUT)/tests/unit/test_bytecode: UNIT_CFLAGS := -DJP_APPS_DIR='"$(OUT)/tests/apps"'

# jprof trace's kernel part (user/trace/mtk.c) includes its own skeleton
$(OUT)/user/trace/mtk.o $(OUT)/asan/user/trace/mtk.o $(OUT)/fuzzlib/user/trace/mtk.o: \
	$(OUT)/bpf/mtrace.skel.h
