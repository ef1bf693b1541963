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
      clang libclang-rt-14-dev gnuplot-nox lcov
      debhelper dh-dkms lintian fakeroot python3-docutils abigail-tools
      criu libc6-dev:arm64 python3-jsonschema
      dpkg-dev meson ninja-build pkg-config libglib2.0-dev libpixman-1-dev
      libfdt-dev)

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
# Layout: the 6.1 line in $CACHE/<arch>/{image,headers} (and the amd64
# headers of its PREEMPT_RT flavour in $CACHE/amd64/headers-rt), the 6.12 line in
# $CACHE/<arch>/<release>/{image,headers} (release as 6.12.N+deb12) and
# its arm64 16 KiB-page flavour in $CACHE/arm64/<release>/{image,headers}-16k,
# its PREEMPT_RT flavour in $CACHE/<arch>/<release>/{image,headers}-rt
# (their -common-rt in $CACHE/rt/<release>),
# the 5.10 line in $CACHE/<arch>/5.10.0-N/{image,headers} (with its -common
# headers and kbuild tools in $CACHE/5.10, see below), and the arm64
# busybox in $CACHE/arm64/busybox (tools/testing/vm/run.sh reads the same
# paths).

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

# link_kbuild ROOT KVER [KBUILD_ROOT [COMMON_ROOT]]: the unpacked headers'
# scripts link points into usr/lib/linux-kbuild-* relative to usr/src;
# give the tree under ROOT the amd64 kbuild tools of the same release,
# which run the (cross) build: the host's own by default, or those
# unpacked under KBUILD_ROOT.  Their Makefile includes the -common headers
# by absolute path: the host has those too (a dependency of its amd64
# headers), or they are unpacked under COMMON_ROOT, and then the include
# is pointed there, and that tree's scripts link resolved the same way.
link_kbuild() {
	local root=$1 kver=$2 kroot=${3:-} croot=${4:-} hdr target kbuild
	hdr=$root/usr/src/linux-headers-$kver
	target=$(readlink "$hdr/scripts" || true)
	kbuild=${target#../../lib/}
	kbuild=${kbuild%/scripts}
	case $kbuild in
	linux-kbuild-*) ;;
	*) echo "install-deps: $hdr/scripts is not a link into linux-kbuild-*" >&2; return 1 ;;
	esac
	local r
	for r in "$root" ${croot:+"$croot"}; do
		if [ ! -e "$r/usr/lib/$kbuild" ]; then
			mkdir -p "$r/usr/lib"
			ln -sfn "$kroot/usr/lib/$kbuild" "$r/usr/lib/$kbuild"
		fi
	done
	[ -e "$hdr/scripts/basic/fixdep" ] || {
		echo "install-deps: $hdr/scripts does not resolve to kbuild tools ($kroot/usr/lib/$kbuild)" >&2
		return 1
	}
	local common
	common=$(sed -n 's/^include //p' "$hdr/Makefile")
	if [ -n "$croot" ] && [ "${common#"$croot"/}" = "$common" ]; then
		sed -i "s|^include /usr/src/|include $croot/usr/src/|" "$hdr/Makefile"
		common=$(sed -n 's/^include //p' "$hdr/Makefile")
	fi
	[ -f "$common" ] || {
		echo "install-deps: $hdr/Makefile includes $common, which is missing" >&2
		return 1
	}
}

