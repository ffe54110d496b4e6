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
// A recurring batch: when a batch's calls are, field for field, the calls of its previous Flush
// (same count, kinds, device_m and every group's pointers and sizes), Add only compares (writes
// nothing) and Flush replays the graph that ran last time without the executor's compare of every
// group, provided it flushes on the same stream and nothing was evicted or patched in the executor
// since (its mutation epoch).
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
  // A copy holds the same calls and the same last flush. A moved-from batch is empty and has no
  // last flush (usable again, on the same executor).
  GemmBatch(const GemmBatch&) = default;
  GemmBatch& operator=(const GemmBatch&) = default;
  GemmBatch(GemmBatch&& other) noexcept;
  GemmBatch& operator=(GemmBatch&& other) noexcept;

  // Appends a call. InvalidArgument when the batch already holds executor.max_batch_calls
  // calls or the call has no groups / more than gemm::kMaxGroups.
  [[nodiscard]] absl::Status Add(const gemm::GroupedGemmArguments& args,
                                 gemm::KernelKind kind = gemm::KernelKind::kAuto);

  // Runs every added call (see Semantics) and empties the batch, also when it fails.
  [[nodiscard]] absl::Status Flush(cudaStream_t stream,
                                   BatchRunOptions options = BatchRunOptions{});

  // Drops the calls added since the last Flush.
  void Clear();
  size_t size() const { return num_calls_; }
  bool empty() const { return num_calls_ == 0; }

 private:
  // Whether call `i` of the last flush (still in groups_, slots_ and calls_) is `args` / `kind`.
  bool SameAsFlushed(size_t i, const gemm::GroupedGemmArguments& args,
                     gemm::KernelKind kind) const;
  // Forgets the last flush's calls (its ticket vouches for nothing any more).
  void ForgetFlushed();

  GraphExecutor* executor_;
  size_t max_calls_;
  // Every added call's groups, back to back; only the first num_groups_ are in use.
  std::vector<gemm::GroupProblem> groups_;
  size_t num_groups_ = 0;
  // Per call: where its groups sit in groups_, and the call itself (its span set by Flush).
  // Only the first num_calls_ are this batch's; NOTES: the entries past them are not cleared, so
  // the first flushed_calls_ entries (and their groups) are the last flush's calls until an Add
  // that differs from them (it sets flushed_calls_ to 0 before it writes).
  struct Slot {
    size_t first = 0;
    size_t count = 0;
  };
  std::vector<Slot> slots_;
  std::vector<GemmCall> calls_;
  size_t num_calls_ = 0;
  // Calls of the last flush still held (0: none). While > 0, every Add since that flush equaled
  // its call.
  size_t flushed_calls_ = 0;
  // The executor's ticket for the last flush's calls (GraphExecutor::RunBatchWithTicket).
  GraphExecutor::BatchTicket ticket_;
};

}  // namespace encore::graph_cache

#endif  // ENCORE_GRAPH_CACHE_BATCH_H_
