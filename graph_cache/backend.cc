#include "graph_cache/backend.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "cuda_utils/driver.h"
#include "cuda_utils/raii.h"
#include "cuda_utils/status.h"

namespace encore::graph_cache {
namespace {

class CudaExecutableGraph final : public ExecutableGraph {
 public:
  // first[i]: launch i's first node in `nodes` (launch i has first[i + 1] - first[i] nodes).
  // `launch`: cuGraphLaunch, or null to launch through the runtime only.
  CudaExecutableGraph(Graph graph, GraphExec exec, std::vector<cudaGraphNode_t> nodes,
                      std::vector<size_t> first, DriverApi::GraphLaunchFn launch)
      : graph_(std::move(graph)),
        exec_(std::move(exec)),
        nodes_(std::move(nodes)),
        first_(std::move(first)),
        launch_(launch) {}

  size_t num_launches() const override { return first_.size() - 1; }

  absl::Status Patch(size_t launch, const gemm::LaunchPlan& plan) override {
    if (launch + 1 >= first_.size()) {
      return absl::OutOfRangeError(absl::StrCat("launch ", launch, " of ", num_launches()));
    }
    const size_t node = first_[launch];
    const size_t count = first_[launch + 1] - node;
    if (count != static_cast<size_t>(plan.num_kernels())) {
      return absl::FailedPreconditionError(absl::StrCat("launch ", launch, " was captured with ",
                                                        count, " kernel nodes; the plan has ",
                                                        plan.num_kernels()));
    }
    void* slot = nullptr;
    if (plan.has_pre()) {
      const cudaKernelNodeParams pre = plan.pre.NodeParams(&slot);
      ENCORE_RETURN_IF_CUDA_ERROR(
          cudaGraphExecKernelNodeSetParams(exec_.get(), nodes_[node + count - 2], &pre),
          "cudaGraphExecKernelNodeSetParams (pre-kernel)");
    }
    const cudaKernelNodeParams params = plan.NodeParams(&slot);
    ENCORE_RETURN_IF_CUDA_ERROR(
        cudaGraphExecKernelNodeSetParams(exec_.get(), nodes_[node + count - 1], &params),
        "cudaGraphExecKernelNodeSetParams");
    return absl::OkStatus();
  }

  // The driver's entry point first; a failure there launched nothing and is retried through the
  // runtime, which makes the device's primary context current on a thread that has none and
  // reports any real error in runtime terms.
  absl::Status Launch(cudaStream_t stream) override {
    if (launch_ != nullptr && launch_(exec_.get(), stream) == CUDA_SUCCESS) {
      return absl::OkStatus();
    }
    ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphLaunch(exec_.get(), stream), "cudaGraphLaunch");
    return absl::OkStatus();
  }

 private:
  Graph graph_;  // declared before exec_: destroyed after it
  GraphExec exec_;
  std::vector<cudaGraphNode_t> nodes_;  // kernel nodes of graph_, in launch order
  std::vector<size_t> first_;           // launches + 1 entries
  DriverApi::GraphLaunchFn launch_;
};

// The kernel nodes of `graph` in chain order; an error unless the graph is exactly `n` kernel
// nodes joined by n-1 edges into one chain.
absl::StatusOr<std::vector<cudaGraphNode_t>> KernelChain(cudaGraph_t graph, size_t n,
                                                         int* programmatic_edges) {
  size_t count = 0;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphGetNodes(graph, nullptr, &count), "cudaGraphGetNodes");
  if (count == 0) return absl::FailedPreconditionError("captured an empty graph");
  if (count != n) {
    return absl::UnimplementedError(
        absl::StrCat("captured ", count, " nodes where the plans launch ", n,
                     " kernels; the graph cache needs exactly one kernel node per kernel"));
  }
  std::vector<cudaGraphNode_t> nodes(count);
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphGetNodes(graph, nodes.data(), &count), "cudaGraphGetNodes");
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphNodeGetType(node, &type), "cudaGraphNodeGetType");
    if (type != cudaGraphNodeTypeKernel) {
      return absl::UnimplementedError(absl::StrCat("captured a node of type ",
                                                   static_cast<int>(type),
                                                   "; the graph cache needs kernel nodes only"));
    }
  }
  if (n == 1) return nodes;
  size_t edges = 0;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges),
                              "cudaGraphGetEdges (count)");
  if (edges != n - 1) {
    return absl::UnimplementedError(
        absl::StrCat("captured ", edges, " edges between ", n, " nodes; expected one chain"));
  }
  std::vector<cudaGraphNode_t> from(edges), to(edges);
  std::vector<cudaGraphEdgeData> data(edges);
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &edges),
                              "cudaGraphGetEdges");
  absl::flat_hash_map<cudaGraphNode_t, cudaGraphNode_t> next;
  absl::flat_hash_map<cudaGraphNode_t, int> preds;
  for (size_t i = 0; i < edges; ++i) {
    if (data[i].type == cudaGraphDependencyTypeProgrammatic) ++*programmatic_edges;
    if (!next.emplace(from[i], to[i]).second) {
      return absl::UnimplementedError("captured graph branches; expected one chain");
    }
    ++preds[to[i]];
  }
  cudaGraphNode_t root = nullptr;
  for (cudaGraphNode_t node : nodes) {
    if (preds.contains(node)) continue;
    if (root != nullptr) return absl::UnimplementedError("captured graph has several roots");
    root = node;
  }
  std::vector<cudaGraphNode_t> chain;
  chain.reserve(n);
  for (cudaGraphNode_t cur = root; cur != nullptr;) {
    chain.push_back(cur);
    if (chain.size() > n) return absl::InternalError("captured graph has a cycle");
    auto it = next.find(cur);
    cur = it == next.end() ? nullptr : it->second;
  }
  if (chain.size() != n) return absl::UnimplementedError("captured graph is not one chain");
  return chain;
}

