# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Uses run.sh's $arch, $work and $mode and criu-pack.sh's $criu_root,
# $criu_triplet and criu_needed; sets variables run.sh and criu-pack.sh
# read.
# shellcheck disable=SC2154,SC2034
#
# The guest's user space from the Debian packages (sourced by run.sh, after
# criu-pack.sh).  With ACCMAP_VM_PACKAGES=DIR, DIR holds the .deb files
# tools/testing/scripts/deb-build.sh made ($ACCMAP_CACHE/deb/out), and
# the guest runs what they install instead of what the build tree makes:
#
#   - the selftests that use libaccmap are linked against libaccmap-dev's
#     headers and libaccmap.so (selftests' LIBACCMAP_PKG) and load
#     libaccmap1's libaccmap.so.1, the only one in the guest, from
#     /usr/lib/TRIPLET where the package puts it;
#   - the demo's accmap-demo and accmapctl are accmap-tools' own binaries;
#   - criu's plugin is criu-plugin-accmap's /usr/lib/criu/accmap_criu.so.
#
# The C library those need comes from the Debian packages install-deps.sh
# unpacked for criu ($criu_root).
#
# pkg_setup unpacks the target architecture's packages into $pkg_root
# (empty without ACCMAP_VM_PACKAGES) and fails naming a package it lacks.
# pkg_dynamic_ok FILE: FILE may be dynamically linked (a packaged run, and
# FILE needs libaccmap.so.1).
# pkg_pack ROOT puts into the initramfs at ROOT the packaged
# libaccmap.so.1 and, for every dynamically linked program in ROOT/tests,
# its loader and libraries.

pkg_root=
pkg_debs=(libaccmap1 libaccmap-dev accmap-tools criu-plugin-accmap)

pkg_setup() {
	local dir=${ACCMAP_VM_PACKAGES:-} p debs
	[ -n "$dir" ] || return 0
	case $mode in
	bench | soak) die "ACCMAP_VM_PACKAGES: test and demo runs only" ;;
	esac
	[ -e "$criu_root/.unpacked" ] ||
		die "$criu_root missing (the guest's C library): run tools/testing/scripts/install-deps.sh"
	pkg_root=$work/pkgroot
	rm -rf "$pkg_root"
	mkdir -p "$pkg_root"
	for p in "${pkg_debs[@]}"; do
		mapfile -t debs < <(find "$dir" -maxdepth 1 -name "${p}_*_$arch.deb")
		[ "${#debs[@]}" = 1 ] ||
			die "ACCMAP_VM_PACKAGES: ${#debs[@]} ${p}_*_$arch.deb in $dir, not one (tools/testing/scripts/deb-build.sh $arch)"
		dpkg-deb -x "${debs[0]}" "$pkg_root"
		say "packaged user space: $(basename "${debs[0]}")"
	done
}

pkg_dynamic_ok() {
	[ -n "$pkg_root" ] &&
		grep -q '(NEEDED).*\[libaccmap\.so\.1\]' <<<"$(readelf -d "$1" 2>/dev/null)"
}

pkg_pack() {
	local root=$1 f interp so p lib needed
	local -a dyn=()
	[ -n "$pkg_root" ] || return 0
	lib=$pkg_root/usr/lib/$criu_triplet/libaccmap.so.1
	[ -e "$lib" ] || die "libaccmap1 holds no /usr/lib/$criu_triplet/libaccmap.so.1"
	mkdir -p "$root/usr/lib/$criu_triplet" "$root/lib/$criu_triplet"
	cp -P "$pkg_root/usr/lib/$criu_triplet"/libaccmap.so.1* "$root/usr/lib/$criu_triplet/"
	for f in "$root"/tests/*; do
		grep -q 'Requesting program interpreter' <<<"$(readelf -l "$f" 2>/dev/null)" &&
			dyn+=("$f")
	done
	[ "${#dyn[@]}" -gt 0 ] || die "ACCMAP_VM_PACKAGES: no program of this run uses libaccmap.so.1"
	interp=$(readelf -l "${dyn[0]}" |
		 sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
	p=$(criu_resolve "$criu_root$interp") || die "the loader $interp is not in $criu_root"
	mkdir -p "$root$(dirname "$interp")"
	cp "$p" "$root$interp"
	# The libraries besides libaccmap.so.1: the packages' dependencies.
	needed=$(criu_needed "${dyn[@]}") || die "libraries missing (see above)"
	while read -r so p; do
		[ "$so" = libaccmap.so.1 ] || cp "$p" "$root/lib/$criu_triplet/$so"
	done <<<"$needed"
	say "packaged user space in the guest: libaccmap.so.1 for ${#dyn[@]} programs ($(printf '%s\n' "${dyn[@]##*/}" | paste -sd' '))"
}
