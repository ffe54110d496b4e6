// GraphExecutor: runs NVFP4 grouped GEMMs through a cache of CUDA graphs. A call (or an explicit
// batch of calls) is keyed by the StructuralKeys of its calls (graph_cache/signature.h); a
// structure that recurs is captured once into a straight-line graph, instantiated, and from then
// on replayed with one cudaGraphLaunch. A structure keeps up to max_bindings_per_structure execs
// ("variants"), each holding its own bindings (pointers, exact dynamic-M capacities, and the
// stream: plans are prepared for the stream they run on, whose token workspace they use): a
// workload that rotates through a fixed set of buffers replays a variant per call with nothing
// patched.
// Bindings without a variant are served by patching the kernel nodes of an existing variant with
// freshly prepared LaunchPlans — never by re-capturing a structure that has a live exec, unless
// the bindings recur and the structure has room for one more variant.
//
// State machine of one structure (an ordered list of 1..max_batch_calls StructuralKeys):
//
//   Unseen ──call──▶ Counting(1)          every call below min_repeats runs directly
//   Counting(n) ──call──▶ Counting(n+1)   (reason kBelowMinRepeats)
//   Counting(n) ──call, n+1 ≥ min_repeats──▶ Create (into a new entry)
//       thrash guard engaged  → direct (kThrashGuard), stays Counting (the guard engages when
//                               reloads of evicted graphs dominate hits; options.h)
//       estimate > budget     → direct (kOverBudget), stays Counting
//   Create: plan the graph's launches (options.merge_calls: a run of consecutive small,
//       static-M calls of one kind that read and write nothing another one of them writes
//       becomes ONE launch of all their groups, where its merged plan keeps their token pre-pass
//       and, with kSameSums, neither it nor any call alone splits K; every other call is a launch
//       of its own) → Prepare every launch (outside any capture; in a graph of several launches
//       with use_pdl, launch u on token-workspace half u % 2, gemm::PlanOptions) →
//       BeginCapture(private stream, ThreadLocal) → runner.Launch each plan (PDL into launch
//       u>0 when use_pdl, the plan supports it and has no pre-kernel or one it prefers PDL for,
//       and its calls' early reads — weights, weight scales, dynamic M — meet no output of the
//       graph's calls: internal/early_reads.h; behind such an edge, with early_prepass, the
//       pre-pass of a launch on its half after a launch off it reads its tokens early where
//       they, their scales and dynamic M meet no output either: re-prepared with
//       prepass_reads_early) → EndCapture ALWAYS → only then check the launch and capture
//       statuses →
//       reject empty / non-chain graphs → Instantiate (on OOM: cudaDeviceGraphMemTrim, retry
//       once) → evict LRU variants until it fits (never one of the entry being added to) → Live
//       with this variant, and launch it for this call.
//       Any failure → direct for this call (kCaptureFailed / kInstantiateFailed, counted) and a
//       backoff of failure_backoff more recurrences before the next attempt: of the structure
//       for a new entry (Counting(−failure_backoff)), of the (structure, bindings) pair for a
//       new variant of a live entry (whose calls are meanwhile served by patching).
//   Live(variants V1..Vk, 1 ≤ k ≤ max_bindings_per_structure), a call with bindings B:
//     some Vi holds B (fingerprint, then exact compare) ──▶ launch Vi (a hit, nothing patched)
//     none, k < max and (structure, B) seen min_repeats times (a hash-keyed recurrence count;
//       capture_immediately skips it, not a failed capture's backoff) and making room would
//       not evict one of this entry's own variants (an entry with none may lose its bound exec)
//       and the guard allows ──▶ Create a new variant V(k+1) for B
//     otherwise, options.rebind == kBound, a single call, and the entry's bound exec B serves
//       the call's stream, device_m and exact M (B is captured from a bound plan at the first
//       such call, unless making room for it would evict one of the entry's variants; a failed
//       PrepareBound or capture marks the entry and falls through to the patch below)
//       ──▶ runner.LaunchWithBindings: the call's pointers written, B launched,
//       under the stream ring's lock (a hit, nothing patched; never memoized; a failed launch
//       takes the write back, drops B and runs directly)
//     otherwise, an entry left with its bound exec alone (its variants evicted) ──▶ direct
//       (the reason the new variant was refused: kBelowMinRepeats, kFailureBackoff, …)
//     otherwise ──▶ Update the least recently used Vi: Prepare the launches of the changed
//       calls (a merged launch with all its calls) → Patch those nodes
//       (cudaGraphExecKernelNodeSetParams) → Launch (a hit with patches). If a new plan
//       has another kernel function, or lacks PDL support or has a pre-kernel it does not prefer
//       PDL for where the node has a programmatic edge, or a node with a programmatic edge would
//       read early what a call of the graph writes (its tokens too, for an early pre-pass; a
//       patch re-prepares a node with the PlanOptions it was captured with), or a new plan uses
//       another token-workspace half (dynamic M: a capacity in the same bucket that outgrows
//       its half, under the next node's early pre-pass), or the calls of a merged launch now
//       meet each other, B needs a variant of its own: Create for B beside Vi where the entry
//       has room (k < max, making room would evict none of its variants; a new variant to the
//       guard), else Vi is dropped and Create runs instead (a reload to the guard: while it is
//       engaged, or already refused this call a capture, the call runs directly and an untouched
//       Vi stays; a partly patched Vi is dropped either way). A failed patch or launch
//       drops Vi and the call runs directly (kPatchFailed / kLaunchFailed); so does a Prepare
//       that fails after some nodes were patched (kPrepareFailed; untouched, Vi stays). A
//       variant is never launched with bindings other than the call's.
//   Any variant ──LRU (across all entries), entry or byte bound──▶ evicted (exec destroyed before
//       its graph); an entry whose last variant goes ─▶ Unseen.
//
// Thrash guard with variants: a hit or a patch is a hit (rotating through more binding sets than
// max_bindings_per_structure is the patch path by design, not thrash); the capture of a new
// structure or of new bindings is neutral (a tick); a capture that reloads an evicted structure
// or an evicted (structure, bindings) variant is a miss. While engaged, a live structure's new
// bindings are patched in rather than captured.
//
// Budget: every variant is one exec against max_entries and max_device_bytes; live_execs and
// live_bytes count variants, evictions and dropped count variants removed.
//
// A call on a stream that is already capturing (the caller's own capture) is launched directly
// into that capture: never a nested capture, never a sync (kCallerCapturing).
//
// Steady state (a hit: a variant holds the call's bindings) does no heap allocation and no host
// sync: the hit memo below finds the variant and compares it with the arguments; otherwise the
// signature is built on the stack, looked up by hash and compared exactly, its variant found by
// fingerprint and exact compare. Then the exec is launched.
//
// Hit memo (Run and RunBatch): a kMemoWays-way set-associative table of (memo key, variant)
// pairs, the memo key being a few multiply-xor rounds over the calls' raw arguments (per call:
// group count, kind, device_m, the first and the last group's pointers and M; and the stream;
// a batch chains its call count and its first, middle and last calls' keys). A
// call or batch probes its set; a way with its memo key has its variant's key and stored
// bindings compared with the arguments field by field, and only an identical one is launched
// without building any signature (a "fast hit": counted in hits, and per call in fast_hits). Any
// other outcome takes the path above, which then memoizes the variant it launched at the front
// of its set (the set's last way drops out). A variant sits in at most one set; removing it clears
// its way, so the memo never holds a dangling pointer, and a patched variant fails the compare for
// its old bindings. The memo only skips work: what it launches is always what the full lookup would
// launch.
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
#include "absl/types/span.h"
#include "base/mutex.h"
#include "gemm/grouped_gemm.h"
#include "gemm/launch.h"
#include "gemm/problem.h"
#include "graph_cache/backend.h"
#include "graph_cache/internal/early_reads.h"
#include "graph_cache/internal/hit_stamps.h"
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
  uint64_t hits = 0;              // lookups served by a live variant (as is, or patched)
  uint64_t captures = 0;          // stream captures begun (new structures and new variants)
  uint64_t capture_failures = 0;  // captures that produced no usable graph
  uint64_t instantiations = 0;    // successful instantiations
  uint64_t instantiate_failures = 0;
  uint64_t patches = 0;     // kernel nodes patched
  uint64_t evictions = 0;   // variants removed by the LRU bounds
  uint64_t dropped = 0;     // variants removed after a failed patch/launch, an
                            // unpatchable plan change, or by Clear()
  uint64_t live_execs = 0;  // execs (variants, over all structures) held now
  uint64_t live_bytes = 0;  // their estimated device bytes
  uint64_t thrash_engagements = 0;
  uint64_t fast_hits = 0;  // calls served by the hit memo (no signature built)
  uint64_t bound_launches = 0;  // calls served by a bound exec (RebindMode::kBound)
  // Kernel-node pairs captured or patched with an early token pre-pass (ExecutorOptions::
  // early_prepass).
  uint64_t early_prepass_nodes = 0;
  // Launches captured or patched that run several independent calls as one grouped GEMM
  // (ExecutorOptions::merge_calls), and the calls they hold.
  uint64_t merged_launches = 0;
  uint64_t merged_calls = 0;
  FallbackReason last_fallback = FallbackReason::kNone;
};

