#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build hygiene, six checks, each pass/fail:
#   w1          W=1 build against the Debian 6.1 amd64 headers: no warning
#   compat      W=1 build against the newest (6.12) headers Debian 12
#               ships: no warning
#   w1-16k      W=1 cross build against the same release's arm64 headers
#               with 16 KiB pages (-arm64-16k): no warning
#   sparse      C=2 (sparse on every file): no warning about our files
#   checkpatch  checkpatch.pl --strict --no-tree -f on every .c/.h under
#               drivers/ include/ tools/ (user-space code included)
#   kernel-doc  kernel-doc -none -v on drivers/accmap/*.[ch] and the uapi
#               header: no output (6.1's kernel-doc has no -Wall; -v is
#               its way of asking for the extra warnings)
# A seventh check runs when shellcheck is installed: it reads the scripts
# under tools/testing and .ci/run.
#
# Last line: "N passed, N failed" over the checks.  Logs: $CACHE/lint/.
set -euo pipefail

TIER=lint
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/common.sh"

ensure_deps
abi=$(kernel_abi)
kdir=/usr/src/linux-headers-$abi-amd64
[ -f "$kdir/Makefile" ] || die "$kdir missing: run install-deps.sh"
src=$(linux_source)
work=$CACHE/lint
mkdir -p "$work"
cd "$ACCMAP_ROOT"

passed=0
failed=0
check_done() {	# check_done NAME OK(0|1)
	if [ "$2" = 0 ]; then
		say "PASS $1"
		passed=$((passed + 1))
	else
		say "FAIL $1"
		failed=$((failed + 1))
	fi
}

# Files that are ours, in the form compilers and sparse print them.
ours_re='(^|/)(drivers/accmap/|include/uapi/linux/accmap\.h)'

# --- W=1 --------------------------------------------------------------
# A fresh copy, so every file is compiled (and warns) again.
say "W=1 build against $kdir"
rm -rf "$work/w1"
sync_tree "$work/w1"
status=0
timeout 900 make -C "$kdir" M="$work/w1" W=1 -j"$(nproc)" modules \
	>"$work/w1.log" 2>&1 || status=$?
if [ "$status" != 0 ]; then
	tail -n 30 "$work/w1.log" >&2
	warn "W=1 build failed (exit $status)"
	check_done w1 1
elif grep -i 'warning:' "$work/w1.log" >"$work/w1-warnings.txt"; then
	indent <"$work/w1-warnings.txt" >&2
	check_done w1 1
else
	check_done w1 0
fi

# --- compat: W=1 against the newest kernel Debian 12 ships ------------
ckver=$(cat "$CACHE/compat-kver" 2>/dev/null || true)
ckdir=/usr/src/linux-headers-$ckver
say "W=1 build against $ckdir (compat.h)"
if [ -z "$ckver" ] || [ ! -f "$ckdir/Makefile" ]; then
	warn "no compat headers: run install-deps.sh"
	check_done compat 1
else
	rm -rf "$work/compat"
	sync_tree "$work/compat"
	status=0
	timeout 900 make -C "$ckdir" M="$work/compat" W=1 -j"$(nproc)" modules \
		>"$work/compat.log" 2>&1 || status=$?
	if [ "$status" != 0 ]; then
		tail -n 30 "$work/compat.log" >&2
		warn "compat build failed (exit $status)"
		check_done compat 1
	elif grep -i 'warning:' "$work/compat.log" >"$work/compat-warnings.txt"; then
		indent <"$work/compat-warnings.txt" >&2
		check_done compat 1
	else
		check_done compat 0
	fi
fi

# --- w1-16k: W=1 cross build for arm64 with 16 KiB pages ----------------
# PAGE_SHIFT 14 changes what constant expressions the compiler sees
# (shifts, comparisons with SZ_* sizes); the arm64-16k guest runs this
# module, built without W=1.
k16rel=${ckver%-amd64}
k16kdir=$CACHE/arm64/$k16rel/headers-16k/usr/src/linux-headers-$k16rel-arm64-16k
say "W=1 build against $k16kdir"
if [ -z "$ckver" ] || [ ! -f "$k16kdir/Makefile" ]; then
	warn "no arm64-16k headers: run install-deps.sh"
	check_done w1-16k 1
