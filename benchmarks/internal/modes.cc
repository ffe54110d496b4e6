#include "benchmarks/internal/modes.h"

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "cuda_utils/driver.h"
#include "cuda_utils/raii.h"
#include "cuda_utils/status.h"
#include "gemm/grouped_gemm.h"
#include "graph_cache/batch.h"
#include "graph_cache/executor.h"
#include "graph_cache/sequence.h"

namespace encore::bench {
namespace {

class ColdEagerMode : public Mode {
 public:
  const char* name() const override { return "cold_eager"; }
  absl::Status Call(const InputSets& sets, int i, cudaStream_t stream) override {
    return gemm::GroupedGemm(sets.args(i), stream);
  }
};

class DirectMode : public Mode {
 public:
  explicit DirectMode(std::shared_ptr<gemm::Nvfp4GroupedGemm> runner)
      : runner_(std::move(runner)) {}
  const char* name() const override { return "direct"; }
  absl::Status Call(const InputSets& sets, int i, cudaStream_t stream) override {
    return runner_->Run(sets.args(i), stream);
  }

 private:
  std::shared_ptr<gemm::Nvfp4GroupedGemm> runner_;
};

// An executor and the runner it borrows; the runner is declared first, so it outlives the
// executor.
struct Cache {
  std::shared_ptr<gemm::Nvfp4GroupedGemm> runner;
  std::unique_ptr<graph_cache::GraphExecutor> exec;
};

// Calls through the graph cache (GraphExecutor::Run). `max_bindings` = 1 makes every call with
// other buffers than the last a kernel-node patch (the rebind mode); a larger value keeps one exec
// per recurring binding, so the GPU MODE loop's 15 input sets each replay their own graph.
class ExecutorMode : public Mode {
 public:
  ExecutorMode(const char* name, Cache cache) : name_(name), cache_(std::move(cache)) {}
  const char* name() const override { return name_; }
  absl::Status Call(const InputSets& sets, int i, cudaStream_t stream) override {
    return cache_.exec->Run(sets.args(i), stream);
  }
  uint64_t merged_calls() const override { return cache_.exec->counters().merged_calls; }

 private:
  const char* name_;
  Cache cache_;
};

// Calls [first, first + count) of `sets` run directly once (untimed: the stream's workspaces
// then exist), then captured by hand into one graph: the runner's own Run inside one stream
// capture, instantiated and uploaded.
absl::Status CaptureByHand(gemm::Nvfp4GroupedGemm* runner, const InputSets& sets, int first,
                           int count, cudaStream_t stream, Graph* graph, GraphExec* exec) {
  for (int i = first; i < first + count; ++i) {
    ENCORE_RETURN_IF_ERROR(runner->Run(sets.args(i), stream));
  }
  ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream), "prebuilt warm-up");
  ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                              "begin capture");
  absl::Status run = absl::OkStatus();
  for (int i = first; i < first + count && run.ok(); ++i) run = runner->Run(sets.args(i), stream);
  cudaGraph_t raw = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &raw);  // always ends the capture
  Graph captured(raw);
  ENCORE_RETURN_IF_ERROR(run);
  ENCORE_RETURN_IF_CUDA_ERROR(ended, "end capture");
  ENCORE_ASSIGN_OR_RETURN(GraphExec instantiated, GraphExec::Instantiate(captured.get()));
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphUpload(instantiated.get(), stream), "graph upload");
  exec->reset();  // the old exec before its graph
  *graph = std::move(captured);
  *exec = std::move(instantiated);
  return absl::OkStatus();
}

