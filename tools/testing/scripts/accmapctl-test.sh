#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# accmapctl on the host, without the module (seconds):
# - --json on every command: accmapctl is built linked to libaccmap.so.1,
#   and the libaccmap calls of the commands that talk to the device are
#   answered by tools/testing/accmapctl/fake_libaccmap.c (LD_PRELOAD) with
#   fixed values; the debugfs commands read the fixed tables in
#   tools/testing/accmapctl/debugfs; import-gpureplay and show work on the
#   fuzzer's small valid GPUReplay recording (valid-small).  For each call
#   tools/testing/accmapctl/check_output.py checks that --json printed one
#   line, valid against its definition in
#   Documentation/admin-guide/accmapctl.schema.json (python3-jsonschema:
#   required members present, of their types), that says what the same call
#   prints as text, value by value (-b where the command has it), and, where
#   tools/testing/accmapctl/expected.json has the call, equal to it.
#   Errors print no JSON: a failed call and a usage error leave stdout
#   empty and exit 1 and 2.  The checker is shown to fail on a document
#   with one value changed and on one without a required member.
# - top: its sums over the debugfs tables (per process, per heap, per tag,
#   orphans), for one view and for two, and its refusal of a table without
#   the columns it needs.
#
# Steps count as tests; last line: "N passed, N failed".
set -euo pipefail

TIER=accmapctl
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/common.sh"

ensure_deps
work=$CACHE/accmapctl-test
mkdir -p "$work"
schema=$ACCMAP_ROOT/Documentation/admin-guide/accmapctl.schema.json
data=$ACCMAP_ROOT/tools/testing/accmapctl
expected=$data/expected.json
checker=$data/check_output.py
lib=$ACCMAP_ROOT/tools/lib/accmap
debugfs=$data/debugfs

passed=0
failed=0

say "building accmapctl (LINK=shared) and the stand-in library in $work"
# Always from these sources (-B): a build in the cache from another tree
# can be newer than this checkout's files and would be taken as current.
make -s -B -C "$ACCMAP_ROOT/tools/accmap" OUTPUT="$work" LINK=shared "$work/accmapctl" \
	>"$work/build.log" 2>&1 || { indent <"$work/build.log" >&2; die "accmapctl did not build"; }
# The stand-in exports its functions under libaccmap's version node, so
# that accmapctl's versioned references bind to it first.
gcc -O2 -Wall -Wextra -Werror -fPIC -shared -D_GNU_SOURCE -I"$lib" -I"$ACCMAP_ROOT/include/uapi" \
	-Wl,--version-script="$lib/libaccmap.map" -o "$work/fake_libaccmap.so" \
	"$data/fake_libaccmap.c" 2>"$work/fake.log" ||
	{ indent <"$work/fake.log" >&2; die "the stand-in library did not build"; }

run() {	# run ARGS...: accmapctl with the stand-in before libaccmap.so.1
	LD_PRELOAD=$work/fake_libaccmap.so LD_LIBRARY_PATH=$work/libaccmap "$work/accmapctl" "$@"
}

pass() {
	say "ok $*"
	passed=$((passed + 1))
}

flunk() {
	warn "FAIL $*"
	failed=$((failed + 1))
}

# check DEF EXPECTED BYTES -- CMD ARGS...: accmapctl --json CMD ARGS
# against $defs/DEF, against the text of the same call (accmapctl CMD
# BYTES ARGS: BYTES is -b for the commands that have it, else "") and,
# unless EXPECTED is "-", against the object EXPECTED of expected.json.
check() {
	local def=$1 want=$2 bytes=$3 name status=0 tstatus=0
	shift 4
	name=$def-$passed-$failed
	run --json "$@" >"$work/$name.json" 2>"$work/$name.err" || status=$?
	run "$1" ${bytes:+"$bytes"} "${@:2}" >"$work/$name.txt" 2>>"$work/$name.err" ||
		tstatus=$?
	if [ "$status" != 0 ] || [ "$tstatus" != 0 ]; then
		indent <"$work/$name.err" >&2
		flunk "accmapctl --json $*: exit $status (text: exit $tstatus)"
		return
	fi
	local extra=()
	[ "$want" = - ] || extra=("$expected" "$want")
	if python3 "$checker" "$schema" "$def" "$work/$name.json" "$work/$name.txt" \
		"${extra[@]}" 2>"$work/$name.check"; then
		pass "accmapctl --json $*: \$defs/$def, agrees with the text${extra:+, the expected values}"
	else
		indent <"$work/$name.check" >&2
		flunk "accmapctl --json $*: $work/$name.json"
	fi
}

# refused STATUS ARGS...: accmapctl --json ARGS exits STATUS, nothing on
# stdout, a message on stderr.
refused() {
	local want=$1 out status=0
	shift
	out=$(run --json "$@" 2>"$work/refused.err") || status=$?
	if [ "$status" = "$want" ] && [ -z "$out" ] && [ -s "$work/refused.err" ]; then
		pass "accmapctl --json $*: exit $status, no JSON, '$(head -n 1 "$work/refused.err")'"
	else
		flunk "accmapctl --json $*: exit $status (want $want), stdout '$out'"
	fi
}

