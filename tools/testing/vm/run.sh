#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boots a kernel in qemu (TCG) with accmap.ko and runs the user-space
# selftests (or the demo, or the benchmarks) against it.
#
#   tools/testing/vm/run.sh [TARGET] [TESTS|demo|bench]
#
# TARGET is one of
#   amd64, arm64   the stock Debian 12 6.1 kernel of that architecture
#   amd64-6.12, arm64-6.12
#                  the stock Debian 12 6.12 kernel (6.12.N+deb12, the
#                  release of the 6.12 headers install-deps.sh installed)
#   arm64-16k      the same arm64 6.12 release in Debian's 16 KiB-page
#                  flavour (-arm64-16k), on a CPU model with that granule
#   amd64-rt, arm64-rt
#                  the same 6.12 release in Debian's PREEMPT_RT flavour
#                  (-rt-amd64, -rt-arm64)
#   amd64-5.10, arm64-5.10
#                  the stock Debian 11 5.10 kernel (5.10.0-N, per
#                  architecture as install-deps.sh chose it), the line of
#                  L4T R35 boards
#   amd64-debug, arm64-debug
#                  accmap's debug kernel (lockdep, kmemleak, fault
#                  injection, ...; KASAN on arm64); the fuzzer injects failures in half
#                  its seeds there unless ACCMAP_FUZZ_INJECT says otherwise.
#                  Both are the newest kernel line Debian packages
#                  (linux-source-X.Y from unstable, experimental or
#                  backports), with device-private memory
#   amd64-perf, arm64-perf
#                  accmap's perf kernel (no debug options, 6.1)
# Ours are built by build-kernel.sh (seconds when already
# built; arm64 cross-compiled); they have the dma-buf heaps,
# udmabuf and vgem built in, where the stock kernels load vgem as a
# module.
#
# TESTS is optional: a file with one test name per line, or a comma
# separated list of names, picked from the selftests' tests.list (default:
# all of them, in tests.list order).  "demo" runs accmap-demo instead;
# "expect" prints what tools/testing/vm/tiers.txt says the target's
# tests must have and run, and stops.
# "bench" runs tools/accmap/bench (with $BENCH_ARGS, if set) and writes
# its report to $CACHE/bench (tools/accmap/bench-report.sh).  "soak"
# runs the fuzzer and accmap_stress in turns for $ACCMAP_SOAK_SECONDS
# (tools/testing/scripts/soak.sh, make soak).
#
# ACCMAP_VM_PACKAGES=DIR runs the user space of the Debian packages in DIR
# (deb-build.sh's $CACHE/deb/out) instead of the build tree's: the
# selftests that use libaccmap linked to libaccmap-dev and loading
# libaccmap1's libaccmap.so.1, the demo's programs from accmap-tools,
# criu's plugin from criu-plugin-accmap (tools/testing/vm/pkg-pack.sh).
#
# ACCMAP_GCOV=1 builds accmap.ko with gcov counters (a kernel with
# CONFIG_GCOV_KERNEL: the debug kernels) and puts the counters the guest
# sends back after the rmmod next to the objects in $CACHE/vm/<target>/src
# (tools/testing/scripts/coverage.sh, make coverage).
#
# Steps: build accmap.ko against the kernel's build tree (the arm64 one
# cross-compiled), build the user programs statically (but see
# ACCMAP_VM_PACKAGES), pack a busybox
# initramfs (with the distro's drm/vgem modules for a stock kernel, and
# vivid's for accmap_v4l2 and the demo, dependencies taken from
# modules.dep), boot the kernel under a timeout,
# parse the console.  Build trees, the initramfs and the console log live
# in $CACHE/vm/<target>.
#
# Passes only if the guest reached its end marker, accmap.ko loaded and
# unloaded, at least one test ran, every test program exited 0 and its
# TAP output is whole (one plan line, not 1..0; results numbered 1..N in
# order, as many as planned; each one "ok", SKIP counting as a failure),
# the guest has exactly the features tools/testing/vm/tiers.txt gives
# its tier (criu, vivid, device memory, fault injection, the armhf
# compat tier, CMA, null_blk) and ran exactly the programs and per-program
# test counts the table gives it (a run that picks its programs: those),
# and the kernel log (the whole console stream, and the guest's dmesg at
# the end) holds no warning, oops, lockdep, KASAN, kmemleak or
# debug-objects report and no taint beyond the expected O (out-of-tree)
# and E (unsigned) flags.  On
# the debug kernel the guest asks kmemleak for a scan once accmap is
# unloaded (any leak fails the run), and lockdep must still be on at the
# end (a checker that turned itself off would hide later reports).
#
# Last line: "N passed, N failed" (TAP results, plus one failure for each
# check above that does not hold).
set -euo pipefail

target=${1:-amd64}
mode=${2:-tests}
TIER=vm-$target
arch=${target%%-*}
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/../scripts/common.sh"
# shellcheck source=tools/testing/vm/tiers.sh
. "$ACCMAP_ROOT/tools/testing/vm/tiers.sh"

# A stock Debian kernel of the given line, or accmap's own kernel of the
# given flavor.
line=
flavor=
case $target in
amd64 | arm64) line=6.1 ;;
amd64-6.12 | arm64-6.12 | arm64-16k | amd64-rt | arm64-rt) line=6.12 ;;
amd64-5.10 | arm64-5.10) line=5.10 ;;
amd64-debug | amd64-perf | arm64-perf | arm64-debug) flavor=${target#*-} ;;
*) die "usage: $0 [amd64|arm64|amd64-6.12|arm64-6.12|arm64-16k|amd64-rt|arm64-rt|amd64-5.10|arm64-5.10|amd64-debug|arm64-debug|amd64-perf|arm64-perf] [TESTS|demo|bench|soak|expect]" ;;
esac
if [ "$mode" = soak ]; then
	[ "$flavor" = debug ] || die "soak runs in a debug kernel (amd64-debug, arm64-debug)"
	soak_seconds=${ACCMAP_SOAK_SECONDS:-7200}
	case $soak_seconds in
	'' | *[!0-9]*) die "ACCMAP_SOAK_SECONDS must be a whole number of seconds" ;;
	esac
fi
# The debug kernels inject failures into half the fuzzer's seeds.
if [ "$flavor" = debug ]; then
	ACCMAP_FUZZ_INJECT=${ACCMAP_FUZZ_INJECT-half}
fi
# fuzz_plan: the number of tests the fuzzer plans with the settings the
# guest gets (fuzz.c's main): one a seed, the total, and the count of
# injected failures when injecting at the default size, or when
# ACCMAP_FUZZ_MIN_INJECTED asks for one.
fuzz_plan() {
	local seeds=8 checks=0
	[ -z "${ACCMAP_FUZZ_SEED:-}" ] || seeds=1
	[ -z "${ACCMAP_FUZZ_SEEDS:-}" ] || seeds=$ACCMAP_FUZZ_SEEDS
	if [ -n "${ACCMAP_FUZZ_MIN_INJECTED:-}" ]; then
		[ "$ACCMAP_FUZZ_MIN_INJECTED" = 0 ] || checks=1
	elif [ "${ACCMAP_FUZZ_INJECT:-none}" != none ] &&
		[ -z "${ACCMAP_FUZZ_SEEDS:-}${ACCMAP_FUZZ_SEED:-}${ACCMAP_FUZZ_OPS:-}" ]; then
		checks=1
	fi
	echo $((seeds + 1 + checks))
}
# What the tier must have and run (tiers.txt): want_feature[NAME] and,
# for a test run, want_count[PROGRAM] in want_order.
declare -A want_feature=() want_count=()
feature_order=()
want_order=()
table_mode=$mode
case $mode in
demo | bench | soak) ;;
*) table_mode=tests ;;
esac
if [ "$table_mode" = tests ] || [ "$mode" = demo ]; then
	table=$(tier_features "$target" "$table_mode" 2>&1) || die "$table"
	while read -r name value; do
		want_feature[$name]=$value
		feature_order+=("$name")
	done <<<"$table"
