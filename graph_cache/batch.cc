#include "graph_cache/batch.h"

#include "absl/strings/str_cat.h"

namespace encore::graph_cache {

absl::Status GemmBatch::Add(const gemm::GroupedGemmArguments& args, gemm::KernelKind kind) {
  if (slots_.size() >= static_cast<size_t>(executor_->options().max_batch_calls)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch already holds max_batch_calls = ", executor_->options().max_batch_calls, " calls"));
  }
  if (args.groups.empty() || args.groups.size() > static_cast<size_t>(gemm::kMaxGroups)) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch call with ", args.groups.size(), " groups"));
  }
  slots_.push_back(Slot{groups_.size(), args.groups.size(), args.device_m, kind});
  groups_.insert(groups_.end(), args.groups.begin(), args.groups.end());
  return absl::OkStatus();
}

absl::Status GemmBatch::Flush(cudaStream_t stream, BatchRunOptions options) {
  calls_.clear();
  for (const Slot& s : slots_) {  // spans are taken now: groups_ no longer grows
    calls_.push_back(
        GemmCall{gemm::GroupedGemmArguments{absl::MakeConstSpan(groups_.data() + s.first, s.count),
                                            s.device_m},
                 s.kind});
  }
  const absl::Status status = executor_->RunBatch(calls_, stream, options);
  Clear();
  return status;
}

void GemmBatch::Clear() {
  groups_.clear();
  slots_.clear();
  calls_.clear();
}

}  // namespace encore::graph_cache
