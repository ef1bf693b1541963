#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# criu_basic: criu works in this guest.  A counter process
# (accmap_criu_counter: a count and a buffer in memory, the count written
# to a file every 10 ms) is dumped with criu (criu.sh dump, images on
# tmpfs), must be gone with its count standing still, is restored
# (criu.sh restore -d) and must go on counting from where it stood, its
# memory intact.  TAP on stdout.  run.sh packs it as /tests/criu_basic
# on a kernel with CONFIG_CHECKPOINT_RESTORE; /init exported ACCMAP_CRIU.
helper=/usr/share/accmap/criu.sh
dir=/tmp/criu-basic
count=$dir/count
img=$dir/img
n=0

ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}

notok() {
	n=$((n + 1))
	echo "not ok $n - $*"
}

# The plan holds however far the test gets: bail() reports the rest.
plan=6
bail() {
	notok "$*"
	while [ "$n" -lt "$plan" ]; do
		notok "not run: an earlier step failed"
	done
	[ -z "${pid:-}" ] || kill -9 "$pid" 2>/dev/null
	[ -z "${newpid:-}" ] || kill -9 "$newpid" 2>/dev/null
	exit 1
}

# value: the count in $count ("corrupt N" if the counter saw bad memory).
value() {
	{ read -r v _ <"$count"; } 2>/dev/null || v=
	case $v in
	corrupt) echo corrupt ;;
	*) echo "$v" | sed 's/^0*\([0-9]\)/\1/' ;;
	esac
}

# wait_count ABOVE TENTHS: waits until the count is above ABOVE.
wait_count() {
	i=0
	while [ "$i" -lt "$2" ]; do
		v=$(value)
		case $v in
		'' | corrupt) ;;
		*) [ "$v" -gt "$1" ] && return 0 ;;
		esac
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

echo "1..$plan"
libdir=${ACCMAP_CRIU_LIBDIR:-/usr/lib/criu}
echo "# criu plugins in $libdir: $(find "$libdir" -name '*.so' 2>/dev/null | tr '\n' ' ')"
[ -n "${ACCMAP_CRIU:-}" ] ||
	bail "criu works here: /init found no working criu (see criu check above)"

rm -rf "$dir"
mkdir -p "$img"
# Its own session: nothing of the test's terminal or session to carry.
setsid /tests/accmap_criu_counter "$count" </dev/null >/dev/null 2>&1 &
pid=$!
wait_count 20 300 || bail "counter started (count '$(value)' after 30 s)"
ok "counter running as pid $pid, count $(value)"

before=$(value)
if out=$("$helper" dump "$pid" "$img" 2>&1); then
	ok "criu dump of pid $pid (count $before at the start)"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	bail "criu dump of pid $pid"
fi

# criu dump kills the tree: reap it, then it must be gone for good.
wait "$pid" 2>/dev/null
dumped=$(value)
sleep 0.5
if [ -d "/proc/$pid" ]; then
	bail "pid $pid gone after the dump (it is still in /proc)"
elif [ "$(value)" != "$dumped" ]; then
	bail "count stands still after the dump ($dumped, then $(value))"
fi
ok "pid $pid gone after the dump, count stands at $dumped"

if newpid=$("$helper" restore "$img" 2>"$dir/restore.err") && [ -n "$newpid" ] &&
	[ -d "/proc/$newpid" ]; then
	ok "criu restore -d: pid $newpid"
else
	sed 's/^/# /' "$dir/restore.err"
	bail "criu restore -d (pid '${newpid:-}')"
fi

# Right after the restore the count is still at least where it stood
# (a process that started over would write 1, 2, ...), then goes on.
first=$(value)
if [ "$first" = corrupt ] || [ -z "$first" ] || [ "$first" -lt "$dumped" ]; then
	bail "count goes on from $dumped (it read '$first' after the restore)"
fi
wait_count "$((dumped + 20))" 300 ||
	bail "count goes on from $dumped (it read '$(value)' 30 s after the restore)"
ok "count goes on after the restore: $dumped at the dump, $first just after, $(value) now"

# The counter checks its whole buffer before every step.
sleep 0.5
v=$(value)
if [ "$v" = corrupt ] || ! kill -0 "$newpid" 2>/dev/null; then
	bail "restored memory intact (counter says '$(head -n 1 "$count")')"
fi
ok "restored memory intact (counter still running, count $v)"
kill -9 "$newpid"
rm -rf "$dir"
exit 0
