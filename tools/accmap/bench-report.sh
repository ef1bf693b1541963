#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Turns the output of tools/accmap/bench (in a guest's console log) into a
# report on the host:
#
#   tools/accmap/bench-report.sh CONSOLE_LOG OUTDIR
#
# Reads the lines between "@@accmap-vm bench-begin" and "@@accmap-vm
# bench-end rc=N" (the whole file if it has no such markers, for bench's
# own output saved on a board) and writes:
#
#   OUTDIR/bench.md   the report: bench's "@md " lines, then bench's exit
#                     status
#   OUTDIR/bench.dat  the plot data: bench's "@dat " lines (gnuplot blocks:
#                     alloc-to-usable medians, then WRITE/READ bandwidth)
#   OUTDIR/bench.png  both as log-log plots, drawn with gnuplot
#
# then prints bench.md.  Lines of the kernel or of other programs in the
# log are ignored: bench prefixes every line meant for this script.
#
# Exit status: 0 if bench ran to its end with status 0 and every file was
# written; 1 otherwise (what could be written is written, and the reason
# is on stderr).
set -euo pipefail

die() {
	printf 'bench-report: %s\n' "$*" >&2
	exit 1
}

[ $# -eq 2 ] || die "usage: $0 CONSOLE_LOG OUTDIR"
log=$1
out=$2
[ -r "$log" ] || die "cannot read $log"
mkdir -p "$out"

status=0
# The run's lines, without carriage returns (serial consoles add them).
if grep -q '^@@accmap-vm bench-begin' "$log"; then
	run=$(tr -d '\r' <"$log" | sed -n '/^@@accmap-vm bench-begin/,/^@@accmap-vm bench-end/p')
	rc=$(printf '%s\n' "$run" | sed -n 's/^@@accmap-vm bench-end rc=\([0-9]*\).*/\1/p' | tail -n 1)
else
	run=$(tr -d '\r' <"$log")
	rc=
fi

md_lines=$(printf '%s\n' "$run" | sed -n 's/^@md \{0,1\}//p')
[ -n "$md_lines" ] || die "no report lines (\"@md \") in $log"
{
	printf '%s\n' "$md_lines"
	if [ -z "$rc" ] && grep -q '^@@accmap-vm bench-begin' "$log"; then
		printf '**bench did not finish** (no end marker in the console log): the report is incomplete.\n'
	elif [ -n "$rc" ]; then
		printf 'bench exit status: %s%s\n' "$rc" \
			"$([ "$rc" = 0 ] || echo ' (a measurement failed: see the cells marked "failed" and the console log)')"
	fi
} >"$out/bench.md"
if [ -z "$rc" ] && grep -q '^@@accmap-vm bench-begin' "$log"; then
	warn_end="bench did not reach its end marker"
	status=1
elif [ -n "$rc" ] && [ "$rc" != 0 ]; then
	warn_end="bench exited $rc"
	status=1
fi

printf '%s\n' "$run" | sed -n 's/^@dat \{0,1\}//p' >"$out/bench.dat"
# Only alloc-to-usable and WRITE/READ have plot data: a run of other
# sections (bench --only svm,devmem) has none, and no plot.  A run of
# those two that wrote none failed.
plotted=$(printf '%s\n' "$md_lines" | grep -cE '^## (1|2)\. ' || true)
if ! grep -q '^[0-9]' "$out/bench.dat"; then
	rm -f "$out/bench.png"
	if [ "$plotted" != 0 ]; then
		printf '%s\n' "$md_lines"
		die "no plot data (\"@dat \") in $log"
	fi
	cat "$out/bench.md"
	printf 'bench-report: no plot: the sections run have no plot data\n' >&2
	[ -z "${warn_end:-}" ] || printf 'bench-report: %s\n' "$warn_end" >&2
	exit "$status"
fi

# Alloc-to-usable and bandwidth side by side, each where its section ran
# (a data block each, in that order).  Column names come from the
# "# size ..." comment line of each block.
plot() {
	local panels=0 block=0 cols
	local -a script=()

	grep -q '^# alloc-to-usable' "$out/bench.dat" && panels=$((panels + 1))
	grep -q '^# bandwidth' "$out/bench.dat" && panels=$((panels + 1))
	[ "$panels" -gt 0 ] || return 1
	if grep -q '^# alloc-to-usable' "$out/bench.dat"; then
		cols=$(awk '/^# size/ { n++ } /^# size/ && n == 1 { print NF - 2; exit }' "$out/bench.dat")
		script+=(
			'set title "alloc-to-usable (median, lower is better)"'
			'set ylabel "microseconds"'
			'set logscale y 10'
			'set format y "%g"'
			"header = system(\"awk '/^# size/ { n++ } /^# size/ && n == 1 { \$1 = \$2 = \\\"\\\"; print; exit }' '$out/bench.dat'\")"
			"plot for [i = 2:$((cols + 1))] \"$out/bench.dat\" index 0 using 1:i with linespoints title word(header, i - 1)"
		)
		block=1
	fi
	if grep -q '^# bandwidth' "$out/bench.dat"; then
		cols=$(awk -v b=$((block + 1)) '/^# size/ { n++ } /^# size/ && n == b { print NF - 2; exit }' "$out/bench.dat")
		script+=(
			'set title "WRITE / READ against memcpy (median, higher is better)"'
			'set ylabel "GB/s"'
			'unset logscale y'
			'set logscale x 2'
			'set yrange [0:*]'
			"header = system(\"awk '/^# size/ { n++ } /^# size/ && n == $((block + 1)) { \$1 = \$2 = \\\"\\\"; print; exit }' '$out/bench.dat'\")"
			"plot for [i = 2:$((cols + 1))] \"$out/bench.dat\" index $block using 1:i with linespoints title word(header, i - 1)"
		)
	fi
	{
		printf '%s\n' \
			"set terminal pngcairo size $((panels * 700)),560 font \",10\" noenhanced" \
			"set output \"$out/bench.png\"" \
			'set datafile missing NaN' 'set key top left' 'set logscale xy 2' 'set grid' \
			'set format x "%.0b %BB"' 'set xlabel "buffer size"' \
			"set multiplot layout 1,$panels"
		printf '%s\n' "${script[@]}" 'unset multiplot'
	} | gnuplot
}

if ! command -v gnuplot >/dev/null 2>&1; then
	rm -f "$out/bench.png"
	warn_plot="gnuplot not found (Debian: gnuplot-nox): no bench.png"
	status=1
elif ! plot; then
	rm -f "$out/bench.png"
	warn_plot="gnuplot failed: no bench.png"
	status=1
fi

cat "$out/bench.md"
[ -z "${warn_end:-}" ] || printf 'bench-report: %s\n' "$warn_end" >&2
[ -z "${warn_plot:-}" ] || printf 'bench-report: %s\n' "$warn_plot" >&2
exit "$status"
