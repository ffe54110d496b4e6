// Holds SMs busy until released: a test's stand-in for whatever keeps a grid from being resident
// all at once (an MPS SM limit, a green context, long kernels on other streams). Each blocker CTA
// takes a whole SM's opt-in shared memory and spins on a flag in mapped host memory.
//
// Example:
//   ENCORE_ASSIGN_OR_RETURN(auto blocker, SmBlocker::Start(/*ctas=*/8, side_stream));
//   ENCORE_RETURN_IF_ERROR(blocker->WaitResident(absl::Seconds(5)));  // 8 SMs now held
//   ... launch the kernel under test, watch it ...
//   blocker->Release();  // the blocker CTAs exit
#ifndef ENCORE_GEMM_TESTING_SM_BLOCKER_H_
#define ENCORE_GEMM_TESTING_SM_BLOCKER_H_

#include <cuda_runtime_api.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace encore::gemm::testing {

class SmBlocker {
 public:
  // Launches `ctas` blocker CTAs on `stream` (one per SM: each asks for the device's opt-in
  // shared memory per block).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SmBlocker>> Start(int ctas,
                                                                        cudaStream_t stream);
  // Releases the CTAs and waits for `stream` (never throws; errors are dropped).
  ~SmBlocker();
  SmBlocker(const SmBlocker&) = delete;
  SmBlocker& operator=(const SmBlocker&) = delete;

  // OK once every blocker CTA runs; DeadlineExceeded after `timeout`.
  [[nodiscard]] absl::Status WaitResident(absl::Duration timeout) const;
  // Lets the CTAs exit (idempotent; does not wait).
  void Release();

 private:
  SmBlocker(int ctas, cudaStream_t stream, volatile unsigned int* host);
  int ctas_;
  cudaStream_t stream_;
  volatile unsigned int* host_;  // [0]: release flag, [1]: CTAs started (mapped, pinned)
};

}  // namespace encore::gemm::testing

#endif  // ENCORE_GEMM_TESTING_SM_BLOCKER_H_