class CudaGraphBackend final : public GraphBackend {
 public:
  // `driver`: the per-call entry points (null members: the runtime only).
  CudaGraphBackend(Stream stream, int device, DriverApi driver)
      : stream_(std::move(stream)), device_(device), driver_(driver) {}

  // The driver's entry point when this thread has a current context (else the runtime's call,
  // which makes the device's primary context current: the executor asks this before any launch
  // on a thread, so the launches after it find a context), and the runtime when the driver's call
  // fails.
  // NOTES: whether the thread has a context is asked of the driver once per thread, not per call
  // (run 201: the two driver calls were ~0.12 us of a hit in the GPU host's slow state): a
  // context once current stays current unless the caller pops it, and then the driver's query
  // fails, the flag is cleared and the runtime answers (asking the driver again next time).
  absl::StatusOr<bool> IsCapturing(cudaStream_t stream) override {
    thread_local bool has_context = false;
    if (driver_.stream_is_capturing != nullptr) {
      if (!has_context) {
        CUcontext ctx = nullptr;
        has_context = driver_.ctx_get_current(&ctx) == CUDA_SUCCESS && ctx != nullptr;
      }
      CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
      if (has_context) {
        if (driver_.stream_is_capturing(stream, &status) == CUDA_SUCCESS) {
          return status != CU_STREAM_CAPTURE_STATUS_NONE;
        }
        has_context = false;
      }
    }
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamIsCapturing(stream, &status), "cudaStreamIsCapturing");
    return status != cudaStreamCaptureStatusNone;
  }

  absl::StatusOr<std::unique_ptr<ExecutableGraph>> Build(
      gemm::Nvfp4GroupedGemm& runner, absl::Span<const gemm::LaunchPlan* const> plans,
      absl::Span<const bool> pdl, BuildReport* report) override {
    if (plans.empty()) return absl::InvalidArgumentError("nothing to capture");
    if (pdl.size() != plans.size()) return absl::InvalidArgumentError("pdl size mismatch");
    ENCORE_RETURN_IF_CUDA_ERROR(
        cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture");
    report->capture_begun = true;
    absl::Status launched = absl::OkStatus();
    for (size_t i = 0; i < plans.size() && launched.ok(); ++i) {
      launched = runner.Launch(*plans[i], stream_.get(), /*pdl=*/i > 0 && pdl[i]);
      if (!launched.ok()) {
        launched = absl::Status(launched.code(),
                                absl::StrCat("capture of launch ", i, ": ", launched.message()));
      }
    }
    // End the capture before judging anything, so no failure leaves the stream capturing.
    cudaGraph_t raw = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_.get(), &raw);
    Graph graph(raw);
    if (!launched.ok() || ended != cudaSuccess) {
      (void)cudaGetLastError();  // failures of capture are not sticky; leave no stale error
      if (!launched.ok()) return launched;
      return ToStatus(ended, "cudaStreamEndCapture");
    }
    if (!graph) return absl::InternalError("cudaStreamEndCapture returned no graph");
    std::vector<size_t> first(plans.size() + 1, 0);
    for (size_t i = 0; i < plans.size(); ++i) first[i + 1] = first[i] + plans[i]->num_kernels();
    ENCORE_ASSIGN_OR_RETURN(std::vector<cudaGraphNode_t> chain,
                            KernelChain(graph.get(), first.back(), &report->programmatic_edges));
    report->captured = true;

    cudaGraphExec_t exec = nullptr;
    cudaError_t err = cudaSuccess;
    for (int attempt = 0; attempt < 2; ++attempt) {
      ++report->instantiate_attempts;
      err = cudaGraphInstantiate(&exec, graph.get(), 0);
      if (err != cudaErrorMemoryAllocation || attempt == 1) break;
      (void)cudaGetLastError();
      report->trimmed = true;
      ENCORE_RETURN_IF_CUDA_ERROR(cudaDeviceGraphMemTrim(device_), "cudaDeviceGraphMemTrim");
    }
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return ToStatus(
          err, absl::StrCat("cudaGraphInstantiate (", report->instantiate_attempts, " attempts)"));
    }
    report->instantiated = true;
    return std::unique_ptr<ExecutableGraph>(
        new CudaExecutableGraph(std::move(graph), GraphExec(exec), std::move(chain),
                                std::move(first), driver_.graph_launch));
  }

 private:
  Stream stream_;
  int device_;
  DriverApi driver_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GraphBackend>> CreateCudaGraphBackend(int device) {
  int current = 0;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGetDevice(&current), "cudaGetDevice");
  if (device < 0) device = current;
  if (device != current) ENCORE_RETURN_IF_CUDA_ERROR(cudaSetDevice(device), "cudaSetDevice");
  absl::StatusOr<Stream> stream = Stream::Create();
  const cudaError_t restored = device != current ? cudaSetDevice(current) : cudaSuccess;
  if (!stream.ok()) return stream.status();
  ENCORE_RETURN_IF_CUDA_ERROR(restored, "cudaSetDevice (back to the caller's device)");
  // Without the driver's entry points every call goes through the runtime (slower, still right).
  absl::StatusOr<DriverApi> driver = DriverApi::Load();
  return std::unique_ptr<GraphBackend>(
      new CudaGraphBackend(*std::move(stream), device, driver.ok() ? *driver : DriverApi{}));
}

}  // namespace encore::graph_cache
