// A GraphBackend for CPU tests: "capture" copies the prepared plans, "instantiate" is free, a
// patch replaces a node's plan and a launch runs every node's plan through runner.Launch (with
// FakeGemm in host mode: computed on the host, at launch time, in node order). Streams can be
// marked as capturing, and capture / instantiation failures injected, so every path of the
// executor's state machine runs without a GPU.
//
// Thread safety: like the CUDA backend (the executor serializes Build/Patch/Launch); the hooks
// and IsCapturing may be called from any thread.
//
// Example:
//   auto backend = std::make_unique<HostGraphBackend>();
//   HostGraphBackend* hooks = backend.get();
//   auto exec = GraphExecutor::CreateWithBackend(&gemm, std::move(backend));
//   hooks->FailNextCaptures(1);   // the next capture fails; the call still runs (directly)
#ifndef ENCORE_TESTS_GRAPH_CACHE_HOST_BACKEND_H_
#define ENCORE_TESTS_GRAPH_CACHE_HOST_BACKEND_H_

#include <atomic>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "graph_cache/backend.h"

namespace encore::graph_cache::testing {

class HostGraphBackend final : public GraphBackend {
 public:
  absl::StatusOr<bool> IsCapturing(cudaStream_t stream) override;
  absl::StatusOr<std::unique_ptr<ExecutableGraph>> Build(
      gemm::Nvfp4GroupedGemm& runner, absl::Span<const gemm::LaunchPlan* const> plans,
      absl::Span<const bool> pdl, BuildReport* report) override;

  // Hooks.
  void SetCapturing(cudaStream_t stream, bool capturing);
  void FailNextCaptures(int n) { fail_captures_.store(n); }
  // Each instantiate attempt consumes one: 1 → the first attempt fails with out-of-memory, the
  // trim-and-retry succeeds; 2 → both fail.
  void FailNextInstantiations(int n) { fail_instantiations_.store(n); }
  void FailNextPatches(int n) { fail_patches_.store(n); }

  int64_t builds() const { return builds_.load(); }
  int64_t patches() const { return patches_.load(); }
  int64_t launches() const { return launches_.load(); }
  int64_t trims() const { return trims_.load(); }
  int64_t live_graphs() const { return live_graphs_.load(); }
  // The pdl flags of the most recent successful build.
  std::vector<bool> last_pdl() const;
  // Per launch of that build, its plan's grid.y (the fake runner's group count: a merged launch's
  // groups).
  std::vector<unsigned> last_grid_y() const;

  // Shared with the graphs it makes.
  std::atomic<int> fail_patches_{0};
  std::atomic<int64_t> patches_{0};
  std::atomic<int64_t> launches_{0};
  std::atomic<int64_t> live_graphs_{0};

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_set<cudaStream_t> capturing_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> last_pdl_ ABSL_GUARDED_BY(mu_);
  std::vector<unsigned> last_grid_y_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> fail_captures_{0};
  std::atomic<int> fail_instantiations_{0};
  std::atomic<int64_t> builds_{0};
  std::atomic<int64_t> trims_{0};
};

}  // namespace encore::graph_cache::testing

#endif  // ENCORE_TESTS_GRAPH_CACHE_HOST_BACKEND_H_
