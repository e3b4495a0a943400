# SPDX-License-Identifier: GPL-2.0
# PT synthesis tools (docs/pt-testing.md). Only these link libipt.
PTS_DIR := $(B)/tests/ptsynth
PTS_COMMON := tests/ptsynth/common.c tests/ptsynth/ptsynth.h

$(PTS_DIR)/%: tests/ptsynth/%.c $(PTS_COMMON)
	@mkdir -p $(@D)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_SAN) -Itests/ptsynth -Itests/unit -o $@ $< \
		tests/ptsynth/common.c $(if $(filter mkptdata,$*),-lipt)

# Without libipt-dev mkptdata is not built and tests/ptsynth/run.sh skips.
PTS_HAVE_IPT := $(shell echo '\#include <intel-pt.h>' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
PTS_BINS := $(PTS_DIR)/sstep $(PTS_DIR)/insnmap $(PTS_DIR)/test_ptsynth \
	$(if $(PTS_HAVE_IPT),$(PTS_DIR)/mkptdata)
TEST_BINS += $(PTS_BINS)
