#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the accmap test guest (busybox sh).  Packed by run.sh into the
# initramfs next to busybox, the modules to load, accmap.ko and the test
# binaries.  Everything the host parses is on lines starting with
# "@@accmap-vm "; the test programs' TAP output goes to the console as is.
/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
# cgroup v2, for accmap_memcg (every kernel we boot has memory cgroups).
mount -t cgroup2 cgroup2 /sys/fs/cgroup

mode=$(cat /etc/accmap-mode)
test_timeout=$(cat /etc/accmap-test-timeout)
# The fuzzer's and the stress test's settings from the host (run.sh).
# shellcheck disable=SC1091
[ -f /etc/accmap-test-env ] && . /etc/accmap-test-env

mark() {
	echo "@@accmap-vm $*"
}

mark "begin $(uname -r) $(uname -m)"
# The debug kernel: forget what kmemleak may suspect from boot, so that
# the scan at the end reports only what the tests left behind.
kmemleak=/sys/kernel/debug/kmemleak
if [ -e "$kmemleak" ]; then
	echo scan >"$kmemleak"
	echo clear >"$kmemleak"
fi
# Show warnings and worse on the console as they happen (so a guest that
# dies still leaves its last words); everything is in the dmesg dump below.
dmesg -n 5
taint_before=$(cat /proc/sys/kernel/tainted)
mark "taint-before $taint_before"
echo "accmap-vm: loading modules" >/dev/kmsg

# A line: the module's file name, then its parameters (run.sh).
while read -r m args; do
	# shellcheck disable=SC2086 # one word per parameter
	if insmod "/lib/modules/$m" $args; then
		mark "modload ok $m"
	else
		mark "modload failed $m"
	fi
done </lib/modules/load-order

