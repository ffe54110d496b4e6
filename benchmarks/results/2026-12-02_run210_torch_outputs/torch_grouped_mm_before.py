#!/usr/bin/env python3
"""torch._grouped_mm (bf16) on the GPU MODE NVFP4 grouped-GEMM benchmark shapes, timed like the
Encore benchmark: 15 distinct input sets back to back, L2 flushed (2x L2 bytes written) before
each batch, CUDA events, per-call mean, median over repetitions.

Run: python3 benchmarks/torch_grouped_mm.py --out torch.json
     python3 benchmarks/torch_grouped_mm.py --merge --out torch_merged.json  # the 15 calls as one
       torch._grouped_mm of 15x the groups (inputs concatenated up front, outside the timing)
"""
import argparse
import json
import statistics

import torch

SHAPES = [
    ([80, 176, 128, 72, 64, 248, 96, 160], 4096, 7168),
    ([40, 76, 168, 72, 164, 148, 196, 160], 7168, 2048),
    ([192, 320], 3072, 4096),
    ([128, 384], 4096, 1536),
]
SETS = 15


def time_shape(ms, n, k, reps, flush, merge=False):
    g = len(ms)
    offs = torch.tensor(ms, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    sets = []
    for _ in range(SETS):
        a = torch.randn(sum(ms), k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
        sets.append((a, b))
    if merge:  # one call of all 15 sets' groups
        sets = [(torch.cat([a for a, _ in sets]), torch.cat([b for _, b in sets]))]
        offs = torch.tensor(ms * SETS, device="cuda", dtype=torch.int32).cumsum(
            0, dtype=torch.int32)
        g = len(ms) * SETS

    def call(a, b):
        return torch._grouped_mm(a, b.transpose(-2, -1), offs=offs)

    mode = "torch._grouped_mm"
    try:
        call(*sets[0])
    except Exception as e:  # noqa: BLE001 - report and fall back
        print(f"_grouped_mm failed ({e}); falling back to per-group torch.mm")
        mode = "per-group torch.mm"
        bounds = [0] + offs.tolist()

        def call(a, b):  # noqa: F811
            return [a[bounds[i]:bounds[i + 1]] @ b[i].t() for i in range(g)]

    for a, b in sets:
        call(a, b)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        flush.zero_()
        start.record()
        for a, b in sets:
            call(a, b)
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / SETS)
    return statistics.median(times), mode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="torch_grouped_mm.json")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--merge", action="store_true")
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(2 * props.L2_cache_size, dtype=torch.uint8, device="cuda")
    results = []
    for ms, n, k in SHAPES:
        us, mode = time_shape(ms, n, k, args.reps, flush, args.merge)
        flops = 2.0 * sum(ms) * n * k
        print(f"m={ms} n={n} k={k}: {us:.1f} us ({flops / us / 1e6:.0f} TFLOP/s) via {mode}")
        if args.merge:
            mode += " merged x15"
        results.append({"m": ms, "n": n, "k": k, "torch_bf16_us": us, "mode": mode})
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump({"device": props.name, "torch": torch.__version__, "shapes": results}, f,
                  indent=1)


if __name__ == "__main__":
    main()