# A GPUReplay recording from the fuzzer's corpus (three u32 lengths, then
# gr_pgt, gr_mem_contents, gr_io_history and gr_sync_as), unpacked.
recording=$work/valid-small
mkdir -p "$recording"
python3 - "$ACCMAP_ROOT/tools/testing/fuzz/corpus/gpureplay/valid-small" "$recording" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
lens = struct.unpack_from("<3I", data)
off = 12
for name, n in zip(("gr_pgt", "gr_mem_contents", "gr_io_history", "gr_sync_as"),
                   list(lens) + [len(data) - 12 - sum(lens)]):
    open(f"{sys.argv[2]}/{name}", "wb").write(data[off:off + n])
    off += n
EOF

check heaps heaps -b -- heaps
check pool pool -b -- pool
check targets targets "" -- targets
check info info "" -- info --fd 0
check alloc alloc "" -- alloc 64K
check alloc alloc_export "" -- alloc 1M --tag 7 --wc --export
check label label "" -- label 7 camera
check label label_removed "" -- label 7 ''
all_files="clients allocations orphans tags heaps replay svm devmem"
# shellcheck disable=SC2086 # the file names, one word each
check list - -b -- list --debugfs "$debugfs" $all_files
check list - -b -- list --debugfs "$debugfs"
check svm svm -b -- svm --debugfs "$debugfs"
check svm - -b -- svm -p 412 --debugfs "$debugfs"
check top top -b -- top -n 1 --debugfs "$debugfs"
sleep 60 &
sleeper=$!
check checkpoint - "" -- checkpoint --pid "$sleeper"
kill "$sleeper" 2>/dev/null || true
wait "$sleeper" 2>/dev/null || true
check import-gpureplay - "" -- import-gpureplay "$recording" "$work/small.amr"
check show - "" -- show "$work/small.amr"

refused 1 list --debugfs "$work/no-such-dir"
refused 1 label 7 toolong
refused 2 list --raw --debugfs "$debugfs"
refused 2 top -n 2 --debugfs "$debugfs"

# The checker itself: a value changed, a required member dropped.
if run --json heaps >"$work/heaps-ok.json" && run heaps -b >"$work/heaps-ok.txt"; then
	sed 's/"used":12288/"used":12289/' "$work/heaps-ok.json" >"$work/heaps-changed.json"
	sed 's/,"contiguous":4096//' "$work/heaps-ok.json" >"$work/heaps-dropped.json"
	for bad in changed dropped; do
		if cmp -s "$work/heaps-ok.json" "$work/heaps-$bad.json"; then
			flunk "check_output.py: the $bad document is the same as the good one"
		elif python3 "$checker" "$schema" heaps "$work/heaps-$bad.json" "$work/heaps-ok.txt" \
			2>"$work/heaps-$bad.check"; then
			flunk "check_output.py passed a heaps document with a value $bad"
		else
			pass "check_output.py fails a heaps document with a value $bad:" \
				"$(tail -n 1 "$work/heaps-$bad.check")"
		fi
	done
else
	flunk "accmapctl heaps (for the checker's own test)"
fi

# top over the fixed debugfs tables: the sums, by hand from those files.
top_has() {	# top_has NAME LINE...: every LINE (blanks squeezed) is in the output
	local name=$1 out l missing=()
	shift
	out=$(run top -b -n 1 --debugfs "$debugfs" 2>&1 | tr -s ' ' | sed 's/^ //') || true
	for l in "$@"; do
		grep -qxF -- "$l" <<<"$out" || missing+=("$l")
	done
	if [ "${#missing[@]}" = 0 ]; then
		say "ok accmapctl top: $name"
		passed=$((passed + 1))
	else
		printf '%s\n' "$out" | indent >&2
		warn "FAIL accmapctl top: $name; missing: ${missing[*]}"
		failed=$((failed + 1))
	fi
}
top_has "per process, by bytes, with a column per heap" \
	"PID COMM IDS BYTES system cam" \
	"977 npu-runtime 2 25165824 25165824 0" \
	"412 camera-hal 3 12582912 8388608 4194304"
top_has "per tag, with its label" \
	"TAG LABEL IDS BYTES system cam" \
	"7 camera 3 20971520 16777216 4194304" \
	"9 - 1 16777216 16777216 0" \
	"0 - 1 0 0 0"

views=$(run top -b -n 2 -i 1 --debugfs "$debugfs" 2>&1 | grep -c '^accmap at ' || true)
line=$(run top -b -n 1 --debugfs "$debugfs" 2>&1 | head -n 1)
if [ "$views" = 2 ] && [[ $line == *": 2 processes hold 5 ids, 37748736; 1 orphans, 65536" ]]; then
	say "ok accmapctl top: two views with -n 2; the head line: $line"
	passed=$((passed + 1))
else
	warn "FAIL accmapctl top: $views views with -n 2; head line '$line'"
	failed=$((failed + 1))
fi

mkdir -p "$work/badfs"
printf 'pid\tcomm\tid\n1\tx\t1\n' >"$work/badfs/allocations"
status=0
run top -n 1 --debugfs "$work/badfs" >/dev/null 2>&1 || status=$?
if [ "$status" = 1 ]; then
	say "ok accmapctl top: an allocations table without size, heap, tag, label: exit 1"
	passed=$((passed + 1))
else
	warn "FAIL accmapctl top on a table without its columns: exit $status"
	failed=$((failed + 1))
fi

result "$passed" "$failed"
