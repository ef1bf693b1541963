#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make coverage: line and branch coverage of drivers/accmap under the
# tests, per source file.
#
#   tools/testing/scripts/coverage.sh [TARGET ...]
#
# One boot of each TARGET (default: amd64-debug and arm64-debug, the two
# debug kernels make check boots: amd64's guest alone has device memory,
# arm64's alone a device-tree register window) runs every selftest and
# the fuzzer, with fault injection on half the fuzzer's seeds, against an
# accmap.ko built with gcov counters (run.sh with ACCMAP_GCOV=1 copies
# them out of the guest after the rmmod).  lcov, with the gcov of the
# compiler that built each module, reads them, and adds the targets up
# line by line.  Results in $CACHE/coverage:
#   accmap.info   lcov's tracefile, drivers/accmap only
#   coverage.md   per file: lines, branches and functions reached; the
#                 totals; every function no test reached
#   html/         genhtml's pages
# A test run that fails still gives figures for what ran, but the script
# then exits non-zero.  Last line: "N passed, N failed" (the runs').
set -euo pipefail

TIER=coverage
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/common.sh"

targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(amd64-debug arm64-debug)
for target in "${targets[@]}"; do
	case $target in
	amd64-debug | arm64-debug) ;;
	*) die "usage: $0 [amd64-debug|arm64-debug ...]" ;;
	esac
done

ensure_deps
out=$CACHE/coverage
mkdir -p "$out"
rm -f "$out"/*.info
: >"$out/lcov.log"
lcov_args=(--quiet --rc lcov_branch_coverage=1)
run_status=0
passed=0
failed=0
merge=()
for target in "${targets[@]}"; do
	work=$CACHE/vm/$target
	gcov_tool=gcov
	[ "$target" = arm64-debug ] && gcov_tool=aarch64-linux-gnu-gcov
	# Counters of an earlier run would add to this one's.
	find "$work/src/drivers/accmap" -name '*.gcda' -delete 2>/dev/null || true
	status=0
	ACCMAP_GCOV=1 ACCMAP_FUZZ_INJECT=${ACCMAP_FUZZ_INJECT:-half} \
		"$ACCMAP_ROOT/tools/testing/vm/run.sh" "$target" | tee "$out/run-$target.log" ||
		status=$?
	[ "$status" = 0 ] || run_status=$status
	line=$(tail -n 1 "$out/run-$target.log")
	if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
	else
		failed=$((failed + 1))
	fi
	[ -n "$(find "$work/src/drivers/accmap" -name '*.gcda' -print -quit)" ] ||
		die "the $target run gave no gcov counters (log: $out/run-$target.log)"

	say "reading the $target counters with lcov ($gcov_tool)"
	lcov "${lcov_args[@]}" --gcov-tool "$gcov_tool" --capture \
		--directory "$work/src/drivers/accmap" --base-directory "$work/src" \
		--output-file "$out/all-$target.info" >>"$out/lcov.log" 2>&1 ||
		{ tail -n 20 "$out/lcov.log" >&2; die "lcov --capture failed (log: $out/lcov.log)"; }
	# The driver's own files only (not the kernel headers it inlines),
	# named from the repository root.
	lcov "${lcov_args[@]}" --extract "$out/all-$target.info" \
		"$work/src/drivers/accmap/*" --output-file "$out/$target.info" \
		>>"$out/lcov.log" 2>&1 || die "lcov --extract failed (log: $out/lcov.log)"
	sed -i "s|^SF:$work/src/|SF:|" "$out/$target.info"
	rm -f "$out/all-$target.info"
	merge+=(--add-tracefile "$out/$target.info")
done
lcov "${lcov_args[@]}" "${merge[@]}" --output-file "$out/accmap.info" >>"$out/lcov.log" 2>&1 ||
	die "lcov --add-tracefile failed (log: $out/lcov.log)"
rm -rf "$out/html"
(cd "$ACCMAP_ROOT" && genhtml --quiet --branch-coverage --output-directory "$out/html" \
	"$out/accmap.info") >>"$out/lcov.log" 2>&1 ||
	warn "genhtml failed (log: $out/lcov.log); the table does not need it"

python3 "$ACCMAP_ROOT/tools/testing/scripts/coverage-table.py" "$out/accmap.info" \
	"$(date -u +%Y-%m-%d)" "${targets[*]}" "$(git -C "$ACCMAP_ROOT" rev-parse --short HEAD 2>/dev/null ||
		echo unknown)" >"$out/coverage.md"
sed -n '/^| \*\*all/p' "$out/coverage.md" | while read -r line; do say "$line"; done
say "table: $out/coverage.md, pages: $out/html/index.html"
[ "$run_status" = 0 ] || warn "a test run failed: the figures cover what ran"
result "$passed" "$failed"
