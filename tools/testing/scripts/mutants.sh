#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Mutation testing: plants small bugs in the driver, one at a time, and
# checks that the tests that should see each one fail.
#
#   tools/testing/scripts/mutants.sh [--list|--check|--report] [--no-baseline]
#                                    [--full-build] [ID...]
#
# The bugs are listed in tools/testing/mutants/list (its header gives the
# format): each names a file of drivers/accmap, an exact text that must
# occur there exactly once, its replacement, and the tiers and programs
# that should catch it.  For each mutant (all of them, or the IDs given)
# the tree is copied to a scratch directory outside git's view, the text
# replaced, and the named tiers run from that copy, in order, each with
# just the named programs (tools/testing/vm/run.sh TARGET prog,prog with a
# private work directory; "kunit" is the KUnit tier, run.sh default).
# The first tier that fails stops the mutant:
#   CAUGHT        a tier failed (the tests saw the bug)
#   NOT-CAUGHT    every tier passed
#   BUILD-BROKEN  the mutant did not compile (a bad mutant: fix the list)
#   BAD-MUTANT    its text was not found exactly once (fix the list)
# Before the mutants, the unchanged tree runs once per target with every
# program the chosen mutants name there (--no-baseline skips this): a red
# baseline would make every mutant look caught, so it stops the run.
#
#   --list        print the mutants (id, file, kind, tiers) and stop
#   --check       check that every mutant's text occurs exactly once, and
#                 stop (no build)
#   --full-build  let run.sh build each mutant's module afresh, with
#                 sparse, as make check does (by default the stock 6.1
#                 targets rebuild only the changed files, without sparse)
#   --report      print the table of the latest result of every mutant
#                 and stop
#
# Work directory: $ACCMAP_MUTANTS_WORK, default $CACHE/mutants (tree copy,
# VM work directories, one log per mutant and tier in logs/, one result
# per mutant in results/).  The table of the run goes to report.txt
# there, the table of every mutant's latest result to report-all.txt.
# Exits non-zero if fewer than 90 % of the mutants run were caught (or a
# baseline failed).  Runs one guest at a time; never two runs at once.
set -euo pipefail

TIER=mutants
# shellcheck source=tools/testing/scripts/common.sh
. "$(dirname "$0")/common.sh"

# All in one function, read whole before it runs: the list and this
# script may be edited while a long run goes on.
main() {

list=$ACCMAP_ROOT/tools/testing/mutants/list
work=${ACCMAP_MUTANTS_WORK:-$CACHE/mutants}
tree=$work/tree
min_percent=90

mode=run
baseline=1
quick=1
ids=()
while [ $# -gt 0 ]; do
	case $1 in
	--list) mode=list ;;
	--report) mode=report ;;
	--check) mode=check ;;
	--no-baseline) baseline=0 ;;
	--full-build) quick=0 ;;
	-h | --help)
		sed -n '/^# Mutation testing/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	-*) die "unknown option $1 (see --help)" ;;
	*) ids+=("$1") ;;
	esac
	shift
done

# --- the list -----------------------------------------------------------
# One mutant a block of "key: value" lines, blocks apart by blank lines.
declare -A m_file=() m_kind=() m_bug=() m_tiers=() m_find=() m_replace=() m_note=()
order=()

# Turns the list's escapes (\n newline, \t tab) into the characters.
unescape() {
	local s=$1
	s=${s//\\n/$'\n'}
	s=${s//\\t/$'\t'}
	printf '%s' "$s"
}

read_list() {
	local line key value id='' n=0
	[ -f "$list" ] || die "no mutant list at $list"
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		case $line in
		'#'*) continue ;;
		'') id=; continue ;;
		esac
		key=${line%%:*}
		value=${line#*:}
		value=${value# }
		[ "$key" != "$line" ] || die "$list:$n: not a 'key: value' line"
		if [ "$key" = id ]; then
			[ -n "$value" ] || die "$list:$n: empty id"
			[ -z "${m_file[$value]+set}" ] || die "$list:$n: id $value given twice"
			id=$value
			order+=("$id")
			m_file[$id]=
			m_replace[$id]=
			m_note[$id]=
			continue
		fi
		[ -n "$id" ] || die "$list:$n: '$key' before any id"
		case $key in
		file) m_file[$id]=$value ;;
		kind) m_kind[$id]=$value ;;
		bug) m_bug[$id]=$value ;;
		tiers) m_tiers[$id]=$value ;;
		find) m_find[$id]=$(unescape "$value") ;;
		replace) m_replace[$id]=$(unescape "$value") ;;
		note) m_note[$id]=$value ;;
		*) die "$list:$n: unknown key '$key'" ;;
		esac
	done <"$list"
	for id in "${order[@]}"; do
		for key in file kind bug tiers find; do
			local -n arr=m_$key
			[ -n "${arr[$id]:-}" ] || die "$list: mutant $id has no $key"
			unset -n arr
		done
	done
}

read_list