// Not an Encore mode but graph_per_call's floor: each input set's call captured by hand into
// its own graph up front (Begin, untimed), then one cudaGraphLaunch per call, as a program that
// knows its buffers in advance would replay them. graph_per_call minus this is the cache's own
// cost (lookup, capture check, counters); this minus the empty 1-node floor is what launching
// the real graphs (2 kernel nodes with their parameter blocks, GPU busy) costs the driver.
class PrebuiltGraphMode : public Mode {
 public:
  // How Call launches (replay --encore_ab_query=1 adds the driver paths, session 29): the
  // runtime's cudaGraphLaunch, the driver's cuGraphLaunch, or the driver calls an Encore hit
  // makes (cuCtxGetCurrent, cuStreamIsCapturing, cuGraphLaunch) without Encore's own work.
  enum class Path { kRuntime, kDriver, kDriverWithQuery };
  explicit PrebuiltGraphMode(std::shared_ptr<gemm::Nvfp4GroupedGemm> runner,
                             Path path = Path::kRuntime, DriverApi driver = {})
      : runner_(std::move(runner)), path_(path), driver_(driver) {}
  const char* name() const override {
    switch (path_) {
      case Path::kDriver:
        return "graph_prebuilt_driver";
      case Path::kDriverWithQuery:
        return "graph_prebuilt_query";
      case Path::kRuntime:
        break;
    }
    return "graph_prebuilt";
  }
  absl::Status Begin(const InputSets& sets, cudaStream_t stream) override {
    execs_.clear();
    graphs_.clear();
    for (int i = 0; i < sets.count(); ++i) {
      Graph graph;
      GraphExec exec;
      ENCORE_RETURN_IF_ERROR(CaptureByHand(runner_.get(), sets, i, 1, stream, &graph, &exec));
      graphs_.push_back(std::move(graph));
      execs_.push_back(std::move(exec));
    }
    return absl::OkStatus();
  }
  absl::Status Call(const InputSets&, int i, cudaStream_t stream) override {
    cudaGraphExec_t exec = execs_[static_cast<size_t>(i)].get();
    if (path_ == Path::kRuntime) return ToStatus(cudaGraphLaunch(exec, stream), "prebuilt launch");
    if (path_ == Path::kDriverWithQuery) {
      CUcontext ctx = nullptr;
      CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
      if (driver_.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr ||
          driver_.stream_is_capturing(stream, &status) != CUDA_SUCCESS ||
          status != CU_STREAM_CAPTURE_STATUS_NONE) {
        return absl::InternalError("prebuilt_query: capture-state query failed");
      }
    }
    return driver_.graph_launch(exec, stream) == CUDA_SUCCESS
               ? absl::OkStatus()
               : absl::InternalError("prebuilt: cuGraphLaunch failed");
  }

 private:
  std::shared_ptr<gemm::Nvfp4GroupedGemm> runner_;
  const Path path_;
  const DriverApi driver_;
  std::vector<Graph> graphs_;  // declared before execs_: destroyed after them
  std::vector<GraphExec> execs_;
};

// Not an Encore mode but graph_batch's floor: the 15 calls captured by hand into ONE graph up
// front (Begin, untimed: the runner's own Run inside one stream capture, so its edges are Run's,
// not the executor's), then one cudaGraphLaunch per batch (at EndBatch; Call does nothing).
// graph_batch minus this is the batch path's own cost (Add copies, the memo's compare of every
// group, the capture check); this minus graph_launch_15 / 15 is what the driver charges for the
// real multi-kernel graph beyond an empty one.
class PrebuiltBatchMode : public Mode {
 public:
  explicit PrebuiltBatchMode(std::shared_ptr<gemm::Nvfp4GroupedGemm> runner)
      : runner_(std::move(runner)) {}
  const char* name() const override { return "graph_batch_prebuilt"; }
  absl::Status Begin(const InputSets& sets, cudaStream_t stream) override {
    return CaptureByHand(runner_.get(), sets, 0, sets.count(), stream, &graph_, &exec_);
  }
  absl::Status Call(const InputSets&, int, cudaStream_t) override { return absl::OkStatus(); }
  absl::Status EndBatch(cudaStream_t stream) override {
    return ToStatus(cudaGraphLaunch(exec_.get(), stream), "prebuilt batch graph launch");
  }