fi
if [ "$table_mode" = tests ]; then
	table=$(tier_programs "$target" tests "$(fuzz_plan)" 2>&1) || die "$table"
	while read -r name value; do
		[ -n "$name" ] || continue
		want_count[$name]=$value
		want_order+=("$name")
	done <<<"$table"
fi
if [ "$mode" = expect ]; then
	total=0
	say "$target must have: $(for f in "${feature_order[@]}"; do printf '%s=%s ' "$f" "${want_feature[$f]}"; done)"
	for p in "${want_order[@]}"; do
		say "$(printf '%-22s %4d tests' "$p" "${want_count[$p]}")"
		total=$((total + want_count[$p]))
	done
	say "${#want_order[@]} programs, $total tests"
	exit 0
fi

# The debug kernel runs everything several times slower; the benchmarks
# repeat every case.
timing=$flavor
case $target in *-rt) timing=rt ;; esac
case $timing/$mode in
# A soak's fuzzer runs at full size under injection, on a host that may be
# busy: an hour per program before the guest kills it.
debug/soak) default_qemu=3000 default_test=3600 ;;
# A full-size fuzzer (8 seeds, 4 injecting) ran 1,194 s on arm64-debug on a
# loaded host.
debug/*) default_qemu=3600 default_test=1800 ;;
*/bench) default_qemu=2400 default_test=2100 ;;
# arm64's PREEMPT_RT kernel runs the fuzzer over twice as slowly as the
# stock one under TCG: 8 seeds took 245 s on arm64-rt (killed at the
# 240 s limit) and 108 s on arm64-6.12, one run after the other on one
# host.
rt/*) default_qemu=1200 default_test=600 ;;
*) default_qemu=600 default_test=240 ;;
esac
TEST_TIMEOUT=${ACCMAP_TEST_TIMEOUT:-$default_test}
# A soak's last round may begin just before its end: room for a whole one.
[ "$mode" = soak ] && default_qemu=$((soak_seconds + 2 * TEST_TIMEOUT + 1200))
QEMU_TIMEOUT=${ACCMAP_QEMU_TIMEOUT:-$default_qemu}
BUILD_TIMEOUT=${ACCMAP_MODULE_BUILD_TIMEOUT:-900}

ensure_deps
# Where install-deps.sh unpacked the stock kernel's image (and, for arm64,
# its headers; the amd64 headers are installed in /usr/src, but for 5.10).
# The kernel's flavour is its release's suffix: the architecture, or
# arm64-16k or rt-arm64; its files are in image and headers with the
# suffix -16k or -rt.
kflavour=$arch
ksuffix=
[ "$target" = arm64-16k ] && kflavour=arm64-16k ksuffix=-16k
case $target in *-rt) kflavour=rt-$arch ksuffix=-rt ;; esac
case $line in
6.12)
	release=$(compat_release)
	image=$CACHE/$arch/$release/image$ksuffix
	headers=$CACHE/$arch/$release/headers$ksuffix
	;;
5.10)
	release=$(k510_abi "$arch")
	image=$CACHE/$arch/$release/image
	headers=$CACHE/$arch/$release/headers
	;;
*)
	release=$(kernel_abi)
	image=$CACHE/$arch/image
	headers=$CACHE/$arch/headers
	;;
esac
kver=$release-$kflavour
mem=1024
[ "$mode" = bench ] && mem=2048
# ACCMAP_VM_MEM (MiB) overrides it: a guest with RAM above 4 GiB, say.
mem=${ACCMAP_VM_MEM:-$mem}
case $mem in
"" | *[!0-9]*) die "ACCMAP_VM_MEM must be a whole number of MiB" ;;
esac

# The board: these arm64 tiers boot on a Mali GPU as a board has one
# (tools/testing/vm/qemu/accmap-mali.c, in the qemu build-qemu.sh
# builds), found by accmap's mmio target in the device tree; the replay
# and SVM programs run again on it (NAME-board, board_tests), and the
# arm64 benchmarks measure it against the model.  gpu-smmu puts the
# GPU behind the virt machine's SMMUv3 (Debian's kernels have its driver
# built in): page tables and buffers then hold I/O virtual addresses.
# ACCMAP_BOARD (none, gpu, gpu-smmu) chooses for any arm64 run.
board=none
case $target/$table_mode in
arm64/tests | arm64-debug/tests | arm64/demo | arm64/bench | arm64-perf/bench) board=gpu ;;
arm64-6.12/tests) board=gpu-smmu ;;
esac
board=${ACCMAP_BOARD:-$board}
case $arch/$board in
*/none | arm64/gpu | arm64/gpu-smmu) ;;
*) die "ACCMAP_BOARD=$board: none, or gpu or gpu-smmu on arm64" ;;
esac
# ACCMAP_BOARD_FAULTS: the board's GPU misbehaves, through the device's
# fault knobs (qemu properties): hang (no chain ever ends), wedged (nor
# does a soft reset: the guest's rmmod must fail, accmap kept the
# session's memory back), late (a chain's end interrupts 50 ms late, on
# one line the three blocks share, which every START also pulses with
# nothing pending).  accmap_board_faults tests what accmap makes of each.
faults=${ACCMAP_BOARD_FAULTS:-none}
fault_globals=()
case $faults in
none) ;;
hang) fault_globals=(job-hang=on) ;;
wedged) fault_globals=(job-hang=on reset-hang=on) ;;
late) fault_globals=(irq-delay-ns=50000000 shared-irq=on spurious-irq=on) ;;
*) die "ACCMAP_BOARD_FAULTS=$faults: none, hang, wedged or late" ;;
esac
[ "$faults" = none ] || [ "$board" != none ] ||
	die "ACCMAP_BOARD_FAULTS=$faults needs a board (ACCMAP_BOARD=gpu or gpu-smmu)"

case $arch in
amd64)
	kdir=/usr/src/linux-headers-$kver
	make_args=()
	cc=gcc
	busybox=$(command -v busybox || echo /bin/busybox)
	# No CMPXCHG16B: as we read qemu's source of 7.2's time, TCG runs it
	# through a helper that computes the flags from a condition-code
	# state the translator has not yet written back, so after "add; xor;
	# cmpxchg16b" (SLUB's per-CPU fast path) EFLAGS can take a stale
	# operand's bits (seen once as RFLAGS = the low half of RDI | ZF,
	# then a double fault in kmem_cache_alloc_node).  Without CX16 the
	# kernel uses its own emulation of the per-CPU compare-and-exchange
	# and never issues it.
	qemu=(qemu-system-x86_64 -accel tcg -cpu "qemu64,-cx16" -m "$mem" -smp 2)
	console=ttyS0
	# No check that the IO-APIC timer ticks in time: under TCG on a loaded
	# host it can fail and panic the boot ("IO-APIC + timer doesn't
	# work!"); virtual machines commonly boot so.
	arch_append=no_timer_check
	;;