else
	rm -rf "$work/w1-16k"
	sync_tree "$work/w1-16k"
	status=0
	timeout 900 make -C "$k16kdir" M="$work/w1-16k" ARCH=arm64 \
		CROSS_COMPILE=aarch64-linux-gnu- W=1 -j"$(nproc)" modules \
		>"$work/w1-16k.log" 2>&1 || status=$?
	if [ "$status" != 0 ]; then
		tail -n 30 "$work/w1-16k.log" >&2
		warn "arm64-16k build failed (exit $status)"
		check_done w1-16k 1
	elif grep -i 'warning:' "$work/w1-16k.log" >"$work/w1-16k-warnings.txt"; then
		indent <"$work/w1-16k-warnings.txt" >&2
		check_done w1-16k 1
	else
		check_done w1-16k 0
	fi
fi

# --- sparse -----------------------------------------------------------
say "sparse (C=2) against $kdir"
rm -rf "$work/sparse"
sync_tree "$work/sparse"
status=0
timeout 900 make -C "$kdir" M="$work/sparse" C=2 CHECK=sparse -j"$(nproc)" modules \
	>"$work/sparse.log" 2>&1 || status=$?
# sparse reports against the kernel's own headers are not ours to fix;
# count them for information, fail only on reports about our files.
grep -E '(warning|error):' "$work/sparse.log" >"$work/sparse-all.txt" || true
grep -E "${ours_re}[^:]*:[0-9]+:[0-9]+: (warning|error):" "$work/sparse-all.txt" \
	>"$work/sparse-ours.txt" || true
noise=$(($(wc -l <"$work/sparse-all.txt") - $(wc -l <"$work/sparse-ours.txt")))
[ "$noise" = 0 ] || say "sparse: $noise report(s) about kernel headers ignored (see $work/sparse.log)"
if [ "$status" != 0 ]; then
	tail -n 30 "$work/sparse.log" >&2
	warn "sparse build failed (exit $status)"
	check_done sparse 1
elif [ -s "$work/sparse-ours.txt" ]; then
	indent <"$work/sparse-ours.txt" >&2
	check_done sparse 1
else
	check_done sparse 0
fi

# --- checkpatch -------------------------------------------------------
# Relative paths from the repository root, so that checkpatch knows which
# files are uapi headers (it exempts include/uapi/ from BIT()).
mapfile -t cfiles < <(project_files 'drivers/*.c' 'drivers/*.h' \
	'include/*.c' 'include/*.h' 'tools/*.c' 'tools/*.h')
say "checkpatch --strict on ${#cfiles[@]} file(s)"
bad=0
: >"$work/checkpatch.log"
for f in "${cfiles[@]}"; do
	[ -f "$f" ] || continue
	out=$(timeout 120 perl "$src/scripts/checkpatch.pl" --strict --no-tree \
		--no-summary --terse --show-types -f "$f" 2>&1 || true)
	if [ -n "$out" ]; then
		printf '%s\n' "$out" | tee -a "$work/checkpatch.log" | indent >&2
		bad=$((bad + 1))
	fi
done
[ "${#cfiles[@]}" -gt 0 ] || { warn "no C files found"; bad=1; }
[ "$bad" = 0 ] || warn "checkpatch: $bad file(s) with reports"
check_done checkpatch "$([ "$bad" = 0 ] && echo 0 || echo 1)"

# --- kernel-doc -------------------------------------------------------
mapfile -t kfiles < <(ls drivers/accmap/*.c drivers/accmap/*.h \
	include/uapi/linux/accmap.h 2>/dev/null)
say "kernel-doc -none -v on ${#kfiles[@]} file(s)"
out=$(timeout 120 perl "$src/scripts/kernel-doc" -none -v "${kfiles[@]}" 2>&1 |
	grep -v ': info: Scanning doc for ' || true)
if [ -n "$out" ]; then
	printf '%s\n' "$out" | indent >&2
	check_done kernel-doc 1
else
	check_done kernel-doc 0
fi

# --- shellcheck -------------------------------------------------------
if command -v shellcheck >/dev/null; then
	mapfile -t sfiles < <(project_files 'tools/testing/*.sh' '.ci/run')
	say "shellcheck on ${#sfiles[@]} script(s)"
	if out=$(timeout 120 shellcheck -x -P SCRIPTDIR "${sfiles[@]}" 2>&1); then
		check_done shellcheck 0
	else
		printf '%s\n' "$out" | indent >&2
		check_done shellcheck 1
	fi
fi

result "$passed" "$failed"
