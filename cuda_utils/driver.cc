#include "cuda_utils/driver.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "cuda_utils/device.h"
#include "cuda_utils/status.h"

namespace encore {

absl::StatusOr<void*> DriverSymbol(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  ENCORE_RETURN_IF_CUDA_ERROR(
      cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found),
      absl::StrCat("cudaGetDriverEntryPointByVersion(", symbol, ")"));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("the CUDA driver does not provide ", symbol,
                                                      " (query result ", static_cast<int>(found),
                                                      ")"));
  }
  return fn;
}

absl::StatusOr<DriverApi> DriverApi::Load() {
  ENCORE_RETURN_IF_ERROR(CudaDeviceAvailable());
  DriverApi api;
  ENCORE_ASSIGN_OR_RETURN(void* encode, DriverSymbol("cuTensorMapEncodeTiled"));
  api.tensor_map_encode_tiled = reinterpret_cast<TensorMapEncodeTiledFn>(encode);
  ENCORE_ASSIGN_OR_RETURN(void* launch, DriverSymbol("cuGraphLaunch"));
  api.graph_launch = reinterpret_cast<GraphLaunchFn>(launch);
  ENCORE_ASSIGN_OR_RETURN(void* capturing, DriverSymbol("cuStreamIsCapturing"));
  api.stream_is_capturing = reinterpret_cast<StreamIsCapturingFn>(capturing);
  ENCORE_ASSIGN_OR_RETURN(void* ctx, DriverSymbol("cuCtxGetCurrent"));
  api.ctx_get_current = reinterpret_cast<CtxGetCurrentFn>(ctx);
  return api;
}

}  // namespace encore
