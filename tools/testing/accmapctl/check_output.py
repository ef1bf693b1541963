#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks one accmapctl --json document, for accmapctl-test.sh.

  check_output.py SCHEMA DEF JSON TEXT [EXPECTED KEY]

JSON holds what 'accmapctl --json CMD ARGS' printed, TEXT what the same
call printed without --json (with -b where the command has it, so that
byte counts are exact).  Checks, in order: JSON is one line and one
document; it is valid against the schema's $defs/DEF (required members
present, each of its type); it says what TEXT says, value by value (the
tables row by row and column by column, the "name: value" lines); and,
with EXPECTED and KEY, it equals the object KEY of the file EXPECTED
(members named in that object's "$ignore" list left out of the
comparison).  Exit status 0 if all hold, 1 with the first difference on
stderr otherwise.
"""
import json
import re
import sys

import jsonschema

UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]


class Mismatch(Exception):
    pass


def human(n):
    """accmapctl's fmt_bytes() without -b: '512 B', '4 KiB', '1.5 MiB'."""
    if n < 1024:
        return f"{n} B"
    u = 0
    while u + 1 < len(UNITS) and n >= 1 << (10 * (u + 1)):
        u += 1
    if not n & ((1 << (10 * u)) - 1):
        return f"{n >> (10 * u)} {UNITS[u]}"
    v = n / (1 << (10 * u))
    if v >= 1023.95 and u + 1 < len(UNITS):
        v /= 1024.0
        u += 1
    return f"{v:.1f} {UNITS[u]}"


def same(what, text, value):
    if text != value:
        raise Mismatch(f"{what}: the text says {text!r}, the JSON {value!r}")


def cell(text):
    """A table cell as the JSON has it: '-' null, numbers integers."""
    if text == "-":
        return None
    if re.fullmatch(r"\d+|0[xX][0-9a-fA-F]+", text):
        return int(text, 0)
    return text


def lead(text):
    """The number a value starts with: '5 (this import included)' -> 5."""
    m = re.match(r"(0x[0-9a-f]+|\d+)", text)
    if not m:
        raise Mismatch(f"no number at the start of {text!r}")
    return int(m.group(1), 0)


def split_row(line):
    return re.split(r" {2,}", line.strip(" "))


def tables(text):
    """The tables of TEXT: (header cells, rows of cells), in order."""
    found = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        head = split_row(lines[i])
        # A header: its first cell in capitals; after it columns named in
        # capitals, or (top's heaps) after a heap.
        if (len(head) > 1 and re.fullmatch(r"[A-Z][A-Z0-9_ ]*", head[0])
                and all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_ .-]*", h) for h in head)):
            rows = []
            i += 1
            while i < len(lines) and lines[i].strip() and not lines[i].startswith("("):
                if re.match(r"^[a-z][a-z _]*:(\s|$)", lines[i]):
                    break
                rows.append(split_row(lines[i]))
                i += 1
            found.append((head, rows))
        else:
            i += 1
    return found


def pairs(text):
    """The 'name: value' lines of TEXT, first of each name."""
    out = {}
    for line in text.split("\n"):
        m = re.match(r"^([a-z][a-zA-Z0-9 _]*):\s+(.*)$", line)
        if m and m.group(1) not in out:
            out[m.group(1)] = m.group(2)
    return out


def table_agrees(what, table, rows, convert=None):
    """Every cell of TABLE equals its row's member named after the column."""
    head, cells = table
    if len(cells) != len(rows):
        raise Mismatch(f"{what}: {len(cells)} rows in the text, {len(rows)} in the JSON")
    for r, (line, row) in enumerate(zip(cells, rows)):
        if len(line) != len(head):
            raise Mismatch(f"{what} row {r}: {len(line)} cells under {len(head)} columns")
        for h, c in zip(head, line):
            key = h.strip().lower().replace(" ", "_")
            if convert and key in convert:
                convert[key](f"{what} row {r} {key}", c, row)
            else:
                if key not in row:
                    raise Mismatch(f"{what} row {r}: no member {key!r}")
                same(f"{what} row {r} {key}", cell(c), row[key])


