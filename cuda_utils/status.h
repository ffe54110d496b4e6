// Conversion of CUDA runtime and driver error codes to absl::Status.
//
// Every CUDA call in Encore is checked; the status names the call that failed and the CUDA
// error, e.g. "cudaMalloc(A buffer): out of memory (cudaErrorMemoryAllocation)".
//
// Example:
//   ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream), "sync after warm-up");
//   absl::Status s = encore::ToStatus(cudaGetLastError(), "launch of the simple kernel");
#ifndef ENCORE_CUDA_UTILS_STATUS_H_
#define ENCORE_CUDA_UTILS_STATUS_H_

#include <cuda.h>  // CUresult only (types); libcuda is never linked.
#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace encore {

// OK for cudaSuccess; otherwise a status whose code reflects the error class (out of memory ->
// kResourceExhausted, no device / insufficient driver -> kFailedPrecondition, invalid value or
// device ordinal -> kInvalidArgument, anything else -> kInternal) and whose message starts with
// `what`.
[[nodiscard]] absl::Status ToStatus(cudaError_t err, absl::string_view what);
[[nodiscard]] absl::Status ToStatus(CUresult err, absl::string_view what);

}  // namespace encore

namespace encore::internal {
inline bool IsCudaError(cudaError_t e) { return e != cudaSuccess; }
inline bool IsCudaError(CUresult e) { return e != CUDA_SUCCESS; }
}  // namespace encore::internal

// NOTES: `what` is evaluated only when the call failed, so a message built with absl::StrCat
// costs nothing (no allocation) on the per-call paths.
#define ENCORE_RETURN_IF_CUDA_ERROR(expr, what)       \
  do {                                                \
    const auto _encore_e = (expr);                    \
    if (::encore::internal::IsCudaError(_encore_e)) { \
      return ::encore::ToStatus(_encore_e, (what));   \
    }                                                 \
  } while (0)

#define ENCORE_RETURN_IF_ERROR(expr)                        \
  do {                                                      \
    if (absl::Status _encore_s = (expr); !_encore_s.ok()) { \
      return _encore_s;                                     \
    }                                                       \
  } while (0)

#define ENCORE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(*tmp)
#define ENCORE_CONCAT_INNER(a, b) a##b
#define ENCORE_CONCAT(a, b) ENCORE_CONCAT_INNER(a, b)
#define ENCORE_ASSIGN_OR_RETURN(lhs, expr) \
  ENCORE_ASSIGN_OR_RETURN_IMPL(ENCORE_CONCAT(_encore_sor_, __LINE__), lhs, expr)

#endif  // ENCORE_CUDA_UTILS_STATUS_H_
