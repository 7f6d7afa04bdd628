# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# syscalls.mk: the generated syscall-name table for user/kernel/syscalls.c, and the
# kernel-side test driver for tests/e2e/{syscalls,offcpu}.bats.

SC_NAMES_H := $(OUT)/gen/syscall_names.h
SC_USER_OBJS := $(foreach d,$(OUT)/user $(OUT)/asan/user $(OUT)/fuzzlib/user, \
	$(d)/kernel/syscalls.o $(d)/kernel/offcpu.o $(d)/kernel/tp_probe.o)

# from <asm/unistd.h> as $(CC) sees it, never typed by hand
$(SC_NAMES_H): scripts/gen-syscall-names.sh mk/syscalls.mk
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)bash scripts/gen-syscall-names.sh "$(CC)" $@

$(SC_USER_OBJS): $(SC_NAMES_H)
$(SC_USER_OBJS): BASEFLAGS += -I$(OUT)/gen

SC_DRIVER := $(OUT)/tests/kernel/sc_driver

$(SC_DRIVER): tests/kernel/sc_driver.c $(OUT)/libjprof.a | $(OUT)/.deps-ok
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) $(WARN) $(CFLAGS) $< $(OUT)/libjprof.a $(LDLIBS) -o $@

.PHONY: sc-driver
sc-driver: $(SC_DRIVER)

check-e2e: sc-driver
check-e2e: export SC_DRIVER := $(abspath $(SC_DRIVER))
