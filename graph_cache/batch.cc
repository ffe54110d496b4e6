#include "graph_cache/batch.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace encore::graph_cache {

absl::Status GemmBatch::Add(const gemm::GroupedGemmArguments& args, gemm::KernelKind kind) {
  const size_t ng = args.groups.size();
  if (calls_.size() >= max_calls_) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch already holds max_batch_calls = ", max_calls_, " calls"));
  }
  if (ng == 0 || ng > static_cast<size_t>(gemm::kMaxGroups)) {
    return absl::InvalidArgumentError(absl::StrCat("batch call with ", ng, " groups"));
  }
  // NOTES: groups_ only grows (never shrinks on Clear), so once a recurring batch has been added
  // once, Add is two bounds checks, one memcpy and two appends within capacity. The call's span
  // is set at Flush (a growth of groups_ may move it until then).
  const size_t first = num_groups_;
  if (first + ng > groups_.size()) groups_.resize(std::max(first + ng, 2 * groups_.size()));
  // Element by element: a batch's calls have a few groups each, where memcpy's `rep movs` start
  // costs more than the copy (seen in BM_BatchFlush's profile).
  gemm::GroupProblem* dst = groups_.data() + first;
  for (size_t i = 0; i < ng; ++i) dst[i] = args.groups[i];
  num_groups_ = first + ng;
  Slot& slot = slots_.emplace_back();  // fields set in place: no temporary to copy
  slot.first = first;
  slot.count = ng;
  GemmCall& call = calls_.emplace_back();
  call.args.device_m = args.device_m;
  call.kind = kind;
  return absl::OkStatus();
}

absl::Status GemmBatch::Flush(cudaStream_t stream, BatchRunOptions options) {
  const gemm::GroupProblem* base = groups_.data();
  for (size_t i = 0; i < calls_.size(); ++i) {  // groups_ no longer grows: take the spans now
    calls_[i].args.groups = absl::MakeConstSpan(base + slots_[i].first, slots_[i].count);
  }
  const absl::Status status = executor_->RunBatch(calls_, stream, options);
  Clear();
  return status;
}

void GemmBatch::Clear() {
  num_groups_ = 0;
  slots_.clear();
  calls_.clear();
}

}  // namespace encore::graph_cache
