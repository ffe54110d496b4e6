// The replay benchmark's measurement loop: one "mode" (a way of issuing the same grouped-GEMM
// calls) run over one workload (15 distinct input sets of one shape list), reporting host µs per
// call, device µs per call and end-to-end µs per call.
//
// Example:
//   DirectMode mode(runner);
//   Measurement m = MeasureBatch(mode, workload, flusher, stream, batches);
#ifndef ENCORE_BENCHMARKS_INTERNAL_HARNESS_H_
#define ENCORE_BENCHMARKS_INTERNAL_HARNESS_H_

#include <cuda_runtime_api.h>

#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "benchmarks/internal/device_inputs.h"

namespace encore::bench {

// A way of issuing calls. Call(i) issues the call on input set i; EndBatch() is called after the
// 15 calls of a batch (batch and step-bounded sequence modes launch their graph there).
class Mode {
 public:
  virtual ~Mode() = default;
  virtual const char* name() const = 0;
  [[nodiscard]] virtual absl::Status Call(const InputSets& sets, int i, cudaStream_t stream) = 0;
  [[nodiscard]] virtual absl::Status EndBatch(cudaStream_t) { return absl::OkStatus(); }
  // Called once per workload before warm-up (modes that pre-build state do it here, untimed).
  [[nodiscard]] virtual absl::Status Begin(const InputSets&, cudaStream_t) {
    return absl::OkStatus();
  }
  // Calls the mode's graph cache has put into merged launches so far (ExecutorCounters::
  // merged_calls; 0 for modes without one).
  virtual uint64_t merged_calls() const { return 0; }
};

struct Sample {
  double host_us = 0;    // CPU time inside Call/EndBatch, per call
  double device_us = 0;  // events around the batch on the stream, per call
  double e2e_us = 0;     // host wall clock from batch start to completion, per call
};

inline double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Runs one batch: flush L2 (synchronized, untimed), then the calls of every input set back to
// back, then EndBatch, then waits for completion. With hold_us > 0 a spin kernel of that length
// runs first, so the host has enqueued the batch before the GPU reaches it and the events time
// GPU work alone (device_us); without it host_us and e2e_us are the honest end-to-end numbers.
[[nodiscard]] absl::Status RunBatch(Mode& mode, const InputSets& sets, const L2Flusher* flusher,
                                    double hold_us, cudaStream_t stream, cudaEvent_t start,
                                    cudaEvent_t stop, Sample* out);

// Device time from a held batch; host and end-to-end time from a free-running one.
[[nodiscard]] absl::Status Measure(Mode& mode, const InputSets& sets, const L2Flusher* flusher,
                                   cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop,
                                   Sample* out);

}  // namespace encore::bench

#endif  // ENCORE_BENCHMARKS_INTERNAL_HARNESS_H_
