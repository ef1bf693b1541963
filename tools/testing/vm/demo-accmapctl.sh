#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The operator's part of the demo guest (busybox sh), run by init.sh after
# accmap-demo: accmapctl heaps, pool and an uncached alloc, then, while a
# background "accmapctl alloc --hold" keeps a 4 MiB buffer under tag 9,
# label that tag, list who holds what and show it as accmapctl top does;
# then GPU replay: list the
# targets, record two 64x64 matmuls on the software Mali model (seeds 1
# and 2), and replay the first three times with the second's inputs: its
# output must equal the second's; then GPUReplay's MNIST recording, if
# packed, imported and replayed (23 job chains, all done), on a board
# also on its GPU (ACCMAP_BOARD_GPU); last, the
# (empty) SVM session table and
# the device memory, which must be what the guest's init says it is
# (ACCMAP_DEVMEM: private, coherent or none).
# run.sh packs it as /demo-accmapctl.sh.
#
#   sh /demo-accmapctl.sh [TIMEOUT]
#
# Prints "@@accmap-vm accmapctl failed CMD" for each command that fails
# and exits 1 if any did.

ctl_timeout=${1:-60}
ctl=/tests/accmapctl
status=0
out=/tmp/accmapctl.out

failed() {
	echo "@@accmap-vm accmapctl failed $*"
	status=1
}

# ctl ARGS...: runs accmapctl ARGS, shows its output, keeps it in $out.
ctl() {
	echo "# accmapctl $*"
	timeout -s KILL "$ctl_timeout" "$ctl" "$@" >"$out" 2>&1
	rc=$?
	cat "$out"
	[ "$rc" = 0 ] && return 0
	failed "$* (exit $rc)"
	return 1
}

if ctl heaps; then
	case ${ACCMAP_DEVMEM:-} in
	private | coherent)
		grep -q '^ *30  device ' "$out" || failed "heaps (no device heap)"
		;;
	none)
		grep -q '^ *30 ' "$out" && failed "heaps (a heap 30 without device memory)"
		;;
	esac
fi
ctl pool
if ctl alloc 64K --uncached; then
	grep -q '^flags: .*(uncached)' "$out" || failed "alloc 64K --uncached (not uncached)"
fi

echo "# accmapctl alloc 4M --tag 9 --hold &"
"$ctl" alloc 4M --tag 9 --hold >/tmp/holder.out 2>&1 &
holder=$!
# It prints "holding" once the buffer is allocated; give it 30 s.
tries=0
while ! grep -q '^holding' /tmp/holder.out && kill -0 "$holder" 2>/dev/null &&
	[ "$tries" -lt 300 ]; do
	sleep 0.1 2>/dev/null || sleep 1
	tries=$((tries + 1))
done
cat /tmp/holder.out
grep -q '^holding' /tmp/holder.out || failed "alloc 4M --tag 9 --hold (never held)"

ctl label 9 camera
if ctl list; then
	# The held buffer, under its new label, in the allocations table.
	grep -q 'camera' "$out" || failed "list (no buffer labelled camera)"
	grep -q '^orphans:' "$out" || failed "list (no orphans table)"
fi
# Who holds how much, per process and per tag, as accmapctl top refreshes
# it (one view here): the holder's 4 MiB under its pid, and under tag 9.
if ctl top -n 1; then
	grep -q "^ *$holder  *accmapctl  *1  *4 MiB " "$out" ||
		failed "top (no line for the holder, pid $holder, 4 MiB)"
	grep -q '^ *9  *camera  *1  *4 MiB ' "$out" || failed "top (no line for tag 9)"
fi

kill "$holder" 2>/dev/null
wait "$holder"
rc=$?
echo "# accmapctl alloc --hold (pid $holder) stopped: exit $rc"
[ "$rc" = 0 ] || failed "alloc 4M --tag 9 --hold (exit $rc)"

# GPU replay on the software model.  "record" checks its own run against
# the CPU before saving; a replay of seed 2's recording gives its inputs
# and output, and seed 1's recording replayed with those inputs must give
# the same output.
if ctl targets; then
	grep -q 'sim' "$out" || failed "targets (no sim)"
fi
ctl record --size 64 --seed 1 /tmp/m1.amr
ctl record --size 64 --seed 2 /tmp/m2.amr
ctl show /tmp/m1.amr
# Seed 2's inputs, fed to seed 1's recording, give seed 2's output.
ctl replay /tmp/m2.amr --output a=/tmp/a2.bin --output b=/tmp/b2.bin \
	--output c=/tmp/c2.bin -q
ctl replay /tmp/m1.amr --input a=/tmp/a2.bin --input b=/tmp/b2.bin \
	--output c=/tmp/c1.bin --repeat 3
if cmp /tmp/c1.bin /tmp/c2.bin; then
	echo "# replay of m1.amr with m2.amr's inputs: output equals m2.amr's"
else
	failed "replay with new inputs (output differs)"
fi

# A real recording: GPUReplay's MNIST inference on a Mali-G71, imported
# (the importer says whether every job chain will replay) and replayed on
# the model, a line per job chain.  run.sh packs it when it can find it.
if [ -d /data/gpureplay-mnist ]; then
	if ctl import-gpureplay /data/gpureplay-mnist /tmp/mnist.amr; then
		grep -q '^replayable: yes$' "$out" || failed "import-gpureplay (not replayable)"
	fi
	if ctl replay /tmp/mnist.amr; then
		grep -q '^chains: *23: 23 done, 0 failed' "$out" ||
			failed "replay of mnist.amr (not 23 chains done)"
	fi
	# On a board, again on its GPU (the qemu device) through the mmio
	# target: the chains run on the device, by interrupt and DMA.
	if [ -n "${ACCMAP_BOARD_GPU:-}" ] &&
		ctl replay --target "$ACCMAP_BOARD_GPU" /tmp/mnist.amr; then
		grep -q '^chains: *23: 23 done, 0 failed' "$out" ||
			failed "replay of mnist.amr on $ACCMAP_BOARD_GPU (not 23 chains done)"
	fi
else
	echo "# no GPUReplay recording packed (/data/gpureplay-mnist): its replay is left out"
fi

# SVM sessions: none is live here, so the table is its header and the
# totals are zero; "list svm" reads the same file.  Under them the device
# memory: its kind, or "none".
if ctl svm; then
	grep -q '^PID .* INVALIDATIONS  PAGES_MAPPED' "$out" || failed "svm (no table header)"
	grep -q '^sessions: *0$' "$out" || failed "svm (sessions total not 0)"
	case ${ACCMAP_DEVMEM:-} in
	private | coherent)
		grep -q "^kind: *$ACCMAP_DEVMEM\$" "$out" ||
			failed "svm (device memory not $ACCMAP_DEVMEM)"
		;;
	none)
		grep -q '^device memory: none$' "$out" || failed "svm (device memory, expected none)"
		;;
	esac
fi
if ctl list svm; then
	grep -q '^svm:$' "$out" || failed "list svm (no svm table)"
fi
case ${ACCMAP_DEVMEM:-} in
private | coherent)
	if ctl list devmem; then
		grep -q '^PID .* TO_DEVICE  TO_SYSTEM' "$out" || failed "list devmem (no table)"
	fi
	;;
esac

exit "$status"