def need_tables(text, n):
    t = tables(text)
    if len(t) < n:
        raise Mismatch(f"{len(t)} tables in the text, not {n}")
    return t


# Per command: does the text say what the JSON says?

def agree_heaps(doc, text):
    table_agrees("heaps", need_tables(text, 1)[0], doc["heaps"])


def agree_pool(doc, text):
    table_agrees("orders", need_tables(text, 1)[0], doc["orders"])
    p = pairs(text)
    for k in ("cap", "pooled", "shrunk"):
        same(k, int(p[k]), doc[k])
    for k in ("hits", "misses"):
        same(k, lead(p[k]), doc[k])


def agree_targets(doc, text):
    def kind(what, c, row):
        words = c.split(",")
        same(what, words[0], row["kind"])
        same(what + " irq", "irq" in words, row["irq"])
        same(what + " svm", "svm" in words, row["svm"])

    conv = {
        "window": lambda w, c, row: same(w, c, human(row["window_size"])),
        "formats": lambda w, c, row: same(w, c.split(","), row["formats"]),
        "as": lambda w, c, row: same(w, int(c), row["address_spaces"]),
        "kind": kind,
    }
    table_agrees("targets", need_tables(text, 1)[0], doc["targets"], conv)


def agree_buffer(doc, p):
    """What alloc and info print alike: id, size, heap, flags, tag."""
    same("id", int(p["id"]), doc["id"])
    same("size", lead(p["size"]), doc["size"])
    if p["heap"] == "none":
        same("heap", None, doc["heap"])
    else:
        same("heap", lead(p["heap"]), doc["heap"])
        same("heap name", re.search(r"\((.*)\)$", p["heap"]).group(1), doc["heap_name"])
    same("flags", lead(p["flags"]), doc["flags"])
    same("cache", re.search(r"\(([a-z]+)", p["flags"]).group(1), doc["cache"])
    same("tag", lead(p["tag"]), doc["tag"])


def agree_info(doc, text):
    p = pairs(text)
    agree_buffer(doc, p)
    same("state", re.search(r"\((.*)\)", p["state"]).group(1).split(", "), doc["state"])
    same("handle refs", lead(p["handle refs"]), doc["handle_refs"])
    for k in ("exports", "maps", "attachments", "vmaps"):
        same(k, lead(p[k]), doc[k])
    same("contiguous", p["contiguous"].startswith("yes"), doc["contiguous"])


def agree_alloc(doc, text):
    p = pairs(text)
    agree_buffer(doc, p)
    if "dmabuf" in p:
        m = re.fullmatch(r"fd (\d+) \(pid (\d+)\)", p["dmabuf"])
        # Another process, which got the same fd; its pid is its own.
        same("dmabuf fd", int(m.group(1)), doc["dmabuf_fd"])
    else:
        same("dmabuf fd", None, doc["dmabuf_fd"])


def agree_label(doc, text):
    m = re.match(r"tag (\d+) \(0x[0-9a-f]{4}\): (.*)$", text.strip())
    same("tag", int(m.group(1)), doc["tag"])
    same("label", None if m.group(2) == "label removed" else m.group(2), doc["label"])


def sections(text):
    """list's text: {file name: its text}, from the 'name:' lines alone."""
    out, name = {}, None
    for line in text.split("\n"):
        m = re.fullmatch(r"([a-z]+):", line)
        if m:
            name = m.group(1)
            out[name] = ""
        elif name:
            out[name] += line + "\n"
    return out


def agree_totals(what, p, totals, skip=()):
    for label, v in p.items():
        key = label.replace(" ", "_")
        if label.startswith("target ") or key in skip:
            continue
        if key not in totals:
            raise Mismatch(f"{what}: no member {key!r}")
        same(f"{what} {key}", cell(v.split(" ")[0]) if key == "evictions" else cell(v),
             totals[key])