arm64)
	kdir=$headers/usr/src/linux-headers-$kver
	make_args=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	cc=aarch64-linux-gnu-gcc
	busybox=$CACHE/arm64/busybox/bin/busybox
	# The cortex-a57 has no 16 KiB translation granule: the 16k kernel
	# needs "max".  Its default QARMA pointer authentication costs TCG
	# much time; the implementation-defined algorithm is cheap.
	cpu=cortex-a57
	[ "$kflavour" = arm64-16k ] && cpu=max,pauth-impdef=on
	qemu=(qemu-system-aarch64 -M virt -cpu "$cpu" -m "$mem" -smp 2)
	if [ "$board" != none ]; then
		# The board: the qemu build-qemu.sh builds (Debian's, with
		# accmap's Mali GPU device), the GPU on the virt machine, for
		# gpu-smmu behind its SMMUv3.  It has no network devices; the
		# guests use none.
		qemu_bin=$("$ACCMAP_ROOT/tools/testing/vm/build-qemu.sh" | tail -n 1) ||
			die "no qemu with the board's GPU"
		virt=virt,accmap-mali=on
		[ "$board" != gpu-smmu ] || virt=$virt,iommu=smmuv3
		qemu=("$qemu_bin" -M "$virt" -cpu "$cpu" -m "$mem" -smp 2 -nic none)
		for g in "${fault_globals[@]}"; do
			qemu+=(-global "accmap-mali.$g")
		done
	fi
	console=ttyAMA0
	# Debian's arm64 kernels turn kernel page-table isolation on because
	# KASLR is on.  KPTI switches TTBR1's ASID at every kernel entry and
	# exit, and qemu's TCG, whose TLB is not tagged by ASID, flushes it
	# at each switch: with kpti=0 (KASLR stays) the 6.1 tier ran in 98
	# and 103 s instead of 117 and 156 s.  KPTI only hides the kernel
	# from user space; accmap's code runs the same either way.
	arch_append=kpti=0
	;;
esac
# The PREEMPT_RT headers are unpacked into the cache for both.
[ "$ksuffix" = -rt ] && kdir=$headers/usr/src/linux-headers-$kver
if [ "$line" = 5.10 ]; then
	# Debian 11's headers, unpacked into the cache for both
	# architectures, name gcc-10 as their compiler: build with this
	# host's gcc instead (Debian 12 has no gcc-10).
	kdir=$headers/usr/src/linux-headers-$kver
	make_args+=(CC="$cc")
fi

if [ -n "$flavor" ]; then
	# accmap's own kernel: built (or found up to date) first.
	"$ACCMAP_ROOT/tools/testing/vm/build-kernel.sh" "$flavor" "$arch" ||
		die "the $flavor kernel for $arch is not available"
	kdir=$(kernel_dir "$flavor" "$arch")
	case $arch in
	amd64) vmlinuz=$kdir/arch/x86/boot/bzImage ;;
	arm64) vmlinuz=$kdir/arch/arm64/boot/Image ;;
	esac
	kver=$(cat "$kdir/include/config/kernel.release")
	moddir=
	need=("$kdir/Makefile" "$vmlinuz" "$busybox")
else
	vmlinuz=$image/boot/vmlinuz-$kver
	moddir=$image/lib/modules/$kver
	need=("$kdir/Makefile" "$vmlinuz" "$moddir/modules.order" "$busybox")
fi
for f in "${need[@]}"; do
	[ -e "$f" ] || die "$f missing: run tools/testing/scripts/install-deps.sh"
done

# ACCMAP_VM_WORK: another work directory, for a run beside another of
# the same target (each keeps its own build tree, initramfs and console).
work=${ACCMAP_VM_WORK:-$CACHE/vm/$target}
# The board GPU's log of what the guest did wrong (MMU faults, bad
# commands): qemu's guest_errors, in the work directory.
[ "$board" = none ] || qemu+=(-d guest_errors -D "$work/board-gpu.log")
mkdir -p "$work"
# One run per target at a time: they share $work.
exec 8>"$work/.lock"
flock -w "$QEMU_TIMEOUT" 8 || die "another vm-test $target run holds $work/.lock"
log=$work/console.log
case $mode in
demo | bench | soak) log=$work/console-$mode.log ;;
esac

# Carveout heaps of the guest (memmap= / device tree, module parameter).
# shellcheck source=tools/testing/vm/carveouts.sh
. "$ACCMAP_ROOT/tools/testing/vm/carveouts.sh"
carveout_setup
devmem_setup "$kdir/.config"
# A CMA area for ACCMAP_ALLOC_CONTIGUOUS where the kernel has CMA: the
# Debian arm64 kernels reserve 64 MiB by default, too little for a 64 MiB
# contiguous buffer beside the kernel's own users; their amd64 kernels
# have no CMA (the contiguous allocations take the page allocator's
# largest blocks there).
cma_append=
grep -qx 'CONFIG_DMA_CMA=y' "$kdir/.config" 2>/dev/null && cma_append=cma=128M
# A block device completing its requests from an hrtimer (hard interrupt
# context), 300 ms after they are queued: accmap_devmem's io_free_in_irq
# writes from device pages with O_DIRECT and unmaps them before the
# completion drops the last reference.  null_blk is built in on the debug
# kernels (its parameters on the command line) and a module of the stock
# ones (packed below, with them), but for PREEMPT_RT, whose hrtimers
# expire in soft interrupt context.  ACCMAP_NULLB in the guest says to
# expect it.
nullb_args="irqmode=2 completion_nsec=300000000"
nullb_append=
nullb_expect=none
if grep -qx 'CONFIG_BLK_DEV_NULL_BLK=y' "$kdir/.config" 2>/dev/null; then
	nullb_append="null_blk.${nullb_args// / null_blk.}"
	nullb_expect=/dev/nullb0
fi
# CRIU in the guest where the kernel can checkpoint (criu-pack.sh).
# shellcheck source=tools/testing/vm/criu-pack.sh
. "$ACCMAP_ROOT/tools/testing/vm/criu-pack.sh"
criu_setup "$kdir/.config"
# The user space from the Debian packages, with ACCMAP_VM_PACKAGES.
# shellcheck source=tools/testing/vm/pkg-pack.sh
. "$ACCMAP_ROOT/tools/testing/vm/pkg-pack.sh"
pkg_setup

# --- accmap.ko ----------------------------------------------------------
if [ -n "${ACCMAP_GCOV:-}" ]; then
	grep -qx 'CONFIG_GCOV_KERNEL=y' "$kdir/.config" ||
		die "ACCMAP_GCOV: $kver has no CONFIG_GCOV_KERNEL (the debug kernels do)"
	make_args+=(ACCMAP_GCOV=1)
fi
# With W=1 and sparse: lint reads this build's log (module_build) rather
# than building the same line again.
say "building accmap.ko for $kver (tree copy in $work/src${ACCMAP_GCOV:+, gcov counters})"
if ! module_build "$work/src" "$kdir" "${make_args[@]}"; then
	tail -n 40 "$work/src.log" >&2
	die "module build failed (log: $work/src.log)"
fi
# The rest of the tree (the user programs) as it is now.
sync_tree "$work/src"
ko=$work/src/drivers/accmap/accmap.ko
[ -f "$ko" ] || die "build produced no $ko"

# The vermagic must equal the one of the distro's own modules, or name
# the release of our own kernel.
have=$(modinfo -F vermagic "$ko")
if [ -n "$moddir" ]; then
	want=$(modinfo -F vermagic "$(find "$moddir/kernel/drivers/gpu/drm" -name 'drm.ko*' | head -n1)")
	[ "$want" = "$have" ] || die "vermagic mismatch: accmap.ko '$have', kernel '$want'"
else
	[ "${have%% *}" = "$kver" ] || die "vermagic mismatch: accmap.ko '$have', kernel $kver"
