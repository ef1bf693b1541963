#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs every test tier, one after the other (they share two cores), and
# keeps going when one fails:
#   kunit-debug (KUnit under UML with KASAN and lockdep: the same cases
#   as make kunit's plain profile, so make check builds UML once),
#   deb (the Debian packages built for amd64 and arm64, lintian,
#   installed on the host, run, purged), vm-test amd64, vm-test arm64
#   (Debian 12's 6.1; arm64 with the arm64 packages' libaccmap, criu
#   plugin and, in the demo, tools instead of the build tree's; the arm64
#   6.1, 6.12 and debug guests and the 6.1 demo boot as boards, with the
#   Mali GPU device of the qemu tools/testing/vm/build-qemu.sh builds on
#   first use, and replay and SVM on it too), and each again
#   with 5 GiB of RAM for the below-4-GiB allocations (accmap_dma32 only),
#   board-late, board-hang, board-wedged (the arm64 6.1 board again, its
#   GPU misbehaving through the device's fault knobs: run.sh's
#   ACCMAP_BOARD_FAULTS, accmap_board_faults),
#   demo, demo-6.12 (what make demo runs: the tools build and work; the
#   second boot has device memory),
#   vm-test arm64-6.12 (Debian 12's 6.12), vm-test
#   arm64-16k (the same arm64 6.12 with 16 KiB pages), vm-test
#   arm64-rt (the same arm64 6.12 in Debian's PREEMPT_RT flavour), vm-test
#   arm64-5.10 (Debian 11's 5.10), vm-test
#   arm64-debug (accmap's lockdep/kmemleak/KASAN kernel with fault
#   injection, of the newest line Debian packages, built on first use;
#   the fuzzer injects failures in half its seeds), lint (one W=1 +
#   sparse build per line),
#   dkms-test, accmapctl (its JSON
#   against the schema, top's sums), fuzz-corpus (the GPUReplay importer's
#   hostile inputs, on the host)
# The load is sized for an empty cache: on the stock kernels the fuzzer
# runs 4 seeds (524,288 operations) and the stress test 10 s; on the
# debug kernel the fuzzer runs 4 seeds of 65,536 operations (2 of them
# injecting, at least 1,000 failures injected: full-size seeds gave
# 19,758 and 19,590 on the two debug kernels in one run, at rates each seed
# draws at random) and the stress test 15 s.  make vm-test and run.sh alone run
# full size (8 seeds, at least 10,000 injected on a debug kernel, 60 s).
# What each VM tier (and each demo) must have and run, program by program
# with its count of tests, is in tools/testing/vm/tiers.txt; what KUnit
# must run, suite by suite, in tools/testing/kunit/counts.txt.  A tier of
# tiers.txt that this list does not run fails the check, and so does a VM
# tier here that tiers.txt does not describe (run.sh refuses it).
# Prints each tier's result, its time, and as the very last line the grand
# total "N passed, N failed".  Exits non-zero if anything failed.
# Each tier's full output: $CACHE/logs/check-<tier>.log.
set -euo pipefail

TIER=check
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/common.sh"

t=$ACCMAP_ROOT/tools/testing
short="env ACCMAP_FUZZ_SEEDS=4 ACCMAP_STRESS_SECONDS=10"
debug="env ACCMAP_STRESS_SECONDS=15 ACCMAP_FUZZ_SEEDS=4 ACCMAP_FUZZ_OPS=65536 ACCMAP_FUZZ_MIN_INJECTED=1000"
# The arm64 6.1 guest and its demo run the deb tier's arm64 packages'
# user space (run.sh's ACCMAP_VM_PACKAGES): the selftests that use
# libaccmap linked to libaccmap-dev and loading libaccmap1's library, the
# criu tests with criu-plugin-accmap's plugin, the demo with accmap-tools'
# accmap-demo and accmapctl.  So deb runs first.
pkgs="env ACCMAP_VM_PACKAGES=$CACHE/deb/out"
tiers=(
	"kunit-debug|$t/kunit/run.sh debug"
	"deb|$t/scripts/deb-test.sh"
	"vm-amd64|$short $t/vm/run.sh amd64"
	"vm-arm64|$pkgs $short $t/vm/run.sh arm64"
	"vm-amd64-5g|env ACCMAP_VM_MEM=5120 $t/vm/run.sh amd64 accmap_dma32"
	"vm-arm64-5g|env ACCMAP_VM_MEM=5120 $t/vm/run.sh arm64 accmap_dma32"
	"board-late|env ACCMAP_BOARD_FAULTS=late $t/vm/run.sh arm64 accmap_board_faults,accmap_gpureplay-board"
	"board-hang|env ACCMAP_BOARD_FAULTS=hang $t/vm/run.sh arm64 accmap_board_faults"
	"board-wedged|env ACCMAP_BOARD_FAULTS=wedged $t/vm/run.sh arm64 accmap_board_faults"
	"demo|$pkgs $t/vm/run.sh arm64 demo"
	"demo-6.12|$t/vm/run.sh arm64-6.12 demo"
	"vm-arm64-6.12|$short $t/vm/run.sh arm64-6.12"
	"vm-arm64-16k|$short $t/vm/run.sh arm64-16k"
	"vm-arm64-rt|$short $t/vm/run.sh arm64-rt"
	"vm-arm64-5.10|$short $t/vm/run.sh arm64-5.10"
	"vm-arm64-debug|$debug $t/vm/run.sh arm64-debug"
	"lint|$t/scripts/lint.sh"
	"dkms|$t/scripts/dkms-test.sh"
	"accmapctl|$t/scripts/accmapctl-test.sh"
	"fuzz-corpus|$t/fuzz/run.sh check"
)

