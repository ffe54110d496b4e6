// A device-ready kernel launch that the graph layer can turn into a kernel node and later patch:
// the kernel function, its grid, block and dynamic shared memory, and its single by-value
// parameter block (no pointers to host state; tensor maps are inside the block).
//
// Example:
//   encore::gemm::LaunchPlan plan;
//   ENCORE_RETURN_IF_ERROR(gemm.Prepare(args, &plan));
//   cudaKernelNodeParams p = plan.NodeParams(&arg_slot);  // for cudaGraphAddKernelNode / patching
//   ENCORE_RETURN_IF_ERROR(gemm.Launch(plan, stream));
#ifndef ENCORE_GEMM_LAUNCH_H_
#define ENCORE_GEMM_LAUNCH_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>

namespace encore::gemm {

// kStreamK: persistent, with the last partial wave's tiles split along K over all CTAs (their
// fp32 partials meet in the runner's workspace; see Nvfp4GroupedGemm).
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

// NOTES: `params` is stored inline and 64-byte aligned (tensor maps need 64-byte alignment), so a
// LaunchPlan can be copied and kept in a graph cache entry without owning heap memory.
struct LaunchPlan {
  const void* function = nullptr;  // the __global__ entry point
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  unsigned dynamic_smem_bytes = 0;
  // The kernel executes griddepcontrol.wait before reading inputs or writing outputs, so it may
  // be launched with cudaLaunchAttributeProgrammaticStreamSerialization / a programmatic edge.
  bool supports_pdl = false;
  KernelKind kind = KernelKind::kAuto;
  int num_tiles = 0;
  size_t params_bytes = 0;
  alignas(64) unsigned char params[kMaxParamBytes];

  // Kernel node parameters for this plan. `arg_slot` must outlive the call that consumes the
  // result (cudaGraphAddKernelNode / cudaGraphExecKernelNodeSetParams copy the block).
  cudaKernelNodeParams NodeParams(void** arg_slot) const {
    *arg_slot = const_cast<unsigned char*>(params);
    cudaKernelNodeParams p{};
    p.func = const_cast<void*>(function);
    p.gridDim = grid;
    p.blockDim = block;
    p.sharedMemBytes = dynamic_smem_bytes;
    p.kernelParams = arg_slot;
    p.extra = nullptr;
    return p;
  }

  // True when two plans launch the same kernel with the same shape and parameter bytes.
  bool SameLaunch(const LaunchPlan& o) const {
    return function == o.function && grid.x == o.grid.x && grid.y == o.grid.y &&
           grid.z == o.grid.z && block.x == o.block.x &&
           dynamic_smem_bytes == o.dynamic_smem_bytes && params_bytes == o.params_bytes &&
           std::memcmp(params, o.params, params_bytes) == 0;
  }
};

// cudaLaunchKernelEx of `plan` on `stream`, with programmatic stream serialization (PDL) when
// `pdl` is asked and the plan supports it. Enqueues exactly one kernel and nothing else, so a
// stream capture of it yields one kernel node.
inline cudaError_t LaunchOnStream(const LaunchPlan& plan, cudaStream_t stream, bool pdl) {
  cudaLaunchConfig_t config{};
  config.gridDim = plan.grid;
  config.blockDim = plan.block;
  config.dynamicSmemBytes = plan.dynamic_smem_bytes;
  config.stream = stream;
  cudaLaunchAttribute attr[1];
  if (pdl && plan.supports_pdl) {
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attr;
    config.numAttrs = 1;
  }
  void* kernel_args[1] = {const_cast<unsigned char*>(plan.params)};
  return cudaLaunchKernelExC(&config, plan.function, kernel_args);
}

}  // namespace encore::gemm

#endif  // ENCORE_GEMM_LAUNCH_H_
