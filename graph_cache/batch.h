// GemmBatch: collect several grouped-GEMM calls, then flush them on a stream as ONE straight-line
// multi-kernel graph (GraphExecutor::RunBatch). The batch copies each call's groups when it is
// added, so the caller's argument arrays need not outlive Add. Its storage is reused across
// flushes: a recurring batch allocates nothing once warm.
//
// Semantics: Flush enqueues the calls in the order they were added, exactly as if each had been
// run with GraphExecutor::Run at the moment of Flush (not at the moment of Add). Work the caller
// enqueues on the stream between Add and Flush runs BEFORE the batch. Consecutive small calls that
// read and write nothing another one of them writes may run as one grouped-GEMM launch of all
// their groups (ExecutorOptions::merge_calls; by default only where that sums every element as
// each call's own launch does, so the results are bit for bit those of separate calls).
//
// Thread safety: a GemmBatch is used by one thread at a time; any number of batches (on any
// threads) may flush into one executor concurrently.
//
// Example:
//   encore::graph_cache::GemmBatch batch(executor.get());
//   ENCORE_RETURN_IF_ERROR(batch.Add(layer0_args));
//   ENCORE_RETURN_IF_ERROR(batch.Add(layer1_args, encore::gemm::KernelKind::kPersistent));
//   ENCORE_RETURN_IF_ERROR(batch.Flush(stream));  // one graph launch; the batch is empty again
#ifndef ENCORE_GRAPH_CACHE_BATCH_H_
#define ENCORE_GRAPH_CACHE_BATCH_H_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "gemm/launch.h"
#include "gemm/problem.h"
#include "graph_cache/executor.h"

namespace encore::graph_cache {

class GemmBatch {
 public:
  // `executor` is not owned and must outlive the batch.
  explicit GemmBatch(GraphExecutor* executor)
      : executor_(executor),
        max_calls_(static_cast<size_t>(std::max(0, executor->options().max_batch_calls))) {}

  // Appends a call. InvalidArgument when the batch already holds executor.max_batch_calls
  // calls or the call has no groups / more than gemm::kMaxGroups.
  [[nodiscard]] absl::Status Add(const gemm::GroupedGemmArguments& args,
                                 gemm::KernelKind kind = gemm::KernelKind::kAuto);

  // Runs every added call (see Semantics) and empties the batch, also when it fails.
  [[nodiscard]] absl::Status Flush(cudaStream_t stream,
                                   BatchRunOptions options = BatchRunOptions{});

  void Clear();
  size_t size() const { return calls_.size(); }
  bool empty() const { return calls_.empty(); }

 private:
  GraphExecutor* executor_;
  size_t max_calls_;
  // Every added call's groups, back to back; only the first num_groups_ are in use.
  std::vector<gemm::GroupProblem> groups_;
  size_t num_groups_ = 0;
  // Per added call: where its groups sit in groups_, and the call itself, whose span is only set
  // by Flush.
  struct Slot {
    size_t first = 0;
    size_t count = 0;
  };
  std::vector<Slot> slots_;
  std::vector<GemmCall> calls_;
};

}  // namespace encore::graph_cache

#endif  // ENCORE_GRAPH_CACHE_BATCH_H_
