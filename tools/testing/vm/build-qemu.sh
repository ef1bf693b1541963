#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the qemu-system-aarch64 the board guests run: Debian's own qemu
# source (the release the host runs, from a private deb-src apt state)
# with accmap's Mali job-manager GPU device added, one target, only the
# devices the virt machine needs:
#
#   tools/testing/vm/build-qemu.sh            prints the binary's path
#   tools/testing/vm/build-qemu.sh --source   only fetches and unpacks the
#                                             source; prints its directory
#
# What is added: the device (tools/testing/vm/qemu/accmap-mali.[ch]) to
# hw/misc/, with the GPU code it shares with accmap's driver
# (drivers/accmap/mali_jobs.c, mali_regfile.c, replay_walk.c and their
# headers, the uapi header; listed for meson in hw/misc/accmap/meson.build)
# and the stand-ins for the kernel headers those include
# (tools/testing/vm/qemu/shim/) in hw/misc/accmap/; virt.patch wires it
# into the virt machine (-M virt,accmap-mali=on: its MMIO window, three
# interrupts, its device-tree node, and with iommu=smmuv3 its place
# behind the SMMU); devices.mak is the device list
# (--without-default-devices keeps everything else out).  The source tree,
# the build tree and a stamp live in $CACHE/qemu; the stamp hashes what
# was built (this script, the files above, the source version, the
# compiler), so an unchanged tree returns at once.
set -euo pipefail

TIER=qemu-build
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/../scripts/common.sh"

QEMU_BUILD_TIMEOUT=${ACCMAP_QEMU_BUILD_TIMEOUT:-2700}
qdir=$ACCMAP_ROOT/tools/testing/vm/qemu
top=$CACHE/qemu

ensure_deps

# The source version of the qemu the host runs: a binNMU suffix (+bN)
# names a rebuild of the same source.
hostver=$(dpkg-query -W -f='${Version}' qemu-system-arm)
srcver=${hostver%+b[0-9]*}
upstream=${srcver#*:}
upstream=${upstream%-*}

drv=$ACCMAP_ROOT/drivers/accmap
shared=("$drv/mali_jobs.c" "$drv/mali_jobs.h" "$drv/mali_regfile.c" "$drv/mali_regfile.h"
	"$drv/replay_walk.c" "$drv/replay_walk.h" "$drv/mali_regs.h")
configure_args=(--target-list=aarch64-softmmu
	--without-default-features --without-default-devices
	--with-devices-aarch64=accmap
	--enable-tcg --disable-kvm --enable-fdt=system --disable-docs
	--disable-tools --disable-user --disable-install-blobs)
# The tree's key: what configure sees.  The build's key adds the device's
# own files, which an up-to-date tree takes by an incremental build.
tree_key=$( {
	cat "$qdir"/virt.patch "$qdir"/devices.mak
	printf '%s\n' "$srcver" "${configure_args[@]}"
	gcc --version | head -n 1
} | sha256sum | cut -d' ' -f1)
key=$( {
	printf '%s\n' "$tree_key"
	cat "$qdir"/accmap-mali.* "$qdir"/shim/linux/* "${shared[@]}" \
		"$ACCMAP_ROOT/include/uapi/linux/accmap.h"
} | sha256sum | cut -d' ' -f1)
# fetch_source: Debian's source, patched as Debian ships it, unpacked
# once per version into $src.
src=$top/src-$srcver
fetch_source() {
	local apt_dir opts dl
	local -a apt_opts
	if [ ! -e "$src/.unpacked" ]; then
		apt_dir=$CACHE/apt/deb-src
		mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
		opts="[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
		{
			printf 'deb-src %s http://deb.debian.org/debian bookworm main\n' "$opts"
			printf 'deb-src %s http://deb.debian.org/debian bookworm-updates main\n' "$opts"
			printf 'deb-src %s http://deb.debian.org/debian-security bookworm-security main\n' "$opts"
		} >"$apt_dir/sources.list"
		apt_opts=(-o APT::Sandbox::User=root -o "Dir::Etc::SourceList=$apt_dir/sources.list"
			  -o Dir::Etc::SourceParts=/dev/null
			  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache")
		apt-get "${apt_opts[@]}" update -q >>"$log" 2>&1 ||
			die "cannot read Debian's source lists (log: $log)"
		dl=$top/download
		rm -rf "$dl" "$src"
		mkdir -p "$dl"
		say "fetching Debian's qemu source $srcver"
		(cd "$dl" && apt-get "${apt_opts[@]}" source --download-only -q "qemu=$srcver") \
			>>"$log" 2>&1 || die "apt cannot download the source of qemu $srcver (log: $log)"
		dpkg-source -x --no-check "$dl"/qemu_"${srcver#*:}".dsc "$src" >>"$log" 2>&1 ||
			die "dpkg-source cannot unpack qemu $srcver (log: $log)"
		rm -rf "$dl"
		touch "$src/.unpacked"
	fi
}

bin=$top/build/qemu-system-aarch64
if [ "${1:-}" = --source ]; then
	mkdir -p "$top" "$CACHE/logs"
	log=$CACHE/logs/qemu-source.log
	: >"$log"
	fetch_source
	printf '%s\n' "$src"
	exit 0
fi
if [ -x "$bin" ] && [ "$(cat "$top/.stamp" 2>/dev/null)" = "$key" ]; then
	say "up to date: $bin"
	printf '%s\n' "$bin"
	exit 0
fi

acquire_build_lock
mkdir -p "$top" "$CACHE/logs"
log=$CACHE/logs/qemu-build.log
rm -f "$top/.stamp"
: >"$log"

# sync_device TREE: the device and accmap's shared GPU code into the qemu
# tree, each file copied only if it changed (ninja rebuilds what did):
# the device in hw/misc/, accmap's own GPU code beside it in
# hw/misc/accmap/ (built into the device as it is into accmap.ko), with
# shim/ standing in for the kernel headers that code includes.
sync_device() {
	local tree=$1 f
	sync_one() {
		mkdir -p "$tree/$2"
		cmp -s "$1" "$tree/$2/${1##*/}" || cp "$1" "$tree/$2/"
	}
	sync_one "$qdir/accmap-mali.c" hw/misc
	sync_one "$qdir/accmap-mali.h" include/hw/misc
	for f in "${shared[@]}"; do
		sync_one "$f" hw/misc/accmap
	done
	sync_one "$ACCMAP_ROOT/include/uapi/linux/accmap.h" hw/misc/accmap/uapi/linux
	for f in "$qdir"/shim/linux/*; do
		sync_one "$f" hw/misc/accmap/shim/linux
	done
	# The shared sources, for hw/misc/meson.build (virt.patch).
	{
		printf '# Written by accmap'"'"'s build-qemu.sh: the GPU code the device shares.\n'
		printf 'accmap_shared = files('
		for f in "${shared[@]}"; do
			[[ $f == *.c ]] && printf "'%s', " "${f##*/}"
		done
		printf ')\n'
	} >"$tree/hw/misc/accmap/meson.build.new"
	if cmp -s "$tree/hw/misc/accmap/meson.build.new" "$tree/hw/misc/accmap/meson.build"; then
		rm "$tree/hw/misc/accmap/meson.build.new"
	else
		mv "$tree/hw/misc/accmap/meson.build.new" "$tree/hw/misc/accmap/meson.build"
	fi
}

