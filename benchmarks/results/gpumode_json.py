#!/usr/bin/env python3
"""Writes benchmarks/results/gpumode_shapes.json from one device run's kernel benchmark output
(sm90_nvfp4_grouped_gemm --benchmark_out=bench.json, kind auto) and torch_grouped_mm.py's
--out torch.json (same run).

  python3 benchmarks/results/gpumode_json.py RUN_DIR --commit C --date D --command "..." \
      [--bench bench.json] [--out benchmarks/results/gpumode_shapes.json]
"""
import argparse
import json
import math
import os

SHAPES = {  # benchmark name -> (m, n, k), as in benchmarks/sm90_nvfp4_grouped_gemm.cc
    "s0": ([80, 176, 128, 72, 64, 248, 96, 160], 4096, 7168),
    "s1": ([40, 76, 168, 72, 164, 148, 196, 160], 7168, 2048),
    "s2": ([192, 320], 3072, 4096),
    "s3": ([128, 384], 4096, 1536),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--date", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--device", default="NVIDIA H200 (132 SMs, driver 580.159.04), nvidia-h200 kind")
    ap.add_argument("--bench", default="bench.json", help="the benchmark JSON in RUN_DIR")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "gpumode_shapes.json"))
    a = ap.parse_args()
    bench = json.load(open(os.path.join(a.run_dir, a.bench)))
    torch = json.load(open(os.path.join(a.run_dir, "torch.json")))
    medians, fused_pdl, early = {}, {}, {}
    for b in bench["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        parts = b["name"].split("/")
        if parts[0] != "gpumode" or parts[2] != "auto":
            continue
        if parts[3].startswith("iterations"):  # "gpumode/<shape>/auto/iterations:..." only
            medians[parts[1]] = (b["real_time"], b.get("label", ""))
        elif parts[3:5] == ["fused", "pdl"]:  # the opt-in mode, reported beside it when run
            fused_pdl[parts[1]] = b["real_time"]
        elif parts[3] == "early":  # the calls as a multi-call graph prepares them, when run
            early[parts[1]] = b["real_time"]
    shapes = []
    for name, (m, n, k) in SHAPES.items():
        t = next(s for s in torch["shapes"] if s["m"] == m and s["n"] == n and s["k"] == k)
        us, label = medians[name]
        # The benchmark label: the plan's kind, "+prepass" when its tokens came from the pre-pass,
        # then " pdl" when the calls were launched with PDL (as Run launches them: prefers_pdl).
        words = label.split(" ")
        kernel = words[0]
        # ("+fused_prepass": the pre-pass ran inside the GEMM kernel, RunnerOptions::
        # fuse_token_prepass.)
        fused = "+fused_prepass" in kernel
        shapes.append({"m": m, "n": n, "k": k, "encore_us": round(us, 2),
                       "torch_bf16_us": round(t["torch_bf16_us"], 2),
                       "kernel": kernel.split("+")[0],
                       "token_prepass": "+prepass" in kernel or fused, "fused_prepass": fused,
                       "pdl_launch": "pdl" in words[1:],
                       "speedup_vs_torch": round(t["torch_bf16_us"] / us, 3)})
        if name in fused_pdl:
            shapes[-1]["encore_fused_pre_pass_pdl_us"] = round(fused_pdl[name], 2)
        if name in early:
            shapes[-1]["encore_multi_call_graph_us"] = round(early[name], 2)
            shapes[-1]["multi_call_graph_speedup_vs_torch"] = round(
                t["torch_bf16_us"] / early[name], 3)
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    out = {
        "date": a.date, "commit": a.commit, "device": a.device, "command": a.command,
        "timing": "15 distinct input sets back to back, L2 flushed (memset of 2x L2 bytes) before "
                  "each batch, CUDA events, per-call mean; median of 30 repetitions (encore, "
                  "kernel kind auto) / torch_grouped_mm.py's repetitions (torch)",
        "shapes": shapes,
        "geomean_encore_us": round(geo([s["encore_us"] for s in shapes]), 2),
        "geomean_torch_bf16_us": round(geo([s["torch_bf16_us"] for s in shapes]), 2),
    }
    if all("encore_fused_pre_pass_pdl_us" in s for s in shapes):
        out["geomean_encore_fused_pre_pass_pdl_us"] = round(
            geo([s["encore_fused_pre_pass_pdl_us"] for s in shapes]), 2)
        out["fused_pre_pass_pdl"] = (
            "not the default: RunnerOptions::fuse_token_prepass = FusePrepass::kAlways and every "
            "call launched with Launch(plan, stream, /*pdl=*/true) (kernel benchmark gpumode/*/"
            "auto/fused/pdl)")
    if all("encore_multi_call_graph_us" in s for s in shapes):
        out["geomean_encore_multi_call_graph_us"] = round(
            geo([s["encore_multi_call_graph_us"] for s in shapes]), 2)
        out["multi_call_graph"] = (
            "the same 15 calls prepared as graph_cache prepares the calls of a multi-call graph "
            "(GemmBatch, SequenceRecorder): alternate halves of the token workspace, each "
            "pre-pass converting before its wait (gemm::PlanOptions, ExecutorOptions::"
            "early_prepass), launched as Run launches them (kernel benchmark gpumode/*/auto/early)")
    json.dump(out, open(a.out, "w"), indent=1)
    print(json.dumps({k: out[k] for k in ("geomean_encore_us", "geomean_torch_bf16_us")}))


if __name__ == "__main__":
    main()
