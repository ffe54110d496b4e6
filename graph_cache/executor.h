// GraphExecutor: runs NVFP4 grouped GEMMs through a cache of CUDA graphs. A call (or an explicit
// batch of calls) is keyed by the StructuralKeys of its calls (graph_cache/signature.h); a
// structure that recurs is captured once into a straight-line graph, instantiated, and from then
// on replayed with one cudaGraphLaunch. The same structure with other pointers (or another
// dynamic-M capacity in the same bucket) is served by patching the kernel nodes of the existing
// exec with freshly prepared LaunchPlans — never by re-capture or re-instantiation.
//
// State machine of one structure (an ordered list of 1..max_batch_calls StructuralKeys):
//
//   Unseen ──call──▶ Counting(1)          every call below min_repeats runs directly
//   Counting(n) ──call──▶ Counting(n+1)   (reason kBelowMinRepeats)
//   Counting(n) ──call, n+1 ≥ min_repeats──▶ Create
//       thrash guard engaged  → direct (kThrashGuard), stays Counting (the guard engages when
//                               reloads of evicted graphs dominate hits; options.h)
//       estimate > budget     → direct (kOverBudget), stays Counting
//   Create: Prepare every call (outside any capture) → BeginCapture(private stream,
//       ThreadLocal) → runner.Launch each plan (PDL into node i>0 when use_pdl and the plan
//       supports it) → EndCapture ALWAYS → only then check the launch and capture statuses →
//       reject empty / non-chain graphs → Instantiate (on OOM: cudaDeviceGraphMemTrim, retry
//       once) → evict LRU entries until it fits → Live, and launch it for this call.
//       Any failure → direct for this call (kCaptureFailed / kInstantiateFailed, counted) and
//       Counting(−failure_backoff): the structure must recur that many more times before the
//       next attempt.
//   Live ──same bindings──▶ Launch (a hit)
//   Live ──other bindings──▶ Update: Prepare the changed calls → Patch those nodes
//       (cudaGraphExecKernelNodeSetParams) → Launch (a hit with patches). If a new plan has
//       another kernel function, or lacks PDL support where the node has a programmatic edge,
//       the entry is dropped and Create runs instead. A failed patch or launch drops the entry
//       and the call runs directly (kPatchFailed / kLaunchFailed).
//   Live ──LRU, entry or byte bound──▶ evicted (exec destroyed before its graph) ─▶ Unseen
//
// A call on a stream that is already capturing (the caller's own capture) is launched directly
// into that capture: never a nested capture, never a sync (kCallerCapturing).
//
// Steady state (a hit with unchanged bindings) does no heap allocation and no host sync: the
// signature is built on the stack, looked up by hash and compared exactly, and the exec launched.
//
// Device: an executor works on the device that is current when it is created (its capture
// stream lives there); make its calls with that device current. Use one executor per device.
//
// Thread safety: every public method may be called concurrently from several host threads, on
// the same or different streams. Cache state, the backend and all graph objects are guarded by
// one mutex, held across lookup, patch and cudaGraphLaunch (CUDA graph objects are not
// thread-safe). Direct launches (runner.Run) happen outside the mutex; the runner must be safe
// for concurrent Run (gemm::Nvfp4GroupedGemm is). Launches of one exec from several streams are
// ordered by CUDA (each launch runs after the previous launch of the same exec). counters() is
// lock-free.
//
// Example:
//   ENCORE_ASSIGN_OR_RETURN(auto gemm, encore::gemm::Nvfp4GroupedGemm::Create());
//   ENCORE_ASSIGN_OR_RETURN(auto exec, encore::graph_cache::GraphExecutor::Create(gemm.get()));
//   for (int step = 0; step < steps; ++step) {
//     ENCORE_RETURN_IF_ERROR(exec->Run(args, stream));   // direct, then captured, then replayed
//   }
//   encore::graph_cache::ExecutorCounters c = exec->counters();
#ifndef ENCORE_GRAPH_CACHE_EXECUTOR_H_
#define ENCORE_GRAPH_CACHE_EXECUTOR_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "gemm/grouped_gemm.h"
#include "gemm/launch.h"
#include "gemm/problem.h"
#include "graph_cache/backend.h"
#include "graph_cache/internal/key_words.h"
#include "graph_cache/internal/lru.h"
#include "graph_cache/internal/recurrence.h"
#include "graph_cache/internal/thrash_guard.h"
#include "graph_cache/options.h"
#include "graph_cache/signature.h"

