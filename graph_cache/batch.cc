#include "graph_cache/batch.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph_cache/signature.h"

namespace encore::graph_cache {

GemmBatch::GemmBatch(GemmBatch&& other) noexcept
    : executor_(other.executor_), max_calls_(other.max_calls_) {
  *this = std::move(other);
}

GemmBatch& GemmBatch::operator=(GemmBatch&& other) noexcept {
  if (this == &other) return *this;
  executor_ = other.executor_;
  max_calls_ = other.max_calls_;
  groups_ = std::move(other.groups_);
  slots_ = std::move(other.slots_);
  calls_ = std::move(other.calls_);
  num_groups_ = other.num_groups_;
  num_calls_ = other.num_calls_;
  flushed_calls_ = other.flushed_calls_;
  ticket_ = other.ticket_;
  // NOTES: the counters describe the vectors' contents, so the moved-from batch gets both reset
  // (a moved-from vector is only "valid but unspecified"; its counters would still claim calls).
  other.groups_.clear();
  other.slots_.clear();
  other.calls_.clear();
  other.num_groups_ = 0;
  other.num_calls_ = 0;
  other.ForgetFlushed();
  return *this;
}

absl::Status GemmBatch::Add(const gemm::GroupedGemmArguments& args, gemm::KernelKind kind) {
  const size_t ng = args.groups.size();
  if (num_calls_ >= max_calls_) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch already holds max_batch_calls = ", max_calls_, " calls"));
  }
  if (ng == 0 || ng > static_cast<size_t>(gemm::kMaxGroups)) {
    return absl::InvalidArgumentError(absl::StrCat("batch call with ", ng, " groups"));
  }
  const size_t i = num_calls_;
  const size_t first = num_groups_;
  // NOTES: while every call so far equals the last flush's (its records still held), this call's
  // slot and groups sit where that flush's call i does (same counts before it), so an equal call
  // needs no write at all. The first call that differs overwrites them: they are forgotten.
  if (!(i < flushed_calls_ && SameAsFlushed(i, args, kind))) {
    ForgetFlushed();
    // groups_ only grows (never shrinks), so once a recurring batch has been added once, this is
    // a copy and two stores within capacity. Element by element: a batch's calls have a few
    // groups each, where memcpy's `rep movs` start costs more than the copy (BM_BatchFlush).
    if (first + ng > groups_.size()) groups_.resize(std::max(first + ng, 2 * groups_.size()));
    gemm::GroupProblem* dst = groups_.data() + first;
    for (size_t g = 0; g < ng; ++g) dst[g] = args.groups[g];
    if (i == slots_.size()) {
      slots_.emplace_back();
      calls_.emplace_back();
    }
    slots_[i] = Slot{first, ng};
    calls_[i].args.device_m = args.device_m;
    calls_[i].kind = kind;
  }
  num_groups_ = first + ng;
  num_calls_ = i + 1;
  return absl::OkStatus();
}

bool GemmBatch::SameAsFlushed(size_t i, const gemm::GroupedGemmArguments& args,
                              gemm::KernelKind kind) const {
  const Slot& slot = slots_[i];
  const gemm::GroupedGemmArguments held{
      absl::MakeConstSpan(groups_.data() + slot.first, slot.count), calls_[i].args.device_m};
  return SameCall(held, calls_[i].kind, args, kind);
}

absl::Status GemmBatch::Flush(cudaStream_t stream, BatchRunOptions options) {
  if (num_calls_ == 0) return absl::OkStatus();
  // The spans are set here, every time (groups_ no longer grows; a copy of this batch holds its
  // own groups_).
  const gemm::GroupProblem* base = groups_.data();
  for (size_t i = 0; i < num_calls_; ++i) {
    calls_[i].args.groups = absl::MakeConstSpan(base + slots_[i].first, slots_[i].count);
  }
  // Fewer calls than the last flush (a prefix) drop its ticket; equal ones are the calls it was
  // issued for (new calls forgot it in Add).
  if (num_calls_ != flushed_calls_) ticket_ = GraphExecutor::BatchTicket{};
  const absl::Span<const GemmCall> calls(calls_.data(), num_calls_);
  const absl::Status status = executor_->RunBatchWithTicket(calls, stream, options, &ticket_);
  flushed_calls_ = num_calls_;
  num_calls_ = 0;
  num_groups_ = 0;
  return status;
}

void GemmBatch::Clear() {
  // (An Add that overwrote the last flush's records has forgotten them already.)
  num_calls_ = 0;
  num_groups_ = 0;
}

void GemmBatch::ForgetFlushed() {
  flushed_calls_ = 0;
  ticket_ = GraphExecutor::BatchTicket{};
}

}  // namespace encore::graph_cache
