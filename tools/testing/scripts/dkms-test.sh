#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS round trip against the Debian 6.1 amd64 headers:
#   copy the project's files to /usr/src/accmap-VERSION, dkms add, build,
#   install, check the installed module; then dkms build against the
#   other lines' amd64 build trees (Debian 12's 6.12 headers, accmap's
#   amd64 debug kernel of the newest line, Debian 11's 5.10 headers); dkms remove --all, clean
#   up.
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
# dkms_build_for KVER KDIR [MAKE VARIABLE...].  What dkms.conf's
# BUILD_EXCLUSIVE_KERNEL lets through, and that the module builds there
# the way dkms builds it.  The variables reach dkms's make through
# MAKEFLAGS, as command-line ones.
dkms_build_for() {
	local kver=$1 kdir=$2
	shift 2
	if [ ! -f "$kdir/Makefile" ]; then
		warn "FAIL no build tree for $kver at $kdir (install-deps.sh)"
		failed=$((failed + 1))
		return 0
	fi
	local ko magic
	if ! step "build-$kver" $SUDO env MAKEFLAGS="$*" dkms build "accmap/$version" -k "$kver" \
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
# The newest line: the build tree of accmap's amd64 debug kernel (built
# here if it is not yet; seconds if it is).
"$ACCMAP_ROOT/tools/testing/vm/build-kernel.sh" debug amd64 >>"$log" 2>&1 ||
	warn "the newest line's kernel did not build (log: $log)"
nkdir=$(kernel_dir debug amd64)
mkver=$(cat "$nkdir/include/config/kernel.release" 2>/dev/null || echo newest)
dkms_build_for "$mkver" "$nkdir"
# Debian 11's 5.10: its headers name gcc-10, which a board running it
# has; this host (Debian 12) builds with its own gcc.
k510=$(k510_abi amd64)
dkms_build_for "$k510-amd64" "$CACHE/amd64/$k510/headers/usr/src/linux-headers-$k510-amd64" CC=gcc

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