# The V4L2 tier (issue 18): run.sh loaded vivid with two instances, or
# wrote into /etc/accmap-vivid why the kernel has none.  The capture node
# of each instance is named in sysfs: vivid-000 allocates its buffers
# through videobuf2-vmalloc, vivid-001 through videobuf2-dma-contig.
vivid_reason=$(cat /etc/accmap-vivid 2>/dev/null)
ACCMAP_VIVID_VMALLOC=
ACCMAP_VIVID_CONTIG=
if [ -z "$vivid_reason" ] && [ -d /sys/module/vivid ]; then
	for n in /sys/class/video4linux/video*; do
		[ -e "$n/name" ] || continue
		case $(cat "$n/name") in
		vivid-000-vid-cap) ACCMAP_VIVID_VMALLOC=/dev/${n##*/} ;;
		vivid-001-vid-cap) ACCMAP_VIVID_CONTIG=/dev/${n##*/} ;;
		esac
	done
	mark "vivid vmalloc=${ACCMAP_VIVID_VMALLOC:-none} dma-contig=${ACCMAP_VIVID_CONTIG:-none}"
	if [ -z "$ACCMAP_VIVID_VMALLOC" ] || [ -z "$ACCMAP_VIVID_CONTIG" ]; then
		vivid_reason="vivid loaded without its two capture nodes"
	fi
elif [ -z "$vivid_reason" ]; then
	vivid_reason="vivid did not load"
fi
# What this guest has, for the tier table (run.sh, tiers.txt): one line a
# feature, "feature NAME yes|no|KIND [why]".
if [ -z "$vivid_reason" ]; then
	mark "feature vivid yes vmalloc=$ACCMAP_VIVID_VMALLOC dma-contig=$ACCMAP_VIVID_CONTIG"
else
	mark "feature vivid no $vivid_reason"
fi
if [ -e /proc/self/fail-nth ]; then
	mark "feature fail-nth yes"
else
	mark "feature fail-nth no no /proc/self/fail-nth"
fi
cma_kb=$(awk '$1 == "CmaTotal:" { print $2 }' /proc/meminfo)
if [ "${cma_kb:-0}" -gt 0 ]; then
	mark "feature cma yes CmaTotal ${cma_kb} kB"
else
	mark "feature cma no CmaTotal ${cma_kb:-absent} in /proc/meminfo"
fi
if [ -d /sys/module/null_blk ]; then
	mark "feature null_blk yes"
else
	mark "feature null_blk no no /sys/module/null_blk"
fi
# The selftests' huge-page cases are tests only where this is (tap.h's
# tap_run_except()).
if [ -d /sys/kernel/mm/transparent_hugepage ]; then
	mark "feature thp yes $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
else
	mark "feature thp no no /sys/kernel/mm/transparent_hugepage"
fi
export ACCMAP_VIVID_VMALLOC ACCMAP_VIVID_CONTIG

# CRIU (issue 16): run.sh packed criu, with the socket-diag modules it
# needs, where the kernel has CONFIG_CHECKPOINT_RESTORE, or wrote why not
# into /etc/accmap-criu.  "criu check" decides whether the tests get it:
# ACCMAP_CRIU is its path then, else empty and the reason is on the
# console.
criu_reason=$(cat /etc/accmap-criu 2>/dev/null)
ACCMAP_CRIU=
if [ -z "$criu_reason" ]; then
	while read -r m; do
		[ -n "$m" ] || continue
		if insmod "/lib/modules/$m"; then
			mark "criu-modload ok $m"
		else
			mark "criu-modload failed $m"
		fi
	done </lib/modules/criu-load-order
	# criu keeps what it learnt of the kernel in /run; it probes TCP
	# repair mode over the loopback interface, and pseudo-terminals
	# (/dev/ptmx opens only with devpts at /dev/pts).
	mkdir -p /run /dev/pts
	ip link set lo up
	mount -t devpts devpts /dev/pts
	mark "criu-check-begin"
	# The kernel log's time stamps tell how long criu's start-up takes.
	echo "accmap-vm: criu check" >/dev/kmsg
	/usr/sbin/criu check >/tmp/criu-check.log 2>&1 </dev/null
	rc=$?
	cat /tmp/criu-check.log
	echo "accmap-vm: criu check done" >/dev/kmsg
	mark "criu-check-end rc=$rc"
	rseq_rc=
	if [ "$rc" = 0 ]; then
		# Every probe's output stays in the console log.
		mark "criu-check-rseq-begin"
		/usr/sbin/criu check --feature get_rseq_conf 2>&1 </dev/null
		rseq_rc=$?
		mark "criu-check-rseq-end rc=$rseq_rc"
	fi
	if [ "$rc" = 0 ] && [ "$rseq_rc" != 0 ]; then
		# glibc 2.35 and later (every program here) register rseq,
		# and criu dumps a process with rseq only through
		# PTRACE_GET_RSEQ_CONFIGURATION (Linux 5.13): what the kernel
		# lacks, so the criu tests do not run (the tier table says
		# which tiers may lack criu).
		criu_reason="kernel lacks PTRACE_GET_RSEQ_CONFIGURATION (criu check --feature get_rseq_conf: status $rseq_rc): criu cannot dump programs that use rseq, as glibc does"
	elif [ "$rc" = 0 ]; then
		ACCMAP_CRIU=/usr/sbin/criu
		# What criu would use beyond the basics (information only).
		mark "criu-check-all-begin"
		/usr/sbin/criu check --all 2>&1 </dev/null
		mark "criu-check-all-end rc=$?"
	elif grep -q "Unexpected rt vDSO area bounds" /tmp/criu-check.log; then
		# Debian 12's criu 3.17 does not know the vDSO layout of
		# newer kernel lines (the newest, amd64-debug's): it stops before it
		# could dump anything, so the criu tests do not run there
		# (the kernel has what checkpointing needs; the tier table
		# says which tiers may lack criu).
		criu_reason="criu 3.17 cannot read this kernel's vDSO (Unexpected rt vDSO area bounds): the criu tests need a newer criu"
	else
		criu_reason="criu check failed (status $rc, output above)"
	fi
fi
# Without criu no criu test runs (each is named, with the reason); run.sh
# holds that against the tier table.
if [ -n "$ACCMAP_CRIU" ]; then
	mark "feature criu yes $ACCMAP_CRIU"
else
	mark "feature criu no $criu_reason"
fi
export ACCMAP_CRIU

# Carveout parameters that must fail the load, then the real ones and
# what accmap_carveout should find.
# A load that fails must never have shown /dev/accmap on the way.
while read -r bad; do
	[ -n "$bad" ] || continue
	# shellcheck disable=SC2086 # one word per parameter
	if seen=$(/bin/accmap_devwatch /dev/accmap insmod /accmap.ko $bad 2>/tmp/bad-insmod.err); then
		rmmod accmap
		mark "bad-insmod loaded $bad"
	else
		mark "bad-insmod refused $bad"
	fi
	# What insmod said, as a comment in the log.
	sed 's/^/# /' /tmp/bad-insmod.err
	[ -z "$seen" ] || mark "bad-insmod devnode $bad"
done </etc/accmap-bad-insmod
insmod_args=$(cat /etc/accmap-insmod-args 2>/dev/null)
ACCMAP_CARVEOUTS=$(cat /etc/accmap-carveouts 2>/dev/null)
export ACCMAP_CARVEOUTS
ACCMAP_REPLAY_MMIO=$(cat /etc/accmap-replay-mmio 2>/dev/null)
export ACCMAP_REPLAY_MMIO
ACCMAP_DEVMEM=$(cat /etc/accmap-devmem 2>/dev/null)
export ACCMAP_DEVMEM
ACCMAP_VGEM_MAPS=$(cat /etc/accmap-vgem-maps 2>/dev/null)
export ACCMAP_VGEM_MAPS
ACCMAP_FILL=$(cat /etc/accmap-fill 2>/dev/null)
export ACCMAP_FILL
ACCMAP_NULLB=$(cat /etc/accmap-nullb 2>/dev/null)
export ACCMAP_NULLB
# The guest's RAM in MiB as run.sh gave it (-m): above 4096, some lies above 4 GiB.
ACCMAP_VM_MEM_MIB=$(cat /etc/accmap-vm-mem 2>/dev/null)
export ACCMAP_VM_MEM_MIB
# shellcheck disable=SC2086 # one word per parameter
if insmod /accmap.ko $insmod_args; then
	mark "insmod ok"
else
	mark "insmod failed"
fi
# devtmpfs creates the node when the misc device registers.
if [ -c /dev/accmap ]; then
	mark "devnode ok"
else
	mark "devnode missing"
fi
# The board's GPU (run.sh's board): the replay target accmap's mmio
# target made of the GPU's device-tree node, as its probe line names it,
# and whether the GPU sits behind an IOMMU (the SMMU: an IOMMU group).
ACCMAP_BOARD_GPU=
board=none
board_how=
if [ "$(cat /etc/accmap-board 2>/dev/null)" != none ]; then
	for gpu in /sys/bus/platform/drivers/accmap-replay-mmio/*.gpu; do
		[ -e "$gpu" ] || continue
		ACCMAP_BOARD_GPU=$(dmesg | sed -n "s/.* ${gpu##*/}: replay target \(mmio[0-9]*\):.*/\1/p" | tail -n 1)
		board=gpu
		board_how=
		if [ -e "$gpu/iommu_group" ]; then
			board="gpu-smmu"
			board_how=", IOMMU group $(basename "$(readlink "$gpu/iommu_group")") of type $(cat "$gpu/iommu_group/type" 2>/dev/null)"
		fi
	done