# private_apt NAME ARCHS "URL SUITE"...: an apt state of its own under
# $CACHE/apt/NAME for the given suites (main, the architectures ARCHS as a
# comma-separated list), so that other releases' lists stay out of the
# host's apt; updates its lists and sets papt_opts to the apt-get and
# apt-cache options that use it.
papt_opts=()
private_apt() {
	local dir=$CACHE/apt/$1 archs=$2 opts suite
	shift 2
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	opts="[arch=$archs signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
	for suite in "$@"; do
		printf 'deb %s %s main\n' "$opts" "$suite"
	done >"$dir/sources.list"
	papt_opts=(-o APT::Sandbox::User=root -o "Dir::Etc::SourceList=$dir/sources.list"
		   -o Dir::Etc::SourceParts=/dev/null
		   -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")
	apt-get "${papt_opts[@]}" update -q >/dev/null || {
		echo "install-deps: cannot update the lists in $dir ($*)" >&2
		return 1
	}
}

# The 6.1 line's packages are unpacked at paths without the ABI in them,
# and the ABI follows the host's linux-headers-amd64: after a point
# release (an upgrade of the host, or a fresh install-deps on the same
# machine with another cache) a tree unpacked for the previous ABI must
# go, or it would stand for the new one.
for drop in "amd64/image:boot/vmlinuz-$abi-amd64" "arm64/image:boot/vmlinuz-$abi-arm64" \
	    "arm64/headers:usr/src/linux-headers-$abi-arm64" \
	    "amd64/headers-rt:usr/src/linux-headers-$abi-rt-amd64"; do
	dir=$CACHE/${drop%%:*}
	if [ -e "$dir/.unpacked" ] && [ ! -e "$dir/${drop#*:}" ]; then
		echo "install-deps: $dir holds another ABI than $abi: unpacking $abi again"
		rm -rf "$dir"
	fi
done
fetch_image "$CACHE/amd64/image" "linux-image-$abi-amd64"
fetch_image "$CACHE/arm64/image" "linux-image-$abi-arm64" arm64
fetch "$CACHE/arm64/headers" "linux-headers-$abi-arm64:arm64"
fetch "$CACHE/arm64/busybox" "busybox-static:arm64"
link_kbuild "$CACHE/arm64/headers" "$abi-arm64"
# The amd64 headers of its PREEMPT_RT flavour, for dkms-test.sh's build
# (their -common-rt in $CACHE/rt/<ABI>), the same version as the host's.
abi_ver=$(dpkg-query -W -f='${Version}' "linux-headers-$abi-amd64")
fetch "$CACHE/rt/$abi/common" "linux-headers-$abi-common-rt=$abi_ver"
fetch "$CACHE/amd64/headers-rt" "linux-headers-$abi-rt-amd64=$abi_ver"
link_kbuild "$CACHE/amd64/headers-rt" "$abi-rt-amd64" "" "$CACHE/rt/$abi/common"

# Debian 11's 5.10 line (the kernels L4T R35 boards run), both
# architectures, from a private apt state for bullseye: image, headers,
# their -common headers (arch-independent) and the amd64 linux-kbuild-5.10
# of the same package version, each unpacked into the cache, never
# installed.  The ABI (5.10.0-N) is the newest both architectures list;
# an architecture whose packages of that ABI do not download (the
# security archive has lacked arm64 files) takes the newest one that
# does.  "ARCH 5.10.0-N" per architecture goes to $CACHE/k510-abi.
# Layout: $CACHE/<arch>/5.10.0-N/{image,headers}, $CACHE/5.10/common-5.10.0-N,
# $CACHE/5.10/kbuild-<version>.  Chosen once: remove $CACHE/k510-abi to
# look for a newer ABI.
k510_ready() {
	local arch kabi
	[ -s "$CACHE/k510-abi" ] || return 1
	for arch in amd64 arm64; do
		kabi=$(sed -n "s/^$arch //p" "$CACHE/k510-abi")
		[ -n "$kabi" ] &&
			[ -e "$CACHE/$arch/$kabi/image/.unpacked" ] &&
			[ -e "$CACHE/$arch/$kabi/headers/.unpacked" ] &&
			[ -e "$CACHE/5.10/common-$kabi/.unpacked" ] &&
			[ -e "$CACHE/$arch/$kabi/headers/usr/src/linux-headers-$kabi-$arch/scripts/basic/fixdep" ] ||
			return 1
	done
}

# k510_fetch ARCH KABI: image, headers, -common and kbuild of one ABI;
# what it unpacked for this ABI goes again if any of them is missing.
k510_fetch() {
	local arch=$1 kabi=$2 kver
	kver=$(apt-cache "${apt_opts[@]}" madison "linux-headers-$kabi-$arch:$arch" |
	       awk -F'|' '{gsub(/ /, ""); print $2; exit}')
	[ -n "$kver" ] || return 1
	if fetch "$CACHE/$arch/$kabi/headers" "linux-headers-$kabi-$arch:$arch=$kver" &&
	   fetch "$CACHE/5.10/common-$kabi" "linux-headers-$kabi-common=$kver" &&
	   fetch "$CACHE/5.10/kbuild-$kver" "linux-kbuild-5.10:amd64=$kver" &&
	   fetch_image "$CACHE/$arch/$kabi/image" "linux-image-$kabi-$arch" "$arch" "$kver" &&
	   link_kbuild "$CACHE/$arch/$kabi/headers" "$kabi-$arch" \
		"$CACHE/5.10/kbuild-$kver" "$CACHE/5.10/common-$kabi"; then
		return 0
	fi
	rm -rf "${CACHE:?}/$arch/$kabi"
	return 1
}

# Fetched in the background, beside the criu and 6.12 downloads below (a
# process of its own: its apt state and choices stay there); waited for
# after them.  Unpacking is xz on one core, a download mostly waiting.
k510_pid=
if ! k510_ready; then
	(
		private_apt bullseye amd64,arm64 "http://deb.debian.org/debian bullseye" \
			"http://deb.debian.org/debian bullseye-updates" \
			"http://deb.debian.org/debian-security bullseye-security" || exit 1
		apt_opts=("${papt_opts[@]}")
		# ABIs with headers for both architectures, the newest first.
		k510_abis=$(for arch in amd64 arm64; do
				apt-cache "${apt_opts[@]}" search --names-only \
					"^linux-headers-5\\.10\\.0-[0-9]+-$arch\$" |
					awk '{print $1}' | sed -e 's/^linux-headers-//' -e "s/-$arch\$//" |
					sort -u
			    done | sort | uniq -d | sort -rV)
		[ -n "$k510_abis" ] || { echo "install-deps: bullseye offers no 5.10 headers for both architectures" >&2; exit 1; }
		: >"$CACHE/k510-abi.tmp"
		for arch in amd64 arm64; do
			chosen=
			for kabi in $k510_abis; do
				if k510_fetch "$arch" "$kabi"; then
					chosen=$kabi
					break
				fi
				echo "install-deps: 5.10 $arch: cannot fetch $kabi (see above), trying an older ABI" >&2
			done
			[ -n "$chosen" ] || { echo "install-deps: no 5.10 ABI downloads for $arch" >&2; exit 1; }
			echo "$arch $chosen" >>"$CACHE/k510-abi.tmp"
		done
		apt_opts=()
		mv "$CACHE/k510-abi.tmp" "$CACHE/k510-abi"
	) &
	k510_pid=$!
fi
trap '[ -z "$k510_pid" ] || kill "$k510_pid" 2>/dev/null || true' EXIT

# CRIU for the test guests (issue 16): Debian's criu and the shared
# libraries it loads, for both guest architectures, unpacked together
# into $CACHE/<arch>/criu (never installed; run.sh packs the binary and
# the libraries it needs into the initramfs, resolved from NEEDED there).
# The libc is Debian's own too: the guests carry none (their programs are
# static).  One download per architecture; later runs see .unpacked.
# The plugin header, criu-plugin.h, is the same in both: $CACHE/criu/include
# points at the amd64 copy, for building tools/criu (CRIU_INCLUDE=).
criu_pkgs=(criu libc6 libgcc-s1 libbsd0 libmd0 libgnutls30 libp11-kit0 libffi8
	   libidn2-0 libunistring2 libtasn1-6 libnettle8 libhogweed6 libgmp10
	   libnet1 libnftables1 libmnl0 libnftnl11 libjansson4 libxtables12
	   libnl-3-200 libprotobuf-c1)
fetch_criu() {
	local arch=$1 dest=$CACHE/$1/criu tmp deb
	[ -e "$dest/.unpacked" ] && return 0
	tmp=$(mktemp -d)
	if ! (cd "$tmp" && apt-get download -q "${criu_pkgs[@]/%/:$arch}" >/dev/null 2>&1); then
		rm -rf "$tmp"
		echo "install-deps: apt cannot download criu for $arch (${criu_pkgs[*]})" >&2
		return 1
	fi
	rm -rf "$dest"
	mkdir -p "$dest"
	for deb in "$tmp"/*.deb; do
		dpkg -x "$deb" "$dest" || {
			rm -rf "$tmp" "$dest"
			echo "install-deps: cannot unpack $deb into $dest" >&2
			return 1
		}
	done
	rm -rf "$tmp"
	[ -x "$dest/usr/sbin/criu" ] || { echo "install-deps: no usr/sbin/criu in $dest" >&2; return 1; }
	touch "$dest/.unpacked"
}
fetch_criu amd64
fetch_criu arm64
if [ "$(readlink "$CACHE/criu/include" 2>/dev/null)" != ../amd64/criu/usr/include ]; then
	mkdir -p "$CACHE/criu"
	ln -sfn ../amd64/criu/usr/include "$CACHE/criu/include"
fi
[ -f "$CACHE/criu/include/criu/criu-plugin.h" ] ||
	{ echo "install-deps: no criu-plugin.h under $CACHE/criu/include" >&2; exit 1; }

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
# Its PREEMPT_RT flavour, same release, images and headers of both
# architectures, for the guests where spinlocks sleep and interrupt
# handlers run in threads (run.sh amd64-rt, arm64-rt).  The headers
# include the rt featureset's own -common-rt headers, which the host does
# not have: unpacked into $CACHE/rt/<release>.
fetch "$CACHE/rt/$rel/common" "linux-headers-$rel-common-rt=$ver"
for arch in amd64 arm64; do
	fetch_image "$CACHE/$arch/$rel/image-rt" "linux-image-$rel-rt-$arch" "$arch" "$ver"
	fetch "$CACHE/$arch/$rel/headers-rt" "linux-headers-$rel-rt-$arch:$arch=$ver"
	link_kbuild "$CACHE/$arch/$rel/headers-rt" "$rel-rt-$arch" "" "$CACHE/rt/$rel/common"
done

if [ -n "$k510_pid" ]; then
	wait "$k510_pid" || { echo "install-deps: the 5.10 line was not fetched (see above)" >&2; exit 1; }
	k510_pid=
fi

# The newest kernel release Debian packages as source: the newest
# linux-source-X.Y of every suite read here (unstable, experimental and
# the backports of Debian 13 and 12; a release, not a ~rc), for the amd64
# debug kernel build-kernel.sh builds.  The package is unpacked into the
# cache, never installed; "SERIES VERSION TARBALL" goes to
# $CACHE/mainline-src, with the list of suites searched.  Those suites'
# lists stay out of the host's apt (a private apt state under the cache).
# Chosen once for a list of suites (a cache whose choice was made from
# another list chooses again): remove $CACHE/mainline-src to look for a
# newer release, or run this script with --newest-source to see which it
# would pick, changing nothing.
newest_suites=("http://deb.debian.org/debian sid" "http://deb.debian.org/debian experimental"
	       "http://deb.debian.org/debian trixie-backports"
	       "http://deb.debian.org/debian bookworm-backports")
# newest_source APT-STATE-NAME: sets ml_pkg, ml_ver and ml_suite to the
# newest release among the linux-source-X.Y the suites offer, and
# papt_opts to that apt state.  Versions are compared as dpkg does; an
# upstream part with a ~ (7.4~rc3) is a release candidate, while a ~ in
# the Debian revision (7.3.4-1~bpo13+1, a backport) is not.
newest_source() {
	local pkg ver suite
	ml_pkg='' ml_ver='' ml_suite=''
	private_apt "$1" amd64 "${newest_suites[@]}" || return 1
	while read -r pkg ver suite; do
		case ${ver%-*} in *'~'*) continue ;; esac
		if [ -z "$ml_ver" ] || dpkg --compare-versions "$ver" gt "$ml_ver"; then
			ml_pkg=$pkg ml_ver=$ver ml_suite=$suite
		fi
	done < <(apt-cache "${papt_opts[@]}" search --names-only '^linux-source-[0-9]+\.[0-9]+$' |
		 awk '{print $1}' | while read -r pkg; do
			apt-cache "${papt_opts[@]}" madison "$pkg" |
				awk -F'|' '{gsub(/ /, "", $1); gsub(/ /, "", $2);
					    split($3, w, " "); sub(/\/.*/, "", w[2]); print $1, $2, w[2]}'
		 done)
	[ -n "$ml_ver" ] || { echo "install-deps: no linux-source release offered" >&2; return 1; }
}

