# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Reads tools/testing/vm/tiers.txt (its header says what the lines mean).
# Sourced by run.sh, after common.sh.
#
# tier_features TARGET MODE prints the tier's features, one "NAME VALUE"
# a line (arch first); it fails if the table has no such tier.
#
# tier_programs TARGET MODE FUZZ_PLAN prints what the tier must run, one
# "PROGRAM COUNT" a line in the table's order (FUZZ_PLAN stands for the
# count "fuzz-plan"); it fails on a malformed table.
#
# Besides the table's features and "arch", a prog line may be conditioned
# on "faults": the board's fault knobs of this run (run.sh's
# ACCMAP_BOARD_FAULTS, none if unset), a setting of the run, not of the
# tier.

TIERS_TABLE=${ACCMAP_TIERS_TABLE:-$ACCMAP_ROOT/tools/testing/vm/tiers.txt}

# tiers_awk TARGET MODE FUZZ_PLAN WHAT: the table's parser; WHAT is
# "features" or "programs".  Errors go to stderr, with exit status 1.
tiers_awk() {
	awk -v target="$1" -v mode="$2" -v fuzz="$3" -v what="$4" \
		-v faults="${ACCMAP_BOARD_FAULTS:-none}" '
		function bad(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg >"/dev/stderr"; err = 1; exit 1 }
		{ sub(/#.*/, "") }
		NF == 0 { next }
		$1 == "features" {
			nf = NF - 1
			for (i = 2; i <= NF; i++) { fname[i - 1] = $i; known[$i] = 1 }
			known["arch"] = 1
			known["faults"] = 1
			next
		}
		$1 == "tier" {
			if (!nf) bad("a tier line before the features line")
			if (NF != nf + 3) bad("tier " $2 " " $3 ": " NF - 3 " values for " nf " features")
			if ($2 != target || $3 != mode) next
			if (found) bad("tier " target " " mode " listed twice")
			found = 1
			split(target, a, "-")
			feat["arch"] = a[1]
			feat["faults"] = faults
			for (i = 1; i <= nf; i++) feat[fname[i]] = $(i + 3)
			next
		}
		$1 == "prog" {
			if (NF < 3) bad("a prog line needs a program and a count")
			if ($3 !~ /^[0-9]+$/ && $3 != "fuzz-plan") bad($2 ": count " $3 " is not a number")
			np++; pname[np] = $2; pcount[np] = $3; pcond[np] = ""
			for (i = 4; i <= NF; i++) {
				if ($i !~ /=/) bad($2 ": condition " $i " is not KEY=VALUE")
				k = $i; sub(/=.*/, "", k)
				if (!(k in known)) bad($2 ": unknown feature " k)
				pcond[np] = pcond[np] " " $i
			}
			next
		}
		{ bad("unknown line: " $0) }
		END {
			if (err) exit 1
			if (!found) {
				printf "%s has no tier line for %s %s: say what it must have and run\n", FILENAME, target, mode >"/dev/stderr"
				exit 1
			}
			if (what == "features") {
				print "arch", feat["arch"]
				for (i = 1; i <= nf; i++) print fname[i], feat[fname[i]]
				exit 0
			}
			for (p = 1; p <= np; p++) {
				n = split(pcond[p], c, " ")
				ok = 1
				for (j = 1; j <= n; j++) {
					k = c[j]; sub(/=.*/, "", k)
					v = c[j]; sub(/^[^=]*=/, "", v)
					if (index("," v ",", "," feat[k] ",") == 0) ok = 0
				}
				if (!ok) continue
				if (pname[p] in want) {
					printf "%s: two prog lines of %s match tier %s %s\n", FILENAME, pname[p], target, mode >"/dev/stderr"
					exit 1
				}
				want[pname[p]] = pcount[p] == "fuzz-plan" ? fuzz : pcount[p]
				print pname[p], want[pname[p]]
			}
		}' "$TIERS_TABLE"
}

tier_features() {
	tiers_awk "$1" "$2" 0 features
}

tier_programs() {
	tiers_awk "$1" "$2" "$3" programs
}