 private:
  std::shared_ptr<gemm::Nvfp4GroupedGemm> runner_;
  Graph graph_;  // declared before exec_: destroyed after it
  GraphExec exec_;
};

// The 15 calls of a batch as one multi-kernel graph (GemmBatch: Add, then Flush).
class BatchMode : public Mode {
 public:
  BatchMode(const char* name, Cache cache)
      : name_(name), cache_(std::move(cache)), batch_(cache_.exec.get()) {}
  const char* name() const override { return name_; }
  absl::Status Call(const InputSets& sets, int i, cudaStream_t) override {
    return batch_.Add(sets.args(i));
  }
  absl::Status EndBatch(cudaStream_t stream) override { return batch_.Flush(stream); }
  uint64_t merged_calls() const override { return cache_.exec->counters().merged_calls; }

 private:
  const char* name_;
  Cache cache_;
  graph_cache::GemmBatch batch_;
};

// The recurring-sequence recorder in step-bounded mode: the program just makes its calls and
// marks the step boundary; the recorder learns the period and replays it as one graph.
class SequenceMode : public Mode {
 public:
  explicit SequenceMode(Cache cache) : cache_(std::move(cache)) {}
  const char* name() const override { return "sequence_step"; }
  absl::Status Begin(const InputSets&, cudaStream_t stream) override {
    graph_cache::SequenceOptions options;
    options.mode = graph_cache::SequenceMode::kStepBounded;
    ENCORE_ASSIGN_OR_RETURN(
        rec_, graph_cache::SequenceRecorder::Create(cache_.exec.get(), stream, options));
    return absl::OkStatus();
  }
  absl::Status Call(const InputSets& sets, int i, cudaStream_t) override {
    return rec_->Run(sets.args(i));
  }
  absl::Status EndBatch(cudaStream_t) override { return rec_->EndStep(); }
  uint64_t merged_calls() const override { return cache_.exec->counters().merged_calls; }

 private:
  Cache cache_;
  std::unique_ptr<graph_cache::SequenceRecorder> rec_;
};