build=$top/build
work=$top/tree
if [ -x "$bin" ] && [ "$(cat "$top/.tree-stamp" 2>/dev/null)" = "$tree_key" ]; then
	say "the device changed: an incremental build of $work"
	sync_device "$work"
	start=$SECONDS
	timeout -k 30 "$QEMU_BUILD_TIMEOUT" ninja -C "$build" -j"$(nproc)" qemu-system-aarch64 \
		>>"$log" 2>&1 || { tail -n 30 "$log" >&2; die "the build failed (log: $log)"; }
	printf '%s\n' "$key" >"$top/.stamp"
	say "built $bin in $((SECONDS - start)) s"
	printf '%s\n' "$bin"
	exit 0
fi
rm -f "$top/.tree-stamp"
fetch_source

# A copy of the source with the device added: the pristine tree stays as
# Debian made it, so a changed patch applies to it again.
say "adding the device to a copy of qemu $upstream"
rm -rf "$work"
cp -a "$src" "$work"
rm -f "$work/.unpacked"
sync_device "$work"
# configure takes a device list by name, from configs/devices/<target>/.
cp "$qdir/devices.mak" "$work/configs/devices/aarch64-softmmu/accmap.mak"
patch -d "$work" -p1 --no-backup-if-mismatch <"$qdir/virt.patch" >>"$log" 2>&1 ||
	die "virt.patch does not apply to qemu $upstream (log: $log)"

build=$top/build
rm -rf "$build"
mkdir -p "$build"
say "configuring (aarch64-softmmu, devices: $qdir/devices.mak)"
(cd "$build" && "$work/configure" "${configure_args[@]}") >>"$log" 2>&1 ||
	{ tail -n 30 "$log" >&2; die "configure failed (log: $log)"; }

say "building qemu-system-aarch64 (-j$(nproc); log $log)"
start=$SECONDS
timeout -k 30 "$QEMU_BUILD_TIMEOUT" ninja -C "$build" -j"$(nproc)" qemu-system-aarch64 \
	>>"$log" 2>&1 || { tail -n 30 "$log" >&2; die "the build failed (log: $log)"; }
[ -x "$bin" ] || die "the build left no $bin"
printf '%s\n' "$key" >"$top/.stamp"
printf '%s\n' "$tree_key" >"$top/.tree-stamp"
say "built $bin in $((SECONDS - start)) s"
printf '%s\n' "$bin"