// One call of a batch. `args.groups` must stay valid for the duration of the RunBatch call only.
struct GemmCall {
  gemm::GroupedGemmArguments args;
  gemm::KernelKind kind = gemm::KernelKind::kAuto;
};

struct BatchRunOptions {
  // Capture at the first sighting (ignore min_repeats): for structures already known to recur,
  // e.g. a period the sequence recorder confirmed. The thrash guard, the bounds and the backoff
  // after a failed capture (ExecutorOptions::failure_backoff) still apply.
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
  // graph; its bindings are all of its calls' bindings (a batch whose calls rotate through buffer
  // sets gets a variant per set, like a single call; otherwise the nodes whose bindings changed
  // are patched). At most options.max_batch_calls calls;
  // an empty batch is a no-op. The calls are validated (signatures built) before anything runs.
  [[nodiscard]] absl::Status RunBatch(absl::Span<const GemmCall> calls, cudaStream_t stream,
                                      BatchRunOptions batch_options = {});

  ExecutorCounters counters() const;
  const ExecutorOptions& options() const { return options_; }
  gemm::Nvfp4GroupedGemm* runner() const { return runner_; }

  // Drops every cached graph (graphs in flight finish; CUDA frees their execs afterwards).
  void Clear();

 private:
  friend class SequenceRecorder;
  friend class GemmBatch;  // RunBatchWithTicket for a batch equal to its last flush
  struct Entry;
  struct Variant;
  // A replay ticket (SequenceRecorder's period, GemmBatch's last flush): the variant a RunBatch
  // launched, on which stream, and the executor's mutation epoch at the time.
  struct BatchTicket {
    Variant* variant = nullptr;
    cudaStream_t stream = nullptr;
    uint64_t epoch = 0;
  };
  // RunBatch for a caller that makes the same calls again and again. NOTES: the caller guarantees
  // that `calls` are, field for field, the calls *ticket was issued for (the recorder's period
  // records, unchanged while it replays them, or a GemmBatch's calls equal to its last flush; both
  // reset their ticket whenever the calls change). While no variant has been removed or patched
  // since (mutation_epoch_ unchanged) and `stream` is the ticket's, the ticket's variant still
  // holds exactly those calls, so it is launched without the memo's compare of every group;
  // otherwise this is RunBatch, which issues a new ticket when a graph ran.
  absl::Status RunBatchWithTicket(absl::Span<const GemmCall> calls, cudaStream_t stream,
                                  BatchRunOptions batch_options, BatchTicket* ticket);
  // calls (but a fast hit's) and direct_launches are counted outside the mutex (fetch_add); every
  // other counter
  // only under mu_, one writer at a time, so AddLocked/SubLocked replace the locked
  // read-modify-write with a relaxed load and store (cheaper on the hit path; lock-free readers
  // still see whole values).
  struct Counters {
    std::atomic<uint64_t> calls{0}, direct_launches{0}, graph_launches{0}, hits{0}, captures{0},
        capture_failures{0}, instantiations{0}, instantiate_failures{0}, patches{0}, evictions{0},
        dropped{0}, live_execs{0}, live_bytes{0}, thrash_engagements{0}, fast_hits{0},
        bound_launches{0}, early_prepass_nodes{0}, merged_launches{0}, merged_calls{0};
    // Run's calls served by a fast hit, counted under mu_ (not in `calls`, whose fetch_add the
    // hit path skips); counters() reports their sum as calls.
    std::atomic<uint64_t> fast_hit_calls{0};
    std::atomic<int> last_fallback{0};
  };
  // What the locked part decided: the calls ran from a graph, or they must run directly.
  struct Outcome {
    bool launched = false;
    FallbackReason reason = FallbackReason::kNone;
    Variant* variant = nullptr;  // the variant launched (when launched)
  };
  // Hit memo geometry: kMemoSets (a power of two) sets of kMemoWays ways, one 64-byte line each.
  struct MemoWay {
    size_t key = 0;
    Variant* variant = nullptr;
  };
  static constexpr size_t kMemoSets = 256;
  static constexpr size_t kMemoWays = 4;
  using Map = absl::flat_hash_map<std::vector<uint32_t>, std::unique_ptr<Entry>,
                                  internal::WordsHash, internal::WordsEq>;

