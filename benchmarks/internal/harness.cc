#include "benchmarks/internal/harness.h"

#include "cuda_utils/status.h"

namespace encore::bench {

absl::Status RunBatch(Mode& mode, const InputSets& sets, const L2Flusher* flusher, double hold_us,
                      cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, Sample* out) {
  if (flusher != nullptr) ENCORE_RETURN_IF_ERROR(flusher->Flush(stream));
  ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream), "sync after L2 flush");
  if (hold_us > 0) ENCORE_RETURN_IF_ERROR(LaunchHold(hold_us, stream));
  const int n = sets.count();
  const double t0 = NowUs();
  ENCORE_RETURN_IF_CUDA_ERROR(cudaEventRecord(start, stream), "record start");
  // Host cost: one clock pair around the whole batch (the calls run back to back; per-call
  // clock reads would add their own ~50 ns to every call).
  const double h0 = NowUs();
  for (int i = 0; i < n; ++i) ENCORE_RETURN_IF_ERROR(mode.Call(sets, i, stream));
  ENCORE_RETURN_IF_ERROR(mode.EndBatch(stream));
  const double host = NowUs() - h0;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaEventRecord(stop, stream), "record stop");
  ENCORE_RETURN_IF_CUDA_ERROR(cudaEventSynchronize(stop), "wait for the batch");
  const double t1 = NowUs();
  float ms = 0;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaEventElapsedTime(&ms, start, stop), "elapsed time");
  out->host_us = host / n;
  out->device_us = 1000.0 * ms / n;
  out->e2e_us = (t1 - t0) / n;
  return absl::OkStatus();
}

absl::Status Measure(Mode& mode, const InputSets& sets, const L2Flusher* flusher,
                     cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, Sample* out) {
  Sample free_running, held;
  ENCORE_RETURN_IF_ERROR(RunBatch(mode, sets, flusher, 0.0, stream, start, stop, &free_running));
  // Hold the GPU for twice the free-running batch's wall time: the host enqueues the whole batch
  // before the GPU starts it, whatever the mode's host cost.
  const double hold_us = 2.0 * free_running.e2e_us * sets.count() + 100.0;
  ENCORE_RETURN_IF_ERROR(RunBatch(mode, sets, flusher, hold_us, stream, start, stop, &held));
  out->device_us = held.device_us;
  out->host_us = free_running.host_us;
  out->e2e_us = free_running.e2e_us;
  return absl::OkStatus();
}

}  // namespace encore::bench
