// A device-ready launch that the graph layer can turn into kernel nodes and later patch: the GEMM
// kernel's function, grid, block, dynamic shared memory and single by-value parameter block (no
// pointers to host state; tensor maps are inside the block), optionally preceded by a small
// kernel on the same stream (the token pre-pass, `pre`): one or two kernels, always in that order.
//
// Example:
//   encore::gemm::LaunchPlan plan;
//   ENCORE_RETURN_IF_ERROR(gemm.Prepare(args, &plan));
//   cudaKernelNodeParams p = plan.NodeParams(&arg_slot);  // for cudaGraphAddKernelNode / patching
//   if (plan.has_pre()) q = plan.pre.NodeParams(&pre_slot);  // the node before it
//   ENCORE_RETURN_IF_ERROR(gemm.Launch(plan, stream));
#ifndef ENCORE_GEMM_LAUNCH_H_
#define ENCORE_GEMM_LAUNCH_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>

namespace encore::gemm {

// kStreamK: one CTA per SM, each running a contiguous, cost-balanced range of the tile table's
// k-blocks (tiles cut between CTAs meet as fp32 partials in the stream's workspace; see
// Nvfp4GroupedGemm).
enum class KernelKind : int { kAuto = 0, kSimple = 1, kPersistent = 2, kStreamK = 3 };

inline const char* KernelKindName(KernelKind k) {
  switch (k) {
    case KernelKind::kSimple:
      return "simple";
    case KernelKind::kPersistent:
      return "persistent";
    case KernelKind::kStreamK:
      return "stream_k";
    default:
      return "auto";
  }
}

// The largest by-value parameter block any Encore kernel takes (CUDA 12.1+ allows 32764 bytes).
inline constexpr size_t kMaxParamBytes = 32 * 1024 - 64;
// The largest parameter block of a plan's pre-kernel (the token pre-pass; a bound plan's carries
// 64 weight maps besides).
inline constexpr size_t kMaxPrepassParamBytes = 12 * 1024;

namespace internal {
// Kernel node parameters of one by-value parameter block: `*arg_slot` points at `params` and must
// outlive the call that consumes the result (cudaGraphAddKernelNode / ...SetParams copy the block).
inline cudaKernelNodeParams KernelNode(const void* function, dim3 grid, dim3 block,
                                       unsigned smem, const unsigned char* params,
                                       void** arg_slot) {
  *arg_slot = const_cast<unsigned char*>(params);
  cudaKernelNodeParams p{};
  p.func = const_cast<void*>(function);
  p.gridDim = grid;
  p.blockDim = block;
  p.sharedMemBytes = smem;
  p.kernelParams = arg_slot;
  p.extra = nullptr;
  return p;
}

// cudaLaunchKernelEx of one by-value parameter block, with programmatic stream serialization
// (PDL) when `pdl`.
inline cudaError_t LaunchKernel(const void* function, dim3 grid, dim3 block, unsigned smem,
                                const unsigned char* params, cudaStream_t stream, bool pdl) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attr[1];
  if (pdl) {
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attr;
    config.numAttrs = 1;
  }
  void* kernel_args[1] = {const_cast<unsigned char*>(params)};
  return cudaLaunchKernelExC(&config, function, kernel_args);
}

inline bool SameDims(dim3 a, dim3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
}  // namespace internal

// An optional kernel launched before a plan's main kernel, with a parameter block of at most
// kBytes.
template <size_t kBytes>
struct BasicPreLaunch {
  const void* function = nullptr;  // nullptr: none
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  // The pre-pass: unused by the kernel, padding that bounds its blocks per SM (RunnerOptions::
  // pad_prepass_for_pdl, prepass_pad_blocks_per_sm, pad_large_prepasses).
  unsigned dynamic_smem_bytes = 0;
  size_t params_bytes = 0;
  alignas(64) unsigned char params[kBytes];

