#include "graph_cache/sequence.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cuda_utils/status.h"

namespace encore::graph_cache {

void SequenceRecorder::Record::Assign(const gemm::GroupedGemmArguments& args, gemm::KernelKind k) {
  kind = k;
  num_groups = static_cast<int>(args.groups.size());
  device_m = args.device_m;
  std::copy(args.groups.begin(), args.groups.end(), groups);
}

bool SequenceRecorder::Record::Matches(const gemm::GroupedGemmArguments& args,
                                       gemm::KernelKind k) const {
  return SameCall(gemm::GroupedGemmArguments{absl::MakeConstSpan(groups, num_groups), device_m},
                  kind, args, k);
}

bool SequenceRecorder::Record::SameAs(const Record& o) const {
  return o.Matches(AsCall().args, kind);
}

GemmCall SequenceRecorder::Record::AsCall() const {
  return GemmCall{gemm::GroupedGemmArguments{
                      absl::MakeConstSpan(groups, static_cast<size_t>(num_groups)), device_m},
                  kind};
}

absl::StatusOr<std::unique_ptr<SequenceRecorder>> SequenceRecorder::Create(
    GraphExecutor* executor, cudaStream_t stream, SequenceOptions options) {
  if (executor == nullptr) return absl::InvalidArgumentError("executor is null");
  if (options.max_period < 1) return absl::InvalidArgumentError("max_period must be ≥ 1");
  if (options.max_period > executor->options().max_batch_calls) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_period = ", options.max_period, " exceeds the executor's ",
                     "max_batch_calls = ", executor->options().max_batch_calls));
  }
  if (options.mode != SequenceMode::kStepBounded && options.mode != SequenceMode::kSpeculative) {
    return absl::InvalidArgumentError("mode is not a SequenceMode");
  }
  // (≤ 1024: the detector's confirm length, confirm_repeats × period, stays inside an int.)
  if (options.confirm_repeats < 2 || options.confirm_repeats > 1024) {
    return absl::InvalidArgumentError("confirm_repeats must be in [2, 1024]");
  }
  if (options.min_confirm_calls < 0) {
    return absl::InvalidArgumentError("min_confirm_calls must be ≥ 0");
  }
  if (options.max_speculative_hazards < 1) {
    return absl::InvalidArgumentError(
        "max_speculative_hazards must be ≥ 1 (for no speculation, use kStepBounded)");
  }
  return std::unique_ptr<SequenceRecorder>(new SequenceRecorder(executor, stream, options));
}

SequenceRecorder::SequenceRecorder(GraphExecutor* executor, cudaStream_t stream,
                                   SequenceOptions options)
    : executor_(executor),
      stream_(stream),
      options_(options),
      detector_(options.max_period, options.confirm_repeats, options.min_confirm_calls),
      ring_(static_cast<size_t>(2 * options.max_period)),
      sig_(std::make_unique<CallSignature>()),
      period_(static_cast<size_t>(options.max_period)) {
  period_calls_.reserve(static_cast<size_t>(options.max_period));
}

absl::Status SequenceRecorder::Run(const gemm::GroupedGemmArguments& args, gemm::KernelKind kind) {
  ++counters_.calls;
  ++calls_in_step_;
  if (state_ == State::kPassThrough) {
    ++counters_.passthrough_calls;
    return executor_->Run(args, stream_, kind);
  }
  if (state_ == State::kLearning) return Learn(args, kind);

  // Replaying.
  const bool match = period_[static_cast<size_t>(pos_)].Matches(args, kind);
  if (!match) {
    if (options_.mode == SequenceMode::kStepBounded) {
      ENCORE_RETURN_IF_ERROR(FlushDeferred());
    } else if (aligned_ && pos_ != 0) {
      // The period graph already ran positions pos_..p-1 with the recorded bindings (HAZARD).
      NoteHazard();
    }
    Diverge();
    return Learn(args, kind);
  }
  if (!aligned_) {
    // Adopted in the middle of a period: the rest of it runs directly; replay starts at the
    // next period boundary.
    pos_ = (pos_ + 1) % period_len_;
    aligned_ = pos_ == 0;
    ++counters_.passthrough_calls;
    return executor_->Run(args, stream_, kind);
  }
  if (options_.mode == SequenceMode::kStepBounded) {
    if (++pos_ == period_len_) return LaunchPeriod();  // resets pos_
    return absl::OkStatus();                           // deferred
  }
  // kSpeculative: the first call launches the whole period; the others' work already ran.
  const bool first = pos_ == 0;
  pos_ = (pos_ + 1) % period_len_;
  ++counters_.replayed_calls;
  if (first) {
    ++counters_.period_launches;
    return RunPeriodGraph();
  }
  return absl::OkStatus();
}

void SequenceRecorder::NoteHazard() {
  ++counters_.speculative_hazards;
  if (static_cast<int>(counters_.speculative_hazards) >= options_.max_speculative_hazards) {
    counters_.speculation_disabled = true;
  }
}