namespace encore::graph_cache {

// Why the most recent call that ran directly did not use a graph.
enum class FallbackReason : int {
  kNone = 0,
  kBelowMinRepeats,      // structure seen fewer than min_repeats times
  kThrashGuard,          // capturing paused while the cache thrashes
  kCallerCapturing,      // the caller's stream is capturing: launched into that capture
  kCaptureStateUnknown,  // querying the stream's capture state failed
  kOverBudget,           // one graph alone would exceed the byte/entry bound
  kPrepareFailed,        // the runner could not prepare a call (the direct run reports why)
  kCaptureFailed,        // capture failed or produced an unsupported graph
  kInstantiateFailed,    // cudaGraphInstantiate failed, also after trim and retry
  kFailureBackoff,       // an earlier capture of this structure failed; waiting
  kPatchFailed,          // a node patch failed: entry dropped
  kLaunchFailed,         // cudaGraphLaunch failed: entry dropped
};
const char* FallbackReasonName(FallbackReason r);

// A snapshot of the executor's counters (each read atomically; the set is not one instant).
struct ExecutorCounters {
  uint64_t calls = 0;             // GEMM calls seen (Run, and every call of a batch)
  uint64_t direct_launches = 0;   // GEMM calls launched without a graph
  uint64_t graph_launches = 0;    // cudaGraphLaunch calls
  uint64_t hits = 0;              // lookups that found a live graph (patched or not)
  uint64_t captures = 0;          // stream captures begun
  uint64_t capture_failures = 0;  // captures that produced no usable graph
  uint64_t instantiations = 0;    // successful instantiations
  uint64_t instantiate_failures = 0;
  uint64_t patches = 0;           // kernel nodes patched
  uint64_t evictions = 0;         // entries removed by the LRU bounds
  uint64_t dropped = 0;           // entries removed after a failed patch/launch, an
                                  // unpatchable plan change, or by Clear()
  uint64_t live_execs = 0;        // graphs held now
  uint64_t live_bytes = 0;        // their estimated device bytes
  uint64_t thrash_engagements = 0;
  FallbackReason last_fallback = FallbackReason::kNone;
};

// One call of a batch. `args.groups` must stay valid for the duration of the RunBatch call only.
struct GemmCall {
  gemm::GroupedGemmArguments args;
  gemm::KernelKind kind = gemm::KernelKind::kAuto;
};

struct BatchRunOptions {
  // Capture at the first sighting (ignore min_repeats): for structures already known to recur,
  // e.g. a period the sequence recorder confirmed. The thrash guard and the bounds still apply.
  bool capture_immediately = false;
};

class GraphExecutor {
 public:
  // The CUDA backend. `runner` is not owned and must outlive the executor.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<GraphExecutor>> Create(
      gemm::Nvfp4GroupedGemm* runner, ExecutorOptions options = {});
  // Any backend (tests pass a host fake).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<GraphExecutor>> CreateWithBackend(
      gemm::Nvfp4GroupedGemm* runner, std::unique_ptr<GraphBackend> backend,
      ExecutorOptions options = {});

  GraphExecutor(const GraphExecutor&) = delete;
  GraphExecutor& operator=(const GraphExecutor&) = delete;
  ~GraphExecutor();

  // One grouped GEMM on `stream` (asynchronous). The result is always that of runner.Run, whether
  // replayed, patched, freshly captured or launched directly. Errors: InvalidArgument for a
  // malformed call; otherwise what the direct launch returns (graph failures fall back, they do
  // not surface).
  [[nodiscard]] absl::Status Run(const gemm::GroupedGemmArguments& args, cudaStream_t stream,
                                 gemm::KernelKind kind = gemm::KernelKind::kAuto);

  // Several calls, in order, as ONE straight-line multi-kernel graph (no parallel branches; PDL
  // edges between consecutive nodes where supported). A recurring batch structure replays its
  // graph, patching the nodes whose bindings changed. At most options.max_batch_calls calls;
  // an empty batch is a no-op. The calls are validated (signatures built) before anything runs.
  [[nodiscard]] absl::Status RunBatch(absl::Span<const GemmCall> calls, cudaStream_t stream,
                                      BatchRunOptions batch_options = {});

  ExecutorCounters counters() const;
  const ExecutorOptions& options() const { return options_; }
  gemm::Nvfp4GroupedGemm* runner() const { return runner_; }

  // Drops every cached graph (graphs in flight finish; CUDA frees their execs afterwards).
  void Clear();

 private:
  struct Entry;
  struct Counters {
    std::atomic<uint64_t> calls{0}, direct_launches{0}, graph_launches{0}, hits{0}, captures{0},
        capture_failures{0}, instantiations{0}, instantiate_failures{0}, patches{0},
        evictions{0}, dropped{0}, live_execs{0}, live_bytes{0}, thrash_engagements{0};
    std::atomic<int> last_fallback{0};
  };
  // What the locked part decided: the calls ran from a graph, or they must run directly.
  struct Outcome {
    bool launched = false;
    FallbackReason reason = FallbackReason::kNone;
  };
  using Map = absl::flat_hash_map<std::vector<uint32_t>, std::unique_ptr<Entry>,
                                  internal::WordsHash, internal::WordsEq>;

  GraphExecutor(gemm::Nvfp4GroupedGemm* runner, std::unique_ptr<GraphBackend> backend,
                ExecutorOptions options);

  // Lookup / patch / capture / launch for calls[i] with signatures sigs[i] whose concatenated
  // key words are `words` (hash `hash`).
  Outcome RunLocked(absl::Span<const GemmCall> calls, const CallSignature* const* sigs,
                    absl::Span<const uint32_t> words, size_t hash, cudaStream_t stream,
                    bool capture_immediately) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Brings a live entry's node bindings up to date. false: the entry cannot serve these calls
  // (already dropped when `*dropped_reason` is set).
  bool UpdateLocked(Entry* e, absl::Span<const GemmCall> calls, const CallSignature* const* sigs,
                    FallbackReason* reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Outcome CreateLocked(absl::Span<const GemmCall> calls, const CallSignature* const* sigs,
                       absl::Span<const uint32_t> words, size_t hash, cudaStream_t stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveLocked(Entry* e, bool evicted) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  gemm::LaunchPlan* ScratchPlanLocked(size_t i) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Runs calls directly (outside the mutex) and records `reason`.
  absl::Status RunDirect(absl::Span<const GemmCall> calls, cudaStream_t stream,
                         FallbackReason reason);
  void NoteFallback(FallbackReason r) {
    counters_.last_fallback.store(static_cast<int>(r), std::memory_order_relaxed);
  }

  gemm::Nvfp4GroupedGemm* const runner_;
  const ExecutorOptions options_;
  Counters counters_;

  mutable absl::Mutex mu_;
  // Build/Patch/Launch under mu_; IsCapturing (thread-safe) outside it. Declared before map_ so
  // it outlives every graph it made.
  const std::unique_ptr<GraphBackend> backend_;
  Map map_ ABSL_GUARDED_BY(mu_);
  internal::LruBudget lru_ ABSL_GUARDED_BY(mu_);
  internal::RecurrenceCounter seen_ ABSL_GUARDED_BY(mu_);
  internal::RecurrenceCounter ghosts_ ABSL_GUARDED_BY(mu_);  // hashes of evicted keys
  internal::ThrashGuard guard_ ABSL_GUARDED_BY(mu_);
  // Batch scratch, reused so that a recurring batch allocates nothing.
  std::vector<std::unique_ptr<CallSignature>> batch_sigs_ ABSL_GUARDED_BY(mu_);
  std::vector<const CallSignature*> batch_sig_ptrs_ ABSL_GUARDED_BY(mu_);
  std::vector<uint32_t> batch_words_ ABSL_GUARDED_BY(mu_);
  // Plan scratch for Prepare on the create and update paths.
  std::vector<std::unique_ptr<gemm::LaunchPlan>> plans_ ABSL_GUARDED_BY(mu_);
  std::vector<const gemm::LaunchPlan*> plan_ptrs_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<bool[]> pdl_ ABSL_GUARDED_BY(mu_);
};

}  // namespace encore::graph_cache

#endif  // ENCORE_GRAPH_CACHE_EXECUTOR_H_
