#include "cuda_utils/driver.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "cuda_utils/device.h"
#include "cuda_utils/status.h"

namespace encore {
namespace {

absl::Status Resolve(const char* symbol, void** fn) {
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  ENCORE_RETURN_IF_CUDA_ERROR(
      cudaGetDriverEntryPointByVersion(symbol, fn, 12000, cudaEnableDefault, &found),
      absl::StrCat("cudaGetDriverEntryPointByVersion(", symbol, ")"));
  if (found != cudaDriverEntryPointSuccess || *fn == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("the CUDA driver does not provide ", symbol,
                                                      " (query result ", static_cast<int>(found),
                                                      ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DriverApi> DriverApi::Load() {
  ENCORE_RETURN_IF_ERROR(CudaDeviceAvailable());
  DriverApi api;
  void* fn = nullptr;
  ENCORE_RETURN_IF_ERROR(Resolve("cuTensorMapEncodeTiled", &fn));
  api.tensor_map_encode_tiled = reinterpret_cast<TensorMapEncodeTiledFn>(fn);
  ENCORE_RETURN_IF_ERROR(Resolve("cuGraphLaunch", &fn));
  api.graph_launch = reinterpret_cast<GraphLaunchFn>(fn);
  ENCORE_RETURN_IF_ERROR(Resolve("cuStreamIsCapturing", &fn));
  api.stream_is_capturing = reinterpret_cast<StreamIsCapturingFn>(fn);
  ENCORE_RETURN_IF_ERROR(Resolve("cuCtxGetCurrent", &fn));
  api.ctx_get_current = reinterpret_cast<CtxGetCurrentFn>(fn);
  return api;
}

}  // namespace encore
