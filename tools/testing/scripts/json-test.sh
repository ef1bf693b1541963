#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# accmapctl --json against its schema, on the host, without the module:
# accmapctl is built linked to libaccmap.so.1, and the libaccmap calls its
# JSON commands make are answered by tools/testing/json/fake_libaccmap.c
# (LD_PRELOAD) with fixed values.  For each of heaps, pool, targets and
# info: one line of output, valid against
# Documentation/admin-guide/accmapctl.schema.json (python3-jsonschema),
# and equal, value by value, to tools/testing/json/expected.json.  Then a
# command without JSON output refuses --json (exit 2, nothing on stdout).
#
# Steps count as tests; last line: "N passed, N failed".
set -euo pipefail

TIER=json
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/common.sh"

ensure_deps
work=$CACHE/json-test
mkdir -p "$work"
schema=$ACCMAP_ROOT/Documentation/admin-guide/accmapctl.schema.json
expected=$ACCMAP_ROOT/tools/testing/json/expected.json
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
	"$ACCMAP_ROOT/tools/testing/json/fake_libaccmap.c" 2>"$work/fake.log" ||
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

result "$passed" "$failed"