fi
say "accmap.ko vermagic: $have"

# --- user-space programs ------------------------------------------------
# What the host finds out about the guest's features (the guest reports
# the others: "feature" lines), and why a program is not packed: the
# verdict holds both against the tier table.
declare -A host_feature=() notrun_why=()
if [ -n "$flavor" ]; then
	kconfig=$kdir/.config
else
	kconfig=$image/boot/config-$kver
fi
# The armhf compat tier: an arm64 kernel that runs 32-bit user space.
if [ "$arch" != arm64 ]; then
	host_feature[compat32]="no the armhf tier runs on arm64 kernels only"
elif grep -qx 'CONFIG_COMPAT=y' "$kconfig" 2>/dev/null; then
	host_feature[compat32]="yes CONFIG_COMPAT=y"
else
	host_feature[compat32]="no no CONFIG_COMPAT=y in $(basename "$kconfig")"
fi

# Whether vgem, the importer of accmap_cachestate's importer_syncs, maps a
# dma-buf for its device when it imports it: not where it imports through
# the GEM shmem helpers' drm_gem_shmem_prime_import_no_map() (7.3), which
# its module (or, built in, its object) then names.
if [ -n "$moddir" ]; then
	vgem_obj=$(find "$moddir" -name 'vgem.ko*' -print -quit)
else
	vgem_obj=$kdir/drivers/gpu/drm/vgem/vgem_drv.o
fi
case $vgem_obj in
*.xz) vgem_cat=(xz -dc) ;;
*.zst) vgem_cat=(zstd -qdc) ;;
*.gz) vgem_cat=(gzip -dc) ;;
*) vgem_cat=(cat) ;;
esac
if [ ! -f "$vgem_obj" ]; then
	host_feature[vgem-maps]="unknown no vgem object at $vgem_obj"
elif "${vgem_cat[@]}" "$vgem_obj" | grep -qa drm_gem_shmem_prime_import_no_map; then
	host_feature[vgem-maps]="no $(basename "$vgem_obj") imports with drm_gem_shmem_prime_import_no_map"
else
	host_feature[vgem-maps]="yes"
fi

# user_build WHAT LOG OUT DIR MAKE_ARG...: make -C DIR OUTPUT=OUT MAKE_ARG...
# (output in LOG; WHAT names the build in messages).  User programs do not
# depend on the kernel, so every tier of a make check would build the same
# ones: the result is kept in $CACHE/user/KEY, KEY a hash of the files
# those Makefiles read (the selftests', libaccmap's, tools/accmap's and
# tools/testing/fuzz's, include/uapi/, dkms.conf for the tools' version)
# and of the arguments, and copied from there
# when a tier asks for the same build again.  A packaged run
# (ACCMAP_VM_PACKAGES) always builds: its library comes from outside the
# tree.  Kept builds not used for two days are removed.
user_build() {
	local what=$1 log=$2 out=$3 dir=$4 key='' keep='' tmp
	shift 4
	if [ -z "$pkg_root" ]; then
		key=$({
			project_files tools/testing/selftests/accmap tools/lib/accmap tools/accmap \
				tools/testing/fuzz include/uapi dkms.conf | tr '\n' '\0' |
				(cd "$work/src" && xargs -0 sha256sum)
			printf '%s\n' "${dir#"$work/src"}" "$@"
		} | sha256sum | cut -c1-16)
		keep=$CACHE/user/$key
		if [ -f "$keep/.built" ]; then
			say "$what: the build an earlier run made of the same sources ($keep)"
			touch "$keep/.built"
			cp -a "$keep/." "$out/"
			rm -f "$out/.built"
			return 0
		fi
	fi
	say "building $what"
	timeout "$BUILD_TIMEOUT" make -j"$(nproc)" -C "$dir" OUTPUT="$out" "$@" >"$log" 2>&1 ||
		{ tail -n 40 "$log" >&2; die "$what: build failed (log: $log)"; }
	[ -n "$keep" ] || return 0
	mkdir -p "$CACHE/user"
	find "$CACHE/user" -mindepth 2 -maxdepth 2 -name .built -mtime +2 -printf '%h\0' |
		xargs -0 -r rm -rf
	tmp=$keep.tmp.$$
	rm -rf "$tmp"
	mkdir -p "$tmp"
	cp -a "$out/." "$tmp/"
	touch "$tmp/.built"
	mv -T "$tmp" "$keep" 2>/dev/null || rm -rf "$tmp"
}

# compat32_tests: builds the armhf selftests into $work/bin as NAME-armhf
# and adds them to all_tests if the kernel has CONFIG_COMPAT=y;
# otherwise names the tests that do not run, and why.
compat32_tests() {
	local t
	local -a names
	if [ "${host_feature[compat32]%% *}" != yes ]; then
		make -s -C "$work/src/tools/testing/selftests/accmap" \
			OUTPUT="$work/bin32" "$work/bin32/compat32.list" >/dev/null
		mapfile -t names < <(sed 's/$/-armhf/' "$work/bin32/compat32.list")
		for t in "${names[@]}"; do
			notrun_why[$t]="armhf compat tier: ${host_feature[compat32]#no }"
		done
		say "armhf compat tier not run on $target: ${host_feature[compat32]#no }; not run: ${names[*]}"
		return 0
	fi
	user_build "the armhf selftests (arm-linux-gnueabihf-gcc)" "$work/user-build32.log" \
		"$work/bin32" "$work/src/tools/testing/selftests/accmap" \
		CC=arm-linux-gnueabihf-gcc compat32
	while read -r t; do
		[ -n "$t" ] || continue
		cp "$work/bin32/$t" "$work/bin/$t-armhf"
		all_tests+=("$t-armhf")
	done <"$work/bin32/compat32.list"
}

# board_tests: on a board tier, the replay, SVM and device-memory
# programs (and libaccmap's, which has all three) again as
# NAME-board: a wrapper that runs NAME on the board's GPU, the target
# init.sh finds (ACCMAP_BOARD_GPU) named in ACCMAP_REPLAY_TARGET.
board_tests() {
	local p
	[ "$board" != none ] || return 0
	for p in accmap_lib accmap_replay accmap_gpureplay accmap_svm accmap_devmem; do
		printf '%s\n' '#!/bin/sh' "# $p on the board's GPU (run.sh's board_tests)." \
			"ACCMAP_REPLAY_TARGET=\$ACCMAP_BOARD_GPU exec /tests/$p \"\$@\"" \
			>"$work/bin/$p-board"
		chmod 755 "$work/bin/$p-board"
		all_tests+=("$p-board")
	done
}

rm -rf "${work:?}/bin" "$work/bin32"
mkdir -p "$work/bin" "$work/bin32"
if [ "$mode" = bench ]; then
	say "building bench ($cc)"
	timeout "$BUILD_TIMEOUT" make -j"$(nproc)" -C "$work/src/tools/accmap" CC="$cc" \
		OUTPUT="$work/bin" >"$work/user-build.log" 2>&1 ||
		{ tail -n 40 "$work/user-build.log" >&2; die "bench build failed"; }
	progs=(bench)
elif [ "$mode" = demo ]; then
	if [ -n "$pkg_root" ]; then
		# A packaged run: accmap-tools' binaries.
		cp "$pkg_root/usr/bin/accmap-demo" "$work/bin/accmap-demo"
		cp "$pkg_root/usr/sbin/accmapctl" "$work/bin/accmapctl"
	else
		user_build "accmap-demo and accmapctl ($cc)" "$work/user-build.log" \
			"$work/bin" "$work/src/tools/accmap" CC="$cc"
	fi
	[ -x "$work/bin/accmap-demo" ] || die "no accmap-demo in $work/bin"
	# accmapctl, built alongside, runs after it (demo-accmapctl.sh).
	progs=(accmap-demo accmapctl)