  cudaKernelNodeParams NodeParams(void** arg_slot) const {
    return internal::KernelNode(function, grid, block, dynamic_smem_bytes, params, arg_slot);
  }
  bool SameLaunch(const BasicPreLaunch& o) const {
    if (function != o.function) return false;
    return function == nullptr ||
           (internal::SameDims(grid, o.grid) && internal::SameDims(block, o.block) &&
            dynamic_smem_bytes == o.dynamic_smem_bytes && params_bytes == o.params_bytes &&
            std::memcmp(params, o.params, params_bytes) == 0);
  }
};
// The token pre-pass.
using PreLaunch = BasicPreLaunch<kMaxPrepassParamBytes>;

// NOTES: `params` is stored inline and 64-byte aligned (tensor maps need 64-byte alignment), so a
// LaunchPlan can be copied and kept in a graph cache entry without owning heap memory.
struct LaunchPlan {
  const void* function = nullptr;  // the __global__ entry point
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  unsigned dynamic_smem_bytes = 0;
  // The kernel executes griddepcontrol.wait before writing outputs and before reading the tokens,
  // so it may be launched with cudaLaunchAttributeProgrammaticStreamSerialization / a
  // programmatic edge. NOTES: a fused pre-pass (fused_pre) of the manual build _fearly
  // (ENCORE_SM90_FUSED_WEIGHTS_WAIT = 0) reads the weights, weight scales and dynamic M before its
  // wait, so with `pdl` the kernel before it must not write them (graph_cache checks this for the
  // graphs it builds, for every plan with a pre-pass: internal/early_reads.h); every other plan is
  // reads_after_wait.
  bool supports_pdl = false;
  // Nothing of this plan reads or writes memory before the kernel before it on the stream has
  // completed, even when launched with PDL: tokens converted in kernel or by the fused pre-pass
  // (every role waits first; not in _fearly), or a pre-kernel that waits before it triggers the
  // main kernel (whose weight producer reads early). A PDL launch of such a plan is safe whatever
  // kernel precedes it (it only starts earlier).
  bool reads_after_wait = false;
  // Nvfp4GroupedGemm::Run launches it with PDL: reads_after_wait, and measured faster so (a
  // single kernel, run 55: tiny 5.4 -> 4.3 us per call; a pre-kernel where heuristics.h
  // PrepassPrefersPdl says so, GPU MODE shapes 0-1 -2..-3%; elsewhere the pre-pass blocks may
  // park, crowded, on the few SMs the previous GEMM leaves idle: shapes 2-3 +4..8% with the edge,
  // unless pre.dynamic_smem_bytes pads them to a few a SM: then -5..-8%, run 117; the crowding
  // also slowed shape 1's edge until its blocks were padded to an even spread: -4.8%, run 119).
  bool prefers_pdl = false;
  KernelKind kind = KernelKind::kAuto;
  // The token pre-pass runs inside the main kernel (RunnerOptions::fuse_token_prepass): no
  // pre-kernel (its grid barrier needs no co-residency).
  bool fused_pre = false;
  int num_tiles = 0;
  size_t params_bytes = 0;
  alignas(64) unsigned char params[kMaxParamBytes];
  // NOTES: the main kernel of a plan with a pre-kernel reads what the pre-kernel wrote: it is
  // always launched right after it on the same stream, with PDL (its griddepcontrol.wait waits for
  // the pre-kernel's completion), and captured as the next node of a chain.
  PreLaunch pre;
  // A bound plan (Nvfp4GroupedGemm::PrepareBound): its pre-kernel (which a bound plan always has)
  // and main kernel take the call's pointers from the stream's binding ring, so the same launch
  // (or graph) serves any buffers once WriteBindings queued them.
  bool binds_from_ring = false;
  // PlanOptions as honoured: the half of the stream's token workspace the pre-pass writes (-1: the
  // whole from its start), and whether the pre-pass reads before its wait (then reads_after_wait
  // is false: the kernel before it must write none of its inputs).
  int token_workspace_half = -1;
  bool prepass_reads_early = false;

  bool has_pre() const { return pre.function != nullptr; }
  bool bound() const { return binds_from_ring; }
  int num_kernels() const { return has_pre() ? 2 : 1; }

  // Kernel node parameters for this plan's main kernel. `arg_slot` must outlive the call that
  // consumes the result (cudaGraphAddKernelNode / cudaGraphExecKernelNodeSetParams copy the block).
  cudaKernelNodeParams NodeParams(void** arg_slot) const {
    return internal::KernelNode(function, grid, block, dynamic_smem_bytes, params, arg_slot);
  }

  // True when two plans launch the same kernels with the same shapes and parameter bytes.
  bool SameLaunch(const LaunchPlan& o) const {
    return binds_from_ring == o.binds_from_ring && pre.SameLaunch(o.pre) && function == o.function &&
           internal::SameDims(grid, o.grid) && internal::SameDims(block, o.block) &&
           dynamic_smem_bytes == o.dynamic_smem_bytes && params_bytes == o.params_bytes &&
           std::memcmp(params, o.params, params_bytes) == 0;
  }
};

// cudaLaunchKernelEx of `plan` on `stream`: the pre-kernel if any (with programmatic stream
// serialization (PDL) when `pdl` is asked), then the main kernel (PDL when asked or after a
// pre-kernel, if the plan supports it). Enqueues plan.num_kernels() kernels and nothing else, so
// a stream capture of it yields that many kernel nodes in a chain.
inline cudaError_t LaunchOnStream(const LaunchPlan& plan, cudaStream_t stream, bool pdl) {
  if (plan.has_pre()) {
    const PreLaunch& k = plan.pre;
    if (const cudaError_t err = internal::LaunchKernel(k.function, k.grid, k.block,
                                                       k.dynamic_smem_bytes, k.params, stream, pdl);
        err != cudaSuccess) {
      return err;
    }
    pdl = true;
  }
  return internal::LaunchKernel(plan.function, plan.grid, plan.block, plan.dynamic_smem_bytes,
                                plan.params, stream, pdl && plan.supports_pdl);
}

}  // namespace encore::gemm

#endif  // ENCORE_GEMM_LAUNCH_H_
