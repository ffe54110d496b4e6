#!/usr/bin/env python3
"""Per-field medians of several //benchmarks:replay --encore_json outputs of one binary (one
lease): the host numbers move between two machine states from one process to the next (run 35),
so one process is not a measurement. Because the state can also change between modes of one
process, each mode also gets host_over_adjacent_floor_us: the median over processes of its host
us per call minus the 1-node graph floor measured right before its batches (graph_floor_us), the
pairing that cancels the host's state; with graph_floor_harness_us (session 28) also
host_over_harness_floor_us, the same against the floor measured like the modes' own calls (15
distinct 1-node empty graphs through the harness right before the batches).

  python3 benchmarks/results/replay_median.py OUT.json [--command "..."] [--fast-floor-us F] IN.json ...

--fast-floor-us F: the host's fast state only (session 25). Each workload's numbers of a mode are
taken from the processes whose 1-node graph floor measured right before that workload's batches
(graph_floor_us) is <= F, the floors from the processes whose own 1-node floor is; a mode's
host/device/e2e us per call is then the geomean over the GPU MODE workloads of those medians (the
tiny problem's fields its own median), and n_fast counts the processes kept per workload. Runs
169-170 put the fast state at 1.26-1.5 us and the slow one at 1.9-2.4 us. Its
host_over_*_floor_us are paired too: per GPU MODE workload the median, over its fast processes, of
host minus floor; then the mean of those over the workloads (a difference can be negative, so no
geomean).

Every host number and floor is taken over the four GPU MODE workloads (session 31: a process's own
host_us_per_call also held the tiny problem until then, so they are recomputed here from its
workloads); the tiny problem keeps its tiny_* fields. Runs are matched by mode and workload names.
"""
import json
import math
import os
import statistics
import sys


def median_of(values):
    return round(statistics.median(values), 3)


def geomean(values):
    return round(math.exp(sum(math.log(v) for v in values) / len(values)), 3)


def gm_workloads(mode):
    return [w for w in mode.get("workloads", []) if not w["workload"].startswith("tiny")]


def per_process(mode, key, field):
    """A process's value of a mode over its GPU MODE workloads (geomean of `key`), or its own
    `field` where it has no workloads."""
    gm = gm_workloads(mode)
    if gm and all(key in w for w in gm):
        return math.exp(sum(math.log(w[key]) for w in gm) / len(gm))
    return mode[field]


def check_aligned(runs):
    first = runs[0]
    for r in runs[1:]:
        if [m["mode"] for m in r["modes"]] != [m["mode"] for m in first["modes"]]:
            sys.exit("replay_median.py: the runs have different modes")
        for m, f in zip(r["modes"], first["modes"]):
            if [w["workload"] for w in m.get("workloads", [])] != [
                    w["workload"] for w in f.get("workloads", [])]:
                sys.exit("replay_median.py: mode %s has different workloads" % m["mode"])


def fast_state(out, runs, command, limit):
    first = runs[0]
    res = {k: first[k] for k in ("date", "commit", "device")}
    res["command"] = command or first["command"]
    res["aggregate"] = (
        "fast host state only: per workload, the median over the processes (of %d) whose adjacent "
        "1-node graph floor was <= %.2f us; per mode, the geomean of those medians over the GPU "
        "MODE workloads (host_over_*_floor_us: the mean over those workloads of each one's median "
        "paired difference)" % (len(runs), limit))
    kept = [r for r in runs if r["floors_us"]["graph_launch_1"] <= limit]
    res["floors_us"] = {k: median_of([r["floors_us"][k] for r in kept]) for k in first["floors_us"]}
    res["floors_processes"] = len(kept)
    modes = []
    for i, m in enumerate(first["modes"]):
        row = {"mode": m["mode"], "workloads": []}
        for j, w in enumerate(m["workloads"]):
            entries = [r["modes"][i]["workloads"][j] for r in runs]
            fast = [e for e in entries if e["graph_floor_us"] <= limit]
            ww = {"workload": w["workload"], "n_fast": len(fast)}
            for k in ("host_us", "device_us", "e2e_us", "graph_floor_us", "graph_floor_harness_us"):
                if k in w:
                    ww[k] = median_of([e[k] for e in fast]) if fast else None
            # Paired: each fast process's host minus its own floors.
            if fast:
                ww["host_over_adjacent_floor_us"] = median_of(
                    [e["host_us"] - e["graph_floor_us"] for e in fast])
                if "graph_floor_harness_us" in w:
                    ww["host_over_harness_floor_us"] = median_of(
                        [e["host_us"] - e["graph_floor_harness_us"] for e in fast])
            row["workloads"].append(ww)
        gm = [w for w in row["workloads"] if not w["workload"].startswith("tiny") and w["n_fast"]]
        tiny = [w for w in row["workloads"] if w["workload"].startswith("tiny") and w["n_fast"]]
        row["host_us_per_call"] = geomean([w["host_us"] for w in gm])
        row["device_us_per_call"] = geomean([w["device_us"] for w in gm])
        row["e2e_geomean_us"] = geomean([w["e2e_us"] for w in gm])
        row["graph_floor_us"] = geomean([w["graph_floor_us"] for w in gm])
        row["host_over_adjacent_floor_us"] = round(
            statistics.mean([w["host_over_adjacent_floor_us"] for w in gm]), 3)
        if gm and "graph_floor_harness_us" in gm[0]:
            row["host_over_harness_floor_us"] = round(
                statistics.mean([w["host_over_harness_floor_us"] for w in gm]), 3)
        if tiny:
            row["tiny_host_us_per_call"] = tiny[0]["host_us"]
            row["tiny_e2e_us_per_call"] = tiny[0]["e2e_us"]
        modes.append(row)
    res["modes"] = modes
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")


def main():
    out, args = sys.argv[1], sys.argv[2:]
    command = ""
    limit = None
    while args and args[0].startswith("--"):
        if args[0] == "--command":
            command = args[1]
        elif args[0] == "--fast-floor-us":
            limit = float(args[1])
        else:
            sys.exit("unknown option " + args[0])
        args = args[2:]
    # (Session 26: an OUT forgotten before the inputs overwrote the first raw file: OUT must be new
    # or an earlier aggregate, never one process's output.)
    if not args or out in args or out.startswith("--"):
        sys.exit("usage: replay_median.py OUT.json [--command C] [--fast-floor-us F] IN.json ...")
    if os.path.exists(out):
        try:
            previous = json.load(open(out))
        except ValueError:
            previous = {}
        if "aggregate" not in previous:
            sys.exit("replay_median.py: %s exists and is not an aggregate: not overwriting it" % out)
    runs = [json.load(open(p)) for p in args]
    check_aligned(runs)
    if limit is not None:
        fast_state(out, runs, command, limit)
        return
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
        # Host and floors over the GPU MODE workloads, per process, then paired.
        host = [per_process(r["modes"][i], "host_us", "host_us_per_call") for r in runs]
        row["host_us_per_call"] = median_of(host)
        if "graph_floor_us" in m:
            floor = [per_process(r["modes"][i], "graph_floor_us", "graph_floor_us") for r in runs]
            row["graph_floor_us"] = median_of(floor)
            row["host_over_adjacent_floor_us"] = median_of([h - f for h, f in zip(host, floor)])
        if "graph_floor_harness_us" in m:
            hfloor = [per_process(r["modes"][i], "graph_floor_harness_us", "graph_floor_harness_us")
                      for r in runs]
            row["graph_floor_harness_us"] = median_of(hfloor)
            row["host_over_harness_floor_us"] = median_of([h - f for h, f in zip(host, hfloor)])
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