fi
export ACCMAP_BOARD_GPU
# The device's fault knobs run.sh set (ACCMAP_BOARD_FAULTS), for
# accmap_board_faults.
ACCMAP_BOARD_FAULTS=$(cat /etc/accmap-board-faults 2>/dev/null)
export ACCMAP_BOARD_FAULTS
mark "feature board $board ${ACCMAP_BOARD_GPU:+target $ACCMAP_BOARD_GPU${board_how:-}}"
# The device memory accmap registered, as its debugfs file says.
devmem_kind=$(awk '$1 == "kind" { print $2 }' /sys/kernel/debug/accmap/devmem 2>/dev/null)
mark "feature devmem ${devmem_kind:-none}"

cd /tmp || true
if [ "$mode" = bench ]; then
	mark "bench-begin"
	# Word splitting of the extra arguments is wanted.
	# shellcheck disable=SC2046
	timeout -s KILL "$test_timeout" /tests/bench --mnist /data/gpureplay-mnist \
		$(cat /etc/accmap-bench-args 2>/dev/null) 2>&1 </dev/null
	mark "bench-end rc=$?"
elif [ "$mode" = demo ]; then
	mark "demo-begin"
	timeout -s KILL "$test_timeout" /tests/accmap-demo 2>&1
	mark "demo-end rc=$?"
	# The operator's view of the same device, through accmapctl.
	sh /demo-accmapctl.sh "$test_timeout" 2>&1 </dev/null
	mark "accmapctl-end rc=$?"
elif [ "$mode" = soak ]; then
	# make soak: the programs in turns until the time is up, each run a
	# test program of its own (NAME.ROUND).
	deadline=$(($(date +%s) + $(cat /etc/accmap-soak-seconds)))
	round=0
	while [ "$(date +%s)" -lt "$deadline" ]; do
		round=$((round + 1))
		while read -r t; do
			mark "test-begin $t.$round"
			t0=$(date +%s)
			timeout -s KILL "$test_timeout" "/tests/$t" 2>&1 </dev/null
			mark "test-end $t.$round rc=$? secs=$(($(date +%s) - t0))"
		done </tests/tests.list
	done
	mark "soak-rounds $round"