if [ "$mode" = list ]; then
	for id in "${order[@]}"; do
		printf '%-28s %-32s %-16s %s\n' "$id" "${m_file[$id]}" "${m_kind[$id]}" "${m_tiers[$id]}"
	done
	printf '%d mutants in %d files\n' "${#order[@]}" \
		"$(for id in "${order[@]}"; do echo "${m_file[$id]}"; done | sort -u | wc -l)"
	exit 0
fi

mkdir -p "$work/logs" "$work/results"

# table IDS...: one line a mutant from its stored result, then the score.
table() {
	local id verdict rest caught=0 total=0
	printf '%-28s %-26s %-13s %s\n' MUTANT FILE RESULT DETAIL
	for id in "$@"; do
		if [ -f "$work/results/$id" ]; then
			read -r verdict rest <"$work/results/$id"
		else
			verdict=NOT-RUN
			rest=
		fi
		printf '%-28s %-26s %-13s %s\n' "$id" "${m_file[$id]#drivers/accmap/}" "$verdict" "$rest"
		[ "$verdict" = NOT-RUN ] && continue
		total=$((total + 1))
		[ "$verdict" = CAUGHT ] && caught=$((caught + 1))
	done
	for id in "$@"; do
		if [ ! -f "$work/results/$id" ] || [ -z "${m_note[$id]}" ]; then
			continue
		fi
		read -r verdict rest <"$work/results/$id"
		[ "$verdict" = CAUGHT ] || printf '%s: %s\n' "$id" "${m_note[$id]}"
	done
	if [ "$total" -gt 0 ]; then
		printf '%d of %d mutants caught (%d %%)\n' "$caught" "$total" $((100 * caught / total))
	else
		printf '0 mutants run\n'
	fi
}

if [ "$mode" = report ]; then
	table "${order[@]}" | tee "$work/report-all.txt"
	exit 0
fi

