#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns lcov's tracefile of drivers/accmap into the README's table.

    coverage-table.py TRACEFILE DATE TARGET COMMIT > coverage.md

Per source file: lines, branches and functions reached, as counts and
percentages; a total line; then every function no test reached, by file
and line.  Called by coverage.sh.
"""

import sys


def pct(hit, found):
    return f"{100.0 * hit / found:.1f} %" if found else "n/a"


def parse(path):
    files = {}
    cur = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            key, _, val = line.partition(":")
            if key == "SF":
                cur = files.setdefault(val, {"LF": 0, "LH": 0, "BRF": 0, "BRH": 0,
                                             "FNF": 0, "FNH": 0, "fn": {}, "fnda": {}})
            elif cur is None:
                continue
            elif key in ("LF", "LH", "BRF", "BRH", "FNF", "FNH"):
                cur[key] += int(val)
            elif key == "FN":
                lineno, name = val.split(",", 1)
                cur["fn"][name] = int(lineno)
            elif key == "FNDA":
                count, name = val.split(",", 1)
                cur["fnda"][name] = cur["fnda"].get(name, 0) + int(count)
            elif line == "end_of_record":
                cur = None
    return files


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    path, date, target, commit = sys.argv[1:]
    files = parse(path)
    out = [f"Coverage of `drivers/accmap` on {date} (commit {commit}, `make coverage`: "
           f"every selftest and the fuzzer in one boot of each of {target})", "",
           "| file | lines | | branches | | functions | |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    tot = dict.fromkeys(("LF", "LH", "BRF", "BRH", "FNF", "FNH"), 0)
    for name in sorted(files):
        d = files[name]
        for k in tot:
            tot[k] += d[k]
        out.append(f"| {name} | {d['LH']}/{d['LF']} | {pct(d['LH'], d['LF'])} "
                   f"| {d['BRH']}/{d['BRF']} | {pct(d['BRH'], d['BRF'])} "
                   f"| {d['FNH']}/{d['FNF']} | {pct(d['FNH'], d['FNF'])} |")
    out.append(f"| **all** | {tot['LH']}/{tot['LF']} | **{pct(tot['LH'], tot['LF'])}** "
               f"| {tot['BRH']}/{tot['BRF']} | **{pct(tot['BRH'], tot['BRF'])}** "
               f"| {tot['FNH']}/{tot['FNF']} | {pct(tot['FNH'], tot['FNF'])} |")
    out += ["", "Functions no test reached:", ""]
    none = True
    for name in sorted(files):
        d = files[name]
        for fn, lineno in sorted(d["fn"].items(), key=lambda kv: kv[1]):
            if d["fnda"].get(fn, 0) == 0:
                out.append(f"- {name}:{lineno} `{fn}()`")
                none = False
    if none:
        out.append("- none")
    print("\n".join(out))


if __name__ == "__main__":
    main()
