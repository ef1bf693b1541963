#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# accmapctl on the host, without the module (seconds):
# - --json against its schema: accmapctl is built linked to
#   libaccmap.so.1, and the libaccmap calls its JSON commands make are
#   answered by tools/testing/accmapctl/fake_libaccmap.c (LD_PRELOAD) with
#   fixed values.  For each of heaps, pool, targets and info: one line of
#   output, valid against Documentation/admin-guide/accmapctl.schema.json
#   (python3-jsonschema), and equal, value by value, to
#   tools/testing/accmapctl/expected.json.  A command without JSON output
#   refuses --json (exit 2, nothing on stdout).
# - top: its sums over the debugfs tables in tools/testing/accmapctl/debugfs
#   (per process, per heap, per tag, orphans), for one view and for two,
#   and its refusal of a table without the columns it needs.
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
lib=$ACCMAP_ROOT/tools/lib/accmap

passed=0
failed=0

say "building accmapctl (LINK=shared) and the stand-in library in $work"
make -s -C "$ACCMAP_ROOT/tools/accmap" OUTPUT="$work" LINK=shared "$work/accmapctl" \
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

check() {	# check NAME ARGS...: accmapctl --json ARGS, against $defs/NAME
	local name=$1 out status=0
	shift
	out=$(run --json "$@" 2>"$work/$name.err") || status=$?
	printf '%s\n' "$out" >"$work/$name.json"
	if [ "$status" != 0 ]; then
		indent <"$work/$name.err" >&2
		warn "FAIL accmapctl --json $* exited $status"
		failed=$((failed + 1))
		return
	fi
	if python3 - "$schema" "$expected" "$name" "$work/$name.json" <<'EOF'; then
import json, sys
import jsonschema

schema_path, expected_path, name, out_path = sys.argv[1:]
schema = json.load(open(schema_path))
text = open(out_path).read()
lines = text.splitlines()
if len(lines) != 1:
    sys.exit(f"{len(lines)} lines of output, not one")
doc = json.loads(lines[0])
sub = dict(schema)
sub["$ref"] = f"#/$defs/{name}"
jsonschema.Draft202012Validator(sub).validate(doc)
want = json.load(open(expected_path))[name]
if doc != want:
    sys.exit(f"got {json.dumps(doc, sort_keys=True)}\nwant {json.dumps(want, sort_keys=True)}")
EOF
		say "ok accmapctl --json $*: schema \$defs/$name, the expected values"
		passed=$((passed + 1))
	else
		warn "FAIL accmapctl --json $*: $work/$name.json"
		failed=$((failed + 1))
	fi
}

check heaps heaps
check pool pool
check targets targets
check info info --fd 0

status=0
out=$(run --json show /dev/null 2>/dev/null) || status=$?
if [ "$status" = 2 ] && [ -z "$out" ]; then
	say "ok accmapctl --json show: refused (exit 2), nothing on stdout"
	passed=$((passed + 1))
else
	warn "FAIL accmapctl --json show: exit $status, stdout '$out'"
	failed=$((failed + 1))
fi

# top over the fixed debugfs tables: the sums, by hand from those files.
top_has() {	# top_has NAME LINE...: every LINE (blanks squeezed) is in the output
	local name=$1 out l missing=()
	shift
	out=$(run top -b -n 1 --debugfs "$data/debugfs" 2>&1 | tr -s ' ' | sed 's/^ //') || true
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

views=$(run top -b -n 2 -i 1 --debugfs "$data/debugfs" 2>&1 | grep -c '^accmap at ' || true)
line=$(run top -b -n 1 --debugfs "$data/debugfs" 2>&1 | head -n 1)
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
