#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages, end to end:
#   build them (deb-build.sh: the host's architecture natively, the others
#   cross-built; default amd64 arm64), lintian on each architecture's
#   .changes (no error, no warning), what they hold (libaccmap1 exports
#   exactly libaccmap.map under LIBACCMAP_1, the man pages cover every
#   accmapctl command, libaccmap function and ioctl); then on the host the
#   host architecture's packages: install them (accmap-dkms builds the
#   module for every kernel whose headers are installed and that dkms.conf
#   accepts), run accmapctl --version, build and run a program against
#   libaccmap-dev, check that criu can resolve the plugin's symbols; then
#   remove and purge them, and check nothing is left: no package, no DKMS
#   state, no module, /usr/src as it was.
#
#   tools/testing/scripts/deb-test.sh [ARCH...]
#
# Needs root (or sudo).  Refuses to start while accmap/VERSION is in DKMS
# from elsewhere (dkms-test.sh, a from-source install): it would not be
# the package's.  Steps count as tests; last line: "N passed, N failed".
set -euo pipefail

TIER=deb
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/common.sh"

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

ensure_deps
archs=("$@")
[ "${#archs[@]}" -gt 0 ] || archs=(amd64 arm64)
host=$(dpkg --print-architecture)
version=$(package_version)
[ -n "$version" ] || die "no PACKAGE_VERSION in dkms.conf"
out=$CACHE/deb/out
pkgs=(accmap-dkms libaccmap1 libaccmap-dev accmap-tools criu-plugin-accmap)

mkdir -p "$CACHE/logs"
log=$CACHE/logs/deb.log
: >"$log"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
pass() {
	say "ok $1"
	passed=$((passed + 1))
}
fail() {
	warn "FAIL $1"
	failed=$((failed + 1))
}
step() {	# step NAME COMMAND...: run a step, log its output, count it
	local name=$1 output status=0
	shift
	say "$name: $*"
	output=$(timeout 1200 "$@" 2>&1) || status=$?
	printf '== %s\n%s\n' "$name" "$output" >>"$log"
	if [ "$status" = 0 ]; then
		passed=$((passed + 1))
	else
		printf '%s\n' "$output" | tail -n 30 | indent >&2
		fail "$name (exit $status)"
	fi
	return "$status"
}

# What the host holds of this version of accmap: compared after the purge.
# (Only this version's: another checkout's dkms-test.sh may be at work on
# its own accmap/VERSION meanwhile.)
host_state() {
	ls -1d "/usr/src/accmap-$version" "/var/lib/dkms/accmap/$version" 2>/dev/null || true
	dkms status "accmap/$version" 2>/dev/null || true
}

installed_pkgs() {
	dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${pkgs[@]}" 2>/dev/null |
		awk '$1 != "un" && $1 != "pn" { print $2 }'
}

purge_pkgs() {
	local left
	mapfile -t left < <(installed_pkgs)
	[ "${#left[@]}" = 0 ] ||
		$SUDO env DEBIAN_FRONTEND=noninteractive dpkg --purge "${left[@]}"
}

# Leftovers of an aborted earlier run: our packages only.
if [ -n "$(installed_pkgs)" ]; then
	say "purging packages left by an earlier run: $(installed_pkgs | paste -sd' ')"
	purge_pkgs >>"$log" 2>&1 || die "cannot purge the earlier run's packages (log: $log)"
fi
if [ -e "/usr/src/accmap-$version" ] || [ -e "/var/lib/dkms/accmap/$version" ]; then
	die "accmap/$version is in DKMS already, not from the packages: remove it first (sudo dkms remove accmap/$version --all; sudo rm -rf /usr/src/accmap-$version)"
fi
before=$(host_state)

# --- build and lintian ---------------------------------------------------
step build "$ACCMAP_ROOT/tools/testing/scripts/deb-build.sh" "${archs[@]}" ||
	{ result "$passed" "$failed"; exit 1; }

changelog_version=$(dpkg-parsechangelog -l "$ACCMAP_ROOT/debian/changelog" -S Version)
if [ "${changelog_version%%-*}" = "$version" ]; then
	pass "debian/changelog's version $changelog_version is dkms.conf's $version"
else
	fail "debian/changelog says $changelog_version, dkms.conf $version"
fi

for arch in "${archs[@]}"; do
	step "lintian-$arch" lintian --fail-on error,warning "$out/accmap_${version}_$arch.changes" || true
done

# deb_file PACKAGE ARCH: the built .deb (accmap-dkms is for all).
deb_file() {
	local a=$2
	[ "$1" != accmap-dkms ] || a=all
	printf '%s/%s_%s_%s.deb\n' "$out" "$1" "$version" "$a"
}

