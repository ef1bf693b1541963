# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers shared by the accmap test scripts.  Source it; do not run it.
#
# Every tier script ends by printing one line "N passed, N failed" (see
# result) and exits non-zero if anything failed; tools/testing/scripts/
# check.sh adds those lines up.

ACCMAP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
CACHE=${ACCMAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/accmap}
export ACCMAP_CACHE=$CACHE
TIER=${TIER:-accmap}

# Bound, in seconds, on waiting for another kernel build.
BUILD_LOCK_TIMEOUT=${ACCMAP_BUILD_LOCK_TIMEOUT:-3600}

say() {
	printf '[%s] %s\n' "$TIER" "$*"
}

warn() {
	printf '[%s] %s\n' "$TIER" "$*" >&2
}

# Ends a tier that cannot go on; it still ends with the result line (on
# stderr, which also works inside $(...)).
die() {
	warn "error: $*"
	printf '0 passed, 1 failed\n' >&2
	exit 1
}

# Indents its input, for quoting logs in messages.
indent() {
	sed 's/^/    /'
}

# result PASSED FAILED: the final line of every tier; exit status follows.
result() {
	printf '%d passed, %d failed\n' "$1" "$2"
	[ "$2" -eq 0 ] && [ "$1" -gt 0 ]
}

# Installs the build and test dependencies unless the caller (the top
# Makefile or check.sh) has done so already in this run.
ensure_deps() {
	if [ "${ACCMAP_DEPS_OK:-}" = 1 ]; then
		return 0
	fi
	"$ACCMAP_ROOT/tools/testing/scripts/install-deps.sh"
	export ACCMAP_DEPS_OK=1
}

# The Debian kernel ABI (e.g. 6.1.0-56) that install-deps.sh chose.
kernel_abi() {
	local abi
	abi=$(cat "$CACHE/abi" 2>/dev/null || true)
	[ -n "$abi" ] || die "no $CACHE/abi: run tools/testing/scripts/install-deps.sh"
	printf '%s\n' "$abi"
}

# The Debian 6.12 release (e.g. 6.12.117+deb12) whose amd64 headers
# install-deps.sh installed, and whose images it fetched for both guests.
compat_release() {
	local kver
	kver=$(cat "$CACHE/compat-kver" 2>/dev/null || true)
	[ -n "$kver" ] || die "no $CACHE/compat-kver: run tools/testing/scripts/install-deps.sh"
	printf '%s\n' "${kver%-amd64}"
}

# k510_abi ARCH: the Debian 11 kernel ABI (e.g. 5.10.0-32) whose image and
# headers install-deps.sh fetched for ARCH (the newest that downloaded).
k510_abi() {
	local abi
	abi=$(sed -n "s/^$1 //p" "$CACHE/k510-abi" 2>/dev/null || true)
	[ -n "$abi" ] || die "no $1 ABI in $CACHE/k510-abi: run tools/testing/scripts/install-deps.sh"
	printf '%s\n' "$abi"
}

# The version in dkms.conf is the only copy of the package version.
package_version() {
	sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' \
		"$ACCMAP_ROOT/dkms.conf"
}

# kernel_dir FLAVOR ARCH: the build tree of one of accmap's test kernels
# (build-kernel.sh FLAVOR ARCH), debug or perf, amd64 or arm64.
kernel_dir() {
	printf '%s\n' "$CACHE/kernels/$1-$2"
}

# mainline_source: prints "SERIES VERSION TARBALL" of the newest
# linux-source-* Debian offers, as install-deps.sh fetched it (unpacked
# from its package into the cache, never installed).
mainline_source() {
	local m
	m=$(cut -d' ' -f1-3 "$CACHE/mainline-src" 2>/dev/null || true)
	[ -n "$m" ] || die "no $CACHE/mainline-src: run tools/testing/scripts/install-deps.sh"
	printf '%s\n' "$m"
}

