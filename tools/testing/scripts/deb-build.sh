#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds accmap's Debian packages from a clean copy of the project's
# files (what git tracks, plus untracked files it does not ignore):
#
#   tools/testing/scripts/deb-build.sh [ARCH...]     (default: amd64 arm64)
#
# The host's architecture builds natively, source package and
# architecture-independent package included; any other architecture is
# cross-built (dpkg-buildpackage -a ARCH -B).  The packages, .changes and
# build logs go to $ACCMAP_CACHE/deb/out (emptied first); the last line
# lists the .changes files.
set -euo pipefail

TIER=deb-build
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/common.sh"

archs=("$@")
[ "${#archs[@]}" -gt 0 ] || archs=(amd64 arm64)
host=$(dpkg --print-architecture)
version=$(package_version)
[ -n "$version" ] || die "no PACKAGE_VERSION in dkms.conf"

top=$CACHE/deb
src=$top/src/accmap-$version
out=$top/out
rm -rf "$top/src" "$out"
mkdir -p "$src" "$out"
project_files '*' | (cd "$ACCMAP_ROOT" && rsync -a --files-from=- ./ "$src/")

changes=()
for arch in "${archs[@]}"; do
	if [ "$arch" = "$host" ]; then
		opts=()
	else
		opts=(-a "$arch" -B)
	fi
	say "dpkg-buildpackage ${opts[*]} ($arch), log $out/build-$arch.log"
	if ! (cd "$src" && dpkg-buildpackage -us -uc "${opts[@]}") >"$out/build-$arch.log" 2>&1; then
		tail -n 40 "$out/build-$arch.log" | indent >&2
		die "the $arch packages did not build (log: $out/build-$arch.log)"
	fi
	f=$(cd "$top/src" && ls ./*_"$arch".changes)
	changes+=("$out/${f#./}")
	# Everything dpkg-buildpackage wrote beside the source tree.
	find "$top/src" -maxdepth 1 -type f -exec mv -t "$out" {} +
done
say "built: ${changes[*]}"
