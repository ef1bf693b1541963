#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build hygiene, each check pass/fail:
#   build-LINE-ARCH   one build against each kernel line accmap runs on,
#                     with W=1 and sparse (C=2) together: Debian 11's 5.10
#                     and 12's 6.1 and 6.12 headers (amd64, and arm64
#                     cross-built; 6.12 also with 16 KiB pages, where
#                     PAGE_SHIFT 14 changes what constant expressions the
#                     compiler sees, and in its PREEMPT_RT flavour, where
#                     spinlock_t is a sleeping lock), and the build tree of accmap's
#                     arm64 debug kernel, the newest line Debian packages
#                     (build-kernel.sh debug arm64), which turns
#                     Debian 12's sparse off as too old (W=1 alone
#                     there; the log says so).  Fails
#                     on any compiler warning (W=1), on any sparse report
#                     about our files, and on a failed build; sparse
#                     reports about the kernel's own headers are counted,
#                     not failed
#   checkpatch  checkpatch.pl --strict --no-tree -f on every .c/.h under
#               drivers/ include/ tools/ (user-space code included), but
#               the qemu device's (tools/testing/vm/qemu/)
#   qemu-checkpatch  qemu's own scripts/checkpatch.pl (from Debian's qemu
#               source, which build-qemu.sh --source fetches) on the qemu
#               device's files
#   kernel-doc  kernel-doc -none -v on drivers/accmap/*.[ch] and the uapi
#               header: no output (6.1's kernel-doc has no -Wall; -v is
#               its way of asking for the extra warnings)
# A last check runs when shellcheck is installed: it reads the scripts
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

# --- W=1 and sparse, one build per kernel line -----------------------------
# Files that are ours, in the form compilers and sparse print them.
ours_re='(^|/)(drivers/accmap/|include/uapi/linux/accmap\.h)'

# line_check LINE TARGET KDIR [MAKE ARGS...]: the W=1 + sparse build of
# the tree against KDIR (module_build), in the work directory of the VM
# target that boots that line, so that a build the VM tier made of the
# same files is read rather than made again (make check runs lint after
# the VM tiers), and one made here serves the tier.  gcc's warnings end in
# their option ("[-Wname]") and fail wherever they point; sparse's carry
# none and fail only when they point at our files.  Anything else that
# says "warning:" (modpost, the linker) fails too.
line_check() {
	local kdir=$3 name=build-$1 src=$CACHE/vm/$2/src status=0 noise
	shift 3
	say "W=1 and sparse: build against $kdir${*:+ ($*)}"
	if [ ! -f "$kdir/Makefile" ]; then
		warn "$kdir missing: run install-deps.sh"
		check_done "$name" 1
		return
	fi
	mkdir -p "${src%/src}"
	module_build "$src" "$kdir" "$@" || status=$?
	cp "$src.log" "$work/$name.log"
	grep -i 'warning:\|error:' "$work/$name.log" >"$work/$name-all.txt" || true
	# A sparse report about a kernel header: file:line:col, no [-W...].
	grep -vE "${ours_re}" "$work/$name-all.txt" |
		grep -E '^[^ :]+:[0-9]+:[0-9]+: (warning|error):' |
		grep -vE '\[-W[^]]*\]$' >"$work/$name-noise.txt" || true
	grep -vxF -f "$work/$name-noise.txt" "$work/$name-all.txt" \
		>"$work/$name-warnings.txt" || true
	# Newer kernels (7.3; not 6.12) check that sparse knows __typeof_unqual__
	# and turn it off with a make warning otherwise (Debian 12's 0.6.4
	# does not): W=1 alone there, and the log says so.
	if grep -q 'C=2 specified, but .* not up to date' "$work/$name.log"; then
		say "$name: this kernel turned sparse off (sparse $(sparse --version 2>/dev/null || echo missing) is too old for it): W=1 only"
	fi
	noise=$(wc -l <"$work/$name-noise.txt")
	[ "$noise" = 0 ] || say "$name: $noise sparse report(s) about kernel headers ignored (see $work/$name.log)"
	if [ "$status" != 0 ]; then
		tail -n 30 "$work/$name.log" >&2
		warn "$name: build failed (exit $status)"
		check_done "$name" 1
	elif [ -s "$work/$name-warnings.txt" ]; then
		indent <"$work/$name-warnings.txt" >&2
		check_done "$name" 1
	else
		check_done "$name" 0
	fi
}

# Every line accmap runs on: Debian 11's 5.10, Debian 12's 6.1 and 6.12
# (amd64 headers, and
# the arm64 ones cross-built, 6.12's also with 16 KiB pages and in its
# PREEMPT_RT flavour), and the build
# tree of accmap's arm64 debug kernel, the newest line (built here if it is
# not yet; seconds if it is).
arm64=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
ckver=$(cat "$CACHE/compat-kver" 2>/dev/null || true)
crel=$(compat_release)
ml_series=$(mainline_source | cut -d' ' -f1)
k510_amd64=$(k510_abi amd64)
k510_arm64=$(k510_abi arm64)
"$ACCMAP_ROOT/tools/testing/vm/build-kernel.sh" debug arm64 >"$work/kernel-newest.log" 2>&1 ||
	{ tail -n 20 "$work/kernel-newest.log" >&2; warn "the newest line's kernel did not build"; }
