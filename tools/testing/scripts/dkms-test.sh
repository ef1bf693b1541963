#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS round trip against the Debian 6.1 amd64 headers:
#   copy the project's files to /usr/src/accmap-VERSION, dkms add, build,
#   install, check the installed module; then dkms build against the
#   other lines' build trees (amd64: Debian 12's 6.12 headers, those of
#   the PREEMPT_RT flavours of 6.12 and 6.1, Debian 11's 5.10 headers;
#   arm64, cross-compiled: accmap's debug kernel of the newest line);
#   dkms build refusing forged kernels that lack what accmap needs; dkms
#   remove --all, clean up.
# Leftovers of an aborted earlier run are removed first.  Needs root (or
# sudo).  VERSION comes from dkms.conf.
#
# Steps count as tests; last line: "N passed, N failed".
set -euo pipefail

TIER=dkms
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/common.sh"

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

ensure_deps
abi=$(kernel_abi)
kver=$abi-amd64
version=$(package_version)
[ -n "$version" ] || die "no PACKAGE_VERSION in dkms.conf"
srcdir=/usr/src/accmap-$version
[ -e "/lib/modules/$kver/build/Makefile" ] ||
	die "/lib/modules/$kver/build missing (linux-headers-$kver)"

passed=0
failed=0
step() {	# step NAME COMMAND...: run a step, log its output, count it
	local name=$1 out status=0
	shift
	say "$name: $*"
	out=$(timeout 900 "$@" 2>&1) || status=$?
	printf '%s\n' "$out" >>"$log"
	if [ "$status" = 0 ]; then
		passed=$((passed + 1))
	else
		printf '%s\n' "$out" | tail -n 30 | indent >&2
		warn "FAIL $name (exit $status)"
		failed=$((failed + 1))
	fi
	return "$status"
}

cleanup() {
	$SUDO dkms remove "accmap/$version" --all >/dev/null 2>&1 || true
	$SUDO rm -rf "$srcdir" "/var/lib/dkms/accmap/$version"
	if [ -d /var/lib/dkms/accmap ] &&
	   [ -z "$(ls -A /var/lib/dkms/accmap)" ]; then
		$SUDO rmdir /var/lib/dkms/accmap
	fi
}

mkdir -p "$CACHE/logs"
log=$CACHE/logs/dkms.log
: >"$log"

# Leftovers of an earlier (aborted) run.
if [ -e "$srcdir" ] || [ -e "/var/lib/dkms/accmap/$version" ]; then
	say "removing leftovers of an earlier run"
fi
cleanup

say "copying the project's files to $srcdir"
$SUDO mkdir -p "$srcdir"
project_files '*' | (cd "$ACCMAP_ROOT" && $SUDO rsync -a --files-from=- ./ "$srcdir/")

if step add $SUDO dkms add "accmap/$version" &&
   { step build $SUDO dkms build "accmap/$version" -k "$kver" || {
	tail -n 30 "/var/lib/dkms/accmap/$version/build/make.log" 2>/dev/null | indent >&2
	false; }; } &&
   step install $SUDO dkms install "accmap/$version" -k "$kver"; then
	# dkms 3.0 puts it under DEST_MODULE_LOCATION, compressed if the
	# kernel compresses its modules (Debian 6.1 does not).
	installed=$(find "/lib/modules/$kver/updates/dkms" -name 'accmap.ko*' 2>/dev/null |
		head -n1)
	if [ -n "$installed" ] &&
	   [ "$(modinfo -F vermagic "$installed" | cut -d' ' -f1)" = "$kver" ]; then
		say "installed: $installed ($(modinfo -F vermagic "$installed"))"
		passed=$((passed + 1))
	else
		warn "FAIL no accmap.ko for $kver under /lib/modules/$kver/updates/dkms"
		failed=$((failed + 1))
	fi
	step status dkms status accmap || true
fi