# linux_source [SERIES [TARBALL]]: prints the path of the unpacked
# linux-source-SERIES tree (default 6.1, from the installed package's
# /usr/src/linux-source-6.1.tar.xz), unpacking TARBALL on first use.
# shellcheck disable=SC2120 # both arguments are optional
linux_source() {
	local series=${1:-6.1}
	local tarball=${2:-/usr/src/linux-source-$series.tar.xz}
	local dir=$CACHE/src/linux-source-$series
	[ -e "$dir/.unpacked" ] || (
		mkdir -p "$CACHE/src"
		flock -w 1200 7 || exit 1
		[ -e "$dir/.unpacked" ] && exit 0
		if [ -f "$dir/Makefile" ] && [ -f "$dir/scripts/checkpatch.pl" ]; then
			# Unpacked by an earlier version of these scripts.
			touch "$dir/.unpacked"
			exit 0
		fi
		[ -f "$tarball" ] || { warn "$tarball missing (linux-source-$series)"; exit 1; }
		say "unpacking $tarball into $CACHE/src (once)" >&2
		rm -rf "$dir" "$dir.tmp"
		mkdir -p "$dir.tmp"
		timeout 900 tar -C "$dir.tmp" -xJf "$tarball" || exit 1
		mv "$dir.tmp/linux-source-$series" "$dir"
		rmdir "$dir.tmp"
		touch "$dir/.unpacked"
	) 7>"$CACHE/.src.lock" || die "cannot unpack linux-source-$series"
	printf '%s\n' "$dir"
}

# Copies the repository's sources (no .git, nothing .gitignore names, no
# build output) to DEST, so that builds there leave the working tree
# untouched.  Build output in DEST survives (rsync never deletes excluded
# files), so rebuilds are incremental.
sync_tree() {
	local dest=$1
	mkdir -p "$dest"
	# No -t: a file whose content changed gets the time of the copy, so
	# make rebuilds it even if the source is older than the last build
	# (switching between checkouts); unchanged files are left alone.
	rsync -rlpD --checksum --delete \
		--exclude=/.git --filter=':- .gitignore' \
		--exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*.cmd' --exclude='*.a' \
		--exclude=Module.symvers --exclude=modules.order \
		--exclude=.tmp_versions --exclude='*.tmp' --exclude='*.d' \
		--exclude='*.gcno' --exclude='*.gcda' \
		--exclude=/.cache --exclude=/build --exclude=/output \
		"$ACCMAP_ROOT/" "$dest/"
}

# Lists the project's files (tracked, plus untracked ones git does not
# ignore) matching the given pathspecs, relative to the repository root.
# Falls back to find(1) outside a git checkout.
project_files() {
	if git -C "$ACCMAP_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$ACCMAP_ROOT" ls-files --cached --others --exclude-standard -- "$@" |
			sort -u
	else
		local args=() p
		for p in "$@"; do
			args+=(-o -path "./$p")
		done
		(cd "$ACCMAP_ROOT" && find . -type f \( -false "${args[@]}" \) |
			sed 's|^\./||' | sort -u)
	fi
}

# module_build SRC KDIR [MAKE ARGS...]: builds accmap.ko out of tree
# against KDIR in SRC (a copy of the tree, sync_tree), with W=1 and
# sparse (C=2) in the same pass, so that one build serves both the VM tier
# that boots it and lint, which reads its log.  SRC.log is the whole
# output, SRC.key says what was built: the content of every project file
# the build reads, KDIR's kernel release and .config, and the make
# arguments.  When the key is unchanged the build is not run again; when
# it changed the copy is made afresh, so that every file is compiled (and
# checked) again and the log is complete.  Returns make's status (kept in
# SRC.status).
module_build() {
	local src=$1 kdir=$2 key status=0
	shift 2
	key=$( {
		(cd "$ACCMAP_ROOT" && project_files 'Kbuild' 'Makefile' 'drivers/*' 'include/*' |
			xargs -r sha256sum)
		cat "$kdir/include/config/kernel.release" "$kdir/.config" 2>/dev/null
		printf '%s\n' "$@"
	} | sha256sum | cut -d' ' -f1)
	if [ "$(cat "$src.key" 2>/dev/null)" = "$key" ] && [ -f "$src.status" ] &&
		[ -f "$src/drivers/accmap/accmap.ko" ]; then
		return "$(cat "$src.status")"
	fi
	rm -rf "${src:?}" "$src.key" "$src.status"
	sync_tree "$src"
	timeout "${ACCMAP_MODULE_BUILD_TIMEOUT:-900}" make -C "$kdir" M="$src" W=1 C=2 CHECK=sparse \
		-j"$(nproc)" "$@" modules >"$src.log" 2>&1 || status=$?
	echo "$status" >"$src.status"
	echo "$key" >"$src.key"
	return "$status"
}

