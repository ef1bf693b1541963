#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make coverage: line and branch coverage of drivers/accmap under the
# tests, per source file.
#
#   tools/testing/scripts/coverage.sh [TARGET]
#
# One boot of TARGET (default amd64-debug: of the debug kernels, its guest
# alone has device memory) runs every selftest and the fuzzer, with fault
# injection on half the fuzzer's seeds, against an accmap.ko built with
# gcov counters (run.sh with ACCMAP_GCOV=1 copies them out of the guest
# after the rmmod).  lcov and gcov, of the compiler that built the module,
# read them.  Results in $CACHE/coverage:
#   accmap.info   lcov's tracefile, drivers/accmap only
#   coverage.md   per file: lines, branches and functions reached; the
#                 totals; every function no test reached
#   html/         genhtml's pages
# A test run that fails still gives figures for what ran, but the script
# then exits non-zero.  Last line: "N passed, N failed" (the run's).
set -euo pipefail

TIER=coverage
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/common.sh"

target=${1:-amd64-debug}
case $target in
amd64-debug) gcov_tool=gcov ;;
arm64-debug) gcov_tool=aarch64-linux-gnu-gcov ;;
*) die "usage: $0 [amd64-debug|arm64-debug]" ;;
esac

ensure_deps
out=$CACHE/coverage
work=$CACHE/vm/$target
mkdir -p "$out"

# Counters of an earlier run would add to this one's.
find "$work/src/drivers/accmap" -name '*.gcda' -delete 2>/dev/null || true
run_status=0
ACCMAP_GCOV=1 ACCMAP_FUZZ_INJECT=${ACCMAP_FUZZ_INJECT:-half} \
	"$ACCMAP_ROOT/tools/testing/vm/run.sh" "$target" | tee "$out/run.log" ||
	run_status=$?
counts=$(tail -n 1 "$out/run.log")
[ -n "$(find "$work/src/drivers/accmap" -name '*.gcda' -print -quit)" ] ||
	die "the run gave no gcov counters (log: $out/run.log)"

say "reading the counters with lcov ($gcov_tool)"
lcov_args=(--quiet --rc lcov_branch_coverage=1 --gcov-tool "$gcov_tool")
lcov "${lcov_args[@]}" --capture --directory "$work/src/drivers/accmap" \
	--base-directory "$work/src" --output-file "$out/all.info" >"$out/lcov.log" 2>&1 ||
	{ tail -n 20 "$out/lcov.log" >&2; die "lcov --capture failed (log: $out/lcov.log)"; }
# The driver's own files only (not the kernel headers it inlines), named
# from the repository root.
lcov "${lcov_args[@]}" --extract "$out/all.info" "$work/src/drivers/accmap/*" \
	--output-file "$out/accmap.info" >>"$out/lcov.log" 2>&1 ||
	die "lcov --extract failed (log: $out/lcov.log)"
sed -i "s|^SF:$work/src/|SF:|" "$out/accmap.info"
rm -f "$out/all.info"
rm -rf "$out/html"
(cd "$work/src" && genhtml --quiet --branch-coverage --output-directory "$out/html" \
	"$out/accmap.info") >>"$out/lcov.log" 2>&1 ||
	warn "genhtml failed (log: $out/lcov.log); the table does not need it"

python3 "$ACCMAP_ROOT/tools/testing/scripts/coverage-table.py" "$out/accmap.info" \
	"$(date -u +%Y-%m-%d)" "$target" "$(git -C "$ACCMAP_ROOT" rev-parse --short HEAD 2>/dev/null ||
		echo unknown)" >"$out/coverage.md"
sed -n '/^| \*\*all/p' "$out/coverage.md" | while read -r line; do say "$line"; done
say "table: $out/coverage.md, pages: $out/html/index.html"
[ "$run_status" = 0 ] || warn "the test run failed: the figures cover what ran"
printf '%s\n' "$counts"
exit "$run_status"
