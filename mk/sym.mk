# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sym.mk: ELF and text fixtures for the symbolizer tests (user/sym/), built under $(OUT).
# Tests find them next to themselves: <test binary>/../../tests/fixtures/sym.

SYM_FX_SRC := tests/fixtures/sym
SYM_FX	   := $(OUT)/tests/fixtures/sym
SYM_FX_CFLAGS := -O1 -g -fno-inline -fno-optimize-sibling-calls -fno-omit-frame-pointer
CXX	   ?= c++

SYM_FX_ELFS := $(SYM_FX)/fx_pie $(SYM_FX)/fx_nopie $(SYM_FX)/libfx.so $(SYM_FX)/fx_mini \
	$(SYM_FX)/fx_cxx $(SYM_FX)/fx_split
SYM_FX_TEXT := $(patsubst $(SYM_FX_SRC)/%,$(SYM_FX)/%,$(wildcard $(SYM_FX_SRC)/*.txt \
	$(SYM_FX_SRC)/*.map))
SYM_FX_ALL  := $(SYM_FX_ELFS) $(SYM_FX_ELFS:=.nm) $(SYM_FX_TEXT)

$(SYM_FX)/fx_pie: $(SYM_FX_SRC)/fx.c
	$(call msg,FX-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SYM_FX_CFLAGS) -fPIE -pie $< -o $@

$(SYM_FX)/fx_nopie: $(SYM_FX_SRC)/fx.c
	$(call msg,FX-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SYM_FX_CFLAGS) -fno-pie -no-pie $< -o $@

$(SYM_FX)/libfx.so: $(SYM_FX_SRC)/fx.c
	$(call msg,FX-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SYM_FX_CFLAGS) -DFX_LIB -shared -fPIC $< -o $@

$(SYM_FX)/fx_cxx: $(SYM_FX_SRC)/fx_cxx.cc
	$(call msg,FX-CXX,$@)
	@mkdir -p $(@D)
	$(Q)$(CXX) $(SYM_FX_CFLAGS) -fPIE -pie $< -o $@

# MiniDebugInfo as Fedora makes it: a symtab-only ELF, xz'd into .gnu_debugdata of the
# fully stripped binary (which keeps only .dynsym)
$(SYM_FX)/fx_mini: $(SYM_FX)/fx_pie
	$(call msg,FX-MINI,$@)
	$(Q)nm --format=posix --defined-only $< | awk '$$2 ~ /^[TtWw]$$/ { print $$1 }' > $@.keep
	$(Q)objcopy --only-keep-debug $< $@.dbg
	$(Q)objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=$@.keep $@.dbg $@.symtab
	$(Q)rm -f $@.symtab.xz && xz -k $@.symtab
	$(Q)strip --strip-all -R .comment -R .gnu_debuglink $< -o $@.tmp
	$(Q)objcopy --add-section .gnu_debugdata=$@.symtab.xz $@.tmp $@
	$(Q)rm -f $@.tmp $@.dbg $@.keep

# a separate debug file as Debian's -dbg packages ship them: the stripped binary keeps .dynsym,
# a build id and a .gnu_debuglink naming fx_split.debug, which holds the .symtab
$(SYM_FX)/fx_split: $(SYM_FX)/fx_pie
	$(call msg,FX-SPLIT,$@)
	$(Q)objcopy --only-keep-debug $< $@.debug
	$(Q)strip --strip-all -R .comment $< -o $@.tmp
	$(Q)cd $(@D) && objcopy --add-gnu-debuglink=$(@F).debug $(@F).tmp $(@F) && rm -f $(@F).tmp

# symbol addresses as the tests expect them (from the unstripped build for fx_mini)
$(SYM_FX)/%.nm: $(SYM_FX)/%
	$(Q)nm --defined-only $(if $(filter fx_mini fx_split,$*),$(SYM_FX)/fx_pie,$<) > $@

$(SYM_FX)/%.txt: $(SYM_FX_SRC)/%.txt
	@mkdir -p $(@D)
	$(Q)cp $< $@

$(SYM_FX)/%.map: $(SYM_FX_SRC)/%.map
	@mkdir -p $(@D)
	$(Q)cp $< $@

$(patsubst tests/unit/%.c,$(OUT)/tests/unit/%,$(wildcard tests/unit/test_sym_*.c) \
	tests/unit/test_vmstructs.c): $(SYM_FX_ALL)

.PHONY: sym-fixtures
sym-fixtures: $(SYM_FX_ALL)