else
	user_build "selftests ($cc)" "$work/user-build.log" "$work/bin" \
		"$work/src/tools/testing/selftests/accmap" CC="$cc" \
		${pkg_root:+LIBACCMAP_PKG="$pkg_root"}
	[ -s "$work/bin/tests.list" ] || die "selftests wrote no $work/bin/tests.list"
	mapfile -t all_tests < <(grep -v '^[[:space:]]*$' "$work/bin/tests.list")
	# The compat tier: on an arm64 kernel that runs 32-bit user space
	# (CONFIG_COMPAT), the selftests that suit it are also built for armhf
	# and run as NAME-armhf, through the kernel's compat_ioctl path.
	[ "$arch" != arm64 ] || compat32_tests
	board_tests
	# criu_basic (a shell test, tools/testing/vm/criu_basic.sh): criu
	# dumps and restores a counter process, where the kernel can.
	if [ -z "$criu_reason" ]; then
		cp "$ACCMAP_ROOT/tools/testing/vm/criu_basic.sh" "$work/bin/criu_basic"
		chmod 755 "$work/bin/criu_basic"
		timeout "$BUILD_TIMEOUT" "$cc" -static -O2 -Wall -Wextra -Werror \
			-o "$work/bin/accmap_criu_counter" \
			"$ACCMAP_ROOT/tools/testing/vm/criu-counter.c" ||
			die "accmap_criu_counter build failed"
		all_tests+=(criu_basic)
	else
		notrun_why[criu_basic]="criu: $criu_reason"
		say "criu: $criu_reason; not run: criu_basic"
	fi
	if [ "$mode" = tests ]; then
		progs=("${all_tests[@]}")
	elif [ "$mode" = soak ]; then
		progs=(fuzz accmap_stress)
	else
		if [ -f "$mode" ]; then
			mapfile -t progs < <(grep -v '^[[:space:]]*$' "$mode")
		else
			IFS=, read -r -a progs <<<"$mode"
		fi
		for p in "${progs[@]}"; do
			printf '%s\n' "${all_tests[@]}" | grep -qxF "$p" ||
				die "'$p' is not in tests.list (${all_tests[*]})"
		done
	fi
	# A program the table wants that the build did not give.
	if [ "$mode" = tests ]; then
		for p in "${want_order[@]}"; do
			printf '%s\n' "${all_tests[@]}" accmap_devmem_unload | grep -qxF "$p" ||
				notrun_why[$p]=${notrun_why[$p]:-"not in the selftests' tests.list"}
		done
	fi
	[ "${#progs[@]}" -gt 0 ] || die "no tests to run"
fi
# /init runs the loads that must fail under this watcher (devwatch.c).
timeout "$BUILD_TIMEOUT" "$cc" -static -O2 -Wall -Wextra -Werror \
	-o "$work/bin/accmap_devwatch" "$ACCMAP_ROOT/tools/testing/vm/devwatch.c" ||
	die "accmap_devwatch build failed"
for p in "${progs[@]}"; do
	[ -x "$work/bin/$p" ] || die "$work/bin/$p missing"
	case $p in criu_basic | *-board) continue ;; esac
	desc=$(file -b "$work/bin/$p")
	case $desc in
	*"statically linked"* | *"static-pie linked"*) ;;
	*) pkg_dynamic_ok "$work/bin/$p" || die "$p is not a static executable: $desc" ;;
	esac
done

# --- modules for the importer (vgem) -------------------------------------
# (Our own kernels have vgem built in.)
load=()
# pack_module NAME: NAME.ko of the kernel's modules, with the modules it
# needs, onto the load list, each once; false if the kernel ships none.
# modules.dep lists a module's dependencies so that the last one loads
# first: they go on in reverse order, then the module itself.
pack_module() {
	local line i deps
	line=$(grep -E "(^|/)$1\.ko(\.[a-z]+)?:" "$moddir/modules.dep") || return 1
	read -r -a deps <<<"${line#*:}"
	for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
		printf '%s\n' "${load[@]}" | grep -qxF "${deps[i]}" || load+=("${deps[i]}")
	done
	load+=("${line%%:*}")
}
if [ -n "$moddir" ]; then
	# The .deb ships no modules.dep (depmod runs at install time): make one.
	if [ ! -s "$moddir/modules.dep" ]; then
		say "depmod for $kver"
		depmod -b "$image" "$kver"
	fi
	pack_module vgem || die "vgem is not in $moddir/modules.dep"
	if ! grep -qx 'CONFIG_PREEMPT_RT=y' "$kdir/.config" 2>/dev/null &&
	   pack_module null_blk; then
		nullb_expect=/dev/nullb0
	fi
fi
# The V4L2 importer tier (accmap_v4l2, and the demo's capture step) needs
# vivid, with its module chain: packed where the kernel ships it, loaded
# with two instances (init.sh): vivid-000 allocates through
# videobuf2-vmalloc, vivid-001 through videobuf2-dma-contig.  Where it is
# missing the guest names the kernel and does not run the test (not a
# failure, counted like the criu tests init.sh cannot run).
vivid_reason="not packed: no V4L2 program in this run"
vivid_args="n_devs=2 allocators=0,1"
vivid_probed=
if [ "$mode" = demo ] || printf '%s\n' "${progs[@]}" | grep -qx accmap_v4l2; then
	vivid_probed=1
	vivid_reason=
	if [ -z "$moddir" ]; then
		vivid_reason="accmap's $flavor kernel ($kver) has no V4L2 (vivid)"
	elif ! pack_module vivid; then
		vivid_reason="the $kver kernel ships no vivid.ko"
	fi
	if [ -z "$vivid_reason" ]; then
		say "vivid packed (${load[-1]}, $vivid_args)"
	else
		say "V4L2 tier not run on $target: $vivid_reason; not run: accmap_v4l2"
	fi
fi
criu_modules

# --- initramfs ------------------------------------------------------------
root=$work/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,etc,lib/modules,tests,proc,sys,dev,tmp}
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$work/bin/accmap_devwatch" "$root/bin/accmap_devwatch"
cp "$ACCMAP_ROOT/tools/testing/vm/init.sh" "$root/init"
chmod 755 "$root/init"
cp "$ko" "$root/accmap.ko"
: >"$root/lib/modules/load-order"
for m in "${load[@]}"; do
	name=$(basename "$m")
	case $name in
	*.ko) cp "$moddir/$m" "$root/lib/modules/$name" ;;
	*.ko.xz) xz -dc "$moddir/$m" >"$root/lib/modules/${name%.xz}" ;;
	*.ko.gz) gzip -dc "$moddir/$m" >"$root/lib/modules/${name%.gz}" ;;
	*.ko.zst) zstd -qdc "$moddir/$m" >"$root/lib/modules/${name%.zst}" ;;
	*) die "unknown module file $m" ;;
	esac
	name=${name%.ko*}.ko
	# A module's parameters follow its name on its line.
	case $name in
	vivid.ko) mod_args=" $vivid_args" ;;
	null_blk.ko) mod_args=" $nullb_args" ;;
	*) mod_args= ;;
	esac
	printf '%s%s\n' "$name" "$mod_args" >>"$root/lib/modules/load-order"
done
say "importer modules: $(tr '\n' ' ' <"$root/lib/modules/load-order")"
for p in "${progs[@]}"; do
	cp "$work/bin/$p" "$root/tests/$p"
	# A board wrapper runs the program it names.
	[[ $p != *-board ]] || cp "$work/bin/${p%-board}" "$root/tests/"
