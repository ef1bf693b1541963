#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The GPUReplay importer's fuzzing and its corpus regression test.
#
#   tools/testing/fuzz/run.sh check             regression test (fast)
#   tools/testing/fuzz/run.sh fuzz [SECONDS] [JOBS]
#                                               libFuzzer, bounded in time
#
# check: builds gpureplay_test with AddressSanitizer and UBSan and runs it:
# the hostile cases built into it, every input of the corpus kept in git
# (corpus/gpureplay), and GPUReplay's MNIST recording if it lies beside
# the repository.  Last line "N passed, N failed".
#
# fuzz: builds gpureplay_fuzz (clang -fsanitize=fuzzer,address,undefined)
# and runs it for SECONDS (default 300) in JOBS processes (default 1),
# starting from the git corpus; new inputs go to $CACHE/fuzz/corpus, never
# into git; crashes to $CACHE/fuzz/crashes.  Prints executions, time and
# crashes; fails if there was a crash.
set -euo pipefail

mode=${1:-check}
TIER=fuzz
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/../scripts/common.sh"

fuzz=$ACCMAP_ROOT/tools/testing/fuzz
work=$CACHE/fuzz
mkdir -p "$work"
srcs=("$fuzz/gpureplay_fuzz.c" "$fuzz/gpureplay_edit.c" "$ACCMAP_ROOT/tools/accmap/gpureplay.c"
      "$ACCMAP_ROOT/tools/lib/accmap/recording.c")
cppflags=(-D_GNU_SOURCE "-I$ACCMAP_ROOT/include/uapi" "-I$ACCMAP_ROOT/tools/lib/accmap"
	  "-I$ACCMAP_ROOT/tools/accmap" "-I$fuzz"
	  '-D__printf(a,b)=__attribute__((format(printf,a,b)))')

for d in "$ACCMAP_ROOT/.." "$ACCMAP_ROOT/../.."; do
	if [ -z "${ACCMAP_GPUREPLAY_DIR:-}" ] && [ -d "$d/shared/recordings/gpureplay-mnist" ]; then
		export ACCMAP_GPUREPLAY_DIR=$d/shared/recordings/gpureplay-mnist
	fi
done

case $mode in
check)
	say "building gpureplay_test (ASan, UBSan)"
	gcc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Wall -Wextra \
		-Werror "${cppflags[@]}" -o "$work/gpureplay_test" "$fuzz/gpureplay_test.c" \
		"${srcs[@]}" >"$work/build-test.log" 2>&1 ||
		{ cat "$work/build-test.log" >&2; die "gpureplay_test build failed"; }
	[ -n "${ACCMAP_GPUREPLAY_DIR:-}" ] || say "no MNIST recording beside the repository: not imported"
	"$work/gpureplay_test" "$fuzz/corpus/gpureplay"
	;;
fuzz)
	secs=${2:-300}
	jobs=${3:-1}
	command -v clang >/dev/null || die "no clang: run tools/testing/scripts/install-deps.sh"
	say "building gpureplay_fuzz (libFuzzer, ASan, UBSan)"
	clang -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-DGPUREPLAY_FUZZ_ENTRY=LLVMFuzzerTestOneInput "${cppflags[@]}" -o "$work/gpureplay_fuzz" "${srcs[@]}" \
		>"$work/build-fuzz.log" 2>&1 ||
		{ cat "$work/build-fuzz.log" >&2; die "gpureplay_fuzz build failed"; }
	mkdir -p "$work/corpus" "$work/crashes" "$work/logs"
	rm -f "$work"/logs/fuzz-*.log
	say "fuzzing for $secs s in $jobs job(s); corpus $work/corpus"
	start=$SECONDS
	set +e
	(cd "$work/logs" && "$work/gpureplay_fuzz" -max_total_time="$secs" -jobs="$jobs" \
		-workers="$jobs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
		-artifact_prefix="$work/crashes/" -print_final_stats=1 \
		"$work/corpus" "$fuzz/corpus/gpureplay" >"$work/logs/fuzz.log" 2>&1)
	rc=$?
	set -e
	# One job logs to fuzz.log; with -jobs, each job to fuzz-N.log (and
	# fuzz.log repeats them).
	logs=("$work/logs/fuzz.log")
	[ "$jobs" -gt 1 ] && logs=("$work"/logs/fuzz-*.log)
	execs=$(cat "${logs[@]}" | sed -n 's/^stat::number_of_executed_units: *//p' |
		awk '{ s += $1 } END { print s + 0 }')
	crashes=$(find "$work/crashes" -type f -newer "$work/gpureplay_fuzz" | wc -l)
	say "$execs executions in $((SECONDS - start)) s ($jobs job(s)), $crashes crash(es), exit $rc"
	if [ "$crashes" != 0 ] || [ "$rc" != 0 ]; then
		tail -n 40 "$work"/logs/fuzz*.log >&2
		result 0 1
		exit 1
	fi
	result 1 0
	;;
*)
	die "usage: $0 check | fuzz [SECONDS] [JOBS]"
	;;
esac
