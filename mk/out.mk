# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# out.mk: embed the flame-graph template (user/out/flamegraph.html) into html.o as a C array.

FG_TEMPLATE := user/out/flamegraph.html
FG_HEADER   := $(OUT)/gen/flamegraph_html.h
FG_OBJS     := $(OUT)/user/out/html.o $(OUT)/asan/user/out/html.o $(OUT)/fuzzlib/user/out/html.o

# xxd -i on stdin prints only the bytes, so the array name and `static const` are ours
$(FG_HEADER): $(FG_TEMPLATE) mk/out.mk
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q){ echo '/* generated from $(FG_TEMPLATE) by mk/out.mk: do not edit */'; \
		echo 'static const unsigned char flamegraph_html[] = {'; \
		xxd -i < $<; \
		echo '};'; } > $@.tmp && mv $@.tmp $@

$(FG_OBJS): $(FG_HEADER)
$(FG_OBJS): BASEFLAGS += -I$(OUT)/gen
