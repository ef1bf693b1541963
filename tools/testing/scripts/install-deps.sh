#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs everything the accmap build and test tiers need on a Debian 12
# machine, and fetches the arm64 and amd64 distro kernel packages into the
# cache (outside git's view).  Safe to run again: it does nothing that is
# already done.  Run as root, or with sudo available.
set -euo pipefail

CACHE=${ACCMAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/accmap}
SUDO=
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
fi

PKGS=(build-essential bc flex bison libelf-dev libssl-dev kmod cpio xz-utils
      rsync python3 file procps openssl git
      linux-headers-amd64 linux-source-6.1
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross
      qemu-system-x86 qemu-system-arm
      sparse dkms busybox-static shellcheck device-tree-compiler
      clang libclang-rt-14-dev gnuplot-nox)

stamp=$CACHE/.deps-ok
mkdir -p "$CACHE"

need_install=0
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		need_install=1
		break
	fi
done

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	$SUDO dpkg --add-architecture arm64
	need_install=1
fi

if [ "$need_install" = 1 ] || [ ! -e "$stamp" ]; then
	$SUDO apt-get update -q
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "${PKGS[@]}"
fi

# Debian's kernel ABI name (6.1.0-N) follows point releases: take it from
# what the linux-headers-amd64 metapackage depends on.
abi=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 |
      grep -o 'linux-headers-6\.1\.0-[0-9]*-amd64' | head -n1 |
      sed -e 's/linux-headers-//' -e 's/-amd64$//')
[ -n "$abi" ] || { echo "install-deps: cannot find the 6.1 ABI" >&2; exit 1; }
echo "$abi" > "$CACHE/abi"

# Distro kernel images (and their modules, for vgem), arm64 headers and
# the arm64 busybox: downloaded, unpacked into the cache, never installed.
fetch() {	# fetch PKG DESTDIR
	local pkg=$1 dest=$2
	[ -e "$dest/.unpacked" ] && return 0
	local tmp
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download -q "$pkg")
	mkdir -p "$dest"
	dpkg -x "$tmp"/*.deb "$dest"
	rm -rf "$tmp"
	touch "$dest/.unpacked"
}

fetch "linux-image-$abi-amd64-unsigned" "$CACHE/amd64/image" 2>/dev/null ||
	fetch "linux-image-$abi-amd64" "$CACHE/amd64/image"
fetch "linux-image-$abi-arm64-unsigned:arm64" "$CACHE/arm64/image" 2>/dev/null ||
	fetch "linux-image-$abi-arm64:arm64" "$CACHE/arm64/image"
fetch "linux-headers-$abi-arm64:arm64" "$CACHE/arm64/headers"
fetch "linux-headers-$abi-common" "$CACHE/arm64/headers"
fetch "busybox-static:arm64" "$CACHE/arm64/busybox"

# The arm64 headers' scripts link points into lib/linux-kbuild-6.1 relative
# to /usr/src; give the unpacked tree the host's own kbuild tools.
hdr=$CACHE/arm64/headers/usr/src/linux-headers-$abi-arm64
if [ ! -e "$CACHE/arm64/headers/usr/lib/linux-kbuild-6.1" ]; then
	mkdir -p "$CACHE/arm64/headers/usr/lib"
	ln -sfn /usr/lib/linux-kbuild-6.1 "$CACHE/arm64/headers/usr/lib/linux-kbuild-6.1"
fi
[ -e "$hdr/scripts/basic/fixdep" ] || {
	echo "install-deps: $hdr/scripts does not resolve to host kbuild tools" >&2
	exit 1
}

# The newest kernel headers Debian 12 offers (6.12 line), for the build
# check that keeps the compatibility layer (drivers/accmap/compat.h) honest.
compat=$(cat "$CACHE/compat-kver" 2>/dev/null || true)
if [ -z "$compat" ] || [ ! -f "/usr/src/linux-headers-$compat/Makefile" ]; then
	compat=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' |
		 awk '{print $1}' | sort -V | tail -n 1 | sed 's/^linux-headers-//')
	[ -n "$compat" ] || { echo "install-deps: no 6.12 headers offered" >&2; exit 1; }
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "linux-headers-$compat"
	echo "$compat" > "$CACHE/compat-kver"
fi

touch "$stamp"
echo "install-deps: ready (ABI $abi, compat $compat, cache $CACHE)"
