# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# serve.mk: embed `jprof serve`'s page (user/serve/ui.html) into serve.o as a C array.

SERVE_UI	:= user/serve/ui.html
SERVE_UI_HEADER := $(OUT)/gen/serve_ui_html.h
SERVE_UI_OBJS	:= $(OUT)/user/serve/serve.o $(OUT)/asan/user/serve/serve.o \
		   $(OUT)/fuzzlib/user/serve/serve.o

$(SERVE_UI_HEADER): $(SERVE_UI) mk/serve.mk
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q){ echo '/* generated from $(SERVE_UI) by mk/serve.mk: do not edit */'; \
		echo 'static const unsigned char serve_ui_html[] = {'; \
		xxd -i < $<; \
		echo '};'; } > $@.tmp && mv $@.tmp $@

$(SERVE_UI_OBJS): $(SERVE_UI_HEADER)
$(SERVE_UI_OBJS): BASEFLAGS += -I$(OUT)/gen
