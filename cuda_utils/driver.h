// Driver API entry points reached through the runtime (cudaGetDriverEntryPointByVersion), so no
// Encore binary links libcuda and every binary starts on a machine without a driver.
//
// Example:
//   ENCORE_ASSIGN_OR_RETURN(encore::DriverApi api, encore::DriverApi::Load());
//   CUtensorMap map;
//   ENCORE_RETURN_IF_CUDA_ERROR(api.tensor_map_encode_tiled(&map, ...), "encode A map");
#ifndef ENCORE_CUDA_UTILS_DRIVER_H_
#define ENCORE_CUDA_UTILS_DRIVER_H_

#include <cuda.h>

#include "absl/status/statusor.h"

namespace encore {

// A small table of driver functions. Plain value type: copy it freely; it holds no state beyond
// the function pointers.
struct DriverApi {
  using TensorMapEncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                              const cuuint64_t*, const cuuint64_t*,
                                              const cuuint32_t*, const cuuint32_t*,
                                              CUtensorMapInterleave, CUtensorMapSwizzle,
                                              CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

  using GraphLaunchFn = CUresult (*)(CUgraphExec, CUstream);
  using StreamIsCapturingFn = CUresult (*)(CUstream, CUstreamCaptureStatus*);
  using CtxGetCurrentFn = CUresult (*)(CUcontext*);

  TensorMapEncodeTiledFn tensor_map_encode_tiled = nullptr;
  // The graph cache's per-call pair, called without the runtime's wrapper (cudaGraphLaunch and
  // cudaStreamIsCapturing add their own bookkeeping to every call). A cudaGraphExec_t is a
  // CUgraphExec and a cudaStream_t a CUstream. NOTES: a driver call needs a current context on
  // the calling thread, which only the runtime sets up: a caller checks ctx_get_current first
  // and takes the runtime's call on a thread without one (a driver call failing there would be
  // reported as an API error by compute-sanitizer), and retries a failed driver call through the
  // runtime (graph_cache/backend.cc).
  GraphLaunchFn graph_launch = nullptr;
  StreamIsCapturingFn stream_is_capturing = nullptr;
  CtxGetCurrentFn ctx_get_current = nullptr;

  // Resolves every entry point (CUDA 12.0 ABI versions). FailedPrecondition naming the symbol if
  // the driver lacks one, or "no CUDA device" when there is no driver at all.
  [[nodiscard]] static absl::StatusOr<DriverApi> Load();
};

// One driver function by name (CUDA 12.0 ABI version), for entry points outside the table:
// FailedPrecondition naming the symbol when the driver lacks it.
[[nodiscard]] absl::StatusOr<void*> DriverSymbol(const char* symbol);

}  // namespace encore

#endif  // ENCORE_CUDA_UTILS_DRIVER_H_