line_check 6.1-amd64 amd64 "$kdir"
line_check 6.1-arm64 arm64 "$CACHE/arm64/headers/usr/src/linux-headers-$abi-arm64" "${arm64[@]}"
line_check 6.12-amd64 amd64-6.12 "/usr/src/linux-headers-${ckver:-none}"
line_check 6.12-arm64 arm64-6.12 "$CACHE/arm64/$crel/headers/usr/src/linux-headers-$crel-arm64" \
	"${arm64[@]}"
line_check 6.12-arm64-16k arm64-16k \
	"$CACHE/arm64/$crel/headers-16k/usr/src/linux-headers-$crel-arm64-16k" "${arm64[@]}"
line_check 6.12-rt-amd64 amd64-rt \
	"$CACHE/amd64/$crel/headers-rt/usr/src/linux-headers-$crel-rt-amd64"
line_check 6.12-rt-arm64 arm64-rt \
	"$CACHE/arm64/$crel/headers-rt/usr/src/linux-headers-$crel-rt-arm64" "${arm64[@]}"
line_check "$ml_series-arm64" arm64-debug "$(kernel_dir debug arm64)" "${arm64[@]}"
# Debian 11's headers name gcc-10, which Debian 12 lacks: the host's
# compilers instead, as run.sh builds for the 5.10 guests.
line_check 5.10-amd64 amd64-5.10 \
	"$CACHE/amd64/$k510_amd64/headers/usr/src/linux-headers-$k510_amd64-amd64" CC=gcc
line_check 5.10-arm64 arm64-5.10 \
	"$CACHE/arm64/$k510_arm64/headers/usr/src/linux-headers-$k510_arm64-arm64" \
	"${arm64[@]}" CC=aarch64-linux-gnu-gcc

# --- checkpatch -------------------------------------------------------
# Relative paths from the repository root, so that checkpatch knows which
# files are uapi headers (it exempts include/uapi/ from BIT()).
# The qemu device is qemu's code, in qemu's style: qemu's checkpatch
# below reads it.
qemu_dir=tools/testing/vm/qemu/
mapfile -t cfiles < <(project_files 'drivers/*.c' 'drivers/*.h' \
	'include/*.c' 'include/*.h' 'tools/*.c' 'tools/*.h' | grep -v "^$qemu_dir")
say "checkpatch --strict on ${#cfiles[@]} file(s)"
bad=0
: >"$work/checkpatch.log"
# One checkpatch per file, as many at a time as there are cores (perl runs
# on one); each file's report goes to $cpdir/<its index> and is read back
# in the list's order.
cpdir=$work/checkpatch.d
rm -rf "$cpdir"
mkdir -p "$cpdir"
# shellcheck disable=SC2016 # expanded by the bash that xargs starts
cp_one='timeout 120 perl "$0" --strict --no-tree --no-summary --terse --show-types \
	-f "$2" >"$CPDIR/$1" 2>&1 || true'
for i in "${!cfiles[@]}"; do
	if [ -f "${cfiles[$i]}" ]; then
		printf '%s\0%s\0' "$i" "${cfiles[$i]}"
	fi
done | CPDIR=$cpdir xargs -0 -r -n 2 -P "$(nproc)" bash -c "$cp_one" "$src/scripts/checkpatch.pl"
for i in "${!cfiles[@]}"; do
	f=${cfiles[$i]}
	[ -f "$f" ] || continue
	out=$(cat "$cpdir/$i" 2>/dev/null || echo "checkpatch left no report for $f")
	if [ -n "$out" ]; then
		printf '%s\n' "$out" | tee -a "$work/checkpatch.log" | indent >&2
		bad=$((bad + 1))
	fi
done
[ "${#cfiles[@]}" -gt 0 ] || { warn "no C files found"; bad=1; }
[ "$bad" = 0 ] || warn "checkpatch: $bad file(s) with reports"
check_done checkpatch "$([ "$bad" = 0 ] && echo 0 || echo 1)"

# --- qemu's checkpatch on the qemu device -----------------------------
# From the Debian source of the qemu the host runs (build-qemu.sh fetches
# and unpacks it into the cache once).
mapfile -t qfiles < <(project_files "$qemu_dir*.c" "$qemu_dir*.h")
if qsrc=$("$ACCMAP_ROOT/tools/testing/vm/build-qemu.sh" --source | tail -n 1); then
	say "qemu's checkpatch on ${#qfiles[@]} file(s) of the qemu device"
	out=$(for f in "${qfiles[@]}"; do
		timeout 120 perl "$qsrc/scripts/checkpatch.pl" --no-tree -q -f "$f" 2>&1 |
			grep -E '^(ERROR|WARNING)|^#[0-9]+: FILE' || true
	done)
	if [ -n "$out" ] || [ "${#qfiles[@]}" = 0 ]; then
		printf '%s\n' "${out:-no files under $qemu_dir}" | indent >&2
		check_done qemu-checkpatch 1
	else
		check_done qemu-checkpatch 0
	fi
else
	warn "no qemu source: qemu's checkpatch cannot run"
	check_done qemu-checkpatch 1
fi

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