# dkms build (no install) against the other kernel lines' build trees:
# dkms_build_for KVER KDIR [MAKE VARIABLE...].  That the module builds
# there the way dkms builds it.  The variables reach dkms's make through
# MAKEFLAGS, as command-line ones.  dkms strips the module it keeps with
# whatever "strip" is first in its PATH: for a cross build
# (CROSS_COMPILE=...), that toolchain's.
dkms_build_for() {
	local kver=$1 kdir=$2 path=$PATH v
	shift 2
	for v in "$@"; do
		case $v in
		CROSS_COMPILE=*)
			mkdir -p "$CACHE/dkms/${v#*=}bin"
			ln -sfn "$(command -v "${v#*=}strip")" "$CACHE/dkms/${v#*=}bin/strip"
			path=$CACHE/dkms/${v#*=}bin:$PATH
			;;
		esac
	done
	if [ ! -f "$kdir/Makefile" ]; then
		warn "FAIL no build tree for $kver at $kdir (install-deps.sh)"
		failed=$((failed + 1))
		return 0
	fi
	local ko magic
	if ! step "build-$kver" $SUDO env PATH="$path" MAKEFLAGS="$*" \
		dkms build "accmap/$version" -k "$kver" \
		--kernelsourcedir "$kdir"; then
		tail -n 30 "/var/lib/dkms/accmap/$version/build/make.log" 2>/dev/null | indent >&2
		return 0
	fi
	# The module dkms keeps for that kernel (compressed where the
	# kernel compresses its own) must be built for it.
	ko=$(find "/var/lib/dkms/accmap/$version/$kver" -name 'accmap.ko*' 2>/dev/null | head -n1)
	magic=$(modinfo -F vermagic "$ko" 2>/dev/null || true)
	if [ -n "$ko" ] && [ "${magic%% *}" = "$kver" ]; then
		say "built for $kver: $ko ($magic)"
		passed=$((passed + 1))
	else
		warn "FAIL no accmap.ko for $kver under /var/lib/dkms/accmap/$version/$kver"
		failed=$((failed + 1))
	fi
}
ckver=$(cat "$CACHE/compat-kver" 2>/dev/null || true)
dkms_build_for "${ckver:-6.12}" "/usr/src/linux-headers-${ckver:-none}"
# Debian's PREEMPT_RT flavours of 6.12 and 6.1 (install-deps.sh unpacked
# their headers into the cache).
crel=$(compat_release)
dkms_build_for "$crel-rt-amd64" "$CACHE/amd64/$crel/headers-rt/usr/src/linux-headers-$crel-rt-amd64"
dkms_build_for "$abi-rt-amd64" "$CACHE/amd64/headers-rt/usr/src/linux-headers-$abi-rt-amd64"
# The newest line: the build tree of accmap's arm64 debug kernel (built
# here if it is not yet; seconds if it is), cross-compiled as a board's
# vendor tree would be built on a workstation.
"$ACCMAP_ROOT/tools/testing/vm/build-kernel.sh" debug arm64 >>"$log" 2>&1 ||
	warn "the newest line's kernel did not build (log: $log)"
nkdir=$(kernel_dir debug arm64)
mkver=$(cat "$nkdir/include/config/kernel.release" 2>/dev/null || echo newest)
dkms_build_for "$mkver" "$nkdir" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
# Debian 11's 5.10: its headers name gcc-10, which a board running it
# has; this host (Debian 12) builds with its own gcc.
k510=$(k510_abi amd64)
dkms_build_for "$k510-amd64" "$CACHE/amd64/$k510/headers/usr/src/linux-headers-$k510-amd64" CC=gcc

# The capability gate (drivers/accmap/Kbuild): a kernel that lacks what
# accmap needs is refused by dkms build with the line README documents,
# in dkms's make.log.  The kernels are forged from real headers: every
# file a link to the real one, but the Makefile that gives the version
# and the configuration, which may lose or gain an option.
# forge_tree DIR KDIR VERSION PATCHLEVEL [-OPTION|+OPTION]: the forged
# tree, in DIR/obj.
forge_tree() {
	local dir=$1 kdir ver=$3 pl=$4 change=${5:-} common e
	kdir=$(readlink -f "$2")
	common=$(sed -n 's|^include \(.*\)/Makefile$|\1|p' "$kdir/Makefile")
	[ -d "$common" ] || return 1
	mkdir -p "$dir/common" "$dir/obj/include/config"
	find "$common" "$kdir" "$kdir/include" -mindepth 1 -maxdepth 1 |
	while read -r e; do
		case $e in
		"$common/Makefile" | "$kdir/Makefile" | "$kdir/include") ;;
		"$common"/*) ln -s "$(readlink -f "$e")" "$dir/common/" ;;
		"$kdir/include/config") ;;
		*) ln -s "$(readlink -f "$e")" "$dir/obj${e#"$kdir"}" ;;
		esac
	done
	ln -s "$kdir/include/config/kernel.release" "$dir/obj/include/config/"
	{
		grep -v "^${change#-}=" "$kdir/include/config/auto.conf"
		case $change in +*) printf '%s=y\n' "${change#+}" ;; esac
	} >"$dir/obj/include/config/auto.conf"
	sed -e "s/^VERSION = .*/VERSION = $ver/" -e "s/^PATCHLEVEL = .*/PATCHLEVEL = $pl/" \
		"$common/Makefile" >"$dir/common/Makefile"
	printf 'include %s/common/Makefile\n' "$dir" >"$dir/obj/Makefile"
}
# refused NAME LINE KDIR VERSION PATCHLEVEL [CHANGE [MAKE VARIABLE...]]:
# dkms build against such a forged kernel fails, and make.log has
# "accmap: LINE [KERNEL]".
refused() {
	local name=$1 line=$2 fkver=$4.$5.0-accmap-forged forged
	forged=$(mktemp -d)
	if ! forge_tree "$forged" "$3" "$4" "$5" "${6:-}"; then
		warn "FAIL $name: cannot forge a kernel from $3"
		failed=$((failed + 1))
	elif $SUDO env MAKEFLAGS="${*:7}" dkms build "accmap/$version" -k "$fkver" \
		--kernelsourcedir "$forged/obj" >>"$log" 2>&1; then
		warn "FAIL $name: dkms built accmap for $fkver"
		failed=$((failed + 1))
	elif grep -F "accmap: $line [$fkver]" \
		"/var/lib/dkms/accmap/$version/build/make.log" >>"$log" 2>&1; then
		say "refused $fkver: accmap: $line"
		passed=$((passed + 1))
	else
		warn "FAIL $name: make.log has no \"accmap: $line [$fkver]\""
		tail -n 5 "/var/lib/dkms/accmap/$version/build/make.log" 2>/dev/null | indent >&2
		failed=$((failed + 1))
	fi
	rm -rf "$forged"
}
refused refused-5.9 "needs Linux 5.10 or later; this kernel is 5.9" \
	"/lib/modules/$kver/build" 5 9
refused refused-no-dma-buf \
	"needs dma-buf (CONFIG_DMA_SHARED_BUFFER); this kernel is built without it" \
	"/lib/modules/$kver/build" 6 1 -CONFIG_DMA_SHARED_BUFFER
# 5.10's own headers, said to have highmem (as a 32-bit kernel would).
refused refused-5.10-highmem \
	"needs kmap_local_page() (5.11 on) on a kernel with highmem (CONFIG_HIGHMEM)" \
	"$CACHE/amd64/$k510/headers/usr/src/linux-headers-$k510-amd64" 5 10 +CONFIG_HIGHMEM CC=gcc

if step remove $SUDO dkms remove "accmap/$version" --all; then
	if find "/lib/modules/$kver" -name 'accmap.ko*' 2>/dev/null | grep -q .; then
		warn "FAIL accmap.ko still under /lib/modules/$kver after dkms remove"
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
fi
cleanup
[ ! -e "$srcdir" ] || { warn "FAIL $srcdir still there"; failed=$((failed + 1)); }
say "log: $log"

result "$passed" "$failed"
