#!/usr/bin/python3
"""Plots host µs per call by launch mode from benchmarks/results/replay.json.

Usage (Debian's python3-matplotlib):
  /usr/bin/python3 benchmarks/plot_replay.py benchmarks/results/replay.json \
      benchmarks/results/replay_host_us.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src: str, dst: str) -> None:
    with open(src) as f:
        data = json.load(f)
    modes = data["modes"]
    names = [m["mode"] for m in modes]
    host = [m["host_us_per_call"] for m in modes]
    tiny = [m.get("tiny_host_us_per_call", 0.0) for m in modes]
    floors = data["floors_us"]

    fig, ax = plt.subplots(figsize=(10, 5.2), dpi=120)
    x = range(len(names))
    w = 0.4
    b1 = ax.bar([i - w / 2 for i in x], host, w, label="GPU MODE shapes (geomean)")
    b2 = ax.bar([i + w / 2 for i in x], tiny, w, label="tiny problem (M=8 N=128 K=256)")
    for bars in (b1, b2):
        for bar in bars:
            ax.annotate(f"{bar.get_height():.2f}", (bar.get_x() + bar.get_width() / 2,
                                                   bar.get_height()),
                        ha="center", va="bottom", fontsize=7)
    styles = [("kernel_launch", "empty kernel launch", ":"),
              ("graph_launch_1", "1-node graph launch", "--"),
              ("graph_launch_1_harness", "1-node graphs, 15 execs in turn, as a batch", (0, (5, 2, 1, 2))),
              ("graph_launch_15", "15-node graph launch", "-."),
              ("graph_launch_1_gemm_node", "1-node graph of the GEMM kernel", (0, (1, 4)))]
    for key, label, ls in styles:
        if key not in floors:
            continue
        ax.axhline(floors[key], color="gray", linestyle=ls, linewidth=1,
                   label=f"floor: {label} ({floors[key]:.2f} µs)")
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=25)
    ax.set_ylabel("host µs per call")
    ax.set_yscale("log")
    ax.set_title(f"Encore: host cost per grouped-GEMM call by launch mode\n"
                 f"{data['device']} — commit {data['commit'][:10]} — {data['date']}",
                 fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(dst)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