// Dynamic M: each input set's buffers are sized for its M (the capacity); the actual token count
// per group is read by the kernel from a device array that changes every step (as an MoE router
// would write it), so every step replays the same graphs with no re-capture and no host sync.
// The per-step update is one device-to-device copy from a table of random M vectors in
// [capacity/2, capacity], issued with the first call of the step and counted in its cost.
class DynamicMMode : public Mode {
 public:
  explicit DynamicMMode(Cache cache) : cache_(std::move(cache)) {}
  const char* name() const override { return "dynamic_m"; }
  absl::Status Begin(const InputSets& sets, cudaStream_t stream) override {
    sets_ = sets.count();
    groups_ = static_cast<int>(sets.problems(0).size());
    const size_t per_step = static_cast<size_t>(sets_) * groups_;
    std::vector<int32_t> table(per_step * kSteps);
    std::mt19937 rng(7);
    for (int step = 0; step < kSteps; ++step) {
      for (int i = 0; i < sets_; ++i) {
        for (int g = 0; g < groups_; ++g) {
          const int cap = sets.problems(i)[g].m;
          std::uniform_int_distribution<int> d(cap / 2, cap);
          table[(step * sets_ + i) * groups_ + g] = d(rng);
        }
      }
    }
    ENCORE_ASSIGN_OR_RETURN(table_, DeviceBuffer::Create(table.size() * sizeof(int32_t)));
    ENCORE_ASSIGN_OR_RETURN(m_, DeviceBuffer::Create(per_step * sizeof(int32_t)));
    ENCORE_RETURN_IF_CUDA_ERROR(
        cudaMemcpy(table_.get(), table.data(), table_.size(), cudaMemcpyHostToDevice),
        "upload the M table");
    ENCORE_RETURN_IF_CUDA_ERROR(
        cudaMemcpyAsync(m_.get(), table_.get(), m_.size(), cudaMemcpyDeviceToDevice, stream),
        "initial M");
    return absl::OkStatus();
  }
  absl::Status Call(const InputSets& sets, int i, cudaStream_t stream) override {
    if (i == 0) {
      step_ = (step_ + 1) % kSteps;
      ENCORE_RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(m_.get(), table_.as<char>() + step_ * m_.size(),
                                                  m_.size(), cudaMemcpyDeviceToDevice, stream),
                                  "new token counts for the step");
    }
    gemm::GroupedGemmArguments args = sets.args(i);
    args.device_m = m_.as<int32_t>() + static_cast<size_t>(i) * groups_;
    return cache_.exec->Run(args, stream);
  }

 private:
  static constexpr int kSteps = 16;
  Cache cache_;
  DeviceBuffer table_;
  DeviceBuffer m_;
  int sets_ = 0;
  int groups_ = 0;
  int step_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<Mode>>> MakeModes(
    std::shared_ptr<gemm::Nvfp4GroupedGemm> shared,
    std::shared_ptr<gemm::Nvfp4GroupedGemm> fused, bool ab_query) {
  std::vector<std::unique_ptr<Mode>> modes;
  modes.push_back(std::make_unique<ColdEagerMode>());
  modes.push_back(std::make_unique<DirectMode>(shared));

  auto executor = [&](int max_bindings, std::shared_ptr<gemm::Nvfp4GroupedGemm> runner,
                      graph_cache::RebindMode rebind =
                          graph_cache::RebindMode::kPatch) -> absl::StatusOr<Cache> {
    graph_cache::ExecutorOptions o;
    o.max_bindings_per_structure = max_bindings;
    o.rebind = rebind;
    Cache c{runner, nullptr};
    ENCORE_ASSIGN_OR_RETURN(c.exec, graph_cache::GraphExecutor::Create(runner.get(), o));
    return c;
  };
  ENCORE_ASSIGN_OR_RETURN(auto per_call, executor(16, shared));
  modes.push_back(std::make_unique<ExecutorMode>("graph_per_call", std::move(per_call)));
  modes.push_back(std::make_unique<PrebuiltGraphMode>(shared));
  if (ab_query) {
    ENCORE_ASSIGN_OR_RETURN(const DriverApi driver, DriverApi::Load());
    modes.push_back(std::make_unique<PrebuiltGraphMode>(
        shared, PrebuiltGraphMode::Path::kDriver, driver));
    modes.push_back(std::make_unique<PrebuiltGraphMode>(
        shared, PrebuiltGraphMode::Path::kDriverWithQuery, driver));
  }
  ENCORE_ASSIGN_OR_RETURN(auto rebind, executor(1, shared));
  modes.push_back(std::make_unique<ExecutorMode>("graph_rebind", std::move(rebind)));
  ENCORE_ASSIGN_OR_RETURN(auto rebind_bound,
                          executor(1, shared, graph_cache::RebindMode::kBound));
  modes.push_back(
      std::make_unique<ExecutorMode>("graph_rebind_bound", std::move(rebind_bound)));
  ENCORE_ASSIGN_OR_RETURN(auto batch, executor(16, shared));
  modes.push_back(std::make_unique<BatchMode>("graph_batch", std::move(batch)));
  modes.push_back(std::make_unique<PrebuiltBatchMode>(shared));
  if (fused != nullptr) {
    ENCORE_ASSIGN_OR_RETURN(auto batch_fused, executor(16, fused));
    modes.push_back(std::make_unique<BatchMode>("graph_batch_fused", std::move(batch_fused)));
  }
  ENCORE_ASSIGN_OR_RETURN(auto sequence, executor(16, shared));
  modes.push_back(std::make_unique<SequenceMode>(std::move(sequence)));
  ENCORE_ASSIGN_OR_RETURN(auto dynamic, executor(16, shared));
  modes.push_back(std::make_unique<DynamicMMode>(std::move(dynamic)));
  return modes;
}

}  // namespace encore::bench