absl::Status SequenceRecorder::EndStep() {
  calls_in_step_ = 0;  // (a step boundary whatever the flush below returns)
  if (state_ == State::kReplaying && pos_ != 0) {
    // The step ended inside a period: steps and the period do not line up.
    if (options_.mode == SequenceMode::kStepBounded) {
      ENCORE_RETURN_IF_ERROR(FlushDeferred());  // (a failed flush has re-learned already)
    } else if (aligned_) {
      NoteHazard();  // the rest of the period already ran but was never requested
    }
    Diverge();
  }
  return absl::OkStatus();
}

absl::Status SequenceRecorder::Learn(const gemm::GroupedGemmArguments& args,
                                     gemm::KernelKind kind) {
  ENCORE_RETURN_IF_ERROR(
      BuildSignature(args, kind, executor_->options().m_bucket, sig_.get(), stream_));
  ring_[static_cast<size_t>(recorded_ % static_cast<int64_t>(ring_.size()))].Assign(args, kind);
  ++recorded_;
  ++counters_.passthrough_calls;
  ENCORE_RETURN_IF_ERROR(executor_->Run(args, stream_, kind));
  if (const int p = detector_.Add(sig_->FullHash()); p > 0) TryAdopt(p);
  return absl::OkStatus();
}

void SequenceRecorder::TryAdopt(int p) {
  const int64_t n = recorded_;
  if (n < 2 * static_cast<int64_t>(p)) return;
  const int64_t cap = static_cast<int64_t>(ring_.size());
  const auto at = [&](int64_t i) -> const Record& { return ring_[static_cast<size_t>(i % cap)]; };
  for (int64_t i = n - p; i < n; ++i) {
    if (!at(i).SameAs(at(i - p))) return;  // a hash collision: keep learning
  }
  // Next call (index n) is expected to equal call n - p. Rotate the period so that position 0
  // is the first call of a step (the last EndStep, or the recorder's creation).
  const int r = static_cast<int>(calls_in_step_ % p);
  // Position q of the rotated period is call (n - p) + ((q - r) mod p).
  for (int q = 0; q < p; ++q) {
    const int64_t src = (n - p) + ((q - r) % p + p) % p;
    period_[static_cast<size_t>(q)] = at(src);
  }
  period_calls_.clear();
  for (int q = 0; q < p; ++q) period_calls_.push_back(period_[static_cast<size_t>(q)].AsCall());
  ticket_ = GraphExecutor::BatchTicket{};  // new period records: no graph vouched for them yet
  period_len_ = p;
  pos_ = r;
  aligned_ = r == 0;
  state_ = counters_.speculation_disabled ? State::kPassThrough : State::kReplaying;
  counters_.period = state_ == State::kReplaying ? p : 0;
  ++counters_.periods_learned;
}

absl::Status SequenceRecorder::LaunchPeriod() {
  pos_ = 0;
  ++counters_.period_launches;
  counters_.replayed_calls += static_cast<uint64_t>(period_len_);
  return RunPeriodGraph();
}

absl::Status SequenceRecorder::RunPeriodGraph() {
  absl::Status launched =
      executor_->RunBatchWithTicket(period_calls_, stream_, BatchRunOptions{true}, &ticket_);
  // A failed launch may have run none of the period: the recorder re-learns, so no later call is
  // taken as done (the error reports the calls it covered, deferred ones included).
  if (!launched.ok()) Diverge();
  return launched;
}

absl::Status SequenceRecorder::FlushDeferred() {
  if (!aligned_ || options_.mode != SequenceMode::kStepBounded) return absl::OkStatus();
  // NOTES: the deferred calls leave the recorder before any of them runs, and a failure stops
  // the replay: a flush that fails half-way is never flushed again (which would run its first
  // calls twice).
  const int deferred = pos_;
  pos_ = 0;
  for (int q = 0; q < deferred; ++q) {
    ++counters_.flushed_calls;
    const GemmCall& c = period_calls_[static_cast<size_t>(q)];
    if (absl::Status s = executor_->Run(c.args, stream_, c.kind); !s.ok()) {
      Diverge();
      return s;
    }
  }
  return absl::OkStatus();
}

SequenceRecorder::~SequenceRecorder() {
  // Deferred calls returned OK from Run: they still run (errors cannot be reported here; call
  // EndStep first to see them).
  if (state_ == State::kReplaying) (void)FlushDeferred();
}

void SequenceRecorder::Diverge() {
  ++counters_.divergences;
  ticket_ = GraphExecutor::BatchTicket{};
  state_ = counters_.speculation_disabled ? State::kPassThrough : State::kLearning;
  counters_.period = 0;
  pos_ = 0;
  aligned_ = false;
  detector_.Reset();
  recorded_ = 0;
}

}  // namespace encore::graph_cache