# --- what the packages hold ----------------------------------------------
# NAME@NODE for every function of libaccmap.map, under each version node
# that lists it (a function whose behaviour changed is in the old node
# and the new one).
map_syms=$(awk '/^LIBACCMAP_[0-9.]* *\{/ { node = $1 }
		/^[[:space:]]*accmap_[a-z0-9_]*;$/ { sub(/;$/, "", $1); print $1 "@" node }' \
	"$ACCMAP_ROOT/tools/lib/accmap/libaccmap.map" | sort)
map_nodes=$(sed -n 's/^\(LIBACCMAP_[0-9.]*\) *{.*/\1/p' "$ACCMAP_ROOT/tools/lib/accmap/libaccmap.map" |
	sort)
for arch in "${archs[@]}"; do
	d=$work/$arch
	mkdir -p "$d"
	for p in "${pkgs[@]}"; do
		dpkg-deb -x "$(deb_file "$p" "$arch")" "$d"
	done
	lib=$(find "$d/usr/lib" -name 'libaccmap.so.1' | head -n1)
	# Defined dynamic symbols, as NAME@VERSION (the default version's @@
	# made @), without the version nodes' own symbols.
	exported=$(readelf -W --dyn-syms "$lib" 2>/dev/null |
		awk '$7 != "UND" && $8 ~ /@/ { sub(/@@/, "@", $8); print $8 }' | sort)
	names=$(printf '%s\n' "$exported" | grep -v '^LIBACCMAP_' || true)
	versions=$(printf '%s\n' "$exported" | sed 's/^[^@]*@//' | sort -u)
	soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
	if [ "$names" = "$map_syms" ] && [ "$versions" = "$map_nodes" ] &&
	   [ "$soname" = libaccmap.so.1 ]; then
		pass "$arch: libaccmap.so.1 exports the $(printf '%s\n' "$names" | wc -l) functions of libaccmap.map under its nodes ($(printf '%s\n' "$map_nodes" | paste -sd' '))"
	else
		diff <(printf '%s\n' "$map_syms") <(printf '%s\n' "$names") | indent >&2 || true
		fail "$arch: libaccmap.so.1 (soname '$soname', versions '$versions') does not export exactly libaccmap.map"
	fi
done

# Man pages, from the architecture-independent package and the host's.
mandir=$work/$host/usr/share/man
man_text() {
	MANWIDTH=200 man -l "$mandir/$1.gz" 2>/dev/null
}
cover() {	# cover NAME PAGE WORD...: every WORD is in the page
	local name=$1 page=$2 missing=() w text
	shift 2
	text=$(man_text "$page")
	for w in "$@"; do
		grep -qw -- "$w" <<<"$text" || missing+=("$w")
	done
	if [ -n "$text" ] && [ "${#missing[@]}" = 0 ]; then
		pass "$page names every $name ($#)"
	else
		fail "$page lacks these ${name}s: ${missing[*]:-(no page)}"
	fi
}
if [ -d "$mandir" ]; then
	mapfile -t commands < <(LD_LIBRARY_PATH=$(dirname "$(find "$work/$host/usr/lib" -name 'libaccmap.so.1' | head -n1)") \
		"$work/$host/usr/sbin/accmapctl" --help |
		awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
	cover command man8/accmapctl.8 "${commands[@]}"
	mapfile -t funcs < <(printf '%s\n' "$map_syms" | sed 's/@.*//' | sort -u)
	cover function man3/libaccmap.3 "${funcs[@]}"
	mapfile -t ioctls < <(sed -n 's/^#define \(ACCMAP_IOC_[A-Z_]*\)[[:space:]]*_IO.*/\1/p' \
		"$ACCMAP_ROOT/include/uapi/linux/accmap.h")
	cover ioctl man4/accmap.4 "${ioctls[@]}"
else
	fail "no $host packages built: nothing to check or install"
fi

# --- install on the host -------------------------------------------------
# The kernels dkms.conf accepts whose headers are installed: the package's
# postinst builds for those (the running kernel's modules are not here).
excl=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$ACCMAP_ROOT/dkms.conf")
kernels=()
for m in /lib/modules/*; do
	k=${m##*/}
	[ -f "$m/build/Makefile" ] && [[ $k =~ $excl ]] && kernels+=("$k")
done

debs=()
ours=()		# "PATH SHA256" of each module the package installed
for p in "${pkgs[@]}"; do
	debs+=("$(deb_file "$p" "$host")")
done
if [ -d "$mandir" ] &&
   step install $SUDO env DEBIAN_FRONTEND=noninteractive dpkg -i "${debs[@]}"; then
	if [ "${#kernels[@]}" = 0 ]; then
		fail "no installed kernel headers that dkms.conf accepts: the module was built for none"
	fi
	for k in "${kernels[@]}"; do
		# The module dkms built for this version and kernel, and
		# the one it installed under /lib/modules: the same build.
		built=$(find "/var/lib/dkms/accmap/$version/$k" -name 'accmap.ko*' 2>/dev/null | head -n1)
		ko=$(find "/lib/modules/$k/updates" -name 'accmap.ko*' 2>/dev/null | head -n1)
		magic=$(modinfo -F vermagic "$ko" 2>/dev/null || true)
		if [ -n "$ko" ] && [ -n "$built" ] && [ "${magic%% *}" = "$k" ] &&
		   cmp -s "$ko" "$built" &&
		   grep -q ': installed' <<<"$(dkms status "accmap/$version" -k "$k" 2>/dev/null)"; then
			pass "dkms built and installed accmap for $k ($ko)"
			ours+=("$ko $(sha256sum <"$ko" | cut -d' ' -f1)")
		else
			dkms status 2>&1 | indent >&2
			tail -n 20 "/var/lib/dkms/accmap/$version/build/make.log" 2>/dev/null | indent >&2
			fail "no accmap.ko installed by dkms for $k"
		fi
	done

	v=$(accmapctl --version 2>&1 || true)
	if [ "$v" = "accmapctl $version" ]; then
		pass "accmapctl --version: $v"
	else
		fail "accmapctl --version printed '$v'"
	fi
	step accmap-bench-help accmap-bench --help || true
	if [ -f /lib/udev/rules.d/60-accmap.rules ] &&
	   grep -q '^SUBSYSTEM=="misc", KERNEL=="accmap", GROUP="render", MODE="0660"' \
		/lib/udev/rules.d/60-accmap.rules; then
		pass "the udev rule gives /dev/accmap group render, mode 0660"
	else
		fail "no udev rule for /dev/accmap in /lib/udev/rules.d/60-accmap.rules"
	fi

	# A program built against libaccmap-dev with pkg-config, run against
	# libaccmap1: on this host (no module loaded) accmap_open_path() of a
	# missing node returns -ENOENT; of /dev/null, which is no accmap
	# device, the first ioctl fails with -ENOTTY.
	cat >"$work/app.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <accmap.h>

int main(void)
{
	struct accmap_pool_info pool;
	int fd, ret;

	ret = accmap_open_path("/nonexistent/accmap", &fd);
	if (ret != -ENOENT)
		return 1;
	if (accmap_open_path("/dev/null", &fd))
		return 2;
	ret = accmap_query_pool(fd, &pool);
	accmap_close(fd);
	printf("open: %d, query_pool on /dev/null: %d\n", -ENOENT, ret);
	return ret == -ENOTTY ? 0 : 3;
}
EOF
	# shellcheck disable=SC2046 # pkg-config's words are meant to split
	if step link-libaccmap gcc -Wall -Werror -o "$work/app" "$work/app.c" \
		$(pkg-config --cflags --libs accmap); then
		# (ldd's whole output first: grep -q stopping early would
		# kill ldd with SIGPIPE, and pipefail take that for no match.)
		libs=$(ldd "$work/app" 2>&1 || true)
		if grep -Eq "libaccmap.so.1 => (/usr)?/lib/" <<<"$libs"; then
			step run-libaccmap "$work/app" || true
		else
			printf '%s\n' "$libs" | indent >&2
			fail "the program does not load libaccmap.so.1 from /usr/lib"
		fi
	fi

	# Both versions of accmap_query_heap: LIBACCMAP_1's, for programs built
	# before struct accmap_heap_info had dma32, writes its first 64 bytes
	# and nothing after; LIBACCMAP_1.1's, the default a program built now
	# binds to, all of it.  On /dev/null each clears its part and fails
	# with -ENOTTY.
	cat >"$work/versions.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <accmap.h>

typedef int (*query_fn)(int, unsigned int, struct accmap_heap_info *);

/* Bytes of a buffer the call cleared (heap id first), -1 if it wrote more or failed otherwise. */
static int cleared(query_fn fn, int fd)
{
	unsigned char buf[sizeof(struct accmap_heap_info) + 16];
	size_t n = 0;

	memset(buf, 0xa5, sizeof(buf));
	if (fn(fd, 0, (struct accmap_heap_info *)buf) != -ENOTTY)
		return -1;
	while (n < sizeof(buf) && buf[n] == 0)
		n++;
	for (size_t i = n; i < sizeof(buf); i++)
		if (buf[i] != 0xa5)
			return -1;
	return (int)n;
}

int main(void)
{
	void *lib = dlopen("libaccmap.so.1", RTLD_NOW);
	int fd = open("/dev/null", O_RDWR), a, b;
	query_fn v1, v11;
	struct accmap_heap_info h;

	if (!lib || fd < 0)
		return 1;
	v1 = (query_fn)dlvsym(lib, "accmap_query_heap", "LIBACCMAP_1");
	v11 = (query_fn)dlvsym(lib, "accmap_query_heap", "LIBACCMAP_1.1");
	if (!v1 || !v11 || v1 == v11)
		return 2;
	a = cleared(v1, fd);
	b = cleared(v11, fd);
	printf("LIBACCMAP_1 cleared %d bytes, LIBACCMAP_1.1 %d (struct: %zu)\n", a, b, sizeof(h));
	/* The call this program binds to itself. */
	if (accmap_query_heap(fd, 0, &h) != -ENOTTY)
		return 3;
	return a == ACCMAP_HEAP_INFO_SIZE_VER2 && b == (int)sizeof(h) ? 0 : 4;
}
EOF
	# shellcheck disable=SC2046 # pkg-config's words are meant to split
	if step link-versions gcc -Wall -Werror -o "$work/versions" "$work/versions.c" \
		$(pkg-config --cflags --libs accmap) -ldl; then
		step run-versions "$work/versions" || true
		if grep -q '(LIBACCMAP_1\.1) accmap_query_heap$' <<<"$(objdump -T "$work/versions")"; then
			pass "a program built now binds accmap_query_heap@LIBACCMAP_1.1"
		else
			objdump -T "$work/versions" 2>&1 | grep accmap | indent >&2
			fail "a program built now does not bind accmap_query_heap@LIBACCMAP_1.1"
		fi
	fi

	# criu loads /usr/lib/criu/*.so and binds them at once (-z now): every
	# symbol the plugin takes from criu must be one criu exports.
	plugin=/usr/lib/criu/accmap_criu.so
	criu_bin=$(command -v criu || echo /usr/sbin/criu)
	if [ -f "$plugin" ] && grep -qw CR_PLUGIN_DESC <<<"$(nm -D --defined-only "$plugin")"; then
		missing=()
		exports=$(nm -D --defined-only "$criu_bin" | awk '{ print $3 }')
		while read -r sym; do
			grep -qx "$sym" <<<"$exports" || missing+=("$sym")
		done < <(nm -D --undefined-only "$plugin" | awk '$2 ~ /^[UwV]$/ && $3 !~ /@/ && $3 !~ /^(_ITM_|__gmon_start__)/ { print $3 }')
		if [ "${#missing[@]}" = 0 ]; then
			pass "$plugin: CR_PLUGIN_DESC, and criu ($criu_bin) exports every symbol it needs"
		else
			fail "$plugin needs symbols criu does not export: ${missing[*]}"
		fi
	else
		fail "no criu plugin (CR_PLUGIN_DESC) at $plugin"
	fi
fi

# --- remove, purge, and nothing left -------------------------------------
mapfile -t left < <(installed_pkgs)
if [ "${#left[@]}" -gt 0 ]; then
	if step remove $SUDO env DEBIAN_FRONTEND=noninteractive dpkg --remove "${left[@]}"; then
		if [ -n "$(dkms status "accmap/$version" 2>/dev/null)" ] ||
		   [ -e "/var/lib/dkms/accmap/$version" ]; then
			fail "accmap/$version still in DKMS after removing accmap-dkms"
		else
			pass "removing accmap-dkms removed accmap/$version from DKMS"
		fi
		stale=()
		for m in "${ours[@]}"; do
			read -r ko sum <<<"$m"
			[ ! -e "$ko" ] || [ "$(sha256sum <"$ko" | cut -d' ' -f1)" != "$sum" ] ||
				stale+=("$ko")
		done
		if [ "${#stale[@]}" = 0 ]; then
			pass "the ${#ours[@]} module(s) accmap-dkms installed are gone"
		else
			fail "modules accmap-dkms installed are still there: ${stale[*]}"
		fi
	fi
	step purge $SUDO env DEBIAN_FRONTEND=noninteractive dpkg --purge "${pkgs[@]}" || true
	if [ -z "$(installed_pkgs)" ]; then
		pass "no accmap package left"
	else
		fail "packages still known to dpkg: $(installed_pkgs | paste -sd' ')"
	fi
fi
after=$(host_state)
if [ "$before" = "$after" ]; then
	pass "no accmap-$version in /usr/src or DKMS, as before"
else
	diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") | indent >&2 || true
	fail "the host is not as before the installation"
fi
say "log: $log"

result "$passed" "$failed"
