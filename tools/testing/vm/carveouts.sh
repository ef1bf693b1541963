# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Uses run.sh's $arch, $work and $qemu; sets variables run.sh reads.
# shellcheck disable=SC2154,SC2034
#
# The carveouts of the test guests, one per way accmap learns of them
# (see Documentation/admin-guide/carveouts.rst).  Sourced by run.sh;
# carveout_setup runs once $arch, $work and $qemu are set, and sets:
#
#   carveout_append   words for the kernel command line
#   carveout_qemu     extra qemu arguments (an array)
#   carveout_insmod   accmap.ko parameters
#   carveout_expect   ACCMAP_CARVEOUTS for the accmap_carveout selftest:
#                     every carveout heap by name, "cached" if it gives
#                     cached buffers, "nocached" if not
#   carveout_bad      parameter sets that must fail the module load (an
#                     array): malformed, overlapping, a taken name, and
#                     memory the page allocator owns; likewise replay
#                     windows that are malformed, too large, or RAM, and
#                     device memory that is bad or unsupported
#   replay_mmio_expect ACCMAP_REPLAY_MMIO for the accmap_replay_mmio
#                     selftest: "name:irq" or "name:poll" for the
#                     register-window replay target the guest has
#   devmem_expect     ACCMAP_DEVMEM for the accmap_devmem selftest: the
#                     kind of device memory the sim target must have,
#                     "private", "coherent" or "none" (devmem_setup)
#
# Each guest also gets one replay register window (replay_mmio.c) over
# RAM the kernel does not use, so the window's "registers" read back what
# was written: amd64 by the replay_mmio= parameter over another memmap=
# range (no interrupts: WAIT_IRQ polls), arm64 by an accmap,replay-mmio
# node beyond mem= with an interrupt line that never fires.
#
# amd64 (qemu's 1 GiB of RAM at 0 to 0x3ffdf000): memmap=64M$0x30000000
# makes 64 MiB that RAM e820-reserved, so the kernel never uses it (KASLR
# avoids memmap= ranges, qemu loads the initrd below the top of RAM);
# the pages exist (their memory section holds RAM) but the direct map
# does not cover them.  The module parameter makes it a carveout:
# write-combined and uncached buffers only.  A third range, 32 MiB at
# 0x36000000, is the sim target's device memory (devmem_setup).
#
# arm64 (qemu virt: 1 GiB of RAM at 0x40000000): qemu's own device tree
# for the same -M/-cpu/-m, plus a reserved-memory node, and mem=896M, so
# that the kernel's memory ends at 0x78000000:
#   0x70000000 32 MiB  no compatible, not no-map: reserved RAM the kernel
#                      maps; a carveout by module parameter, cached too
#   0x74000000 32 MiB  accmap,carveout, no-map: struct pages, outside the
#                      linear map; write-combined and uncached only
#   0x7c000000 64 MiB  accmap,carveout, no-map, beyond mem=: its memory
#                      section holds no RAM, so no struct pages;
#                      write-combined and uncached only
#   0x78000000 32 MiB  accmap,device-memory, no-map, beyond mem=: the
#                      sim target's device memory (devmem_setup); a
#                      kernel without ZONE_DEVICE leaves it unused
#   0x7a000000 16 MiB  on a board only: accmap,device-memory, no-map,
#                      beyond mem=, named by the GPU node's
#                      memory-region: the board GPU's device memory
# A guest given more than 1 GiB (the benchmarks' 2 GiB: run.sh's $mem)
# keeps that first GiB as it is, with /chosen's linux,usable-memory-range
# saying so instead of mem= (RAM to 0x78000000, no RAM in 0x78000000's
# 128 MiB memory section), and the rest of its RAM from 0x80000000 on.
#
# A guest given more than 4 GiB (the below-4-GiB runs) has one more
# carveout, wholly above 4 GiB, so that a heap without low memory is
# there: arm64 the last 32 MiB of its RAM, accmap,carveout, no-map,
# "high_dt"; amd64 (RAM above 4 GiB from 0x100000000 on) 32 MiB at
# 0x110000000, e820-reserved by memmap= and named "high_memmap" by the
# module parameter.
carveout_setup() {
	carveout_append=
	carveout_qemu=()
	carveout_insmod=
	carveout_expect=
	carveout_bad=()
	replay_mmio_expect=

	case $arch in
	amd64)
		# shellcheck disable=SC2016 # a literal $: memmap=size$start
		carveout_append='memmap=64M$0x30000000 memmap=64K$0x35000000 memmap=32M$0x36000000'
		carveout_insmod='carveout=64M@0x30000000:x86_memmap replay_mmio=0x35000000,0x4000'
		replay_mmio_expect='mmio0:poll'
		carveout_expect='x86_memmap:nocached'
		if [ "$mem" -gt 4096 ]; then
			# shellcheck disable=SC2016
			carveout_append="$carveout_append"' memmap=32M$0x110000000'
			carveout_insmod="${carveout_insmod/:x86_memmap/:x86_memmap,32M@0x110000000:high_memmap}"
			carveout_expect="$carveout_expect,high_memmap:nocached"
		fi
		carveout_bad=('carveout=64M@0x30000800' 'carveout=4M@0x20000000'
			      'carveout=64M@0x30000000:system'
			      'carveout=1M@0x30000000,1M@0x30080000'
			      'replay_mmio=0x35000000' 'replay_mmio=0x35000000,0x200000'
			      'replay_mmio=0x20000000,0x4000')
		;;
	arm64)
		command -v dtc >/dev/null ||
			die "dtc missing: run tools/testing/scripts/install-deps.sh"
		# The machine's device tree, dumped with the very options it
		# boots with (-M gets dumpdtb= added).
		local dump=() i high gpu_node
		for ((i = 0; i < ${#qemu[@]}; i++)); do
			dump+=("${qemu[i]}")
			if [ "${qemu[i]}" = -M ]; then
				i=$((i + 1))
				dump+=("${qemu[i]},dumpdtb=$work/virt.dtb")
			fi
		done
		rm -f "$work/virt.dtb"
		"${dump[@]}" -nographic </dev/null >"$work/dumpdtb.log" 2>&1 || true
		[ -s "$work/virt.dtb" ] ||
			die "qemu did not dump its device tree (see $work/dumpdtb.log)"
		{
			dtc -q -I dtb -O dts "$work/virt.dtb"
			cat <<-'EOF'

			/ {
				reserved-memory {
					#address-cells = <2>;
					#size-cells = <2>;
					ranges;

					accmap_param: buffer@70000000 {
						reg = <0x0 0x70000000 0x0 0x2000000>;
					};

					carveout@74000000 {
						compatible = "accmap,carveout";
						reg = <0x0 0x74000000 0x0 0x2000000>;
						no-map;
						label = "nomap_dt";
					};

					device-memory@78000000 {
						compatible = "accmap,device-memory";
						reg = <0x0 0x78000000 0x0 0x2000000>;
						no-map;
					};

					replay_window: window@7b000000 {
						reg = <0x0 0x7b000000 0x0 0x10000>;
						no-map;
					};

					carveout@7c000000 {
						compatible = "accmap,carveout";
						reg = <0x0 0x7c000000 0x0 0x4000000>;
						no-map;
						label = "nopages_dt";
					};
				};

				replay@7b000000 {
					compatible = "accmap,replay-mmio";
					reg = <0x0 0x7b000000 0x0 0x4000>;
					interrupts = <0x0 0x70 0x4>;
					interrupt-names = "job";
				};
			};
			EOF
			if [ "$board" != none ]; then
				# The board's GPU has device memory of its own.
				gpu_node=$(dtc -q -I dtb -O dts "$work/virt.dtb" |
					sed -n 's/^\t\(gpu@[0-9a-f]*\) {$/\1/p')
				[ -n "$gpu_node" ] || die "the board's device tree has no gpu@ node"
				cat <<-EOF

				/ {
					reserved-memory {
						board_devmem: device-memory@7a000000 {
							compatible = "accmap,device-memory";
							reg = <0x0 0x7a000000 0x0 0x1000000>;
							no-map;
						};
					};
				};

				&{/$gpu_node} {
					memory-region = <&board_devmem>;
				};
				EOF
			fi
			if [ "$mem" -gt 1024 ]; then
				# qemu replaces every /memory node of a -dtb with one of
				# all its RAM, so the hole goes through /chosen: the
				# kernel drops all memory outside the first range, and
				# the reservations made so far there (the device tree
				# itself, which qemu puts low), then adds the second.
				# Two cells a size: above 4 GiB of RAM the high one counts.
				printf '\n/ {\n\tchosen {\n'
				printf '\t\tlinux,usable-memory-range = <0x0 0x40000000 0x0 0x38000000>, <0x0 0x80000000 %#x %#x>;\n' \
					$((((mem - 1024) << 20) >> 32)) $((((mem - 1024) << 20) & 0xffffffff))
				printf '\t};\n};\n'
			fi
			if [ "$mem" -gt 4096 ]; then
				# The last 32 MiB of RAM, above 4 GiB.
				high=$((0x80000000 + ((mem - 1024) << 20) - (32 << 20)))
				printf '\n/ {\n\treserved-memory {\n\t\tcarveout@%x {\n' "$high"
				printf '\t\t\tcompatible = "accmap,carveout";\n'
				printf '\t\t\treg = <%#x %#x 0x0 0x2000000>;\n' $((high >> 32)) $((high & 0xffffffff))
				printf '\t\t\tno-map;\n\t\t\tlabel = "high_dt";\n\t\t};\n\t};\n};\n'
			fi
		} >"$work/virt-accmap.dts" || die "dtc could not decompile $work/virt.dtb"
		dtc -q -I dts -O dtb -o "$work/virt-accmap.dtb" "$work/virt-accmap.dts" ||
			die "dtc could not compile $work/virt-accmap.dts"
		carveout_qemu=(-dtb "$work/virt-accmap.dtb")
		carveout_append='mem=896M'
		[ "$mem" -le 1024 ] || carveout_append=
		carveout_insmod='carveout=32M@0x70000000:ram_param'
		carveout_expect='ram_param:cached,nomap_dt:nocached,nopages_dt:nocached'
		[ "$mem" -le 4096 ] || carveout_expect="$carveout_expect,high_dt:nocached"
		# The board's GPU node (run.sh's board) comes first in qemu's tree,
		# so it binds first and is mmio0.
		replay_mmio_expect='mmio0:irq'
		[ "$board" = none ] || replay_mmio_expect='mmio1:irq'
		carveout_bad=('carveout=32M@0x74000000' 'carveout=4M@0x50000000'
			      'carveout=1M@0x70000000:nomap_dt'
			      'replay_mmio=0x50000000,0x4000')
		;;
	esac
}

# devmem_setup KCONFIG: what device memory the guest's kernel (its .config
# at KCONFIG) gives the sim target: private pages with DEVICE_PRIVATE,
# coherent ones with ZONE_DEVICE and DEVICE_MIGRATION, else none.  Sets
# devmem_expect; on amd64 adds devmem= to carveout_insmod where the kernel
# supports it (the module refuses it elsewhere), arm64 guests have the
# device-tree node whatever their kernel.
devmem_setup() {
	local kconfig=$1
	devmem_expect=none
	if grep -qx 'CONFIG_DEVICE_PRIVATE=y' "$kconfig"; then
		devmem_expect=private
	elif grep -qx 'CONFIG_ZONE_DEVICE=y' "$kconfig" &&
		grep -qx 'CONFIG_DEVICE_MIGRATION=y' "$kconfig"; then
		devmem_expect=coherent
	fi
	# Loads that must fail: device memory the kernel cannot have, a range
	# not 2 MiB aligned or of System RAM, two ranges, a size past 64 bits,
	# a range over a carveout, both devmem= and the node.
	case $arch/$devmem_expect in
	amd64/none) carveout_bad+=('devmem=32M@0x36000000') ;;
	amd64/*)
		carveout_insmod="$carveout_insmod devmem=32M@0x36000000"
		carveout_bad+=('devmem=3M@0x36000000' 'devmem=32M@0x20000000'
			       'devmem=32M@0x36000000,32M@0x3a000000' 'devmem=99999999999999999999@0'
			       'carveout=64M@0x30000000:x86_memmap devmem=32M@0x32000000')
		;;
	arm64/*) carveout_bad+=('devmem=32M@0x78000000') ;;
	esac
}
