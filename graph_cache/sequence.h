// SequenceRecorder: an opt-in observer of the grouped-GEMM calls a program makes on ONE stream.
// When the calls become periodic (period p ≤ max_period, confirmed over k ≥ 2 repetitions and then
// checked call by call, exactly), it replays one period as one multi-kernel graph (through
// GraphExecutor::RunBatch, so the graph is cached, patched and bounded like any batch) instead of
// p separate launches.
//
// Detection: a ring of recent call hashes (key + binding); for every candidate p the recorder
// tracks the run of calls equal to the call p earlier, and confirms p when the last
// max(k·p, min_confirm_calls) calls are p-periodic (internal/period_detector.h). A hash match is
// only a candidate: before replaying, the last period is compared field by field with the one
// before it. Any period 1..max_period is found, whatever the noise before it.
//
// Two modes, chosen at creation:
//
// kStepBounded (default, safe): once the period is known, a call that matches the next expected
//   call exactly is DEFERRED (nothing is launched). The call that completes the period launches
//   the period graph. EndStep() marks the caller's step boundary: any deferred calls of an
//   incomplete period are launched directly, in order. So by the end of EndStep every call of the
//   step has been enqueued, in the order made. A call that does not match flushes the deferred
//   calls directly, runs itself directly and re-learns. Nothing ran early, so a divergence costs
//   nothing but the lost replay.
//   Caller contract: between a call and the end of its step (EndStep, or the call completing the
//   period), the caller enqueues no work on the stream that reads that call's output or
//   overwrites its inputs — its device_m array included (deferred work runs later than the call
//   was made, and reads everything, token counts too, at that later time). Inputs produced on
//   the stream before the call are fine: they precede the launch. Typical fit: a benchmark or
//   serving loop that enqueues one step's GEMMs and then calls EndStep.
//   If steps do not end on period boundaries (EndStep arrives mid-period), the deferred calls
//   are flushed and the recorder re-learns.
//
// Phase (both modes): a learned period is rotated to begin at a step start (the last EndStep,
// or the recorder's creation when EndStep is never called). When it is adopted in the middle of
// a period, the rest of that period runs directly and replay begins at the next boundary.
//
// kSpeculative (opt-in, for harnesses that re-run the same inputs): the first call of a period
//   launches the WHOLE period graph at once; the following matching calls are no-ops (their work
//   already ran). Valid only when every input of the whole period is ready, and every output
//   buffer the period names may be written, at the moment of the period's first call.
//   HAZARD: the period graph runs calls 1..p-1 with the RECORDED bindings before those calls are
//   made. If call j (j > 0) then differs (other buffers, other sizes), or never comes, the graph
//   has already written the recorded outputs of calls j..p-1 — buffers the program may by now
//   use for something else — and computed them from inputs that may not have been final. That
//   cannot be undone. The recorder runs the diverging call and the rest directly (so the outputs
//   the program asked for are correct), counts the event (speculative_hazards), and — the safe
//   design — after `max_speculative_hazards` such events (default 1) it never speculates again
//   and passes every call through to the executor. Only use this mode when the caller
//   guarantees that a period, once begun, is made in full with the recorded bindings.
//
// Calls that are not replayed (learning, divergence, flushes) go through GraphExecutor::Run, so
// they still benefit from single-call graphs. Results are always those of direct launches in
// call order (given the mode's contract).
//
// Thread safety: a recorder belongs to one stream and is used by one thread at a time (like the
// stream itself). Several recorders may share one executor from several threads.
//
// Example (step-bounded):
//   ENCORE_ASSIGN_OR_RETURN(auto rec, encore::graph_cache::SequenceRecorder::Create(
//                                         executor.get(), stream));
//   for (int step = 0; step < steps; ++step) {
//     for (const auto& layer : layers) ENCORE_RETURN_IF_ERROR(rec->Run(layer.args));
//     ENCORE_RETURN_IF_ERROR(rec->EndStep());  // outputs of the step are enqueued by now
//   }
#ifndef ENCORE_GRAPH_CACHE_SEQUENCE_H_
#define ENCORE_GRAPH_CACHE_SEQUENCE_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gemm/launch.h"
#include "gemm/problem.h"
#include "graph_cache/executor.h"
#include "graph_cache/internal/period_detector.h"
#include "graph_cache/signature.h"

