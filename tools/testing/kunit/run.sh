#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs accmap's KUnit tests under UML (User-Mode Linux).
#
#   tools/testing/kunit/run.sh [default|debug]
#
# The driver is grafted into the Debian linux-source-6.1 tree in the cache
# (symlinks plus one Kconfig and one Makefile line, all idempotent) and
# tested with that tree's tools/testing/kunit/kunit.py.  The "debug"
# profile adds KASAN, lockdep (PROVE_LOCKING) and other debug options.
# Each profile has its own build directory, $CACHE/kunit-<profile>, so a
# rerun with nothing changed only relinks UML and boots it: seconds.
#
# Last line: "N passed, N failed".  Skipped tests, crashes, kunit.py
# parser errors, a suite or case count other than tools/testing/kunit/
# counts.txt says, and any WARNING/BUG/KASAN/lockdep report in the kernel
# log count as failures.  (A KASAN report taints the kernel, and a tainted
# kernel turns lockdep off for the rest of the run: fix KASAN reports
# first.)
set -euo pipefail

TIER=kunit
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/../scripts/common.sh"

profile=${1:-default}
case $profile in
default | debug) ;;
*) die "usage: $0 [default|debug]" ;;
esac
TIER=kunit-$profile
KERNEL_BUILD_TIMEOUT=${ACCMAP_KERNEL_BUILD_TIMEOUT:-2700}

# Options of the debug profile.  KASAN under UML needs an x86_64 host, SLUB
# and SYSFS (both UML defaults); kunit.py refuses to run if any of these
# does not reach the final .config, and we check the key ones again below.
# (DEBUG_ATOMIC_SLEEP is not possible: it needs preemption, and UML selects
# ARCH_NO_PREEMPT.)
debug_options=(
	CONFIG_DEBUG_KERNEL=y
	CONFIG_KASAN=y
	CONFIG_KASAN_GENERIC=y
	CONFIG_STACKTRACE=y
	CONFIG_PROVE_LOCKING=y
	CONFIG_DEBUG_LIST=y
	CONFIG_DEBUG_OBJECTS=y
	CONFIG_DEBUG_OBJECTS_FREE=y
	CONFIG_DEBUG_OBJECTS_TIMERS=y
	CONFIG_DEBUG_OBJECTS_WORK=y
	CONFIG_DEBUG_OBJECTS_RCU_HEAD=y
	# Subsystems UML turns on by default and no test here uses: the build
	# drops from 718 objects to 616.  From an empty cache it then took
	# 387 s and 447 s in two runs, against about 450 s before: too close
	# to the runs' spread to claim a saving.  EXPERT only makes them
	# selectable.
	CONFIG_EXPERT=y
	CONFIG_IO_URING=n
	CONFIG_INPUT=n
	CONFIG_BLOCK=n
)

# Lines in the UML kernel log that mean a test went wrong even if KUnit
# reported it as passed (lockdep and WARN do not fail a KUnit test).
bad_log_re='WARNING:|BUG:|Oops|kernel BUG|KASAN|possible recursive locking|circular locking|inconsistent lock state|lock held when returning|suspicious RCU usage|Call Trace'

ensure_deps
src=$(linux_source)
root=$ACCMAP_ROOT

[ -f "$root/drivers/accmap/Kconfig" ] || die "no drivers/accmap/Kconfig in $root"
[ -f "$root/drivers/accmap/.kunitconfig" ] ||
	die "no drivers/accmap/.kunitconfig in $root"

# The graft is shared by every checkout using this cache: change it only
# while holding the build lock.
acquire_build_lock

graft_accmap "$src"

# --- run --------------------------------------------------------------
build_dir=$CACHE/kunit-$profile
log=$CACHE/logs/kunit-$profile.log
mkdir -p "$CACHE/logs"

args=(run
      --kunitconfig=drivers/accmap/.kunitconfig
      --build_dir="$build_dir"
      --jobs="${ACCMAP_JOBS:-$(nproc)}"
      --timeout="${ACCMAP_KUNIT_TIMEOUT:-600}")
if [ "$profile" = debug ]; then
	for opt in "${debug_options[@]}"; do
		args+=(--kconfig_add "$opt")
	done
fi

say "kunit.py ${args[*]}"
say "(tree $src; full output in $log)"
rm -f "$build_dir/test.log"
start=$SECONDS
set +e
(cd "$src" && timeout -k 30 "$KERNEL_BUILD_TIMEOUT" \
	python3 tools/testing/kunit/kunit.py "${args[@]}" </dev/null) 2>&1 |
	tee "$log"