  GraphExecutor(gemm::Nvfp4GroupedGemm* runner, std::unique_ptr<GraphBackend> backend,
                ExecutorOptions options);

  // Lookup / patch / capture / launch for calls[i] with signatures sigs[i] whose concatenated
  // key words are `words` (hash `hash`).
  Outcome RunLocked(absl::Span<const GemmCall> calls, const CallSignature* const* sigs,
                    absl::Span<const uint32_t> words, size_t hash, cudaStream_t stream,
                    bool capture_immediately) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The same for a structure that has a live entry: find the variant holding these bindings,
  // else capture another variant or patch the least recently used one.
  Outcome RunEntryLocked(Entry* e, absl::Span<const GemmCall> calls,
                         const CallSignature* const* sigs, absl::Span<const uint32_t> words,
                         size_t hash, cudaStream_t stream, bool capture_immediately)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Feeds a capture decision to the thrash guard (a reload of an evicted graph is a miss, a first
  // capture a tick); whether capturing is allowed now.
  bool GuardAllowsCaptureLocked(bool reload) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether making room for one more variant of `e` of `bytes` (0: as large as its others) would
  // evict one of e's own variants (then patching one is the cheaper way to serve the call).
  bool WouldEvictOwnLocked(const Entry* e, size_t bytes = 0) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Launches a variant whose bindings match the call (a hit).
  Outcome LaunchHitLocked(Variant* v, cudaStream_t stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A hit found without a signature (the memo or a BatchTicket) for `num_calls` calls: fed to the
  // thrash guard, launched, counted in fast_hits.
  Outcome FastHitLocked(Variant* v, size_t num_calls, cudaStream_t stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts one captured or patched launch of `calls` calls (with an early pre-pass when `early`)
  // in early_prepass_nodes and, merged, in merged_launches / merged_calls.
  void CountLaunchLocked(size_t calls, bool early) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A launch of `v` succeeded: counted, and `v` made the most recently used.
  void LaunchedLocked(Variant* v) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A fast hit: when a variant memoized under `key` holds exactly `calls` on `stream` (every
  // call's structure, kind and group bindings), launches it like a hit into *out and returns
  // true; false when none does (nothing launched).
  bool MemoLaunchLocked(size_t key, absl::Span<const GemmCall> calls, cudaStream_t stream,
                        Outcome* out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // RunBatch's full path: the calls' signatures (InvalidArgument naming a malformed call), then
  // RunLocked into *out.
  absl::Status RunBatchLocked(absl::Span<const GemmCall> calls, cudaStream_t stream,
                              BatchRunOptions batch_options, Outcome* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Memoizes variant `v` under `key` (moving it out of its previous set).
  void MemoRememberLocked(Variant* v, size_t key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes `v` out of the memo.
  void MemoForgetLocked(Variant* v) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // RebindMode::kBound: serves `call` from e's bound exec (capturing it first if e has none)
  // into *out and returns true; false when the bound exec cannot serve it (the caller patches).
  bool BoundLaunchLocked(Entry* e, const GemmCall& call, const CallSignature& sig,
                         cudaStream_t stream, Outcome* out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Captures e's bound exec for `call`; nullptr on failure (then e never tries again).
  Variant* CreateBoundLocked(Entry* e, const GemmCall& call, const CallSignature& sig,
                             cudaStream_t stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Patches a live variant's nodes to these calls' bindings (whose fingerprint is
  // `fingerprint`). false: the variant cannot serve these calls. With `*reason` left kNone they
  // need a graph of their own (another kernel, edge, token half or merge cut); then `*kept` says
  // whether v is untouched and still live (else it was dropped: some nodes were patched).
  bool UpdateLocked(Variant* v, absl::Span<const GemmCall> calls, const CallSignature* const* sigs,
                    size_t fingerprint, cudaStream_t stream, FallbackReason* reason, bool* kept)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Captures a variant for these calls (bindings fingerprint / full hash as given): into `e`, or
  // into a new entry when `e` is null.
  Outcome CreateLocked(Entry* e, absl::Span<const GemmCall> calls, const CallSignature* const* sigs,
                       absl::Span<const uint32_t> words, size_t hash, size_t fingerprint,
                       size_t binding_hash, cudaStream_t stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Captures and instantiates plan_ptrs_[0..n) with pdl_[0..n) (counting captures,
  // instantiations and failures); nullptr on failure, *instantiate_failed telling which.
  std::unique_ptr<ExecutableGraph> BuildLocked(size_t n, bool* instantiate_failed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Evicts LRU variants until `bytes` more fit (never the entry `keep`).
  void MakeRoomLocked(size_t bytes, const Entry* keep) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a new variant of `bytes` as live (the LRU bound, live_execs, live_bytes).
  void KeepLocked(Variant* v, size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Destroys a variant, and its entry when that was the last one unless the entry is `keep`.
  void RemoveLocked(Variant* v, bool evicted, const Entry* keep = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  gemm::LaunchPlan* ScratchPlanLocked(size_t i) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The calls one launch of a graph runs: one call, or several independent ones merged into one
  // grouped GEMM of all their groups (ExecutorOptions::merge_calls).
  struct CallRange {
    size_t first = 0;
    size_t count = 1;
    // A merged launch's kind: the calls' own, or kPersistent where their kAuto would plan it
    // stream-K and MergeCalls::kSameSums forbids splitting K (MergedPlanKeepsLocked).
    gemm::KernelKind kind = gemm::KernelKind::kAuto;
  };
  // Prepares launch u (of `num_launches`, running calls `r`) into `plan`: in a graph of several
  // launches with use_pdl on token-workspace half u % 2, with an early pre-pass when `early`
  // (gemm::PlanOptions); else Prepare's plan. Create and Update both prepare through it, so a
  // patch gets its node's options.
  absl::Status PrepareLaunchLocked(absl::Span<const GemmCall> calls, CallRange r, size_t u,
                                   size_t num_launches, bool early, gemm::LaunchPlan* plan,
                                   cudaStream_t stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // launches_ = how Create runs `calls`: consecutive independent small calls merged where
  // options_.merge_calls allows it (near-equal launches within the limits), every other call a
  // launch of its own.
  void PlanLaunchesLocked(absl::Span<const GemmCall> calls, cudaStream_t stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether call `c` may join a merged launch by itself (static M, small enough:
  // merge_max_kblocks_per_sm).
  bool MergeableLocked(const GemmCall& c) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether calls `r` stay within one merged launch's limits (work, groups, tokens; one call
  // always does).
  bool FitsOneLaunchLocked(absl::Span<const GemmCall> calls, CallRange r) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether calls `r` may run as one launch: no call reads or writes what another one writes.
  bool IndependentLocked(absl::Span<const GemmCall> calls, CallRange r)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the merged launch of calls `r` plans as well as the calls alone: it prepares, keeps
  // the token pre-pass the calls have, and (MergeCalls::kSameSums) neither it nor any call's own
  // plan splits K — a kAuto launch that would be stream-K is planned persistent instead
  // (r->kind).
  bool MergedPlanKeepsLocked(absl::Span<const GemmCall> calls, CallRange* r, cudaStream_t stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // early_reads_ = the outputs of `calls` (before deciding or keeping PDL edges).
  void CollectOutputsLocked(absl::Span<const GemmCall> calls) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether an early read of calls `r` (weights, weight scales, dynamic M; with `tokens`, their
  // tokens and token scales instead) meets an output in early_reads_.
  bool RangeReadsOutputLocked(absl::Span<const GemmCall> calls, CallRange r, bool tokens) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Runs calls directly (outside the mutex) and records `reason`.
  absl::Status RunDirect(absl::Span<const GemmCall> calls, cudaStream_t stream,
                         FallbackReason reason);
  void AddLocked(std::atomic<uint64_t>& counter, uint64_t n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void SubLocked(std::atomic<uint64_t>& counter, uint64_t n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    counter.store(counter.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
  }
  void NoteFallback(FallbackReason r) {
    counters_.last_fallback.store(static_cast<int>(r), std::memory_order_relaxed);
  }

  gemm::Nvfp4GroupedGemm* const runner_;
  const ExecutorOptions options_;
  Counters counters_;

  mutable encore::Mutex mu_;
  // Build/Patch/Launch under mu_; IsCapturing (thread-safe) outside it. Declared before map_ so
  // it outlives every graph it made.
  const std::unique_ptr<GraphBackend> backend_;
  Map map_ ABSL_GUARDED_BY(mu_);
  internal::LruBudget lru_ ABSL_GUARDED_BY(mu_);
  internal::RecurrenceCounter seen_ ABSL_GUARDED_BY(mu_);          // structure hashes
  internal::RecurrenceCounter variant_seen_ ABSL_GUARDED_BY(mu_);  // (structure, bindings)
  // Hashes of evicted structures and of evicted (structure, bindings) variants.
  internal::RecurrenceCounter ghosts_ ABSL_GUARDED_BY(mu_);
  uint64_t tick_ ABSL_GUARDED_BY(mu_) = 0;  // stamps Variant::last_use
  // Bumped whenever a variant is removed or has nodes patched: invalidates every BatchTicket.
  uint64_t mutation_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  internal::ThrashGuard guard_ ABSL_GUARDED_BY(mu_);
  // The hit memo (see the header comment); each set's ways most recently memoized first.
  alignas(64) MemoWay memo_[kMemoSets][kMemoWays] ABSL_GUARDED_BY(mu_);
  // Batch scratch, reused so that a recurring batch allocates nothing.
  std::vector<std::unique_ptr<CallSignature>> batch_sigs_ ABSL_GUARDED_BY(mu_);
  std::vector<const CallSignature*> batch_sig_ptrs_ ABSL_GUARDED_BY(mu_);
  std::vector<uint32_t> batch_words_ ABSL_GUARDED_BY(mu_);
  // Plan scratch for Prepare on the create and update paths.
  std::vector<std::unique_ptr<gemm::LaunchPlan>> plans_ ABSL_GUARDED_BY(mu_);
  std::vector<const gemm::LaunchPlan*> plan_ptrs_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<bool[]> pdl_ ABSL_GUARDED_BY(mu_);
  // Outputs of the calls being captured or patched, for the PDL edges (internal/early_reads.h).
  internal::EarlyReads early_reads_ ABSL_GUARDED_BY(mu_);
  // Merged launches: the launches Create plans (PlanLaunchesLocked), a merged launch's groups, the
  // outputs of the calls a merged launch would run, and a probe plan for a call alone.
  std::vector<CallRange> launches_ ABSL_GUARDED_BY(mu_);
  std::vector<gemm::GroupProblem> merged_groups_ ABSL_GUARDED_BY(mu_);
  internal::EarlyReads merge_reads_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<gemm::LaunchPlan> probe_plan_ ABSL_GUARDED_BY(mu_);
#if ENCORE_HIT_STAMPS
  // Measurement builds only (internal/hit_stamps.h): Run's fast hits, per step. The stamps of
  // the call in flight live with the sums (the hit path is under mu_ from the lock on).
  internal::HitStamps stamps_ ABSL_GUARDED_BY(mu_);
  internal::HitStampSums stamp_sums_ ABSL_GUARDED_BY(mu_);
#endif
};

}  // namespace encore::graph_cache

#endif  // ENCORE_GRAPH_CACHE_EXECUTOR_H_