namespace encore::graph_cache {

enum class SequenceMode { kStepBounded, kSpeculative };

struct SequenceOptions {
  SequenceMode mode = SequenceMode::kStepBounded;
  int max_period = 32;        // ≤ the executor's max_batch_calls
  int confirm_repeats = 2;    // k: full repetitions seen before a period is used (≥ 2)
  int min_confirm_calls = 8;  // and at least this many calls (guards against p = 1 from "A A")
  int max_speculative_hazards = 1;  // kSpeculative: stop speculating after this many
};

struct SequenceCounters {
  uint64_t calls = 0;
  uint64_t periods_learned = 0;
  uint64_t period_launches = 0;    // period graphs launched (RunBatch calls)
  uint64_t replayed_calls = 0;     // calls served by a period launch
  uint64_t passthrough_calls = 0;  // calls run through GraphExecutor::Run
  uint64_t flushed_calls = 0;      // deferred calls launched directly (divergence, EndStep)
  uint64_t divergences = 0;        // replay abandoned for re-learning
  uint64_t speculative_hazards = 0;
  int period = 0;  // current period (0 while learning)
  bool speculation_disabled = false;
};

class SequenceRecorder {
 public:
  // `executor` is not owned and must outlive the recorder. InvalidArgument for options out of
  // range (max_period in [1, executor's max_batch_calls], confirm_repeats in [2, 1024],
  // min_confirm_calls ≥ 0, max_speculative_hazards ≥ 1, a SequenceMode).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SequenceRecorder>> Create(
      GraphExecutor* executor, cudaStream_t stream, SequenceOptions options = {});
  // Launches the deferred calls of an unfinished period (kStepBounded), as EndStep would, but
  // drops their errors: call EndStep first to see them. The stream must then still be valid.
  ~SequenceRecorder();

  // One call on the recorder's stream. Errors are those of the launches it makes (and
  // InvalidArgument for a malformed call). A failed launch of deferred or replayed calls (a period,
  // or a flush) reports them in the error and ends the replay: the recorder re-learns, so no call
  // after it is taken as done, and none runs twice.
  [[nodiscard]] absl::Status Run(const gemm::GroupedGemmArguments& args,
                                 gemm::KernelKind kind = gemm::KernelKind::kAuto);

  // The caller's step boundary (see the modes above).
  [[nodiscard]] absl::Status EndStep();

  const SequenceCounters& counters() const { return counters_; }
  cudaStream_t stream() const { return stream_; }

 private:
  // A copy of one call (groups inline): a ring of these feeds the period.
  struct Record {
    gemm::KernelKind kind = gemm::KernelKind::kAuto;
    int num_groups = 0;
    const int32_t* device_m = nullptr;
    gemm::GroupProblem groups[gemm::kMaxGroups];

    void Assign(const gemm::GroupedGemmArguments& args, gemm::KernelKind k);
    bool Matches(const gemm::GroupedGemmArguments& args, gemm::KernelKind k) const;
    bool SameAs(const Record& o) const;
    GemmCall AsCall() const;
  };
  enum class State { kLearning, kReplaying, kPassThrough };

  SequenceRecorder(GraphExecutor* executor, cudaStream_t stream, SequenceOptions options);

  absl::Status Learn(const gemm::GroupedGemmArguments& args, gemm::KernelKind kind);
  // The detector proposed period p: verify it exactly and switch to replaying.
  void TryAdopt(int p);
  absl::Status LaunchPeriod();
  // The period graph through the executor (both modes); a failure ends the replay.
  absl::Status RunPeriodGraph();
  absl::Status FlushDeferred();
  void Diverge();
  void NoteHazard();

  GraphExecutor* executor_;
  cudaStream_t stream_;
  SequenceOptions options_;
  SequenceCounters counters_;
  State state_ = State::kLearning;

  internal::PeriodDetector detector_;
  std::vector<Record> ring_;  // last 2·max_period calls
  int64_t recorded_ = 0;      // calls recorded into the ring since the last reset
  int64_t calls_in_step_ = 0;
  std::unique_ptr<CallSignature> sig_;

  std::vector<Record> period_;  // the period, rotated to begin at a step start
  std::vector<GemmCall> period_calls_;
  // The executor's ticket for period_calls_ (RunBatchWithTicket): lets a period launch skip the
  // executor's compare of every call the recorder has just matched against period_ itself.
  GraphExecutor::BatchTicket ticket_;
  int period_len_ = 0;
  int pos_ = 0;           // next expected position in period_
  bool aligned_ = false;  // replay active: the current period began at position 0
};

}  // namespace encore::graph_cache

#endif  // ENCORE_GRAPH_CACHE_SEQUENCE_H_