def agree_list(doc, text):
    secs = sections(text)
    same("files", sorted(secs), sorted(doc))
    for name, body in secs.items():
        if name == "replay":
            table_agrees(name, need_tables(body, 1)[0], doc[name]["sessions"])
            p = pairs(body)
            agree_totals(name, {k: v for k, v in p.items()}, doc[name]["totals"])
            targets = [(k[len("target "):], lead(v)) for k, v in p.items()
                       if k.startswith("target ")]
            same("replay targets", targets,
                 [(t["name"], t["sessions"]) for t in doc[name]["targets"]])
        elif name == "devmem":
            table_agrees(name, need_tables(body, 1)[0], doc[name]["sessions"])
            agree_totals(name, pairs(body), doc[name])
        else:
            table_agrees(name, need_tables(body, 1)[0], doc[name])


def agree_svm(doc, text):
    t = need_tables(text, 1)
    table_agrees("sessions", t[0], doc["sessions"])
    p = pairs(text)
    tot = doc["totals"]
    same("sessions", int(p["sessions"]), tot["sessions"])
    m = re.fullmatch(r"(\d+) \(huge (\d+)\)", p["mapped"])
    same("mapped", (int(m.group(1)), int(m.group(2))), (tot["mapped"], tot["huge"]))
    if "on device" in p:
        same("on device", int(p["on device"]), tot["device"])
    m = re.fullmatch(r"(\d+) \(fatal (\d+)\)", p["faults"])
    same("faults", (int(m.group(1)), int(m.group(2))), (tot["faults"], tot["fatal"]))
    same("invalidations", int(p["invalidations"]), tot["invalidations"])
    same("pages mapped", int(p["pages mapped"]), tot["pages_mapped"])
    if doc["devmem"] is None:
        same("device memory", "device memory: none" in text, True)
        return
    dm = doc["devmem"]
    for k in ("kind", "total", "used"):
        same(k, cell(p[k]), dm[k])
    same("evictions", lead(p["evictions"]), dm["evictions"])
    table_agrees("devmem sessions", need_tables(text, 2)[1], dm["sessions"])
    m = re.fullmatch(r"(\d+) pages to the device, (\d+) back", p["migrated"])
    same("migrated", (int(m.group(1)), int(m.group(2))),
         (dm["totals"]["to_device"], dm["totals"]["to_system"]))
    m = re.fullmatch(r"(\d+) by CPU faults, (\d+) evicted", p["of those back"])
    same("of those back", (int(m.group(1)), int(m.group(2))),
         (dm["totals"]["cpu_faults"], dm["totals"]["evictions"]))


def agree_top(doc, text):
    m = re.search(r": (\d+) processes hold (\d+) ids, (\d+)(; (\d+) orphans, (\d+))?$",
                  text.split("\n")[0])
    tot = doc["totals"]
    same("totals", tuple(int(m.group(i)) for i in (1, 2, 3)),
         (tot["processes"], tot["ids"], tot["bytes"]))
    orphans = None if m.group(4) is None else {"buffers": int(m.group(5)),
                                               "bytes": int(m.group(6))}
    same("orphans", orphans, doc["orphans"])

    def heaps(conv_keys):
        conv = {}
        for h in conv_keys:
            conv[h.lower()] = (lambda name: lambda w, c, row:
                               same(w, int(c), row["heaps"][name]))(h)
        return conv

    t = need_tables(text, 2 if doc["tags"] else 1)
    names = list(doc["processes"][0]["heaps"]) if doc["processes"] else []
    table_agrees("processes", t[0], doc["processes"], heaps(names))
    if doc["tags"]:
        table_agrees("tags", t[1], doc["tags"], heaps(names))


