# SPDX-License-Identifier: GPL-2.0
#
# Manual pages from their reStructuredText sources with docutils' rst2man:
#   make -f debian/man.mk SRC=Documentation/man OUT=dir PAGE...
# where PAGE is NAME.SECTION, from SRC/NAME.SECTION.rst.

RST2MAN ?= rst2man

$(OUT)/%: $(SRC)/%.rst
	@mkdir -p $(OUT)
	$(RST2MAN) --halt=warning $< $@
