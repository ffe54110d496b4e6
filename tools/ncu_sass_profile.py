#!/usr/bin/env python3
"""Warp-stall samples of one kernel from an ncu source page (SASS), as run 96 read them.

Input: `ncu -i REPORT --page source --csv --print-source sass` (optionally xz-compressed).
  tools/ncu_sass_profile.py FILE                  # samples per opcode family, top stall reasons
  tools/ncu_sass_profile.py FILE --dump LO HI     # instructions [LO, HI) with samples
  tools/ncu_sass_profile.py FILE --region START END
      # samples of instructions [START, END): START an index or a 0x address (e.g. a loop head)
"""
import argparse
import collections
import csv
import lzma
import re


def load(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    hdr = rows[1]
    data = [r for r in rows[2:] if len(r) >= len(hdr)]
    return hdr, data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--dump", nargs=2, type=int)
    ap.add_argument("--region", nargs=2)
    a = ap.parse_args()
    hdr, data = load(a.file)
    ci = {h: i for i, h in enumerate(hdr)}
    samples = ci["Warp Stall Sampling (All Samples)"]
    src, addr_col, execd = ci["Source"], ci["Address"], ci["Instructions Executed"]
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    n = lambda r, c: int(r[c] or 0)
    total = sum(n(r, samples) for r in data)

    def reasons(rows, top=6):
        c = collections.Counter()
        for r in rows:
            for h in stalls:
                c[h[6:]] += n(r, ci[h])
        return c.most_common(top)

    if a.dump:
        for k in range(a.dump[0], min(a.dump[1], len(data))):
            r = data[k]
            if n(r, samples) or re.search(r"BAR|STSM|BRX|STG|EXIT", r[src]):
                print(k, r[src].strip()[:60], n(r, samples), r[execd], reasons([r], 2))
        return
    if a.region:
        addrs = [int(r[addr_col], 16) for r in data]
        lo = addrs.index(int(a.region[0], 16)) if a.region[0].startswith("0x") else int(a.region[0])
        hi = int(a.region[1])
        s = sum(n(r, samples) for r in data[lo:hi])
        print(f"[{lo},{hi}): {hi - lo} instructions, {s} of {total} samples "
              f"({100 * s / total:.1f}%):", reasons(data[lo:hi]))
        return
    fam, fam_rows = collections.Counter(), collections.defaultdict(list)
    for r in data:
        op = re.sub(r"^@!?U?P\w+\s+", "", r[src].strip()).split(" ")[0].split(".")[0]
        fam[op] += n(r, samples)
        fam_rows[op].append(r)
    print(f"{len(data)} instructions, {total} samples")
    for op, s in fam.most_common(25):
        print(f"{op:12s} {s:6d} {100 * s / max(total, 1):5.1f}%  {reasons(fam_rows[op], 3)}")


if __name__ == "__main__":
    main()
