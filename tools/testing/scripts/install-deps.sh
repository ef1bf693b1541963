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
      gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
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
#
# Layout: the 6.1 line in $CACHE/<arch>/{image,headers}, the 6.12 line in
# $CACHE/<arch>/<release>/{image,headers} (release as 6.12.N+deb12) and
# its arm64 16 KiB-page flavour in $CACHE/arm64/<release>/{image,headers}-16k,
# and
# the arm64 busybox in $CACHE/arm64/busybox (tools/testing/vm/run.sh
# reads the same paths).

# fetch DESTDIR PKG...: unpacks the first PKG apt can download (a name, or
# name:arch=version) into DESTDIR, once; later runs see DESTDIR/.unpacked.
# apt_opts (an array, empty by default) points apt at another state.
apt_opts=()
fetch() {
	local dest=$1 pkg tmp
	shift
	[ -e "$dest/.unpacked" ] && return 0
	tmp=$(mktemp -d)
	for pkg in "$@"; do
		if (cd "$tmp" && apt-get "${apt_opts[@]}" download -q "$pkg" >/dev/null 2>&1); then
			mkdir -p "$dest"
			if ! dpkg -x "$tmp"/*.deb "$dest"; then
				rm -rf "$tmp"
				echo "install-deps: cannot unpack $pkg into $dest" >&2
				return 1
			fi
			rm -rf "$tmp"
			touch "$dest/.unpacked"
			return 0
		fi
	done
	rm -rf "$tmp"
	echo "install-deps: apt cannot download any of: $*" >&2
	return 1
}

# fetch_image DESTDIR NAME [ARCH [VERSION]]: a kernel image package, the
# unsigned build if apt has one (same kernel, no EFI signature).
fetch_image() {
	local dest=$1 name=$2 sfx=${3:+:$3}${4:+=$4}
	fetch "$dest" "$name-unsigned$sfx" "$name$sfx"
}

# link_kbuild ROOT KVER: the unpacked arm64 headers' scripts link points
# into usr/lib/linux-kbuild-* relative to usr/src; give the tree under ROOT
# the host's own (amd64) kbuild tools of the same release, which run the
# cross build.  Their Makefile includes the -common headers by absolute
# path: the host has those too (a dependency of its amd64 headers).
link_kbuild() {
	local root=$1 kver=$2 hdr target kbuild
	hdr=$root/usr/src/linux-headers-$kver
	target=$(readlink "$hdr/scripts" || true)
	kbuild=${target#../../lib/}
	kbuild=${kbuild%/scripts}
	case $kbuild in
	linux-kbuild-*) ;;
	*) echo "install-deps: $hdr/scripts is not a link into linux-kbuild-*" >&2; return 1 ;;
	esac
	if [ ! -e "$root/usr/lib/$kbuild" ]; then
		mkdir -p "$root/usr/lib"
		ln -sfn "/usr/lib/$kbuild" "$root/usr/lib/$kbuild"
	fi
	[ -e "$hdr/scripts/basic/fixdep" ] || {
		echo "install-deps: $hdr/scripts does not resolve to host kbuild tools (/usr/lib/$kbuild)" >&2
		return 1
	}
	local common
	common=$(sed -n 's/^include //p' "$hdr/Makefile")
	[ -f "$common" ] || {
		echo "install-deps: $hdr/Makefile includes $common, which the host lacks" >&2
		return 1
	}
}

fetch_image "$CACHE/amd64/image" "linux-image-$abi-amd64"
fetch_image "$CACHE/arm64/image" "linux-image-$abi-arm64" arm64
fetch "$CACHE/arm64/headers" "linux-headers-$abi-arm64:arm64"
fetch "$CACHE/arm64/busybox" "busybox-static:arm64"
link_kbuild "$CACHE/arm64/headers" "$abi-arm64"

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

# The same 6.12 release as images for both guests, and the arm64 headers:
# the very package version of the amd64 headers installed above.
rel=${compat%-amd64}
ver=$(dpkg-query -W -f='${Version}' "linux-headers-$compat")
[ -n "$ver" ] || { echo "install-deps: linux-headers-$compat is not installed" >&2; exit 1; }
fetch_image "$CACHE/amd64/$rel/image" "linux-image-$rel-amd64" amd64 "$ver"
fetch_image "$CACHE/arm64/$rel/image" "linux-image-$rel-arm64" arm64 "$ver"
fetch "$CACHE/arm64/$rel/headers" "linux-headers-$rel-arm64:arm64=$ver"
link_kbuild "$CACHE/arm64/$rel/headers" "$rel-arm64"
# Debian's arm64 kernel with 16 KiB pages, same release, for the guest
# that checks accmap makes no 4 KiB page assumption (run.sh arm64-16k).
fetch_image "$CACHE/arm64/$rel/image-16k" "linux-image-$rel-arm64-16k" arm64 "$ver"
fetch "$CACHE/arm64/$rel/headers-16k" "linux-headers-$rel-arm64-16k:arm64=$ver"
link_kbuild "$CACHE/arm64/$rel/headers-16k" "$rel-arm64-16k"

# The newest kernel release Debian packages as source: linux-source-X.Y
# from unstable or experimental (a release, not a ~rc), for the mainline
# kernel build-kernel.sh builds.  The package is unpacked into the cache,
# never installed; "SERIES VERSION TARBALL" goes to $CACHE/mainline-src.
# Those suites' lists stay out of the host's apt (a private apt state
# under the cache).  Chosen once: remove $CACHE/mainline-src to look for
# a newer release.
read -r _ _ ml_tarball <<<"$(cat "$CACHE/mainline-src" 2>/dev/null || true)"
if [ -z "${ml_tarball:-}" ] || [ ! -f "$ml_tarball" ]; then
	sapt=$CACHE/apt/unstable
	mkdir -p "$sapt/lists/partial" "$sapt/cache/archives/partial"
	opts="[arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
	printf 'deb %s http://deb.debian.org/debian %s main\n' \
		"$opts" sid "$opts" experimental >"$sapt/sources.list"
	sopts=(-o APT::Sandbox::User=root -o "Dir::Etc::SourceList=$sapt/sources.list"
	       -o Dir::Etc::SourceParts=/dev/null
	       -o "Dir::State::Lists=$sapt/lists" -o "Dir::Cache=$sapt/cache")
	apt-get "${sopts[@]}" update -q >/dev/null ||
		{ echo "install-deps: cannot update the unstable lists in $sapt" >&2; exit 1; }
	# Every version of every linux-source-X.Y, the newest release first.
	ml=$(apt-cache "${sopts[@]}" search --names-only '^linux-source-[0-9]+\.[0-9]+$' |
	     awk '{print $1}' | while read -r p; do
		apt-cache "${sopts[@]}" madison "$p" | awk -F'|' '{gsub(/ /, ""); print $1, $2}'
	     done | grep -v '~' | sort -k2,2V | tail -n 1)
	read -r ml_pkg ml_ver <<<"$ml"
	[ -n "${ml_ver:-}" ] || { echo "install-deps: no linux-source release offered" >&2; exit 1; }
	ml_series=${ml_pkg#linux-source-}
	ml_dir=$CACHE/src/pkg-$ml_pkg-$ml_ver
	apt_opts=("${sopts[@]}")
	fetch "$ml_dir" "$ml_pkg=$ml_ver"
	apt_opts=()
	ml_tarball=$ml_dir/usr/src/$ml_pkg.tar.xz
	[ -f "$ml_tarball" ] || { echo "install-deps: $ml_pkg $ml_ver has no $ml_tarball" >&2; exit 1; }
	echo "$ml_series $ml_ver $ml_tarball" >"$CACHE/mainline-src"
fi

touch "$stamp"
echo "install-deps: ready (ABI $abi, compat $compat, mainline $(cut -d' ' -f1,2 "$CACHE/mainline-src"), cache $CACHE)"