def agree_checkpoint(doc, text):
    held = re.search(r"pid (\d+) holds no accmap file", text)
    same("no accmap file", held is not None, not doc["files"])
    if held:
        same("pid", int(held.group(1)), doc["pid"])
    m = re.search(r"a dump would (succeed|fail); buffer contents to save: at most (.*) \(",
                  text)
    same("dump", m.group(1) == "succeed", doc["dump_ok"])
    same("bytes", m.group(2), human(doc["bytes"]))
    same("dma-buf mappings", len(re.findall("^mapping of a dma-buf file: ", text, re.M)),
         len(doc["dmabuf_mappings"]))


def agree_show(doc, text):
    p = pairs(text)
    m = re.fullmatch(r"(.*), version (\d+)", p["file"])
    same("file", (m.group(1), int(m.group(2))), (doc["file"], doc["version"]))
    m = re.fullmatch(r"(.*), GPU_ID (0x[0-9a-f]+), format (.*), AS (\d+), (\d+)-bit VA",
                     p["target"])
    same("target", (m.group(1), int(m.group(2), 16), m.group(3), int(m.group(4)),
                    int(m.group(5))),
         (doc["target"], doc["gpu_id"], doc["format"], doc["as"], doc["va_bits"]))
    m = re.fullmatch(r"(\d+), (.*) mapped, (.*) of contents", p["maps"])
    same("maps", (int(m.group(1)), m.group(2), m.group(3)),
         (len(doc["maps"]), human(doc["mapped"]), human(doc["contents"])))
    t = tables(text)
    length = {"length": lambda w, c, row: same(w, c, human(row["length"]))}
    table_agrees("maps", t[0], doc["maps"], length)
    kinds = {"kind": lambda w, c, row: same(w, c, ",".join(
        k for k in ("input", "output") if row[k]))}
    same("symbols", int(p["symbols"]), len(doc["symbols"]))
    rest = t[1:]
    if doc["symbols"]:
        table_agrees("symbols", rest[0], doc["symbols"], kinds)
        rest = rest[1:]
    m = re.fullmatch(r"(\d+) \((.*)\)", p["ops"])
    same("ops", int(m.group(1)), doc["ops"])
    same("op kinds", {k: int(v) for k, v in (x.split(" ") for x in m.group(2).split(", "))},
         doc["op_kinds"])
    note = re.search(r"^note:\n((?:  .*\n)*)", text, re.M)
    same("note", note and "".join(line[2:] + "\n" for line in note.group(1).splitlines()),
         doc["note"])
    same("chains", int(p["chains"]), len(doc["chains"]))
    if doc["chains"]:
        table_agrees("chains", rest[0], doc["chains"],
                     {"chain": lambda w, c, row: same(w, int(c), row["index"]),
                      "wait_op": lambda w, c, row: same(w, None if c == "none" else int(c),
                                                        row["wait_op"])})