else
	while read -r t; do
		case $t in
		# A program the kernel cannot run is named with the reason,
		# and not run; run.sh holds that against the tier table.
		accmap_v4l2)
			if [ -n "$vivid_reason" ]; then
				mark "notrun $t on $(uname -r): $vivid_reason"
				continue
			fi
			;;
		*-board)
			if [ -z "$ACCMAP_BOARD_GPU" ]; then
				mark "notrun $t on $(uname -r): no board GPU (accmap-replay-mmio bound no *.gpu)"
				continue
			fi
			;;
		accmap_board_faults)
			if [ -z "$ACCMAP_BOARD_GPU" ] || [ "${ACCMAP_BOARD_FAULTS:-none}" = none ]; then
				mark "notrun $t on $(uname -r): no board GPU with a fault knob set (run.sh's ACCMAP_BOARD_FAULTS)"
				continue
			fi
			;;
		accmap_inject)
			# fail-nth: a kernel with fault injection (accmap's
			# debug kernels).
			if [ ! -e /proc/self/fail-nth ]; then
				mark "notrun $t on $(uname -r): no fault injection (/proc/self/fail-nth)"
				continue
			fi
			;;
		accmap_criu | criu_*)
			if [ -z "$ACCMAP_CRIU" ]; then
				mark "notrun $t $criu_reason"
				continue
			fi
			;;
		esac
		mark "test-begin $t"
		t0=$(date +%s)
		timeout -s KILL "$test_timeout" "/tests/$t" 2>&1 </dev/null
		mark "test-end $t rc=$? secs=$(($(date +%s) - t0))"
	done </tests/tests.list
fi
cd / || true

# With device memory, a process keeps pages on the device across the
# unload (accmap_devmem --hold-across-unload): rmmod must bring them back
# to system memory with their data.  Its TAP counts as a test program.
hold_pid=
if [ "$mode" = tests ] && grep -qx accmap_devmem /tests/tests.list &&
	{ [ "$ACCMAP_DEVMEM" = private ] || [ "$ACCMAP_DEVMEM" = coherent ]; }; then
	mark "test-begin accmap_devmem_unload"
	rm -f /tmp/devmem-hold.ready
	/tests/accmap_devmem --hold-across-unload /tmp/devmem-hold.ready \
		>/tmp/devmem-hold.log 2>&1 </dev/null &
	hold_pid=$!
	i=0
	while [ ! -e /tmp/devmem-hold.ready ] && [ "$i" -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
fi

# Every reference must be gone once the tests' files are closed.
if rmmod accmap; then
	mark "rmmod ok"
else
	mark "rmmod failed"
fi
if [ -n "$hold_pid" ]; then
	wait "$hold_pid"
	rc=$?
	cat /tmp/devmem-hold.log
	mark "test-end accmap_devmem_unload rc=$rc"
fi

# make coverage: the driver's gcov counters, kept by the kernel past the
# rmmod (gcov_persist), out through the console as a base64 tar between
# two markers (quiet console meanwhile: a kernel line would cut into it).
if [ -e /etc/accmap-gcov ]; then
	printk=$(cat /proc/sys/kernel/printk)
	echo 1 >/proc/sys/kernel/printk
	rm -rf /tmp/gcov
	(cd /sys/kernel/debug/gcov && find . -name '*.gcda') | while read -r f; do
		mkdir -p "/tmp/gcov/${f%/*}"
		cat "/sys/kernel/debug/gcov/$f" >"/tmp/gcov/$f"
	done
	tar -C /tmp/gcov -cf /tmp/gcov.tar .
	gzip -9 /tmp/gcov.tar
	mark "gcov-begin $(md5sum </tmp/gcov.tar.gz | cut -d' ' -f1)"
	base64 /tmp/gcov.tar.gz
	mark "gcov-end"
	echo "$printk" >/proc/sys/kernel/printk
fi

# Objects must be a few seconds old before kmemleak reports them.  Two
# scans: an object in flight during the first is referenced again in the
# second and drops out.
if [ -e "$kmemleak" ]; then
	sleep 6
	echo scan >"$kmemleak"
	sleep 1
	# A kmemleak that turned itself off (out of memory for its own
	# objects, say under fault injection) refuses the scan: say so.
	if echo scan >"$kmemleak"; then
		mark "kmemleak-scan ok"
	else
		mark "kmemleak-scan refused"
	fi
	mark "kmemleak-begin"
	cat "$kmemleak"
	mark "kmemleak-end"
fi
if [ -e /proc/lockdep_stats ]; then
	mark "debug-locks $(sed -n 's/^ *debug_locks: *//p' /proc/lockdep_stats)"
fi
# The value at boot once more: a kernel message written to the console
# at the same moment can split the first marker (seen on 7.2's console).
mark "taint-before $taint_before"
mark "taint-after $(cat /proc/sys/kernel/tainted)"
mark "dmesg-begin"
dmesg
mark "dmesg-end"
mark "end"
# qemu runs with -no-reboot, so a reboot ends it; unlike poweroff, that
# also works on our amd64 kernels, which have no ACPI.
reboot -f
