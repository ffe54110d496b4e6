// A stand-in for gemm::Nvfp4GroupedGemm so the graph cache can be tested before (and without)
// the real kernels. Prepare fills a LaunchPlan whose by-value parameter block is a FakeParams
// (fake_params.h); Launch runs it:
//   - kGpu:  cudaLaunchKernelExC of the fake kernel (fake_kernel.cu), with the PDL attribute when
//            asked and supported — so it captures into graphs and patches like the real runner;
//   - kHost: computes the same values on the host, synchronously, at the moment of the launch
//            (buffers are host memory; the stream is an opaque token). With HostGraphBackend
//            this lets every cache path run, and be checked for results, on a machine with no GPU.
//            Host mode also has bound plans (PrepareBound): WriteBindings queues a call's pointers
//            per stream, and each launch of a bound plan computes with the oldest queued set —
//            the real ring's protocol (one write per launch, in order), so a write without its
//            launch shows up as wrong results.
// kAuto picks variant 1 ("persistent") when Σ m·n ≥ auto_threshold, else variant 0 — a stand-in
// for the real tile-count heuristic, so a capacity change can change the kernel function; kStreamK
// is variant 2, whose values differ from the other two (fake_params.h FakeValue).
//
// Thread safety: every method may be called concurrently (like the real runner).
//
// Example:
//   FakeGemm gemm(FakeGemm::Device::kHost);
//   ENCORE_ASSERT_OK(gemm.Run(args, FakeStream(1)));
#ifndef ENCORE_TESTS_GRAPH_CACHE_FAKE_GEMM_H_
#define ENCORE_TESTS_GRAPH_CACHE_FAKE_GEMM_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "gemm/grouped_gemm.h"
#include "gemm/launch.h"
#include "gemm/problem.h"
#include "tests/graph_cache/fake_params.h"

namespace encore::graph_cache::testing {

// An opaque stream handle for host-mode tests (never dereferenced).
inline cudaStream_t FakeStream(uintptr_t id) { return reinterpret_cast<cudaStream_t>(id * 64); }

class FakeGemm final : public gemm::Nvfp4GroupedGemm {
 public:
  enum class Device { kHost, kGpu };
  explicit FakeGemm(Device device, int64_t auto_threshold = int64_t{1} << 20)
      : device_(device), auto_threshold_(auto_threshold) {}

  absl::Status CanImplement(const gemm::GroupedGemmArguments& args) const override;
  absl::Status Prepare(const gemm::GroupedGemmArguments& args, gemm::LaunchPlan* plan,
                       gemm::KernelKind kind = gemm::KernelKind::kAuto,
                       cudaStream_t stream = nullptr) override;
  // Prepare, then PlanOptions as the real runner honours them for plans with a pre-kernel:
  // LaunchPlan::token_workspace_half and prepass_reads_early (where the tokens fit a half,
  // SetTokenHalfLimit).
  absl::Status PrepareWith(const gemm::GroupedGemmArguments& args, gemm::LaunchPlan* plan,
                           gemm::KernelKind kind, cudaStream_t stream,
                           const gemm::PlanOptions& options) override;
  absl::Status Launch(const gemm::LaunchPlan& plan, cudaStream_t stream,
                      bool pdl = false) const override;
  absl::Status Run(const gemm::GroupedGemmArguments& args, cudaStream_t stream,
                   gemm::KernelKind kind = gemm::KernelKind::kAuto) override;
  int sm_count() const override { return 132; }
  // Host mode only (GPU mode: Unimplemented, like a runner without bound plans).
  absl::Status PrepareBound(const gemm::GroupedGemmArguments& args, gemm::LaunchPlan* plan,
                            gemm::KernelKind kind, cudaStream_t stream) override;
  absl::Status WriteBindings(const gemm::GroupedGemmArguments& args,
                             cudaStream_t stream) override;
  absl::Status LaunchWithBindings(const gemm::GroupedGemmArguments& args, cudaStream_t stream,
                                  absl::FunctionRef<absl::Status()> launch,
                                  bool wait_for_slot) override;

  // The function a variant launches (host mode: a tag address; GPU mode: the __global__).
  const void* Function(int variant) const;

