#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The test guest's way to run criu (busybox sh), for criu_basic and the
# accmap CRIU tests after it.  run.sh packs it as /usr/share/accmap/criu.sh;
# /init found criu working (criu check) and exported ACCMAP_CRIU, its path.
#
#   criu.sh dump PID DIR [CRIU ARGS...]
#       dumps the process tree of PID into DIR (made if missing; tmpfs
#       in the guest), which kills it; log in DIR/dump.log
#   criu.sh restore DIR [CRIU ARGS...]
#       restores it detached (-d); prints the restored tree's root pid;
#       log in DIR/restore.log
#   criu.sh check
#       criu check, its output as is
#
# Both take the process's session and terminal as they are
# (--shell-job) and load the plugins in $ACCMAP_CRIU_LIBDIR (default
# /usr/lib/criu, where the image puts tools/criu's plugin).  On failure
# they print the end of criu's log on stderr and exit with criu's status.
criu=${ACCMAP_CRIU:-}
libdir=${ACCMAP_CRIU_LIBDIR:-/usr/lib/criu}

if [ -z "$criu" ]; then
	echo "criu.sh: ACCMAP_CRIU is empty: no working criu in this guest" >&2
	exit 125
fi

# fail LOG RC: prints LOG's errors and its end, exits RC.
fail() {
	echo "criu.sh: criu $cmd failed (status $2); errors in $1:" >&2
	grep -E '^\([0-9. ]+\) *Error|^Error' "$1" | head -n 20 | sed 's/^/  | /' >&2
	echo "criu.sh: end of $1:" >&2
	tail -n 15 "$1" | sed 's/^/  | /' >&2
	exit "$2"
}

cmd=${1:-}
case $cmd in
dump)
	[ $# -ge 3 ] || { echo "usage: criu.sh dump PID DIR [ARGS...]" >&2; exit 2; }
	pid=$2
	dir=$3
	shift 3
	mkdir -p "$dir" || exit 1
	"$criu" dump -t "$pid" -D "$dir" -L "$libdir" --shell-job \
		-v4 -o dump.log "$@" || fail "$dir/dump.log" $?
	;;
restore)
	[ $# -ge 2 ] || { echo "usage: criu.sh restore DIR [ARGS...]" >&2; exit 2; }
	dir=$(cd "$2" && pwd) || exit 1
	shift 2
	rm -f "$dir/restore.pid"
	"$criu" restore -d -D "$dir" -L "$libdir" --shell-job \
		--pidfile "$dir/restore.pid" -v4 -o restore.log "$@" ||
		fail "$dir/restore.log" $?
	read -r pid <"$dir/restore.pid" || true
	echo "$pid"
	;;
check)
	exec "$criu" check
	;;
*)
	echo "usage: criu.sh dump PID DIR | restore DIR | check" >&2
	exit 2
	;;
esac
