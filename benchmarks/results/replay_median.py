#!/usr/bin/env python3
"""Per-field medians of several //benchmarks:replay --encore_json outputs of one binary (one
lease): the host numbers move between two machine states from one process to the next (run 35),
so one process is not a measurement. Because the state can also change between modes of one
process, each mode also gets host_over_adjacent_floor_us: the median over processes of its host
us per call minus the 1-node graph floor measured right before its batches (graph_floor_us), the
pairing that cancels the host's state.

  python3 benchmarks/results/replay_median.py OUT.json --command "..." IN.json [IN.json ...]
"""
import json
import statistics
import sys


def median_of(values):
    return round(statistics.median(values), 3)


def main():
    out, args = sys.argv[1], sys.argv[2:]
    command = ""
    if args[0] == "--command":
        command, args = args[1], args[2:]
    runs = [json.load(open(p)) for p in args]
    first = runs[0]
    res = {k: first[k] for k in ("date", "commit", "device")}
    res["command"] = command or first["command"]
    res["aggregate"] = "per-field median of %d process runs" % len(runs)
    res["floors_us"] = {k: median_of([r["floors_us"][k] for r in runs]) for k in first["floors_us"]}
    modes = []
    for i, m in enumerate(first["modes"]):
        row = {"mode": m["mode"]}
        for k, v in m.items():
            if isinstance(v, (int, float)):
                row[k] = median_of([r["modes"][i][k] for r in runs])
        if "graph_floor_us" in m:
            row["host_over_adjacent_floor_us"] = median_of(
                [r["modes"][i]["host_us_per_call"] - r["modes"][i]["graph_floor_us"] for r in runs])
        row["workloads"] = []
        for j, w in enumerate(m.get("workloads", [])):
            ww = {"workload": w["workload"]}
            for k, v in w.items():
                if isinstance(v, (int, float)):
                    ww[k] = median_of([r["modes"][i]["workloads"][j][k] for r in runs])
            row["workloads"].append(ww)
        modes.append(row)
    res["modes"] = modes
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