rc=${PIPESTATUS[0]}
set -e
say "kunit.py exited $rc after $((SECONDS - start)) s"

passed=0
failed=0
summary=$(grep -o 'Testing complete\. Ran [0-9]* tests:.*' "$log" | tail -n1 || true)
if [ -z "$summary" ]; then
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		warn "kunit.py timed out"
	else
		warn "kunit.py gave no result (build or config failure?); see $log"
	fi
	failed=1
else
	# "Ran N tests: passed: X, failed: Y, crashed: Z, skipped: S, errors: E"
	summary=$(printf '%s\n' "$summary" | sed 's/\x1b\[[0-9;]*m//g')
	count() {
		local n=${summary#*"$1: "}
		[ "$n" != "$summary" ] || { echo 0; return; }
		echo "${n%%[!0-9]*}"
	}
	passed=$(count passed)
	failed=$(($(count failed) + $(count crashed) + $(count skipped) + $(count errors)))
	if [ "$(count skipped)" != 0 ]; then
		warn "$(count skipped) skipped test(s) counted as failed"
	fi
fi

# The suites and their case counts (counts.txt): a dropped suite or case
# fails, and so does one the table does not know.
counts=$ACCMAP_ROOT/tools/testing/kunit/counts.txt
if [ -f "$build_dir/test.log" ] && [ -n "$summary" ]; then
	ran=$(count passed)
	ran=$((ran + $(count failed) + $(count crashed) + $(count skipped)))
	while read -r line; do
		warn "FAIL: $line"
		failed=$((failed + 1))
	done < <(awk -v ran="$ran" '
		FNR == NR {
			sub(/#.*/, "")
			if (NF == 0) next
			if ($1 == "total") total = $2
			else { want[$1] = $2; order[++n] = $1 }
			next
		}
		/^    # Subtest: / { s = $3; seen[s] = 1; plan[s] = -1; got[s] = 0; next }
		/^    1\.\.[0-9]+/ { split($1, a, "."); plan[s] = a[3] + 0; next }
		/^    (not )?ok [0-9]+/ { got[s]++; next }
		END {
			for (i = 1; i <= n; i++) {
				s = order[i]
				if (!(s in seen)) print "suite " s " did not run (counts.txt: " want[s] " cases)"
				else if (plan[s] != want[s] || got[s] != want[s])
					print "suite " s ": plan " plan[s] ", " got[s] " cases reported; counts.txt says " want[s]
			}
			for (s in seen) if (!(s in want)) print "suite " s " ran, but counts.txt does not list it"
			if (ran != total) print ran " tests ran; counts.txt says " total
		}' "$counts" "$build_dir/test.log")
fi

# Known and harmless: kunit.py's arch_uml.config turns on
# UML_PCI_OVER_VIRTIO without a device id, so every 6.1 UML boot has one
# WARN from um_pci_init ("No virtio device ID configured for PCI").  Drop
# that one warning block (cut here ... end trace), keep everything else.
benign_re='um_pci_init|No virtio device ID configured for PCI'
filter_benign() {
	awk -v benign="$benign_re" '
		/-+\[ cut here \]-+/ { inb = 1; known = 0; buf = "" }
		inb {
			buf = buf NR ":" $0 "\n"
			if ($0 ~ benign) known = 1
			if ($0 ~ /---\[ end trace/) {
				if (!known) printf "%s", buf
				else print "(ignored the um_pci_init warning)" >"/dev/stderr"
				inb = 0
			}
			next
		}
		{ print NR ":" $0 }
		END { if (inb) printf "%s", buf }' "$1"
}

if [ -f "$build_dir/test.log" ]; then
	if filter_benign "$build_dir/test.log" 2>/dev/null |
	   grep -E "$bad_log_re" >"$build_dir/bad-lines.txt"; then
		warn "kernel log reports problems ($build_dir/test.log):"
		head -n 40 "$build_dir/bad-lines.txt" | indent >&2
		failed=$((failed + 1))
	fi
fi

if [ "$profile" = debug ] && [ -f "$build_dir/.config" ]; then
	for opt in CONFIG_KASAN=y CONFIG_KASAN_GENERIC=y CONFIG_PROVE_LOCKING=y; do
		if grep -qx "$opt" "$build_dir/.config"; then
			say "$build_dir/.config: $opt"
		else
			warn "$opt did not reach $build_dir/.config"
			failed=$((failed + 1))
		fi
	done
fi

if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
	warn "kunit.py exited $rc"
	failed=1
fi

result "$passed" "$failed"