done
printf '%s\n' "${progs[@]}" >"$root/tests/tests.list"
criu_pack "$root"
pkg_pack "$root"
if printf '%s\n' "${progs[@]}" | grep -qx criu_basic; then
	cp "$work/bin/accmap_criu_counter" "$root/tests/accmap_criu_counter"
fi
# accmap_gpureplay (and the demo's accmapctl) imports GPUReplay's MNIST
# recording from /data/gpureplay-mnist.  It is kept outside the
# repository, in ../shared/recordings beside it (or beside the directory
# of a worktree); ACCMAP_GPUREPLAY_DIR names another place.
if printf '%s\n' "${progs[@]}" | grep -qxE 'accmap_gpureplay(-board)?|bench|accmapctl'; then
	gr_dir=${ACCMAP_GPUREPLAY_DIR:-}
	if [ -z "$gr_dir" ]; then
		for d in "$ACCMAP_ROOT/.." "$ACCMAP_ROOT/../.."; do
			gr_dir=$d/shared/recordings/gpureplay-mnist
			[ -d "$gr_dir" ] && break
		done
	fi
	if [ "$mode" = demo ] && [ ! -f "$gr_dir/gr_pgt" ]; then
		# The demo goes on without it, and says so.
		say "no GPUReplay recording at $gr_dir: the demo leaves its replay out"
	else
		mkdir -p "$root/data/gpureplay-mnist"
		for f in gr_pgt gr_mem_contents gr_io_history gr_sync_as; do
			[ -f "$gr_dir/$f" ] || die "$gr_dir/$f missing (set ACCMAP_GPUREPLAY_DIR)"
			cp "$gr_dir/$f" "$root/data/gpureplay-mnist/$f"
		done
	fi
fi
if [ "$mode" = demo ]; then
	cp "$ACCMAP_ROOT/tools/testing/vm/demo-accmapctl.sh" "$root/demo-accmapctl.sh"
	echo demo >"$root/etc/accmap-mode"
elif [ "$mode" = bench ]; then
	echo bench >"$root/etc/accmap-mode"
	# BENCH_ARGS: extra arguments for bench, e.g. "--only svm --reps 5".
	printf '%s\n' "${BENCH_ARGS:-}" >"$root/etc/accmap-bench-args"
elif [ "$mode" = soak ]; then
	echo soak >"$root/etc/accmap-mode"
	echo "$soak_seconds" >"$root/etc/accmap-soak-seconds"
else
	echo tests >"$root/etc/accmap-mode"
fi
rm -f "$root/etc/accmap-gcov"
[ -z "${ACCMAP_GCOV:-}" ] || touch "$root/etc/accmap-gcov"
echo "$TEST_TIMEOUT" >"$root/etc/accmap-test-timeout"
# The fuzzer's and the stress test's settings (fuzz --help,
# accmap_stress.c): ACCMAP_FUZZ_INJECT (none, half, all), ACCMAP_FUZZ_SEEDS,
# _OPS, _THREADS, _MIN_OPS, _MIN_INJECTED, ACCMAP_STRESS_SECONDS.
: >"$root/etc/accmap-test-env"
for var in ACCMAP_FUZZ_INJECT ACCMAP_FUZZ_SEED ACCMAP_FUZZ_SEEDS ACCMAP_FUZZ_OPS \
	ACCMAP_FUZZ_THREADS ACCMAP_FUZZ_MIN_OPS ACCMAP_FUZZ_MIN_INJECTED ACCMAP_STRESS_SECONDS; do
	[ -n "${!var:-}" ] || continue
	case ${!var} in
	*[!A-Za-z0-9]*) die "$var: letters and digits only, not '${!var}'" ;;
	esac
	printf 'export %s=%s\n' "$var" "${!var}" >>"$root/etc/accmap-test-env"
