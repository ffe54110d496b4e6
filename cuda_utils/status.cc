#include "cuda_utils/status.h"

#include "absl/strings/str_cat.h"

namespace encore {

absl::Status ToStatus(cudaError_t err, absl::string_view what) {
  if (err == cudaSuccess) return absl::OkStatus();
  const std::string msg =
      absl::StrCat(what, ": ", cudaGetErrorString(err), " (", cudaGetErrorName(err), ")");
  switch (err) {
    case cudaErrorMemoryAllocation:
      return absl::ResourceExhaustedError(msg);
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorNotSupported:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
      return absl::FailedPreconditionError(msg);
    case cudaErrorInvalidValue:
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidDevice:  // (a device ordinal the machine does not have)
      return absl::InvalidArgumentError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::Status ToStatus(CUresult err, absl::string_view what) {
  if (err == CUDA_SUCCESS) return absl::OkStatus();
  // cuGetErrorString lives in libcuda, which is never linked: report the numeric code.
  const std::string msg = absl::StrCat(what, ": CUDA driver error ", static_cast<int>(err));
  switch (err) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(msg);
    case CUDA_ERROR_INVALID_VALUE:
      return absl::InvalidArgumentError(msg);
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_NOT_SUPPORTED:
      return absl::FailedPreconditionError(msg);
    default:
      return absl::InternalError(msg);
  }
}

}  // namespace encore