# Serialises kernel builds: one flock for the scripts' own builds, and a
# wait for any kunit.py started by hand (two kernel builds at once on two
# cores help nobody).  Bounded by BUILD_LOCK_TIMEOUT.  The lock is held
# on file descriptor 9 until the calling script exits.
acquire_build_lock() {
	local waited=0
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.kernel-build.lock"
	if ! flock -n 9; then
		say "another accmap kernel build holds $CACHE/.kernel-build.lock; waiting"
		flock -w "$BUILD_LOCK_TIMEOUT" 9 ||
			die "gave up waiting for the kernel build lock"
	fi
	while pgrep -f 'kunit\.py' >/dev/null 2>&1; do
		if [ "$waited" = 0 ]; then
			say "a kunit.py run is in progress ($(pgrep -f 'kunit\.py' | tr '\n' ' ')); waiting for it to end"
		fi
		sleep 10
		waited=$((waited + 10))
		[ "$waited" -lt "$BUILD_LOCK_TIMEOUT" ] ||
			die "gave up waiting for the other kunit.py run"
	done
}

# graft_accmap SRC: links this checkout's driver and uAPI header into the
# kernel tree SRC and adds it to drivers/Kconfig and drivers/Makefile (all
# idempotent), so that KUnit can build it in and the test kernels can
# parse their Kconfig.  The graft is shared by every checkout using this
# cache: call it only while holding the build lock.
graft_accmap() {
	local src=$1
	local root=$ACCMAP_ROOT

	[ -f "$root/drivers/accmap/Kconfig" ] || die "no drivers/accmap/Kconfig in $root"
	if [ -L "$src/drivers/accmap" ] &&
	   [ "$(readlink "$src/drivers/accmap")" != "$root/drivers/accmap" ]; then
		# Another checkout's files may be older than our objects: make
		# would keep them.  Drop the driver's objects from every tree.
		rm -rf "$CACHE"/kunit-*/drivers/accmap
	fi
	graft_link "$root/drivers/accmap" "$src/drivers/accmap"
	graft_link "$root/include/uapi/linux/accmap.h" "$src/include/uapi/linux/accmap.h"

	local kconfig_line='source "drivers/accmap/Kconfig"'
	if ! grep -qxF "$kconfig_line" "$src/drivers/Kconfig"; then
		say "adding accmap to drivers/Kconfig"
		local last_endmenu
		last_endmenu=$(grep -n '^endmenu' "$src/drivers/Kconfig" | tail -n1 | cut -d: -f1)
		[ -n "$last_endmenu" ] || die "no endmenu in $src/drivers/Kconfig"
		sed -i "${last_endmenu}i $kconfig_line\n" "$src/drivers/Kconfig"
	fi

	# Listing accmap/ under two symbols is safe in kbuild: subdir-ym is
	# $(sort)ed (so the directory is descended once), obj-m drops
	# anything also in obj-y, and the built-in.a/modules.order rules use
	# $^, which make de-duplicates.  An existing line counts whatever its
	# spacing.
	local sym
	for sym in CONFIG_ACCMAP CONFIG_ACCMAP_KUNIT_TEST; do
		if ! grep -qE "^obj-\\\$\\($sym\\)[[:space:]]*\\+=[[:space:]]*accmap/[[:space:]]*\$" \
			"$src/drivers/Makefile"; then
			say "adding obj-\$($sym) += accmap/ to drivers/Makefile"
			# shellcheck disable=SC2016 # make syntax, written literally
			printf 'obj-$(%s)\t+= accmap/\n' "$sym" >>"$src/drivers/Makefile"
		fi
	done
}

# graft_link TARGET NAME: makes NAME a symlink to TARGET, if not already.
graft_link() {
	local target=$1 name=$2
	if [ -L "$name" ]; then
		[ "$(readlink "$name")" = "$target" ] && return 0
		say "repointing $name -> $target"
	elif [ -e "$name" ]; then
		die "$name exists and is not a symlink; remove it (or the whole tree)"
	fi
	ln -sfn "$target" "$name"
}