done
echo "$carveout_insmod" >"$root/etc/accmap-insmod-args"
echo "$carveout_expect" >"$root/etc/accmap-carveouts"
echo "$replay_mmio_expect" >"$root/etc/accmap-replay-mmio"
echo "$board" >"$root/etc/accmap-board"
echo "$faults" >"$root/etc/accmap-board-faults"
echo "$devmem_expect" >"$root/etc/accmap-devmem"
echo "${host_feature[vgem-maps]%% *}" >"$root/etc/accmap-vgem-maps"
# How accmap.ko fills a fault's block (vma.c): in one walk of its page
# table, or a page at a time where Kbuild found that a module cannot call
# set_pte_at() (ACCMAP_NO_SET_PTE_AT: arm64 with DEBUG_VM, 7.3).
fill=block
grep -qs ACCMAP_NO_SET_PTE_AT "$work/src/drivers/accmap/.vma.o.cmd" && fill=page
say "accmap.ko fills a fault's block $( [ $fill = block ] && echo "in one walk" || echo "a page at a time (ACCMAP_NO_SET_PTE_AT)")"
echo "$fill" >"$root/etc/accmap-fill"
echo "$nullb_expect" >"$root/etc/accmap-nullb"
echo "$mem" >"$root/etc/accmap-vm-mem"
printf '%s\n' "$vivid_reason" >"$root/etc/accmap-vivid"
printf '%s\n' "${carveout_bad[@]}" >"$root/etc/accmap-bad-insmod"
initrd=$work/initramfs.cpio
(cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$initrd"
say "initramfs: $(($(stat -c %s "$initrd") / 1024)) KiB${criu_reason:+ (no criu: $criu_reason)}"

# --- boot -------------------------------------------------------------------
say "booting $vmlinuz under qemu TCG (timeout ${QEMU_TIMEOUT} s, console log $log)"
# boot: one run of the guest; its console in $log, its exit in qemu_rc.
boot() {
	start=$SECONDS
	set +e
	timeout -k 10 "$QEMU_TIMEOUT" "${qemu[@]}" "${carveout_qemu[@]}" -nographic -no-reboot \
		-kernel "$vmlinuz" -initrd "$initrd" \
		-append "console=$console panic=-1${arch_append:+ $arch_append}${carveout_append:+ $carveout_append}${cma_append:+ $cma_append}${nullb_append:+ $nullb_append}" </dev/null 2>&1 |
		tr -d '\r' | tee "$log" |
		awk '/^@@accmap-vm dmesg-begin/ { d = 1; print "[guest] (kernel log: see " logf ")" }
		     /^@@accmap-vm gcov-begin/ { d = 1; print "[guest] (gcov counters)" }
		     /^@@accmap-vm begin/ { on = 1 }
		     on && !d { print "[guest] " $0; fflush() }
		     /^@@accmap-vm (dmesg|gcov)-end/ { d = 0 }' logf="$log"
	qemu_rc=${PIPESTATUS[0]}
	set -e
	say "qemu exited $qemu_rc after $((SECONDS - start)) s"
}
rm -f "$log.first-boot"
boot
# Now and then a TCG guest hangs in early boot (an RCU stall: a vCPU's
# timer never fires) and never reaches /init.  Nothing of accmap has run
# then: boot once more, saying so, with the first console kept.
if ! grep -q '^@@accmap-vm begin' "$log"; then
	cp "$log" "$log.first-boot"
	warn "the guest never reached /init (console: $log.first-boot): booting once more"
	boot
fi

# --- verdict ----------------------------------------------------------------
passed=0
failed=0
fail() {
	warn "FAIL: $*"
	failed=$((failed + 1))
}

if ! grep -q '^@@accmap-vm begin' "$log"; then
	tail -n 60 "$log" >&2
	fail "the guest never reached /init"
	result "$passed" "$failed" || exit 1
fi
grep -q '^@@accmap-vm end$' "$log" ||
	{ tail -n 40 "$log" >&2; fail "the guest did not reach the end marker (qemu rc $qemu_rc)"; }
if grep -q '^@@accmap-vm modload failed' "$log"; then
	fail "importer module(s) did not load: $(sed -n 's/^@@accmap-vm modload failed //p' "$log" | tr '\n' ' ')"
fi
if grep -q '^@@accmap-vm criu-modload failed' "$log"; then
	fail "criu's modules did not load: $(sed -n 's/^@@accmap-vm criu-modload failed //p' "$log" | tr '\n' ' ')"
fi
# The guest's features against the tier's (tiers.txt).  A feature the
# run did not probe (vivid, when no V4L2 program ran) is left out.
if [ "${#want_feature[@]}" -gt 0 ]; then
	declare -A have_feature=()
	while read -r name value; do
		have_feature[$name]=$value
	done < <(sed -n 's/^@@accmap-vm feature //p' "$log")
	for name in "${!host_feature[@]}"; do
		have_feature[$name]=${host_feature[$name]}
	done
	[ -n "$vivid_probed" ] || unset 'have_feature[vivid]'
	for name in "${feature_order[@]}"; do
		[ "$name" != arch ] || continue
		if [ "$name" = vivid ] && [ -z "$vivid_probed" ]; then
			say "feature vivid: not probed (no V4L2 program in this run)"
			continue
		fi
		if [ -z "${have_feature[$name]+set}" ]; then
			fail "feature $name: the guest never said ($(basename "$TIERS_TABLE") says ${want_feature[$name]} for $target)"
			continue
		fi
		# "VALUE [detail]"
		have=${have_feature[$name]%% *}
		detail=${have_feature[$name]#"$have"}
		detail=${detail# }
		say "feature $name: $have${detail:+ ($detail)}"
		[ "$have" = "${want_feature[$name]}" ] ||
			fail "feature $name: $(basename "$TIERS_TABLE") says ${want_feature[$name]} for $target $mode, the guest has $have${detail:+ ($detail)}"
	done
fi
grep -q '^@@accmap-vm insmod ok' "$log" || fail "insmod accmap.ko failed"
# Each bad carveout parameter set must have failed the load: one result each.
refused=$(grep -c '^@@accmap-vm bad-insmod refused' "$log" || true)
passed=$((passed + refused))
[ "$refused" = "${#carveout_bad[@]}" ] ||
	fail "$refused of ${#carveout_bad[@]} bad carveout parameter sets refused: $(sed -n 's/^@@accmap-vm bad-insmod loaded //p' "$log" | tr '\n' ' ')"
if grep -q '^@@accmap-vm bad-insmod devnode' "$log"; then
	fail "a failed load showed /dev/accmap: $(sed -n 's/^@@accmap-vm bad-insmod devnode //p' "$log" | tr '\n' ' ')"
fi
grep -q '^@@accmap-vm devnode ok' "$log" || fail "/dev/accmap did not appear"
if [ "$faults" = wedged ]; then
	# A GPU that never reset: the kept-back session holds the module.
	grep -q '^@@accmap-vm rmmod failed' "$log" ||
		fail "rmmod accmap did not fail on a GPU that never reset (kept-back memory not held)"
else
	grep -q '^@@accmap-vm rmmod ok' "$log" || fail "rmmod accmap failed (reference leak?)"
fi

if [ "$mode" = bench ]; then
	rc=$(sed -n 's/^@@accmap-vm bench-end rc=//p' "$log")
	if [ "$rc" = 0 ]; then
		passed=1
	else
		fail "bench exited ${rc:-?}"
	fi
	report=$CACHE/bench
	mkdir -p "$report"
	if "$ACCMAP_ROOT/tools/accmap/bench-report.sh" "$log" "$report"; then
		say "report: $report/bench.md, $report/bench.png"
	else
		fail "bench-report.sh could not make the report"
	fi
elif [ "$mode" = demo ]; then
	rc=$(sed -n 's/^@@accmap-vm demo-end rc=//p' "$log")
	if [ "$rc" = 0 ]; then
		passed=1
	else
		fail "accmap-demo exited ${rc:-?}"
	fi
	rc=$(sed -n 's/^@@accmap-vm accmapctl-end rc=//p' "$log")
	if [ "$rc" = 0 ]; then
		passed=$((passed + 1))
	else
		fail "accmapctl steps failed (rc ${rc:-?}):$(sed -n 's/^@@accmap-vm accmapctl failed / /p' "$log" | tr '\n' ';')"
	fi
else
	# Per program: its TAP output (top level only) must be whole: one
	# plan, not 1..0; results numbered 1..N in order, as many as planned;
	# no "Bail out!".
	tap=$(awk '
		function note(msg) { if (why[t] == "") why[t] = msg }
		/^@@accmap-vm test-begin / {
			t = $3; inside = 1; plan[t] = -1; plans[t] = 0; ok[t] = 0; bad[t] = 0
			rc[t] = "none"; secs[t] = "?"; why[t] = ""; order[++n] = t; next
		}
		/^@@accmap-vm test-end / { split($4, a, "="); rc[t] = a[2]; split($5, a, "="); secs[t] = a[2]; inside = 0; next }
		!inside { next }
		/^1\.\.[0-9]+/ {
			split($1, a, "."); plans[t]++
			if (plans[t] == 1) plan[t] = a[3] + 0
			else note("a second plan line: " $0)
			next
		}
		/^(not )?ok [0-9]+/ {
			num = $1 == "not" ? $3 : $2
			if (num + 0 != ok[t] + bad[t] + 1)
				note("test number " num " where " ok[t] + bad[t] + 1 " was due: " $0)
			if ($1 == "not") { bad[t]++; print "fail " t ": " $0 }
			else if ($0 ~ /# *([Ss][Kk][Ii][Pp]|[Tt][Oo][Dd][Oo])/) { bad[t]++; print "skip " t ": " $0 }
			else ok[t]++
			next
		}
		/^Bail out!/ { note($0); next }
		END {
			for (i = 1; i <= n; i++) {
				t = order[i]
				printf "count %s %d %d %s %d %s %s\n", t, ok[t], bad[t], rc[t], plan[t], secs[t], why[t]
			}
		}' "$log")
	ran=0
	declare -A has_run=()
	while read -r kind rest; do
		case $kind in
		skip | fail) warn "FAIL: $rest" ;;
		count)
			read -r t ok bad rc plan secs why <<<"$rest"
			ran=$((ran + 1))
			has_run[$t]=1
			passed=$((passed + ok))
			failed=$((failed + bad))
			say "$t: $ok ok, $bad not ok/skipped (plan $plan), exit $rc, ${secs:-?} s"
			results=$((ok + bad))
			if [ "$plan" -lt 0 ]; then
				fail "$t: no TAP plan line"
			elif [ "$plan" = 0 ]; then
				fail "$t: TAP plan 1..0: it ran no test"
			elif [ "$results" -gt "$plan" ]; then
				fail "$t: $results results for a plan of $plan"
			elif [ "$results" -lt "$plan" ]; then
				fail "$t: $((plan - results)) planned test(s) never reported"
			fi
			[ -z "$why" ] || fail "$t: $why"
			[ "$rc" = 0 ] || fail "$t exited with status $rc"
			if [ -z "${want_count[$t]:-}" ]; then
				[ "$mode" = soak ] ||
					fail "$t ran, but $(basename "$TIERS_TABLE") does not list it for $target"
			elif [ "$plan" != "${want_count[$t]}" ]; then
				fail "$t: plan of $plan tests, $(basename "$TIERS_TABLE") says $target runs ${want_count[$t]}"
			fi
			;;
		esac
	done <<<"$tap"
	if [ "$ran" = 0 ] || [ $((passed + failed)) = 0 ]; then
		fail "no test ran"
	fi
	# Why the guest did not run a program (init.sh).
	while read -r t why; do
		[ -n "$t" ] || continue
		say "not run: $t $why"
		notrun_why[$t]=$why
	done < <(sed -n 's/^@@accmap-vm notrun //p' "$log")
	if [ "$mode" = soak ]; then
		rounds=$(sed -n 's/^@@accmap-vm soak-rounds //p' "$log")
		say "soak: ${rounds:-no} rounds of ${progs[*]}"
		want=$((${rounds:-0} * ${#progs[@]}))
		[ "${rounds:-0}" -gt 0 ] || fail "the soak ended without a whole round"
		[ "$ran" -eq "$want" ] || fail "only $ran of $want test programs started"
	else
		# Every program the tier must run (of those picked, if the
		# run picked them) ran.
		for t in "${want_order[@]}"; do
			[ -z "${has_run[$t]:-}" ] || continue
			if [ "$mode" != tests ]; then
				case " ${progs[*]} " in
				*" $t "*) ;;
				*" accmap_devmem "*) [ "$t" = accmap_devmem_unload ] || continue ;;
				*) continue ;;
				esac
			fi
			fail "$t did not run; $(basename "$TIERS_TABLE") says $target runs it (${want_count[$t]} tests)${notrun_why[$t]:+: ${notrun_why[$t]}}"
		done
	fi
fi

# make coverage: the counters, checked against their digest, go next to
# the objects they count (their path in the tar is the build's own).
if [ -n "${ACCMAP_GCOV:-}" ]; then
	sum=$(sed -n 's/^@@accmap-vm gcov-begin \([0-9a-f]*\).*/\1/p' "$log")
	rm -rf "$work/gcov"
	mkdir -p "$work/gcov"
	sed -n '/^@@accmap-vm gcov-begin/,/^@@accmap-vm gcov-end/p' "$log" | sed '1d;$d' |
		base64 -d >"$work/gcov/gcov.tar.gz" 2>/dev/null || true
	if [ -z "$sum" ] || [ "$(md5sum <"$work/gcov/gcov.tar.gz" | cut -d' ' -f1)" != "$sum" ]; then
		fail "the guest's gcov counters did not come back whole"
	else
		tar -C "$work/gcov" -xzf "$work/gcov/gcov.tar.gz"
		n=0
		while read -r f; do
			dest=/${f#"$work/gcov/"}
			case $dest in
			"$work/src/drivers/accmap/"*.gcda) ;;
			*) continue ;;
			esac
			cp "$f" "$dest"
			n=$((n + 1))
		done < <(find "$work/gcov" -name '*.gcda')
		say "gcov: counters of $n object(s) in $work/src/drivers/accmap"
		[ "$n" -gt 0 ] || fail "no gcov counters for $work/src/drivers/accmap"
	fi
fi

# The kernel log: the whole console stream (boot, every message printed
# while the tests ran, at warning level and worse, even those the ring
# buffer has dropped by the end) and the guest's dmesg at the end (every
# level).  The stock kernels boot clean under TCG, so a hit before the
# modules load is reported too, marked as such.  A stack dump is "Call
# Trace:" on amd64 and "Call trace:" on arm64.  The gcov counters (base64)
# are no kernel log.  "BUG:" covers a sleep in atomic context ("BUG:
# sleeping function called from invalid context", "BUG: scheduling while
# atomic", the only one a PREEMPT_RT kernel without DEBUG_ATOMIC_SLEEP
# prints); every lockdep report begins with "WARNING:" or "BUG:" but
# "INFO: trying to register non-static key.", which dumps the stack.
bad_re='WARNING:|BUG:|Oops|kernel BUG|KASAN|possible recursive locking|circular locking|inconsistent lock state|suspicious RCU usage|Call Trace|Call trace:|general protection fault|Unable to handle|ODEBUG|suspected memory leak'
if bad=$(awk '/^@@accmap-vm gcov-begin/ { skip = 1 }
	     /^@@accmap-vm gcov-end/ { skip = 0; next }
	     skip { next }
	     /^@@accmap-vm taint-before/ { after = 1 }
	     /^@@accmap-vm dmesg-begin/ { after = 0; where = "dmesg: " }
	     /accmap-vm: loading modules/ { after = 1 }
	     /^@@accmap-vm dmesg-end/ { after = 1; where = "" }
	     $0 ~ re { print where (after ? "" : "(before accmap loaded) ") $0; found = 1 }
	     END { exit !found }' re="$bad_re" "$log"); then
	warn "kernel log (console stream, then the final dmesg):"
	printf '%s\n' "$bad" | head -n 30 | indent >&2
	fail "kernel reported problems (full log: $log)"
fi
# Say so when the final dmesg no longer starts at boot (the console
# stream above still covered what it lost).
first=$(sed -n '/^@@accmap-vm dmesg-begin/{n;p;q}' "$log")
case $first in
*"Linux version"* | *"Booting Linux"*) ;;
*) say "the final dmesg starts after boot (the ring buffer wrapped): \"$first\"" ;;
esac

# The debug kernel: kmemleak's report after the scan must be empty, and
# lockdep must not have turned itself off (it does after its first report,
# or when it runs out of table space).
if [ "$flavor" = debug ]; then
	leaks=$(sed -n '/^@@accmap-vm kmemleak-begin/,/^@@accmap-vm kmemleak-end/p' "$log" |
		grep -c '^unreferenced object' || true)
	if ! grep -q '^@@accmap-vm kmemleak-end' "$log"; then
		fail "no kmemleak scan result"
	elif ! grep -q '^@@accmap-vm kmemleak-scan ok' "$log"; then
		fail "kmemleak refused the scan (it turned itself off: see $log)"
	elif [ "$leaks" != 0 ]; then
		sed -n '/^@@accmap-vm kmemleak-begin/,/^@@accmap-vm kmemleak-end/p' "$log" |
			head -n 40 | indent >&2
		fail "kmemleak: $leaks unreferenced object(s)"
	else
		say "kmemleak: no leak"
		passed=$((passed + 1))
	fi
	locks=$(sed -n 's/^@@accmap-vm debug-locks //p' "$log")
	if [ "$locks" = 1 ]; then
		say "lockdep still on at the end"
		passed=$((passed + 1))
	else
		fail "lockdep was off at the end (debug_locks '${locks:-?}')"
	fi
fi

# Loading an unsigned out-of-tree module taints with O (4096) and E (8192)
# and logs "loading out-of-tree module taints kernel" and "module
# verification failed: signature and/or required key missing - tainting
# kernel": expected.  Any other taint (W, D, ...) is a failure.
# Only the digits: a kernel message can run into the marker's line.
t0=$(sed -n 's/^@@accmap-vm taint-before \([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
t1=$(sed -n 's/^@@accmap-vm taint-after \([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ -n "$t0" ] && [ -n "$t1" ]; then
	extra=$(((t1 & ~t0) & ~(4096 | 8192)))
	say "taint before $t0, after $t1"
	[ "$extra" = 0 ] || fail "unexpected kernel taint $extra (flags value $t1)"
elif grep -q '^@@accmap-vm end$' "$log"; then
	fail "no readable taint value before and after the tests"
fi

result "$passed" "$failed"
