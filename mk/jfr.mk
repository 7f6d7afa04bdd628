# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# jfr.mk: the JFR writer's e2e driver (tests/out/), for tests/e2e/jfr.bats and `make bench-jfr`.

JFR_DRIVER	:= $(OUT)/tests/out/jfr_driver

$(JFR_DRIVER): tests/out/jfr_driver.c tests/out/jfr_model.h $(OUT)/libjprof.a | $(OUT)/.deps-ok
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) -Itests/out $(WARN) $(CFLAGS) $< $(OUT)/libjprof.a $(LDLIBS) -o $@

.PHONY: jfr-test bench-jfr
jfr-test: $(JFR_DRIVER)

# time and size of writing 1 million samples over 100,000 distinct stacks
bench-jfr: $(JFR_DRIVER)
	$(Q)$(JFR_DRIVER) bench $(OUT)/bench.jfr $${SAMPLES:-1000000} $${STACKS:-100000}

check-e2e: $(JFR_DRIVER)
bench: bench-jfr
