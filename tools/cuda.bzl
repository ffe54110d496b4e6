"""cuda_library: compiles .cu files with nvcc for Hopper (sm_90a) and wraps them as a cc_library.

Example:
    load("//tools:cuda.bzl", "cuda_library")
    cuda_library(
        name = "kernels",
        srcs = ["kernels.cu"],
        hdrs = ["kernels.h"],            # public headers (also visible to the .cu)
        cu_hdrs = ["//gemm:problem.h"],  # other headers the .cu includes, so edits rebuild
        deps = ["//gemm:problem"],
    )

NOTES: `-gencode=arch=compute_90a,code=sm_90a` is spelled out because nvcc 13.0's `-arch=sm_90a`
shorthand also runs a plain sm_90 pass that rejects wgmma and setmaxnreg.
"""

NVCC = "/usr/local/cuda/bin/nvcc"

NVCC_FLAGS = [
    "-std=c++17",
    "-O3",
    "-lineinfo",
    "-gencode=arch=compute_90a,code=sm_90a",
    "-Xcompiler=-fPIC",
    "-Xcompiler=-Wall",
    "--expt-relaxed-constexpr",
    "-Xptxas=-v",
    "-Xptxas=-warn-spills",
    "-Xptxas=-warn-lmem-usage",
    "-I.",
]

def cuda_library(name, srcs, hdrs = [], cu_hdrs = [], deps = [], nvcc_flags = [], visibility = None, tags = [], testonly = False, **kwargs):
    """One genrule per .cu (nvcc -c), then a cc_library over the objects."""
    objs = []
    for src in srcs:
        stem = src.replace("/", "_").rsplit(".", 1)[0]
        obj = "_%s_%s.pic.o" % (name, stem)
        log = "_%s_%s.ptxas.txt" % (name, stem)
        native.genrule(
            name = "_%s_%s_nvcc" % (name, stem),
            srcs = [src] + hdrs + cu_hdrs,
            outs = [obj, log],
            cmd = "%s -c %s %s -o $(location %s) $(location %s) 2> $(location %s) || { cat $(location %s); exit 1; }" % (
                NVCC,
                " ".join(NVCC_FLAGS + nvcc_flags),
                "",
                obj,
                src,
                log,
                log,
            ),
            message = "nvcc %s" % src,
            tags = tags,
            testonly = testonly,
        )
        objs.append(obj)
    native.cc_library(
        name = name,
        srcs = objs,
        hdrs = hdrs,
        deps = deps + ["@cuda//:cudart_static"],
        alwayslink = True,
        visibility = visibility,
        tags = tags,
        testonly = testonly,
        **kwargs
    )
    native.filegroup(
        name = name + "_ptxas_report",
        srcs = [":" + "_%s_%s.ptxas.txt" % (name, s.replace("/", "_").rsplit(".", 1)[0]) for s in srcs],
        visibility = visibility,
        tags = tags,
        testonly = testonly,
    )
