# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# testcommon.mk: helpers shared between tests (tests/common/), compiled into those that use them.

AGENTFILE := tests/common/agentfile.c tests/common/agentfile.h
$(OUT)/tests/unit/test_agent_ring $(OUT)/tests/fuzz/fuzz_join $(OUT)/tests/apps/agentflood: \
	$(AGENTFILE)
