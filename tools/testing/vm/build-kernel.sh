#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds one of accmap's test kernels from a Debian linux-source package
# (its tarball unpacked once into the cache):
#
#   tools/testing/vm/build-kernel.sh debug|perf [amd64|arm64]
#
#   debug     lockdep (PROVE_LOCKING), kmemleak, DEBUG_LIST, DEBUG_VM,
#             fault injection and friends, and on arm64 KASAN: the fuzz
#             and stress tiers.  Built from the newest linux-source-*
#             Debian offers (install-deps.sh fetches it from unstable,
#             experimental or the backports of Debian 13 and 12), so
#             that the newest kernel line accmap supports runs every
#             selftest under the checkers; make check boots arm64's.
#   perf      no debug options, from linux-source-6.1: make bench
#
# The architecture defaults to amd64; arm64 is cross-compiled with
# Debian's aarch64-linux-gnu-gcc.  Each kernel is allnoconfig plus
# kernel/base.config, kernel/<arch>.config and kernel/<flavor>.config;
# kernel/device-private.config on amd64 and on the newest release
# (kernel/hmm-mirror.config on the others), kernel/criu-net.config but
# on the newest release, and
# kernel/kasan.config on the arm64 debug kernel
# (dma-buf heaps, udmabuf and vgem and debugfs built in; accmap itself is
# built out of tree as a module by the VM harness).  The build tree is
# $CACHE/kernels/<flavor>-<arch>, outside git's view; its
# include/config/kernel.release says which line it is.  A stamp records
# what was built (fragments, source package version, compiler, this
# script); when nothing changed, the script returns at once without
# running make.
#
# Every option line of the fragments must reach the final .config
# (Kconfig silently drops options whose dependencies are not met): the
# build fails otherwise.  The one exception is an option the source's
# Kconfig does not define at all (a newer kernel dropped it, as 7.x did
# SLUB_CPU_PARTIAL): it is listed by name and left out.
set -euo pipefail

flavor=${1:-}
karch=${2:-amd64}
kname=kernel-$flavor-$karch
TIER=$kname
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/../scripts/common.sh"

case $flavor/$karch in
debug/amd64 | perf/amd64 | debug/arm64 | perf/arm64) ;;
*) die "usage: $0 debug|perf [amd64|arm64]" ;;
esac
KERNEL_BUILD_TIMEOUT=${ACCMAP_KERNEL_BUILD_TIMEOUT:-2700}

frag_dir=$ACCMAP_ROOT/tools/testing/vm/kernel
out=$(kernel_dir "$flavor" "$karch")
case $karch in
amd64)
	kmake=(make)
	cc=gcc
	target=bzImage
	image=$out/arch/x86/boot/bzImage
	;;
arm64)
	kmake=(make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	cc=aarch64-linux-gnu-gcc
	target=Image
	image=$out/arch/arm64/boot/Image
	;;
esac
frags=("$frag_dir/base.config" "$frag_dir/$karch.config" "$frag_dir/$flavor.config")

ensure_deps
newest=false
[ "$flavor" = debug ] && newest=true
# Device-private memory: not on arm64's 6.1 (kernel/arm64.config), which
# gets HMM_MIRROR another way.
if $newest || [ "$karch" = amd64 ]; then
	frags+=("$frag_dir/device-private.config")
else
	frags+=("$frag_dir/hmm-mirror.config")
fi
# criu 3.17 cannot read the newest release's vDSO: no criu networking there.
$newest || frags+=("$frag_dir/criu-net.config")
# KASAN on the arm64 debug kernel only (kernel/kasan.config says why).
[ "$flavor/$karch" = debug/arm64 ] && frags+=("$frag_dir/kasan.config")
if $newest; then
	read -r series srcver tarball <<<"$(mainline_source)"
	src=$(linux_source "$series" "$tarball")
else
	src=$(linux_source)
	srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
fi

key=$( {
	cat "${frags[@]}" "$0"
	printf '%s\n' "$srcver"
	"$cc" --version | head -n 1
} | sha256sum | cut -d' ' -f1)

if [ -f "$image" ] && [ "$(cat "$out/.accmap-stamp" 2>/dev/null)" = "$key" ]; then
	say "$flavor kernel up to date: $image ($(cat "$out/include/config/kernel.release"))"
	exit 0
fi

# The source tree's Kconfig sources drivers/accmap/Kconfig through the
# KUnit graft: make sure it points at a checkout that exists.
acquire_build_lock
$newest || graft_accmap "$src"

mkdir -p "$out" "$CACHE/logs"
log=$CACHE/logs/$kname.log
cat "${frags[@]}" >"$out/fragment.config"
rm -f "$out/.accmap-stamp"

say "configuring $out (allnoconfig + $(printf "%s " "${frags[@]##*/}"))"
"${kmake[@]}" -C "$src" O="$out" KCONFIG_ALLCONFIG="$out/fragment.config" \
	allnoconfig >"$log" 2>&1 || { tail -n 30 "$log" >&2; die "allnoconfig failed"; }

# Check every option of the fragments against the result.
missing=()
absent=()
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		sym=${line%%=*}
		sym=${sym#CONFIG_}
		if ! grep -rqsEx --include='Kconfig*' "[[:space:]]*(menu)?config ${sym}[[:space:]]*" "$src"; then
			absent+=("$line")
			continue
		fi
		;;
	esac
	case $line in
	CONFIG_*=n)
		opt=${line%%=*}
		grep -q "^$opt=" "$out/.config" && missing+=("$line")
		;;
	CONFIG_*=*)
		grep -qxF "$line" "$out/.config" || missing+=("$line")
		;;
	esac
done <"$out/fragment.config"
if [ "${#absent[@]}" -gt 0 ]; then
	say "options this kernel's Kconfig does not define (left out): ${absent[*]}"
fi
if [ "${#missing[@]}" -gt 0 ]; then
	warn "options that did not reach $out/.config (unmet dependencies?):"
	printf '%s\n' "${missing[@]}" | indent >&2
	die "configuration of the $flavor kernel is incomplete"
fi

say "building the $flavor kernel for $karch (-j$(nproc); log $log)"
start=$SECONDS
if ! timeout -k 30 "$KERNEL_BUILD_TIMEOUT" \
	"${kmake[@]}" -C "$src" O="$out" -j"$(nproc)" "$target" modules >>"$log" 2>&1; then
	tail -n 40 "$log" >&2
	die "the $flavor kernel did not build (log $log)"
fi
[ -f "$image" ] || die "no $image after the build"
echo "$key" >"$out/.accmap-stamp"
say "built $image ($(cat "$out/include/config/kernel.release")) in $((SECONDS - start)) s"