  // Test hooks.
  void FailNextLaunches(int n) { fail_launches_.store(n); }
  // The `n` launches after the next `skip` fail.
  void FailLaunchesAfter(int skip, int n) {
    skip_launches_.store(skip);
    fail_launches_.store(n);
  }
  // Plans prepared from now on carry a pre-kernel with this function (a tag; never launched in
  // host mode); nullptr: none. `prefers_pdl`: LaunchPlan::prefers_pdl of those plans (a padded or
  // large token pre-pass).
  void SetPreKernel(const void* tag, bool prefers_pdl = false) {
    pre_prefers_pdl_.store(prefers_pdl);
    pre_kernel_.store(tag);
  }
  // Plans whose tokens (Σ capacity m · k) exceed this many elements do not fit half of the token
  // workspace: PrepareWith gives them half -1 (the whole workspace) and no early pre-pass, as the
  // real runner does (default: every plan fits).
  void SetTokenHalfLimit(int64_t elements) { token_half_limit_.store(elements); }
  // kAuto plans stream-K (variant 2) from this Σ m·n on (default: never).
  void SetAutoStreamKFrom(int64_t work) { auto_stream_k_from_.store(work); }
  int64_t prepares() const { return prepares_.load(); }
  // Plans prepared with an early pre-pass (PrepareWith, prepass_reads_early honoured).
  int64_t early_prepares() const { return early_prepares_.load(); }
  // The stream the last Prepare was for.
  cudaStream_t last_prepare_stream() const { return last_prepare_stream_.load(); }
  int64_t launches() const { return launches_.load(); }  // every executed plan (direct or graph)
  int64_t runs() const { return runs_.load(); }          // direct Run calls
  // PrepareBound answers Unimplemented from now on (a runner without bound plans).
  void DisableBoundPlans() { bound_plans_.store(false); }
  // The binding ring counts as full (true): LaunchWithBindings answers ResourceExhausted without
  // writing when told not to wait for a slot, and, counted in full_ring_waits, Internal ("would
  // wait forever") when told to.
  void SetBindingRingFull(bool full) { ring_full_.store(full); }
  int64_t full_ring_waits() const { return full_ring_waits_.load(); }
  int64_t bound_launches() const { return bound_launches_.load(); }
  // Bindings written and not yet consumed by a launch, on `stream`.
  size_t queued_bindings(cudaStream_t stream) const;

 private:
  // Unimplemented in GPU mode or after DisableBoundPlans.
  absl::Status CheckBoundPlans() const;

  Device device_;
  int64_t auto_threshold_;
  mutable std::atomic<int> fail_launches_{0};
  mutable std::atomic<int> skip_launches_{0};
  std::atomic<const void*> pre_kernel_{nullptr};
  std::atomic<bool> pre_prefers_pdl_{false};
  std::atomic<int64_t> auto_stream_k_from_{INT64_MAX};
  std::atomic<int64_t> token_half_limit_{INT64_MAX};
  std::atomic<int64_t> prepares_{0};
  std::atomic<int64_t> early_prepares_{0};
  std::atomic<cudaStream_t> last_prepare_stream_{nullptr};
  mutable std::atomic<int64_t> launches_{0};
  std::atomic<int64_t> runs_{0};
  std::atomic<bool> bound_plans_{true};
  std::atomic<bool> ring_full_{false};
  std::atomic<int64_t> full_ring_waits_{0};
  mutable std::atomic<int64_t> bound_launches_{0};
  // Per stream, the queued bindings of bound launches (oldest first).
  absl::Mutex pair_mu_;  // LaunchWithBindings' write + launch pairs
  mutable absl::Mutex bind_mu_;
  mutable absl::flat_hash_map<cudaStream_t, std::deque<std::vector<FakeGroup>>> bindings_
      ABSL_GUARDED_BY(bind_mu_);
};

// Host execution of a FakeParams block (what kHost Launch does).
void ExecuteOnHost(const FakeParams& p);

}  // namespace encore::graph_cache::testing

#endif  // ENCORE_TESTS_GRAPH_CACHE_FAKE_GEMM_H_