if [ ${#ids[@]} -eq 0 ]; then
	ids=("${order[@]}")
fi
for id in "${ids[@]}"; do
	[ -n "${m_file[$id]+set}" ] || die "no mutant $id in $list"
done

exec 7>"$work/.lock"
flock -n 7 || die "another mutants run holds $work/.lock"

ensure_deps
# The GPUReplay recording stays beside the real checkout (run.sh looks
# beside the tree it runs from, which here is the scratch copy).
if [ -z "${ACCMAP_GPUREPLAY_DIR:-}" ]; then
	for d in "$ACCMAP_ROOT/.." "$ACCMAP_ROOT/../.."; do
		if [ -d "$d/shared/recordings/gpureplay-mnist" ]; then
			ACCMAP_GPUREPLAY_DIR=$(cd "$d/shared/recordings/gpureplay-mnist" && pwd)
			export ACCMAP_GPUREPLAY_DIR
			break
		fi
	done
fi

# The commit the copy is made from, "+changes" if the checkout differs
# from it (each mutant's copy is made afresh: the checkout may move on).
revision() {
	local r
	r=$(git -C "$ACCMAP_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [ -n "$(git -C "$ACCMAP_ROOT" status --porcelain -- drivers include tools 2>/dev/null)" ]; then
		r=$r+changes
	fi
	echo "$r"
}

# apply ID: the scratch tree as the checkout is, with the mutant's text
# replaced.  Returns 1 (and says why) if the text is not there exactly
# once.
apply() {
	local id=$1 path=$tree/${m_file[$1]} text rest count
	[ -f "$path" ] || { warn "$id: no file ${m_file[$id]}"; return 1; }
	text=$(<"$path")
	rest=${text//"${m_find[$id]}"/}
	count=$(((${#text} - ${#rest}) / ${#m_find[$id]}))
	if [ "$count" -ne 1 ]; then
		warn "$id: the text occurs $count times in ${m_file[$id]}, not once"
		return 1
	fi
	printf '%s\n' "${text/"${m_find[$id]}"/"${m_replace[$id]}"}" >"$path"
}

# prebuild TARGET: for a stock 6.1 target whose work directory holds a
# build already, rebuilds accmap.ko there incrementally (W=1, no sparse:
# only the files the mutant changed, and those it changed back, compile
# again) and records it under the key run.sh's module_build (common.sh)
# computes, so that run.sh boots that module instead of building the
# whole tree again with sparse.  Should the key's recipe differ from
# module_build's, run.sh just builds the copy afresh: slower, as right.
prebuild() {
	local target=$1 kdir src key status=0
	local -a args=()
	case $target in
	amd64) kdir=/usr/src/linux-headers-$(kernel_abi)-amd64 ;;
	arm64)
		kdir=$CACHE/arm64/headers/usr/src/linux-headers-$(kernel_abi)-arm64
		args=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
		;;
	*) return 0 ;;
	esac
	src=$work/vm-$target/src
	[ -f "$src/drivers/accmap/accmap.ko" ] && [ -f "$kdir/Makefile" ] || return 0
	key=$( {
		(ACCMAP_ROOT=$tree && cd "$tree" && project_files 'Kbuild' 'Makefile' 'drivers/*' 'include/*' |
			xargs -r sha256sum)
		cat "$kdir/include/config/kernel.release" "$kdir/.config" 2>/dev/null
		printf '%s\n' "${args[@]}"
	} | sha256sum | cut -d' ' -f1)
	(ACCMAP_ROOT=$tree && sync_tree "$src")
	timeout "${ACCMAP_MODULE_BUILD_TIMEOUT:-900}" make -C "$kdir" M="$src" W=1 \
		-j"$(nproc)" "${args[@]}" modules >"$src.log" 2>&1 || status=$?
	echo "$status" >"$src.status"
	echo "$key" >"$src.key"
}

# run_tier SPEC LOG: runs one tier of the scratch tree; SPEC is
# TARGET:prog,prog (a VM tier) or kunit.  Returns the tier's status.
run_tier() {
	local spec=$1 log=$2 target progs
	if [ "$spec" = kunit ]; then
		ACCMAP_DEPS_OK=1 "$tree/tools/testing/kunit/run.sh" default >"$log" 2>&1
		return
	fi
	target=${spec%%:*}
	progs=${spec#*:}
	if [ "$progs" = "$spec" ] || [ -z "$progs" ]; then
		die "tier '$spec': want TARGET:prog,prog or kunit"
	fi
	[ "$quick" = 0 ] || prebuild "$target"
	ACCMAP_DEPS_OK=1 ACCMAP_VM_WORK=$work/vm-$target \
		"$tree/tools/testing/vm/run.sh" "$target" "$progs" >"$log" 2>&1
}

# The lines of a failed tier's log that say why (failed tests, errors).
why_failed() {
	grep -E '^not ok|FAIL|error:|^\[vm-[^]]*\] [^ ]*: [0-9]+ ok, [1-9]|[1-9][0-9]* failed$' "$1" |
		grep -v '^# ' | head -n 3 | tr '\n' ' ' | cut -c1-160
}

if [ "$mode" = check ]; then
	local bad=0
	for id in "${ids[@]}"; do
		sync_tree "$tree"
		apply "$id" || bad=$((bad + 1))
	done
	sync_tree "$tree"
	say "${#ids[@]} mutants, $bad with a text not found exactly once"
	[ "$bad" = 0 ]
	return
fi

# --- baseline -----------------------------------------------------------
sync_tree "$tree"
if [ "$baseline" = 1 ]; then
	declare -A base_progs=()
	base_kunit=0
	for id in "${ids[@]}"; do
		for spec in ${m_tiers[$id]}; do
			if [ "$spec" = kunit ]; then
				base_kunit=1
				continue
			fi
			base_progs[${spec%%:*}]+=",${spec#*:}"
		done
	done
	specs=()
	for target in "${!base_progs[@]}"; do
		progs=$(tr ',' '\n' <<<"${base_progs[$target]}" | grep -v '^$' | sort -u | paste -sd,)
		specs+=("$target:$progs")
	done
	[ "$base_kunit" = 0 ] || specs+=(kunit)
	for spec in "${specs[@]}"; do
		say "baseline: $spec (unchanged tree)"
		log=$work/logs/baseline-${spec%%:*}.log
		if ! run_tier "$spec" "$log"; then
			tail -n 20 "$log" | indent >&2
			die "the unchanged tree fails $spec ($log): fix that first"
		fi
		say "baseline: $spec: $(tail -n 1 "$log")"
	done
fi

# --- the mutants ----------------------------------------------------------
start_all=$SECONDS
revision=$(revision)
for id in "${ids[@]}"; do
	say "$id: ${m_bug[$id]}"
	rm -f "$work/results/$id"
	revision=$(revision)
	sync_tree "$tree"
	if ! apply "$id"; then
		echo "BAD-MUTANT its text is not in ${m_file[$id]} exactly once ($revision)" >"$work/results/$id"
		continue
	fi
	verdict=NOT-CAUGHT
	detail="passed: ${m_tiers[$id]}"
	start=$SECONDS
	for spec in ${m_tiers[$id]}; do
		log=$work/logs/$id-${spec%%:*}.log
		if run_tier "$spec" "$log"; then
			continue
		fi
		if grep -qE 'module build failed|kunit.py gave no result' "$log" &&
		   grep -qE ': error:' "$log"; then
			verdict=BUILD-BROKEN
			detail="${spec%%:*}: $(grep -m1 ': error:' "$log" | cut -c1-120)"
		else
			verdict=CAUGHT
			detail="${spec%%:*}: $(why_failed "$log")"
		fi
		break
	done
	echo "$verdict [$((SECONDS - start)) s, $revision] $detail" >"$work/results/$id"
	say "$id: $verdict ($((SECONDS - start)) s)"
done
# Leave no planted bug behind in the copy (the KUnit graft points there).
sync_tree "$tree"

{
	printf 'accmap mutants, %s, tree %s, %d s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" \
		"$revision" $((SECONDS - start_all))
	table "${ids[@]}"
} | tee "$work/report.txt"
table "${order[@]}" >"$work/report-all.txt"

caught=0
for id in "${ids[@]}"; do
	read -r verdict _ <"$work/results/$id"
	[ "$verdict" = CAUGHT ] && caught=$((caught + 1))
done
say "table: $work/report.txt (every mutant's latest result: $work/report-all.txt)"
[ $((100 * caught)) -ge $((min_percent * ${#ids[@]})) ]
}

main "$@"