if [ "${1:-}" = --newest-source ]; then
	newest_source newest-source || exit 1
	echo "install-deps: the newest linux-source is $ml_pkg $ml_ver, from $ml_suite" \
		"(in use: $(cut -d' ' -f1,2 "$CACHE/mainline-src" 2>/dev/null || echo none))"
	exit 0
fi

ml_suites=$(printf '%s\n' "${newest_suites[@]}" | awk '{print $2}' | paste -sd,)
read -r _ _ ml_tarball ml_from <<<"$(cat "$CACHE/mainline-src" 2>/dev/null || true)"
if [ -z "${ml_tarball:-}" ] || [ ! -f "$ml_tarball" ] || [ "${ml_from:-}" != "$ml_suites" ]; then
	newest_source unstable || exit 1
	echo "install-deps: the newest linux-source: $ml_pkg $ml_ver, from $ml_suite"
	ml_series=${ml_pkg#linux-source-}
	ml_dir=$CACHE/src/pkg-$ml_pkg-$ml_ver
	apt_opts=("${papt_opts[@]}")
	fetch "$ml_dir" "$ml_pkg=$ml_ver"
	apt_opts=()
	ml_tarball=$ml_dir/usr/src/$ml_pkg.tar.xz
	[ -f "$ml_tarball" ] || { echo "install-deps: $ml_pkg $ml_ver has no $ml_tarball" >&2; exit 1; }
	echo "$ml_series $ml_ver $ml_tarball $ml_suites" >"$CACHE/mainline-src"
fi

touch "$stamp"
echo "install-deps: ready (ABI $abi, compat $compat, 5.10 $(paste -sd, "$CACHE/k510-abi"), mainline $(cut -d' ' -f1,2 "$CACHE/mainline-src"), cache $CACHE)"
