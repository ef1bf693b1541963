#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make soak: hours of the fuzzer and the stress test in the debug kernel.
#
#   tools/testing/scripts/soak.sh [TARGET] [HOURS]
#
# TARGET is arm64-debug (default: the boards' architecture) or
# amd64-debug; HOURS defaults to 2 and may be a fraction (0.25).  One boot
# (run.sh TARGET soak) runs rounds until the hours are up: each round is
# the fuzzer at its default size (8 seeds from a fresh random base, about
# a million operations, failures injected in the odd seeds) and then
# accmap_stress.  Every round is a test program of its own, under the
# usual rules: each seed must leave debugfs's totals where they were, and
# a KASAN, lockdep, kmemleak, ODEBUG or WARN report anywhere fails the
# soak.  After the last round accmap is unloaded and kmemleak scans.
# Not part of make check.
#
# Prints the rounds, operations and injected failures the guest reported,
# the time, and as the last line run.sh's "N passed, N failed".  Logs:
# $CACHE/logs/soak-TARGET.log, $CACHE/vm/TARGET/console-soak.log.
set -euo pipefail

TIER=soak
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/common.sh"

target=${1:-arm64-debug}
hours=${2:-2}
case $target in
arm64-debug | amd64-debug) ;;
*) die "usage: $0 [arm64-debug|amd64-debug] [HOURS]" ;;
esac
seconds=$(awk -v h="$hours" 'BEGIN { if (h + 0 <= 0) exit 1; printf "%d", h * 3600 }') ||
	die "HOURS must be a positive number, not '$hours'"

ensure_deps
start=$SECONDS
status=0
out=$CACHE/logs/soak-$target.log
mkdir -p "$CACHE/logs"
ACCMAP_SOAK_SECONDS=$seconds "$ACCMAP_ROOT/tools/testing/vm/run.sh" "$target" soak |
	tee "$out" || status=$?
log=$CACHE/vm/$target/console-soak.log
# What the fuzzer's runs said of themselves ("N operations over K seeds,
# M failures injected"), added up.
awk '/^# [0-9]+ operations over [0-9]+ seeds, [0-9]+ failures injected/ {
	     ops += $2; seeds += $5; inj += $7; runs++ }
     /^@@accmap-vm soak-rounds / { rounds = $3 }
     END { printf "[soak] %d rounds, %d fuzzer runs: %d seeds, %d operations, %d failures injected\n",
		  rounds, runs, seeds, ops, inj }' "$log"
say "took $(((SECONDS - start) / 60)) min"
tail -n 1 "$out"
exit "$status"
