// The seam between the cache's policy and CUDA's graph API. The executor only ever asks a
// GraphBackend three things: is this stream capturing, build (capture + instantiate) a
// straight-line graph of these prepared launches, and — through the ExecutableGraph it got back —
// patch node i / launch. CreateCudaGraphBackend() is the real one; tests substitute a host fake
// so every policy path runs without a GPU.
//
// Build contract (what the CUDA backend does, and what fakes must mimic):
//   1. cudaStreamBeginCapture(private stream, cudaStreamCaptureModeThreadLocal);
//   2. runner.Launch(*plans[i], stream, pdl[i]) for i = 0..n-1, stopping at the first error;
//   3. cudaStreamEndCapture — ALWAYS, whether or not step 2 failed — and only then are the
//      statuses of step 2 and of the end of capture checked (a failed launch leaves no capture
//      open on the stream);
//   4. the graph is rejected unless it holds exactly one kernel node per kernel of the plans
//      (plans[i].num_kernels(): a plan with a pre-kernel launches two), all
//      forming one chain
//      (an empty graph is an error: "captured an empty graph");
//   5. cudaGraphInstantiate; on cudaErrorMemoryAllocation, cudaDeviceGraphMemTrim and one retry.
// The resulting ExecutableGraph owns the graph and its exec (the exec is destroyed first) and
// knows its kernel nodes in launch order, grouped by launch.
//
// Thread safety: a backend and its graphs are NOT internally synchronized (CUDA graph objects
// are not either); the executor serializes every call under its mutex. IsCapturing is the
// exception: it only queries the stream and may be called concurrently.
//
// Example:
//   ENCORE_ASSIGN_OR_RETURN(std::unique_ptr<GraphBackend> backend, CreateCudaGraphBackend());
//   BuildReport report;
//   ENCORE_ASSIGN_OR_RETURN(auto graph, backend->Build(runner, plans, pdl, &report));
//   ENCORE_RETURN_IF_ERROR(graph->Patch(0, new_plan));  // launch 0's node(s)
//   ENCORE_RETURN_IF_ERROR(graph->Launch(stream));
#ifndef ENCORE_GRAPH_CACHE_BACKEND_H_
#define ENCORE_GRAPH_CACHE_BACKEND_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "gemm/grouped_gemm.h"
#include "gemm/launch.h"

namespace encore::graph_cache {

// An instantiated straight-line graph: launch i (one kernel node, two for a plan with a
// pre-kernel, three for a bound plan) is plans[i] given to Build.
class ExecutableGraph {
 public:
  virtual ~ExecutableGraph() = default;
  virtual size_t num_launches() const = 0;
  // Replaces launch i's kernel parameters (function, grid, block, smem, parameter blocks) for
  // every future launch (cudaGraphExecKernelNodeSetParams); launches already enqueued are
  // unaffected. FailedPrecondition when `plan` has another number of kernels than was captured.
  [[nodiscard]] virtual absl::Status Patch(size_t launch, const gemm::LaunchPlan& plan) = 0;
  [[nodiscard]] virtual absl::Status Launch(cudaStream_t stream) = 0;
};

// What a Build attempt got to, for the executor's counters.
struct BuildReport {
  bool capture_begun = false;
  bool captured = false;       // EndCapture produced a graph of the expected shape
  int programmatic_edges = 0;  // edges of type cudaGraphDependencyTypeProgrammatic (PDL)
  int instantiate_attempts = 0;
  bool trimmed = false;  // cudaDeviceGraphMemTrim ran before a retry
  bool instantiated = false;
};

class GraphBackend {
 public:
  virtual ~GraphBackend() = default;
  // True while `stream` is capturing (work sent to it is recorded, not run); also true when the
  // capture was invalidated. Errors of the query itself are returned.
  [[nodiscard]] virtual absl::StatusOr<bool> IsCapturing(cudaStream_t stream) = 0;
  // See the contract above. `pdl` has plans.size() entries; pdl[0] is ignored.
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<ExecutableGraph>> Build(
      gemm::Nvfp4GroupedGemm& runner, absl::Span<const gemm::LaunchPlan* const> plans,
      absl::Span<const bool> pdl, BuildReport* report) = 0;
};

// The CUDA implementation, with its own non-blocking capture stream on `device` (-1: current).
[[nodiscard]] absl::StatusOr<std::unique_ptr<GraphBackend>> CreateCudaGraphBackend(int device = -1);

}  // namespace encore::graph_cache

#endif  // ENCORE_GRAPH_CACHE_BACKEND_H_
