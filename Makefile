# SPDX-License-Identifier: GPL-2.0
#
# accmap: out-of-tree build and test entry points.
#
# The module itself is described by ./Kbuild and drivers/accmap/Kbuild;
# this Makefile only hands over to the kernel's build system, and names
# the test tiers (see README.md).
#
#   make [modules]      build drivers/accmap/accmap.ko against $(KDIR)
#   make clean
#   make demo           accmap-demo in arm64 guests (qemu TCG): Debian 12's
#                       6.1, then its 6.12 (device memory)
#   make check          every test tier; last line "N passed, N failed"
#   make kunit | kunit-debug | lint | dkms-test
#   make vm-test [VM_ARCH=amd64|arm64|amd64-6.12|arm64-6.12|arm64-16k|amd64-rt|arm64-rt|amd64-5.10|arm64-5.10|
#                 amd64-debug|arm64-debug|amd64-perf|arm64-perf]
#   make kernels        build (or find up to date) the debug and perf kernels
#                       (both for amd64 and arm64)
#   make bench [VM_ARCH=arm64|amd64]
#                       benchmarks in one boot of that architecture's perf
#                       kernel (default arm64, the boards' architecture);
#                       report in $(ACCMAP_CACHE)/bench
#   make coverage [VM_ARCH=amd64|arm64]
#                       line and branch coverage of drivers/accmap under
#                       the selftests and the fuzzer, in one boot of each
#                       debug kernel (or of the one named), added up;
#                       table in $(ACCMAP_CACHE)/coverage
#   make mutants [MUTANTS="id ..."]
#                       plants each bug of tools/testing/mutants/list in a
#                       scratch copy and runs the tiers that should catch
#                       it; table in $(ACCMAP_CACHE)/mutants/report.txt,
#                       fails below 90 % caught (not part of make check)
#   make soak HOURS=N [VM_ARCH=arm64|amd64]
#                       the fuzzer (injection on half its seeds) and the
#                       stress test in turns for N hours in the debug
#                       kernel (default arm64), then the kmemleak scans
#   make fuzz-check     the GPUReplay importer's hostile inputs (seconds)
#   make deb [DEB_ARCHS="amd64 arm64"]
#                       Debian packages (accmap-dkms, libaccmap1,
#                       libaccmap-dev, accmap-tools, criu-plugin-accmap),
#                       the host's architecture native, others cross-built;
#                       into $(ACCMAP_CACHE)/deb/out
#   make deb-test       build them, lintian, install on the host (DKMS
#                       builds for the installed headers), run, purge
#   make accmapctl-test accmapctl --json against its schema, accmapctl top's
#                       sums (host, seconds)
#   make fuzz [FUZZ_SECONDS=300] [FUZZ_JOBS=1]   libFuzzer on the importer

ACCMAP_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
ACCMAP_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/accmap
export ACCMAP_CACHE

# The kernel to build against: the running kernel's build tree if there is
# one, otherwise the Debian 6.1 amd64 headers that install-deps.sh set up.
KVER ?= $(shell uname -r)
ACCMAP_ABI := $(shell cat $(ACCMAP_CACHE)/abi 2>/dev/null)
KDIR ?= $(or $(wildcard /lib/modules/$(KVER)/build), \
	     $(if $(ACCMAP_ABI),$(wildcard /usr/src/linux-headers-$(ACCMAP_ABI)-amd64)), \
	     $(shell ls -d /usr/src/linux-headers-6.1.0-*-amd64 2>/dev/null | sort -V | tail -n 1), \
	     /lib/modules/$(KVER)/build)

# make bench and make soak default to arm64, every other VM target to amd64.
BENCH_ARCH := $(or $(VM_ARCH),arm64)
SOAK_ARCH := $(or $(VM_ARCH),arm64)
# make coverage: both debug kernels, or the one VM_ARCH names.
COVERAGE_TARGETS := $(if $(VM_ARCH),$(VM_ARCH)-debug,amd64-debug arm64-debug)
HOURS ?= 2
MUTANTS ?=
VM_ARCH ?= amd64
FUZZ_SECONDS ?= 300
FUZZ_JOBS ?= 1
DEB_ARCHS ?= amd64 arm64
SCRIPTS := $(ACCMAP_ROOT)/tools/testing

.PHONY: all modules modules_install clean deps kunit kunit-debug vm-test \
	demo lint dkms-test check fuzz fuzz-check help kernels bench coverage soak \
	deb deb-test accmapctl-test mutants

all: modules

modules modules_install:
	@test -f $(KDIR)/Makefile || { \
		echo "accmap: no kernel build tree at KDIR=$(KDIR)" >&2; \
		echo "accmap: install the kernel headers, or pass KDIR=..." >&2; \
		exit 1; }
	$(MAKE) -C $(KDIR) M=$(ACCMAP_ROOT) $@

clean:
	@if [ -f $(KDIR)/Makefile ]; then \
		$(MAKE) -C $(KDIR) M=$(ACCMAP_ROOT) clean; \
	else \
		find $(ACCMAP_ROOT) -path $(ACCMAP_ROOT)/.git -prune -o \
			\( -name '*.o' -o -name '*.ko' -o -name '*.mod' \
			-o -name '*.mod.c' -o -name '.*.cmd' -o -name '*.a' \
			-o -name modules.order -o -name Module.symvers \) \
			-type f -print0 | xargs -0r rm -f; \
	fi

# Test targets: dependencies first (fast when already there), then the
# tier's script with ACCMAP_DEPS_OK=1 so that it does not check again.
deps:
	$(SCRIPTS)/scripts/install-deps.sh

kunit: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/kunit/run.sh default

kunit-debug: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/kunit/run.sh debug

vm-test: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/vm/run.sh $(VM_ARCH)

# Debian 12's own arm64 kernel (6.1) has no ZONE_DEVICE: the device memory
# step shows migration on its 6.12 backports kernel, the second boot.
demo: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/vm/run.sh arm64 demo
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/vm/run.sh arm64-6.12 demo

kernels: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/vm/build-kernel.sh debug
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/vm/build-kernel.sh debug arm64
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/vm/build-kernel.sh perf
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/vm/build-kernel.sh perf arm64

bench: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/vm/run.sh $(BENCH_ARCH)-perf bench

coverage: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/scripts/coverage.sh $(COVERAGE_TARGETS)

mutants: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/scripts/mutants.sh $(MUTANTS)

soak: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/scripts/soak.sh $(SOAK_ARCH)-debug $(HOURS)

lint: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/scripts/lint.sh

dkms-test: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/scripts/dkms-test.sh

deb: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/scripts/deb-build.sh $(DEB_ARCHS)

deb-test: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/scripts/deb-test.sh $(DEB_ARCHS)

accmapctl-test: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/scripts/accmapctl-test.sh

fuzz-check: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/fuzz/run.sh check

fuzz: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/fuzz/run.sh fuzz $(FUZZ_SECONDS) $(FUZZ_JOBS)

check: deps
	ACCMAP_DEPS_OK=1 $(SCRIPTS)/scripts/check.sh

help:
	@sed -n 's/^#   //p' $(ACCMAP_ROOT)/Makefile
