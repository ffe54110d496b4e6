#!/usr/bin/env python3
"""torch._grouped_mm (bf16) on the GPU MODE NVFP4 grouped-GEMM benchmark shapes, timed like the
Encore benchmark: 15 distinct input sets back to back (15 distinct outputs), L2 flushed (2x L2
bytes written) before each batch, CUDA events, per-call mean, median over repetitions.

Run: python3 benchmarks/torch_grouped_mm.py --out torch.json
     python3 benchmarks/torch_grouped_mm.py --merge --out torch_merged.json  # the 15 calls as one
       torch._grouped_mm of 15x the groups (inputs concatenated up front, outside the timing)
     python3 benchmarks/torch_grouped_mm.py --baseline dense --out dense.json

Baselines (--baseline), each timed the same way, to put a shape's time in context:
  grouped     torch._grouped_mm in bf16 (#3's reference; the default)
  per_group   one cuBLAS bf16 torch.mm per group, launched back to back
  dense       ONE cuBLAS bf16 torch.mm per call of [sum(M), K] x [K, N]: the call's FLOPs with a
              single weight matrix (1/G of the weight bytes, no grouping, one launch): what the
              bf16 tensor-core library path does on the easiest problem of the same work
  dense_fp8   the same with torch._scaled_mm in e4m3 (per-tensor scales, fp16 out). FP8 is not
              exact for NVFP4 (e2m1 x e4m3 products need 4 mantissa bits): information only
  peak        (no shapes) a 8192^3 bf16 torch.mm, TFLOP/s
--graph captures each batch of 15 calls as one CUDA graph and replays it (the launches' GPU time
without the host's launch cost between calls).
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


def make_call(baseline, ms, n, k):
    """(inputs of one set, the call) for a dense baseline."""
    rows = sum(ms)
    if baseline == "dense":
        def inputs():
            return (torch.randn(rows, k, device="cuda", dtype=torch.bfloat16),
                    torch.randn(n, k, device="cuda", dtype=torch.bfloat16))

        def call(a, b):
            return a @ b.t()
        return inputs, call, "torch.mm bf16 dense"
    if baseline == "dense_fp8":
        one = torch.ones((), device="cuda", dtype=torch.float32)

        def inputs():
            return (torch.randn(rows, k, device="cuda").to(torch.float8_e4m3fn),
                    torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn))

        def call(a, b):
            return torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.float16)
        return inputs, call, "torch._scaled_mm e4m3 dense"
    raise ValueError(baseline)


def time_batches(sets, call, reps, flush, graph=False):
    # Each call's output is kept until the batch has run: 15 distinct output buffers, as Encore
    # writes 15 distinct C (a dropped result would hand its block to the next call, one output
    # address for all 15, L2-warm). The warm-up fills the caching allocator with them.
    outs = [call(*s) for s in sets]
    del outs
    torch.cuda.synchronize()
    g = None
    if graph:  # the batch's launches as one CUDA graph: no host launch cost between the calls
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up on a side stream, as torch's graph docs ask
            outs = [call(*s) for s in sets]
            del outs
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            graph_outs = [call(*s) for s in sets]  # noqa: F841 - kept alive with the graph
        torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        flush.zero_()
        start.record()
        if g is not None:
            g.replay()
        else:
            outs = [call(*s) for s in sets]
        stop.record()
        torch.cuda.synchronize()
        if g is None:
            del outs
        times.append(start.elapsed_time(stop) * 1e3 / SETS)  # merged: 1 set of 15 calls
    return statistics.median(times)


def time_shape(ms, n, k, reps, flush, merge=False, baseline="grouped", graph=False):
    g = len(ms)
    if baseline in ("dense", "dense_fp8"):
        inputs, call, mode = make_call(baseline, ms, n, k)
        return time_batches([inputs() for _ in range(SETS)], call, reps, flush, graph), mode
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

    bounds = [0] + offs.tolist()

    def per_group(a, b):
        return [a[bounds[i]:bounds[i + 1]] @ b[i].t() for i in range(g)]

    mode = "torch._grouped_mm"
    if baseline == "per_group":
        call, mode = per_group, "per-group torch.mm"
    else:
        try:
            call(*sets[0])
        except Exception as e:  # noqa: BLE001 - report and fall back
            print(f"_grouped_mm failed ({e}); falling back to per-group torch.mm")
            call, mode = per_group, "per-group torch.mm"
    return time_batches(sets, call, reps, flush, graph), mode


def time_peak(reps):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(10):
            a @ b
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / 10)
    us = statistics.median(times)
    return us, 2.0 * 8192 ** 3 / us / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="torch_grouped_mm.json")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("--baseline", default="grouped",
                    choices=["grouped", "per_group", "dense", "dense_fp8", "peak"])
    ap.add_argument("--graph", action="store_true",
                    help="time the 15 calls as one captured CUDA graph (GPU time, no host gaps)")
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    if args.baseline == "peak":
        us, tflops = time_peak(args.reps)
        print(f"8192^3 bf16 torch.mm: {us:.1f} us, {tflops:.0f} TFLOP/s")
        with open(args.out, "w") as f:
            json.dump({"device": props.name, "torch": torch.__version__, "peak_bf16_us": us,
                       "peak_bf16_tflops": tflops}, f, indent=1)
        return
    if args.merge and args.baseline != "grouped":
        ap.error("--merge applies to the grouped baseline only")
    flush = torch.empty(2 * props.L2_cache_size, dtype=torch.uint8, device="cuda")
    results = []
    for ms, n, k in SHAPES:
        us, mode = time_shape(ms, n, k, args.reps, flush, args.merge, args.baseline, args.graph)
        if args.graph:
            mode += " (CUDA graph of the 15 calls)"
        flops = 2.0 * sum(ms) * n * k
        print(f"m={ms} n={n} k={k}: {us:.1f} us ({flops / us / 1e6:.0f} TFLOP/s) via {mode}")
        if args.merge:
            mode += " merged x15"
        r = {"m": ms, "n": n, "k": k, "us": us, "mode": mode, "baseline": args.baseline}
        if args.baseline == "grouped":
            r["torch_bf16_us"] = us  # the key benchmarks/results/gpumode_json.py reads
        results.append(r)
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump({"device": props.name, "torch": torch.__version__, "shapes": results}, f,
                  indent=1)


if __name__ == "__main__":
    main()