start_all=$SECONDS
deps_status=0
ensure_deps || deps_status=$?
if [ "$deps_status" != 0 ]; then
	warn "install-deps.sh failed (exit $deps_status); running the tiers anyway"
	export ACCMAP_DEPS_OK=1
fi
mkdir -p "$CACHE/logs"

total_pass=0
total_fail=0
summary=()
failed_tiers=()

# Tiers of tiers.txt make check leaves out, each with its reason: only
# these may be missing from the list above.
# The 5.10, 6.12 and newest lines boot on arm64 (the boards'
# architecture, and KASAN's debug kernel), amd64 boots 6.1; accmap.ko is
# still built for amd64 on 5.10 and 6.12 (lint, DKMS).
declare -A left_out=(
	["amd64-debug tests"]="the empty-cache budget of make check (its kernel is a second build of the newest line); make vm-test VM_ARCH=amd64-debug runs it"
	["amd64-rt tests"]="the empty-cache budget of make check; make vm-test VM_ARCH=amd64-rt runs it"
	["amd64-6.12 tests"]="the empty-cache budget of make check; make vm-test VM_ARCH=amd64-6.12 runs it"
	["amd64-5.10 tests"]="the empty-cache budget of make check; make vm-test VM_ARCH=amd64-5.10 runs it"
)

# Every tier of tiers.txt must be one of the runs above ("TARGET MODE":
# the demos are run.sh's demo mode), or left out above.
while read -r tt tm; do
	if [ -n "${left_out["$tt $tm"]:-}" ]; then
		say "tiers.txt tier $tt $tm: not run here (${left_out["$tt $tm"]})"
		continue
	fi
	found=
	for entry in "${tiers[@]}"; do
		case " ${entry#*|} " in
		*"/vm/run.sh $tt "*)
			if [ "$tm" = demo ]; then
				[[ " ${entry#*|} " != *" $tt demo "* ]] || found=1
			else
				[[ " ${entry#*|} " == *" $tt demo "* ]] || found=1
			fi
			;;
		esac
	done
	if [ -z "$found" ]; then
		warn "FAIL: tools/testing/vm/tiers.txt has tier $tt $tm, which make check does not run"
		total_fail=$((total_fail + 1))
		summary+=("tiers.txt          FAIL  tier $tt $tm not run")
	fi
done < <(awk '$1 == "tier" { print $2, $3 }' "$ACCMAP_ROOT/tools/testing/vm/tiers.txt")
for entry in "${tiers[@]}"; do
	name=${entry%%|*}
	read -r -a cmd <<<"${entry#*|}"
	log=$CACHE/logs/check-$name.log
	say "=== $name: ${cmd[*]}"
	start=$SECONDS
	set +e
	"${cmd[@]}" </dev/null 2>&1 | tee "$log"
	status=${PIPESTATUS[0]}
	set -e
	secs=$((SECONDS - start))
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)
	if [ -n "$line" ]; then
		p=${line%% passed*}
		f=${line#*passed, }
		f=${f%% failed}
	else
		p=0
		f=0
	fi
	# A tier that failed without saying so still counts as a failure.
	if [ "$status" != 0 ] && [ "$f" = 0 ]; then
		f=1
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	verdict=PASS
	if [ "$f" != 0 ] || [ "$status" != 0 ]; then
		verdict=FAIL
		failed_tiers+=("$name")
	fi
	# A guest's tier names the kernel it booted (run.sh's begin marker).
	kern=$(grep -m1 -oE '@@accmap-vm begin [^ ]+' "$log" | cut -d' ' -f3 || true)
	summary+=("$(printf '%-18s %s  %4d passed, %3d failed  (%d s)%s' \
		"$name" "$verdict" "$p" "$f" "$secs" "${kern:+  $kern}")")
done

[ "$deps_status" = 0 ] || { total_fail=$((total_fail + 1)); summary+=("install-deps FAIL"); }

# What failed, again at the end: a CI log is often read from its tail.
for name in "${failed_tiers[@]}"; do
	say "=== why $name failed ($CACHE/logs/check-$name.log)"
	# (the per-test tallies "N ok, 0 not ok/skipped" are not failures).
	# A log with no such line must not end the script before the total.
	grep -E 'FAIL|not ok|error:|WARNING:|BUG:|Oops|Call Trace|KASAN|circular locking|Killed process|out of memory' \
		"$CACHE/logs/check-$name.log" | grep -v -E ' ok, 0 not ok/skipped' |
		head -n 40 | indent || true
done

say "=== summary ($(((SECONDS - start_all) / 60)) min $(((SECONDS - start_all) % 60)) s)"
for s in "${summary[@]}"; do
	say "$s"
done
result "$total_pass" "$total_fail"