def agree_import(doc, text):
    st = doc["stats"]
    m = re.search(r"^(.*): AS (\d+), GPU_ID (0x[0-9a-f]+), target (.*)$", text, re.M)
    same("head", (m.group(1), int(m.group(2)), int(m.group(3), 16), m.group(4)),
         (doc["output"], doc["as"], doc["gpu_id"], doc["target"]))
    checks = [
        (r"^regions: +(\d+) \((\d+) with contents\): (\d+) pages of contents, (\d+) "
         r"zero-filled, (\d+) maps$", ("regions", "valid_regions", "pages", "zero_pages", "maps")),
        (r"^accesses: (\d+) \((\d+) reads, (\d+) writes\), (\d+) job chains$",
         ("lines", "reads", "writes", "jobs")),
        (r"^ops: +(\d+) \((\d+) POLL, (\d+) WAIT_IRQ, (\d+) WRITE_ROOT\); (\d+) reads "
         r"folded, (\d+) TRANSTAB reads dropped, (\d+) recorded flush IDs",
         ("ops", "polls", "wait_irqs", "write_roots", "collapsed", "dropped", "flush_ids")),
        (r"^gr_pgt: +(\d+) table pages, (\d+) leaves: (\d+) outside the maps, (\d+) stale, "
         r"(\d+) tables missing$",
         ("pgt_pages", "pgt_leaves", "leaves_unmapped", "leaves_stale", "tables_missing")),
        (r"^roots: +(\d+) teardown TRANSTAB writes dropped; flush: (\d+) CAPTURE reads, "
         r"(\d+) CAPTURED writes; (\d+) waits on failed jobs$",
         ("roots_dropped", "captures", "captured", "failed_waits")),
        (r"^overlaps: (\d+) pages held by more than one region \((\d+) with no valid leaf\), "
         r"(\d+) maps with no valid leaf$",
         ("overlap_pages", "overlap_unmapped", "maps_no_leaf")),
        (r"^stale: +(\d+) regions", ("stale_regions",)),
        (r"^chains: +(\d+) walked, (\d+) not replayable$", ("chains", "chains_bad")),
        (r"^delays: +(\d+) ns recorded", ("recorded_ns",)),
    ]
    for rx, keys in checks:
        m = re.search(rx, text, re.M)
        if not m:
            raise Mismatch(f"no line like {rx!r} in the text")
        same(", ".join(keys), tuple(int(g) for g in m.groups()), tuple(st[k] for k in keys))
    same("replayable", pairs(text)["replayable"] == "yes", doc["replayable"])
    stale = re.findall(r"^  stale region 0x([0-9a-f]+)-0x([0-9a-f]+) \(gr_mem_contents offset "
                       r"0x([0-9a-f]+)\): (\d+) pages, (\d+) kept(, holds input)?"
                       r"(, holds output)?$", text, re.M)
    same("stale regions",
         [(int(a, 16), int(b, 16), int(c, 16), int(d), int(e), bool(i), bool(o))
          for a, b, c, d, e, i, o in stale],
         [(r["start"], r["end"], r["offset"], r["pages"], r["kept"], r["input"], r["output"])
          for r in doc["stale"]])
    bad = re.search(r"^chains: .*\n((?:  .*\n)*)", text, re.M).group(1)
    same("bad chains", [line[2:] for line in bad.splitlines()], doc["bad_chains"])


AGREE = {
    "heaps": agree_heaps, "pool": agree_pool, "targets": agree_targets,
    "info": agree_info, "alloc": agree_alloc, "label": agree_label,
    "list": agree_list, "svm": agree_svm, "top": agree_top,
    "checkpoint": agree_checkpoint, "show": agree_show, "import-gpureplay": agree_import,
}


def main():
    schema_path, name, json_path, text_path = sys.argv[1:5]
    schema = json.load(open(schema_path))
    lines = open(json_path).read().splitlines()
    if len(lines) != 1:
        sys.exit(f"{len(lines)} lines of JSON output, not one")
    doc = json.loads(lines[0])
    sub = dict(schema)
    sub["$ref"] = f"#/$defs/{name}"
    try:
        jsonschema.Draft202012Validator(sub).validate(doc)
    except jsonschema.ValidationError as e:
        sys.exit(f"not valid against $defs/{name}: {e.message} at {list(e.absolute_path)}")
    try:
        AGREE[name](doc, open(text_path).read())
    except Mismatch as e:
        sys.exit(f"the JSON and the text differ: {e}")
    except (KeyError, AttributeError, IndexError, TypeError, ValueError) as e:
        sys.exit(f"the JSON and the text differ: {type(e).__name__} {e}")
    if len(sys.argv) > 5:
        want = json.load(open(sys.argv[5]))[sys.argv[6]]
        ignore = want.pop("$ignore", [])
        got = {k: v for k, v in doc.items() if k not in ignore}
        if got != want:
            sys.exit(f"got {json.dumps(got, sort_keys=True)}\n"
                     f"want {json.dumps(want, sort_keys=True)}")


if __name__ == "__main__":
    main()
