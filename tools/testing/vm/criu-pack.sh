# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Uses run.sh's $arch, $cc, $work, $moddir, $mode and $target; sets
# variables run.sh reads.
# shellcheck disable=SC2154,SC2034
#
# CRIU in the test guests (issue 16).  Sourced by run.sh.  install-deps.sh
# unpacked Debian's criu and the libraries it needs (libc included: the
# guests' own programs are static) into $CACHE/<arch>/criu.
#
# criu_setup KCONFIG decides whether this guest gets criu (test, demo
# and bench runs alike) and sets
#
#   criu_reason   empty if it does; else why not, one line ("kernel lacks
#                 CONFIG_CHECKPOINT_RESTORE" and whatever else of
#                 criu_kconfig it lacks, ACCMAP_VM_CRIU=0)
#
# criu_modules (once modules.dep is there) sets
#
#   criu_load     the modules criu needs (criu_modules_wanted) and what they depend
#                 on, in load order (paths under $moddir; empty for a
#                 kernel of our own, which has them built in or not at all)
#
# criu_pack ROOT puts into the initramfs at ROOT: /usr/sbin/criu, every
# shared library it needs (NEEDED followed recursively through the
# unpacked packages, the dynamic loader at the path criu names), the
# plugin directory /usr/lib/criu with the accmap plugin when tools/criu
# builds one for this architecture, /lib/modules/criu-load-order with its
# modules, /usr/share/accmap/criu.sh (the guest's helper) and
# /etc/accmap-criu (the reason, if criu is not there).
#
# ACCMAP_VM_CRIU=0 leaves criu out (for measuring what it costs).

criu_root=$CACHE/$arch/criu
case $arch in
amd64) criu_triplet=x86_64-linux-gnu criu_machine='X86-64' ;;
arm64) criu_triplet=aarch64-linux-gnu criu_machine='AArch64' ;;
esac
# The modules criu needs, by module file name: the socket-diag ones
# criu dump reads sockets through (af_packet_diag is CONFIG_PACKET_DIAG),
# and those its start-up probes of the kernel (kerndat) use: nf_tables
# (criu 3.17 stops if it cannot ask nftables about set concatenation),
# after crc32c_generic (libcrc32c, which nf_tables needs, asks the crypto
# API for crc32c as it loads: a soft dependency modules.dep omits), tun
# and veth (probed for network namespaces; without them criu check
# prints errors it does not fail on).
# What criu 3.17 cannot start without (criu check stops in its probes
# of the kernel): checkpoint/restore itself, nftables with the inet
# family (it makes an inet table and asks about set concatenation in a
# network namespace of its own), TCP (its TCP repair probe over the
# loopback), pseudo-terminals, PID namespaces (criu check reads
# /proc/sys/kernel/ns_last_pid, which comes with PID_NS) and hugetlbfs
# (without it memfd_create(MFD_HUGETLB) says ENOSYS, which criu takes for
# a broken kernel).
criu_kconfig=(CHECKPOINT_RESTORE PID_NS NF_TABLES NF_TABLES_INET NET_NS INET UNIX98_PTYS HUGETLBFS)
criu_modules_wanted=(unix_diag inet_diag tcp_diag udp_diag raw_diag netlink_diag af_packet_diag
		     crc32c_generic nf_tables tun veth)

criu_setup() {
	local kconfig=$1 o missing=
	criu_reason=
	criu_load=()
	# Test runs, and demo and bench runs (their checkpoint step and
	# section) alike.
	if [ "${ACCMAP_VM_CRIU:-1}" = 0 ]; then
		criu_reason="left out of this image (ACCMAP_VM_CRIU=0)"
	else
		for o in "${criu_kconfig[@]}"; do
			grep -qE "^CONFIG_$o=[ym]\$" "$kconfig" 2>/dev/null ||
				missing+=" CONFIG_$o"
		done
		[ -z "$missing" ] || criu_reason="kernel lacks$missing"
	fi
	if [ -z "$criu_reason" ] && [ ! -e "$criu_root/.unpacked" ]; then
		die "$criu_root missing: run tools/testing/scripts/install-deps.sh"
	fi
}

# criu_modules: fills criu_load, once modules.dep is there.
criu_modules() {
	local m line i dep
	local -a deps
	[ -z "$criu_reason" ] || return 0
	[ -n "$moddir" ] || return 0
	for m in "${criu_modules_wanted[@]}"; do
		# Built in (=y) or not configured: nothing to load; criu check
		# says what is missing.
		line=$(grep -E "(^|/)$m\\.ko(\\.[a-z]+)?:" "$moddir/modules.dep" || true)
		[ -n "$line" ] || continue
		read -r -a deps <<<"${line#*:}"
		for ((i = ${#deps[@]} - 1; i >= -1; i--)); do
			if [ "$i" -ge 0 ]; then
				dep=${deps[i]}
			else
				dep=${line%%:*}
			fi
			printf '%s\n' "${criu_load[@]}" | grep -qxF "$dep" ||
				criu_load+=("$dep")
		done
	done
}

# criu_resolve PATH [ROOT]: PATH inside ROOT (default $criu_root) with its
# symlinks followed there (absolute link targets are relative to ROOT, not
# the host).
criu_resolve() {
	local p=$1 root=${2:-$criu_root} t n=0
	while [ -L "$p" ] && [ "$n" -lt 20 ]; do
		t=$(readlink "$p")
		case $t in
		/*) p=$root$t ;;
		*) p=$(dirname "$p")/$t ;;
		esac
		n=$((n + 1))
	done
	[ -f "$p" ] || return 1
	printf '%s\n' "$p"
}

# criu_needed FILE...: "SONAME PATH" for every library the files need,
# directly or not, each once, found in $criu_root or else in the
# unpacked packages of a packaged run ($pkg_root, pkg-pack.sh); fails
# naming a library it cannot find.
criu_needed() {
	local -a queue=("$@")
	local -A seen=()
	local f so p d r
	while [ "${#queue[@]}" -gt 0 ]; do
		f=${queue[0]}
		queue=("${queue[@]:1}")
		for so in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			[ -z "${seen[$so]:-}" ] || continue
			seen[$so]=1
			p=
			for r in "$criu_root" ${pkg_root:+"$pkg_root"}; do
				for d in lib/$criu_triplet usr/lib/$criu_triplet lib usr/lib; do
					if p=$(criu_resolve "$r/$d/$so" "$r"); then
						break 2
					fi
					p=
				done
			done
			[ -n "$p" ] || { warn "$so (needed by $(basename "$f")) is not in $criu_root${pkg_root:+ or $pkg_root}"; return 1; }
			printf '%s %s\n' "$so" "$p"
			queue+=("$p")
		done
	done
}

criu_pack() {
	local root=$1 interp so p m name plugdir needed
	local -a plugins=()
	mkdir -p "$root/usr/share/accmap"
	cp "$ACCMAP_ROOT/tools/testing/vm/criu.sh" "$root/usr/share/accmap/criu.sh"
	printf '%s\n' "$criu_reason" >"$root/etc/accmap-criu"
	: >"$root/lib/modules/criu-load-order"
	[ -z "$criu_reason" ] || return 0

	mkdir -p "$root/usr/sbin" "$root/lib/$criu_triplet" "$root/usr/lib/criu"
	cp "$criu_root/usr/sbin/criu" "$root/usr/sbin/criu"
	interp=$(readelf -l "$criu_root/usr/sbin/criu" |
		 sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
	[ -n "$interp" ] || die "criu: no program interpreter in $criu_root/usr/sbin/criu"
	p=$(criu_resolve "$criu_root$interp") || die "criu: its loader $interp is not in $criu_root"
	mkdir -p "$root$(dirname "$interp")"
	cp "$p" "$root$interp"

	# The accmap plugin: criu-plugin-accmap's in a packaged run
	# (pkg-pack.sh), else tools/criu's if it has one to build (for this
	# architecture, against the unpacked criu-plugin.h).
	plugdir=$work/criu-plugin
	rm -rf "$plugdir"
	if [ -n "${pkg_root:-}" ]; then
		p=$pkg_root/usr/lib/criu/accmap_criu.so
		[ -f "$p" ] || die "criu-plugin-accmap holds no /usr/lib/criu/accmap_criu.so"
		cp "$p" "$root/usr/lib/criu/"
		plugins+=(accmap_criu.so)
	elif [ -f "$work/src/tools/criu/Makefile" ]; then
		say "building the CRIU plugin ($cc)"
		mkdir -p "$plugdir"
		timeout "$BUILD_TIMEOUT" make -C "$work/src/tools/criu" CC="$cc" \
			CRIU_INCLUDE="$CACHE/criu/include" OUTPUT="$plugdir" \
			>"$work/criu-plugin-build.log" 2>&1 ||
			{ tail -n 40 "$work/criu-plugin-build.log" >&2; die "CRIU plugin build failed"; }
		for p in "$plugdir"/*.so "$work/src/tools/criu"/*.so; do
			[ -f "$p" ] || continue
			if readelf -h "$p" | grep -q "Machine:.*$criu_machine"; then
				cp "$p" "$root/usr/lib/criu/"
				plugins+=("$(basename "$p")")
			fi
		done
	fi

	# criu, its plugins and the libraries they need.
	needed=$(criu_needed "$criu_root/usr/sbin/criu" "${plugins[@]/#/$root/usr/lib/criu/}") ||
		die "criu: libraries missing (see above)"
	while read -r so p; do
		cp "$p" "$root/lib/$criu_triplet/$so"
	done <<<"$needed"

	for m in "${criu_load[@]}"; do
		name=$(basename "$m")
		case $name in
		*.ko) cp "$moddir/$m" "$root/lib/modules/$name" ;;
		*.ko.xz) xz -dc "$moddir/$m" >"$root/lib/modules/${name%.xz}" ;;
		*.ko.gz) gzip -dc "$moddir/$m" >"$root/lib/modules/${name%.gz}" ;;
		*.ko.zst) zstd -qdc "$moddir/$m" >"$root/lib/modules/${name%.zst}" ;;
		*) die "unknown module file $m" ;;
		esac
		printf '%s\n' "${name%.ko*}.ko" >>"$root/lib/modules/criu-load-order"
	done
	say "criu: $(find "$root/lib/$criu_triplet" -type f | wc -l) libraries, plugins: ${plugins[*]:-none}, modules: $(tr '\n' ' ' <"$root/lib/modules/criu-load-order")"
}
