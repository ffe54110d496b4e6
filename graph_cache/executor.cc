#include "graph_cache/executor.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cuda_utils/status.h"
#include "gemm/problem.h"

namespace encore::graph_cache {

const char* FallbackReasonName(FallbackReason r) {
  switch (r) {
    case FallbackReason::kNone:
      return "none";
    case FallbackReason::kBelowMinRepeats:
      return "below min_repeats";
    case FallbackReason::kThrashGuard:
      return "thrash guard engaged";
    case FallbackReason::kCallerCapturing:
      return "caller's stream is capturing";
    case FallbackReason::kCaptureStateUnknown:
      return "stream capture state unknown";
    case FallbackReason::kOverBudget:
      return "graph larger than the cache budget";
    case FallbackReason::kPrepareFailed:
      return "prepare failed";
    case FallbackReason::kCaptureFailed:
      return "capture failed";
    case FallbackReason::kInstantiateFailed:
      return "instantiate failed";
    case FallbackReason::kFailureBackoff:
      return "backing off after a failed capture";
    case FallbackReason::kPatchFailed:
      return "node patch failed";
    case FallbackReason::kLaunchFailed:
      return "graph launch failed";
  }
  return "unknown";
}

namespace {

// A launch's share of an exec's device-byte estimate (ExecutorOptions::per_node_bytes): each of
// its kernel nodes (the pre-kernel too) and their parameter blocks.
size_t LaunchBytes(const gemm::LaunchPlan& plan, const ExecutorOptions& o) {
  return static_cast<size_t>(plan.num_kernels()) * o.per_node_bytes + plan.params_bytes +
         (plan.has_pre() ? plan.pre.params_bytes : 0);
}

// Whether a structure or variant seen `seen` times (its recurrence count; <= 0 while a failed
// capture backs off) may be captured now: kNone, or why not. capture_immediately skips the count,
// not the backoff.
FallbackReason RecurrenceVerdict(int seen, bool capture_immediately, int min_repeats) {
  if (seen <= 0) return FallbackReason::kFailureBackoff;
  if (!capture_immediately && seen < min_repeats) return FallbackReason::kBelowMinRepeats;
  return FallbackReason::kNone;
}

// Hash of one call's bindings, chained onto `seed`: the same value whether computed from a
// Binding (the call) or from a variant's stored node bindings.
size_t HashBinding(size_t seed, int num_groups, const int32_t* device_m, const void* stream,
                   const GroupBinding* g) {
  return absl::HashOf(seed, reinterpret_cast<uintptr_t>(device_m),
                      reinterpret_cast<uintptr_t>(stream),
                      absl::string_view(reinterpret_cast<const char*>(g),
                                        sizeof(GroupBinding) * static_cast<size_t>(num_groups)));
}

// The bindings of calls 0..n-1, as one hash: keys the variant recurrence and ghost tables (on
// the miss path only).
size_t BindingsHash(const CallSignature* const* sigs, size_t n) {
  size_t h = 0;
  for (size_t i = 0; i < n; ++i) {
    const Binding& b = sigs[i]->binding;
    h = HashBinding(h, b.num_groups(), b.device_m(), b.stream(), b.groups().data());
  }
  return h;
}

// The cheap pre-check of a variant lookup: a few multiply-xor rounds over each call's device_m
// and FIRST group's binding (however many groups the call has). Buffer sets that a workload
// rotates through differ there; equal fingerprints (or collisions) are settled by the exact
// compare of every group, so the fingerprint's only job is to skip most variants cheaply.
// Every call has at least one group (BuildSignature).
inline uint64_t FingerprintMix(uint64_t h, uint64_t w) {
  h = (h ^ w) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}
// `Group`: a GroupBinding (stored) or a gemm::GroupProblem (a call's raw arguments): both have
// the pointers a, b, sfa, sfb, c and m.
template <typename Group>
size_t FingerprintOne(size_t h, const int32_t* device_m, const void* stream, const Group& g) {
  uint64_t x = FingerprintMix(
      h, reinterpret_cast<uintptr_t>(device_m) ^ (reinterpret_cast<uintptr_t>(stream) << 3));
  x = FingerprintMix(x, reinterpret_cast<uintptr_t>(g.a) ^ (reinterpret_cast<uintptr_t>(g.b) << 1));
  x = FingerprintMix(x, reinterpret_cast<uintptr_t>(g.sfa) ^
                            (reinterpret_cast<uintptr_t>(g.sfb) << 1) ^
                            (reinterpret_cast<uintptr_t>(g.c) << 2));
  return static_cast<size_t>(FingerprintMix(x, static_cast<uint64_t>(g.m)));
}
size_t BindingsFingerprint(const CallSignature* const* sigs, size_t n) {
  size_t h = 0;
  for (size_t i = 0; i < n; ++i) {
    const Binding& b = sigs[i]->binding;
    h = FingerprintOne(h, b.device_m(), b.stream(), b.groups()[0]);
  }
  return h;
}

// The hit memo's index for one call (the header's "Hit memo"): its group count and kind, then its
// first group's fingerprint (with stream and device_m) and its last group's M, A and C. The
// compare that follows settles collisions. Every call has at least one group (checked by the
// caller).
size_t CallMemoKey(const gemm::GroupedGemmArguments& args, gemm::KernelKind kind,
                   const void* stream) {
  const gemm::GroupProblem& l = args.groups.back();
  const size_t x = FingerprintOne(args.groups.size() | uint64_t{static_cast<uint8_t>(kind)} << 32,
                                  args.device_m, stream, args.groups.front());
  return static_cast<size_t>(
      FingerprintMix(x, reinterpret_cast<uintptr_t>(l.a) ^ (reinterpret_cast<uintptr_t>(l.c) << 1) ^
                            (static_cast<uint64_t>(static_cast<uint32_t>(l.m)) << 40)));
}

// The hit memo's key for a batch: the call count and the keys of its first, middle and last
// calls chained (a batch of one has its call's key, so Run and a one-call RunBatch share memo
// entries as they share cache entries). Only an index: batches differing elsewhere share a set
// and are told apart by HoldsCalls, which reads every call anyway.
size_t CallsMemoKey(absl::Span<const GemmCall> calls, const void* stream) {
  size_t x = CallMemoKey(calls[0].args, calls[0].kind, stream);
  const size_t n = calls.size();
  if (n == 1) return x;
  x = static_cast<size_t>(FingerprintMix(x, n));
  for (const size_t i : {n / 2, n - 1}) {
    x = static_cast<size_t>(FingerprintMix(x, CallMemoKey(calls[i].args, calls[i].kind, stream)));
  }
  return x;
}

// (structure, bindings) → one hash, for the variant recurrence counter and the ghost table.
size_t VariantHash(size_t structure_hash, size_t bindings_hash) {
  return absl::HashOf(structure_hash, bindings_hash);
}

}  // namespace

// One exec of a structure and, per call, the binding it was captured or last patched for.
struct GraphExecutor::Variant : internal::LruNode {
  // One call's bindings.
  struct Node {
    size_t first_group = 0;  // index into `groups`
    int num_groups = 0;
    const int32_t* device_m = nullptr;
    const void* stream = nullptr;  // the stream its plan was prepared for (its workspace)
  };
  // One launch of the graph (its kernel node or nodes, ExecutableGraph::Patch's index): one call,
  // or several merged (ExecutorOptions::merge_calls).
  struct Launch {
    CallRange calls;
    const void* function = nullptr;  // kernel the launch runs
    bool pdl = false;                // it sits behind a programmatic edge
    bool early = false;              // its pre-pass reads early (PrepareLaunchLocked)
    int half = -1;                   // its plan's token_workspace_half (-1: the whole workspace)
  };
  static constexpr size_t kNoSet = ~size_t{0};
  Entry* entry = nullptr;
  size_t fingerprint = 0;    // BindingsFingerprint of the bindings the nodes hold now
  size_t memo_set = kNoSet;  // the hit-memo set holding this variant, if any
  uint64_t last_use = 0;     // executor tick of the last launch (LRU within the entry)
  std::unique_ptr<ExecutableGraph> graph;
  std::vector<Node> nodes;  // per call
  std::vector<Launch> launches;
  std::vector<GroupBinding> groups;
  // A bound exec (RebindMode::kBound; Entry::bound): serves any pointers, so its stored bindings
  // are only those it was captured with; it is never found by Find nor memoized.
  bool bound = false;

  // A bound exec serves a call on its stream with its device_m and exact M per group.
  bool ServesBound(const Binding& b) const {
    const Node& n = nodes[0];
    if (n.device_m != b.device_m() || n.stream != b.stream() || n.num_groups != b.num_groups()) {
      return false;
    }
    for (int i = 0; i < n.num_groups; ++i) {
      if (groups[n.first_group + static_cast<size_t>(i)].m != b.groups()[i].m) return false;
    }
    return true;
  }

  bool Matches(size_t i, const Binding& b) const {
    const Node& n = nodes[i];
    return n.device_m == b.device_m() && n.stream == b.stream() && n.num_groups == b.num_groups() &&
           std::memcmp(&groups[n.first_group], b.groups().data(),
                       sizeof(GroupBinding) * static_cast<size_t>(n.num_groups)) == 0;
  }
  bool MatchesAll(const CallSignature* const* sigs) const {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!Matches(i, sigs[i]->binding)) return false;
    }
    return true;
  }
  void Store(size_t i, const Binding& b) {
    Node& n = nodes[i];
    n.device_m = b.device_m();
    n.stream = b.stream();
    std::memcpy(&groups[n.first_group], b.groups().data(),
                sizeof(GroupBinding) * static_cast<size_t>(n.num_groups));
  }
  // Whether this variant's structure and bindings are exactly `calls` run on `stream`: what
  // BuildSignature + map lookup + Find would conclude, read from the arguments directly. Group
  // counts, kinds, n and k compare with the entry's key words; each group's pointers and exact M
  // with the stored bindings (a dynamic-M capacity equal to the stored one has the stored key's
  // bucket).
  bool HoldsCalls(absl::Span<const GemmCall> calls, const void* stream) const;
  // BindingsHash / BindingsFingerprint of the stored bindings.
  size_t HashStored() const {
    size_t h = 0;
    for (const Node& n : nodes) {
      h = HashBinding(h, n.num_groups, n.device_m, n.stream, &groups[n.first_group]);
    }
    return h;
  }
  size_t FingerprintStored() const {
    size_t h = 0;
    for (const Node& n : nodes) {
      h = FingerprintOne(h, n.device_m, n.stream, groups[n.first_group]);
    }
    return h;
  }
};

// One structure (the key words of its calls) and its 1..max_bindings_per_structure variants.
struct GraphExecutor::Entry {
  std::vector<uint32_t> key;
  size_t hash = 0;
  std::vector<std::unique_ptr<Variant>> variants;  // distinct bindings; order means nothing
  std::unique_ptr<Variant> bound;  // RebindMode::kBound's exec, once captured
  bool bound_failed = false;       // PrepareBound or its capture failed: patch instead

  Variant* Find(size_t fingerprint, const CallSignature* const* sigs) const {
    for (const std::unique_ptr<Variant>& v : variants) {
      if (v->fingerprint == fingerprint && v->MatchesAll(sigs)) return v.get();
    }
    return nullptr;
  }
  Variant* LeastRecentlyUsed() const {
    Variant* best = nullptr;
    for (const std::unique_ptr<Variant>& v : variants) {
      if (best == nullptr || v->last_use < best->last_use) best = v.get();
    }
    return best;
  }
};

bool GraphExecutor::Variant::HoldsCalls(absl::Span<const GemmCall> calls,
                                        const void* stream) const {
  if (nodes.size() != calls.size()) return false;
  // Per call: [num_groups, kind | dynamic << 8, (m_key, n, k) per group], calls one after another.
  const uint32_t* w = entry->key.data();
  for (size_t i = 0; i < calls.size(); ++i) {
    const Node& n = nodes[i];
    const gemm::GroupedGemmArguments& args = calls[i].args;
    const size_t ng = args.groups.size();
    const uint32_t kind_word =
        uint32_t{static_cast<uint8_t>(calls[i].kind)} | (args.device_m != nullptr ? 1u << 8 : 0u);
    if (static_cast<size_t>(n.num_groups) != ng || n.device_m != args.device_m ||
        n.stream != stream || w[0] != ng || w[1] != kind_word) {
      return false;
    }
    w += StructuralKey::kHeaderWords;
    const GroupBinding* b = &groups[n.first_group];
    for (const gemm::GroupProblem& p : args.groups) {
      if (b->a != p.a || b->b != p.b || b->sfa != p.sfa || b->sfb != p.sfb || b->c != p.c ||
          b->m != p.m || w[1] != static_cast<uint32_t>(p.n) || w[2] != static_cast<uint32_t>(p.k)) {
        return false;
      }
      ++b;
      w += StructuralKey::kWordsPerGroup;
    }
  }
  return true;
}

GraphExecutor::GraphExecutor(gemm::Nvfp4GroupedGemm* runner, std::unique_ptr<GraphBackend> backend,
                             ExecutorOptions options)
    : runner_(runner),
      options_(std::move(options)),
      backend_(std::move(backend)),
      lru_(options_.max_entries, options_.max_device_bytes),
      seen_(options_.recurrence_slots),
      variant_seen_(options_.recurrence_slots),
      ghosts_(options_.recurrence_slots),
      guard_(options_.thrash) {
  pdl_ = std::make_unique<bool[]>(static_cast<size_t>(std::max(1, options_.max_batch_calls)));
  plans_.push_back(std::make_unique<gemm::LaunchPlan>());
  probe_plan_ = std::make_unique<gemm::LaunchPlan>();
  plan_ptrs_.reserve(static_cast<size_t>(std::max(1, options_.max_batch_calls)));
}

GraphExecutor::~GraphExecutor() {
  encore::MutexLock lock(&mu_);
#if ENCORE_HIT_STAMPS
  stamp_sums_.Print(this);
#endif
  map_.clear();  // entries (graphs) before the backend
}

absl::StatusOr<std::unique_ptr<GraphExecutor>> GraphExecutor::Create(gemm::Nvfp4GroupedGemm* runner,
                                                                     ExecutorOptions options) {
  if (runner == nullptr) return absl::InvalidArgumentError("runner is null");
  ENCORE_RETURN_IF_ERROR(ValidateExecutorOptions(options));  // before touching the device
  ENCORE_ASSIGN_OR_RETURN(std::unique_ptr<GraphBackend> backend, CreateCudaGraphBackend());
  return CreateWithBackend(runner, std::move(backend), std::move(options));
}

absl::StatusOr<std::unique_ptr<GraphExecutor>> GraphExecutor::CreateWithBackend(
    gemm::Nvfp4GroupedGemm* runner, std::unique_ptr<GraphBackend> backend,
    ExecutorOptions options) {
  if (runner == nullptr) return absl::InvalidArgumentError("runner is null");
  if (backend == nullptr) return absl::InvalidArgumentError("backend is null");
  ENCORE_RETURN_IF_ERROR(ValidateExecutorOptions(options));
  return std::unique_ptr<GraphExecutor>(
      new GraphExecutor(runner, std::move(backend), std::move(options)));
}

ExecutorCounters GraphExecutor::counters() const {
  ExecutorCounters c;
  const auto ld = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  c.calls = ld(counters_.calls) + ld(counters_.fast_hit_calls);
  c.direct_launches = ld(counters_.direct_launches);
  c.graph_launches = ld(counters_.graph_launches);
  c.hits = ld(counters_.hits);
  c.captures = ld(counters_.captures);
  c.capture_failures = ld(counters_.capture_failures);
  c.instantiations = ld(counters_.instantiations);
  c.instantiate_failures = ld(counters_.instantiate_failures);
  c.patches = ld(counters_.patches);
  c.evictions = ld(counters_.evictions);
  c.dropped = ld(counters_.dropped);
  c.live_execs = ld(counters_.live_execs);
  c.live_bytes = ld(counters_.live_bytes);
  c.thrash_engagements = ld(counters_.thrash_engagements);
  c.fast_hits = ld(counters_.fast_hits);
  c.bound_launches = ld(counters_.bound_launches);
  c.early_prepass_nodes = ld(counters_.early_prepass_nodes);
  c.merged_launches = ld(counters_.merged_launches);
  c.merged_calls = ld(counters_.merged_calls);
  c.last_fallback =
      static_cast<FallbackReason>(counters_.last_fallback.load(std::memory_order_relaxed));
  return c;
}

void GraphExecutor::Clear() {
  encore::MutexLock lock(&mu_);
  while (internal::LruNode* n = lru_.lru()) RemoveLocked(static_cast<Variant*>(n), false);
  seen_.Clear();
  variant_seen_.Clear();
  ghosts_.Clear();
}

absl::Status GraphExecutor::RunDirect(absl::Span<const GemmCall> calls, cudaStream_t stream,
                                      FallbackReason reason) {
  NoteFallback(reason);
  // A batch's calls are all checked before the first launches: a malformed call launches
  // nothing of its batch, whichever path gave up on the graph.
  if (calls.size() > 1) {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (absl::Status s = runner_->CanImplement(calls[i].args); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat("batch call ", i, ": ", s.message()));
      }
    }
  }
  for (const GemmCall& c : calls) {
    counters_.direct_launches.fetch_add(1, std::memory_order_relaxed);
    ENCORE_RETURN_IF_ERROR(runner_->Run(c.args, stream, c.kind));
  }
  return absl::OkStatus();
}

absl::Status GraphExecutor::Run(const gemm::GroupedGemmArguments& args, cudaStream_t stream,
                                gemm::KernelKind kind) {
  const GemmCall call{args, kind};
  const absl::Span<const GemmCall> calls(&call, 1);
#if ENCORE_HIT_STAMPS
  internal::HitStamps stamps;
#endif
  ENCORE_HIT_STAMP(stamps, 0);
  absl::StatusOr<bool> capturing = backend_->IsCapturing(stream);
  ENCORE_HIT_STAMP(stamps, 1);
  const bool memo = !args.groups.empty();
  const size_t memo_key = memo ? CallMemoKey(args, kind, stream) : 0;
  ENCORE_HIT_STAMP(stamps, 2);
  if (memo && capturing.ok() && !*capturing) {
    Outcome out;
    bool found = false;
    {
      encore::MutexLock lock(&mu_);
      ENCORE_HIT_STAMP(stamps, 3);
#if ENCORE_HIT_STAMPS
      stamps_ = stamps;  // the memo's launch stamps steps 4 and 5 into stamps_
#endif
      found = MemoLaunchLocked(memo_key, calls, stream, &out);
      // NOTES: the call of a fast hit is counted under the lock (counters() adds both), which
      // spares the hit path an atomic read-modify-write.
      if (found && out.launched) AddLocked(counters_.fast_hit_calls, 1);
#if ENCORE_HIT_STAMPS
      stamps = stamps_;
#endif
    }
#if ENCORE_HIT_STAMPS
    if (found && out.launched) {
      ENCORE_HIT_STAMP(stamps, 6);
      encore::MutexLock lock(&mu_);
      stamp_sums_.Add(stamps);
    }
#endif
    if (found) {
      if (out.launched) return absl::OkStatus();
      counters_.calls.fetch_add(1, std::memory_order_relaxed);
      // The launch failed and dropped the variant: run directly, as the full path would.
      return RunDirect(calls, stream, out.reason);
    }
  }
  counters_.calls.fetch_add(1, std::memory_order_relaxed);
  if (!capturing.ok()) return RunDirect(calls, stream, FallbackReason::kCaptureStateUnknown);
  if (*capturing) return RunDirect(calls, stream, FallbackReason::kCallerCapturing);

  CallSignature sig;  // on the stack: no allocation
  ENCORE_RETURN_IF_ERROR(BuildSignature(args, kind, options_.m_bucket, &sig, stream));
  const absl::Span<const uint32_t> words = sig.key.words();
  const size_t hash = internal::WordsHash()(words);
  const CallSignature* sig_ptr = &sig;
  Outcome out;
  {
    encore::MutexLock lock(&mu_);
    out = RunLocked(calls, &sig_ptr, words, hash, stream, /*capture_immediately=*/false);
    if (out.launched && memo) MemoRememberLocked(out.variant, memo_key);
  }
  if (out.launched) return absl::OkStatus();
  return RunDirect(calls, stream, out.reason);
}

bool GraphExecutor::MemoLaunchLocked(size_t key, absl::Span<const GemmCall> calls,
                                     cudaStream_t stream, Outcome* out) {
  for (const MemoWay& w : memo_[key & (kMemoSets - 1)]) {
    if (w.variant == nullptr || w.key != key || !w.variant->HoldsCalls(calls, stream)) continue;
    ENCORE_HIT_STAMP(stamps_, 4);
    *out = FastHitLocked(w.variant, calls.size(), stream);
    return true;
  }
  return false;
}

void GraphExecutor::MemoRememberLocked(Variant* v, size_t key) {
  if (v == nullptr) return;
  MemoForgetLocked(v);
  const size_t set = key & (kMemoSets - 1);
  MemoWay* ways = memo_[set];
  if (Variant* dropped = ways[kMemoWays - 1].variant) dropped->memo_set = Variant::kNoSet;
  for (size_t i = kMemoWays - 1; i > 0; --i) ways[i] = ways[i - 1];
  ways[0] = MemoWay{key, v};
  v->memo_set = set;
}

void GraphExecutor::MemoForgetLocked(Variant* v) {
  if (v->memo_set == Variant::kNoSet) return;
  MemoWay* ways = memo_[v->memo_set];
  size_t out = 0;
  for (size_t i = 0; i < kMemoWays; ++i) {
    if (ways[i].variant != v) ways[out++] = ways[i];
  }
  for (; out < kMemoWays; ++out) ways[out] = MemoWay{};
  v->memo_set = Variant::kNoSet;
}

absl::Status GraphExecutor::RunBatch(absl::Span<const GemmCall> calls, cudaStream_t stream,
                                     BatchRunOptions batch_options) {
  return RunBatchWithTicket(calls, stream, batch_options, nullptr);
}

absl::Status GraphExecutor::RunBatchWithTicket(absl::Span<const GemmCall> calls,
                                               cudaStream_t stream, BatchRunOptions batch_options,
                                               BatchTicket* ticket) {
  if (calls.empty()) return absl::OkStatus();
  if (calls.size() > static_cast<size_t>(options_.max_batch_calls)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch of ", calls.size(), " calls exceeds max_batch_calls = ", options_.max_batch_calls));
  }
  counters_.calls.fetch_add(calls.size(), std::memory_order_relaxed);
  absl::StatusOr<bool> capturing = backend_->IsCapturing(stream);
  if (!capturing.ok() || *capturing) {
    // Direct launches (RunDirect checks every call before the first launches).
    return RunDirect(calls, stream,
                     capturing.ok() ? FallbackReason::kCallerCapturing
                                    : FallbackReason::kCaptureStateUnknown);
  }

  if (ticket != nullptr && ticket->variant != nullptr && ticket->stream == stream) {
    encore::MutexLock lock(&mu_);
    if (ticket->epoch == mutation_epoch_) {
      // The variant is alive (nothing was removed since the ticket) and unpatched.
      const Outcome out = FastHitLocked(ticket->variant, calls.size(), stream);
      if (out.launched) return absl::OkStatus();
      *ticket = BatchTicket{};  // the launch failed and dropped the variant
      return RunDirect(calls, stream, out.reason);
    }
  }
  bool memo = true;
  for (const GemmCall& c : calls) memo = memo && !c.args.groups.empty();
  const size_t memo_key = memo ? CallsMemoKey(calls, stream) : 0;
  Outcome out;
  {
    encore::MutexLock lock(&mu_);
    if (!(memo && MemoLaunchLocked(memo_key, calls, stream, &out))) {
      ENCORE_RETURN_IF_ERROR(RunBatchLocked(calls, stream, batch_options, &out));
      if (out.launched && memo) MemoRememberLocked(out.variant, memo_key);
    }
    if (ticket != nullptr) {
      *ticket = out.launched ? BatchTicket{out.variant, stream, mutation_epoch_} : BatchTicket{};
    }
  }
  if (out.launched) return absl::OkStatus();
  return RunDirect(calls, stream, out.reason);
}

absl::Status GraphExecutor::RunBatchLocked(absl::Span<const GemmCall> calls, cudaStream_t stream,
                                           BatchRunOptions batch_options, Outcome* out) {
  while (batch_sigs_.size() < calls.size()) {
    batch_sigs_.push_back(std::make_unique<CallSignature>());
  }
  batch_sig_ptrs_.clear();
  batch_words_.clear();
  for (size_t i = 0; i < calls.size(); ++i) {
    CallSignature* sig = batch_sigs_[i].get();
    if (absl::Status s =
            BuildSignature(calls[i].args, calls[i].kind, options_.m_bucket, sig, stream);
        !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("batch call ", i, ": ", s.message()));
    }
    batch_sig_ptrs_.push_back(sig);
    const absl::Span<const uint32_t> w = sig->key.words();
    batch_words_.insert(batch_words_.end(), w.begin(), w.end());
  }
  const absl::Span<const uint32_t> words = absl::MakeConstSpan(batch_words_);
  const size_t hash = internal::WordsHash()(words);
  *out = RunLocked(calls, batch_sig_ptrs_.data(), words, hash, stream,
                   batch_options.capture_immediately);
  return absl::OkStatus();
}

GraphExecutor::Outcome GraphExecutor::RunLocked(absl::Span<const GemmCall> calls,
                                                const CallSignature* const* sigs,
                                                absl::Span<const uint32_t> words, size_t hash,
                                                cudaStream_t stream, bool capture_immediately) {
  auto it = map_.find(words, hash);
  if (it != map_.end()) {
    return RunEntryLocked(it->second.get(), calls, sigs, words, hash, stream, capture_immediately);
  }

  const FallbackReason not_yet =
      RecurrenceVerdict(seen_.Bump(hash), capture_immediately, options_.min_repeats);
  if (not_yet != FallbackReason::kNone) return Outcome{false, not_yet};
  if (!GuardAllowsCaptureLocked(/*reload=*/ghosts_.Get(hash) > 0)) {
    return Outcome{false, FallbackReason::kThrashGuard};
  }
  return CreateLocked(nullptr, calls, sigs, words, hash, BindingsFingerprint(sigs, calls.size()),
                      BindingsHash(sigs, calls.size()), stream);
}

bool GraphExecutor::GuardAllowsCaptureLocked(bool reload) {
  const uint64_t engaged_before = guard_.engagements();
  if (reload) {
    guard_.Record(/*miss=*/true);  // a reload of an evicted graph: thrash evidence
  } else {
    guard_.Tick();  // a first capture
  }
  if (guard_.engagements() != engaged_before) {
    AddLocked(counters_.thrash_engagements, 1);
  }
  return guard_.CaptureAllowed();
}

GraphExecutor::Outcome GraphExecutor::RunEntryLocked(Entry* e, absl::Span<const GemmCall> calls,
                                                     const CallSignature* const* sigs,
                                                     absl::Span<const uint32_t> words, size_t hash,
                                                     cudaStream_t stream,
                                                     bool capture_immediately) {
  const size_t fingerprint = BindingsFingerprint(sigs, calls.size());
  if (Variant* v = e->Find(fingerprint, sigs)) {  // a hit: replay as is
    guard_.Record(/*miss=*/false);
    return LaunchHitLocked(v, stream);
  }
  // No variant holds these bindings: capture one more, or patch the least recently used one.
  const size_t bhash = BindingsHash(sigs, calls.size());
  bool capture = false;
  bool reload = false;
  // Why no variant is captured for these bindings (the reason of a direct run, below, when no
  // variant can be patched either).
  FallbackReason refused = FallbackReason::kOverBudget;
  if (e->variants.size() < static_cast<size_t>(options_.max_bindings_per_structure)) {
    const size_t vhash = VariantHash(hash, bhash);
    const FallbackReason not_yet =
        RecurrenceVerdict(variant_seen_.Bump(vhash), capture_immediately, options_.min_repeats);
    if (not_yet != FallbackReason::kNone) {
      refused = not_yet;
    } else {
      // (Refused, kOverBudget, where room would cost one of the entry's own variants: patching
      // one serves the call for less. An entry left with its bound exec alone has none to patch.)
      capture = e->variants.empty() || !WouldEvictOwnLocked(e);
    }
    reload = ghosts_.Get(vhash) > 0;
  }
  // The guard sees each call once: a capture decision here, else (below) a hit where a bound
  // launch, a patch or a direct run serves it, or a capture decision where its bindings need a
  // graph of their own.
  const bool consulted = capture;
  if (capture) {
    capture = GuardAllowsCaptureLocked(reload);
    if (!capture) refused = FallbackReason::kThrashGuard;
  }
  if (capture) return CreateLocked(e, calls, sigs, words, hash, fingerprint, bhash, stream);
  const auto served = [&] {
    if (!consulted) guard_.Record(/*miss=*/false);  // by design, not thrash
  };
  if (options_.rebind == RebindMode::kBound && calls.size() == 1) {
    Outcome out;
    if (BoundLaunchLocked(e, calls[0], *sigs[0], stream, &out)) {
      served();
      return out;
    }
  }

  Variant* v = e->LeastRecentlyUsed();
  // NOTES: an entry whose variants were all evicted keeps its bound exec; a call that exec cannot
  // serve runs directly, and is captured as a variant only when the checks above allow it (it
  // used to be captured here regardless: min_repeats, the backoff and the guard bypassed).
  if (v == nullptr) {
    served();
    return Outcome{false, refused};
  }
  FallbackReason reason = FallbackReason::kNone;
  bool kept = false;
  if (UpdateLocked(v, calls, sigs, fingerprint, stream, &reason, &kept)) {
    served();
    return LaunchHitLocked(v, stream);
  }
  if (reason != FallbackReason::kNone) {
    served();
    return Outcome{false, reason};
  }
  // These bindings need a graph of their own (another kernel, edge, token half or merge cut).
  // NOTES (a review, session 38): they used to replace the patched variant at once, guard
  // unasked: a dynamic-M structure alternating two capacities of one bucket whose plans differ in
  // kernel was captured once a call forever (each capture also forgot the other capacity's
  // recurrence count, so neither ever became a variant of its own). Now a kept variant stays and
  // the bindings become a variant beside it where the entry has room (a new variant: neutral to
  // the guard); else they replace it as a reload (a miss), so a structure that can hold only one
  // of them trips the guard instead of capturing on every call.
  if (consulted) return Outcome{false, FallbackReason::kThrashGuard};  // the guard said no above
  const bool room = kept &&
                    e->variants.size() < static_cast<size_t>(options_.max_bindings_per_structure) &&
                    !WouldEvictOwnLocked(e);
  if (!GuardAllowsCaptureLocked(/*reload=*/!room)) {
    return Outcome{false, FallbackReason::kThrashGuard};  // a kept variant stays
  }
  if (room) return CreateLocked(e, calls, sigs, words, hash, fingerprint, bhash, stream);
  if (kept) RemoveLocked(v, /*evicted=*/false);  // (its entry too, when it was the last one)
  auto it = map_.find(words, hash);
  return CreateLocked(it == map_.end() ? nullptr : it->second.get(), calls, sigs, words, hash,
                      fingerprint, bhash, stream);
}

bool GraphExecutor::BoundLaunchLocked(Entry* e, const GemmCall& call, const CallSignature& sig,
                                      cudaStream_t stream, Outcome* out) {
  Variant* v = e->bound.get();
  if (v != nullptr && !v->ServesBound(sig.binding)) return false;
  if (v == nullptr) {
    if (e->bound_failed) return false;
    v = CreateBoundLocked(e, call, sig, stream);
    if (v == nullptr) return false;
  }
  // (The runner takes the write back when the launch fails; a failed write launches nothing.)
  bool written = false;
  // (Never waiting for a ring slot under mu_: a full ring, the host 256 bound launches ahead of
  // the device, patches instead. Waiting here stalled every thread, and deadlocked where the
  // device's progress on this stream waited for another thread's call.)
  const absl::Status s = runner_->LaunchWithBindings(
      call.args, stream,
      [&] {
        written = true;
        return v->graph->Launch(stream);
      },
      /*wait_for_slot=*/false);
  if (!written) return false;
  AddLocked(counters_.hits, 1);
  if (!s.ok()) {
    RemoveLocked(v, /*evicted=*/false);
    *out = Outcome{false, FallbackReason::kLaunchFailed};
    return true;
  }
  AddLocked(counters_.bound_launches, 1);
  LaunchedLocked(v);
  *out = Outcome{true, FallbackReason::kNone, nullptr};  // nullptr: never memoized
  return true;
}

GraphExecutor::Variant* GraphExecutor::CreateBoundLocked(Entry* e, const GemmCall& call,
                                                         const CallSignature& sig,
                                                         cudaStream_t stream) {
  // Never at the cost of one of the entry's own variants (the header's rule for new execs; the
  // bound exec is about as large as they are): the call patches the least recently used one.
  if (WouldEvictOwnLocked(e)) return nullptr;
  gemm::LaunchPlan* plan = ScratchPlanLocked(0);
  if (!runner_->PrepareBound(call.args, plan, call.kind, stream).ok()) {
    e->bound_failed = true;
    return nullptr;
  }
  const size_t bytes = options_.per_graph_bytes + LaunchBytes(*plan, options_);
  if (!lru_.Admissible(bytes)) {  // never will be (the bounds are fixed): no retries
    e->bound_failed = true;
    return nullptr;
  }
  plan_ptrs_.clear();
  plan_ptrs_.push_back(plan);
  pdl_[0] = false;
  bool instantiate_failed = false;
  std::unique_ptr<ExecutableGraph> graph = BuildLocked(1, &instantiate_failed);
  if (graph == nullptr) {
    e->bound_failed = true;
    return nullptr;
  }
  MakeRoomLocked(bytes, e);
  e->bound = std::make_unique<Variant>();
  Variant* v = e->bound.get();
  v->entry = e;
  v->bound = true;
  v->last_use = ++tick_;
  v->graph = std::move(graph);
  v->nodes.resize(1);
  v->launches.resize(1);
  v->groups.resize(static_cast<size_t>(sig.binding.num_groups()));
  v->nodes[0].num_groups = sig.binding.num_groups();
  v->launches[0].function = plan->function;
  v->Store(0, sig.binding);
  v->fingerprint = v->FingerprintStored();
  KeepLocked(v, bytes);
  return v;
}

std::unique_ptr<ExecutableGraph> GraphExecutor::BuildLocked(size_t n, bool* instantiate_failed) {
  BuildReport report;
  absl::StatusOr<std::unique_ptr<ExecutableGraph>> graph = backend_->Build(
      *runner_, absl::MakeConstSpan(plan_ptrs_), absl::MakeConstSpan(pdl_.get(), n), &report);
  if (report.capture_begun) AddLocked(counters_.captures, 1);
  if (report.instantiated) AddLocked(counters_.instantiations, 1);
  if (graph.ok() && *graph != nullptr) return *std::move(graph);
  *instantiate_failed = report.captured && !report.instantiated;
  AddLocked(*instantiate_failed ? counters_.instantiate_failures : counters_.capture_failures, 1);
  return nullptr;
}

void GraphExecutor::MakeRoomLocked(size_t bytes, const Entry* keep) {
  while (internal::LruNode* victim = lru_.NextVictim(bytes)) {
    RemoveLocked(static_cast<Variant*>(victim), /*evicted=*/true, keep);
  }
}

void GraphExecutor::KeepLocked(Variant* v, size_t bytes) {
  lru_.Insert(v, bytes);
  AddLocked(counters_.live_execs, 1);
  AddLocked(counters_.live_bytes, bytes);
}

bool GraphExecutor::WouldEvictOwnLocked(const Entry* e, size_t bytes) const {
  bool own = false;
  const Variant* any = e->variants.empty() ? e->bound.get() : e->variants.front().get();
  if (any == nullptr) return false;
  lru_.ForEachVictim(bytes > 0 ? bytes : any->lru_bytes, [&](internal::LruNode* n) {
    own = static_cast<const Variant*>(n)->entry == e;
    return !own;
  });
  return own;
}

GraphExecutor::Outcome GraphExecutor::LaunchHitLocked(Variant* v, cudaStream_t stream) {
  AddLocked(counters_.hits, 1);
  absl::Status s = v->graph->Launch(stream);
  ENCORE_HIT_STAMP(stamps_, 5);
  if (!s.ok()) {
    RemoveLocked(v, /*evicted=*/false);
    return Outcome{false, FallbackReason::kLaunchFailed};
  }
  LaunchedLocked(v);
  return Outcome{true, FallbackReason::kNone, v};
}

GraphExecutor::Outcome GraphExecutor::FastHitLocked(Variant* v, size_t num_calls,
                                                    cudaStream_t stream) {
  guard_.Record(/*miss=*/false);
  const Outcome out = LaunchHitLocked(v, stream);
  if (out.launched) AddLocked(counters_.fast_hits, num_calls);
  return out;
}

void GraphExecutor::LaunchedLocked(Variant* v) {
  AddLocked(counters_.graph_launches, 1);
  v->last_use = ++tick_;
  lru_.Touch(v);
}

void GraphExecutor::CollectOutputsLocked(absl::Span<const GemmCall> calls) {
  early_reads_.Reset();
  for (const GemmCall& c : calls) early_reads_.AddOutputs(c.args);
  early_reads_.Finish();
}

gemm::LaunchPlan* GraphExecutor::ScratchPlanLocked(size_t i) {
  while (plans_.size() <= i) plans_.push_back(std::make_unique<gemm::LaunchPlan>());
  return plans_[i].get();
}

// The plan side of "may node i > 0 of a multi-call graph sit behind a programmatic edge" (the
// other side: its early reads meet no output of the graph, early_reads_).
// NOTES: in front of a plan with a pre-kernel (the unfused token pre-pass) only where the plan
// prefers PDL (LaunchPlan::prefers_pdl: a large pre-pass, or one padded so that its blocks cannot
// crowd the few SMs the previous GEMM leaves idle, RunnerOptions::pad_prepass_for_pdl): run 51
// measured unpadded edges there 11-16% slower on GPU MODE shapes 2-3 (batch graph vs per-call
// graphs; the kernel benchmark's auto/pdl: +15-25%), while edges in front of single-kernel plans
// gained (tiny -28%, fused pre-pass -1..-3%).
namespace {
bool PlanTakesPdlEdge(const gemm::LaunchPlan& plan) {
  return plan.supports_pdl && (!plan.has_pre() || plan.prefers_pdl);
}

// Whether the plan of the call before an early pre-pass leaves that pre-pass's half alone: it is
// on the other half, or it uses no token workspace (tokens converted in kernel).
bool LeavesHalf(const gemm::LaunchPlan& before, size_t before_index) {
  const bool uses_workspace = before.has_pre() || before.fused_pre;
  return !uses_workspace || before.token_workspace_half == static_cast<int>(before_index % 2);
}
}  // namespace

bool GraphExecutor::RangeReadsOutputLocked(absl::Span<const GemmCall> calls, CallRange r,
                                           bool tokens) const {
  for (size_t i = r.first; i < r.first + r.count; ++i) {
    if (tokens ? early_reads_.TokensOverlap(calls[i].args) : early_reads_.Overlaps(calls[i].args)) {
      return true;
    }
  }
  return false;
}

// In a graph of several launches, launch u takes the token workspace half u % 2, so no launch's
// pre-pass writes the half the GEMM before it reads.
absl::Status GraphExecutor::PrepareLaunchLocked(absl::Span<const GemmCall> calls, CallRange r,
                                                size_t u, size_t num_launches, bool early,
                                                gemm::LaunchPlan* plan, cudaStream_t stream) {
  const GemmCall& c = calls[r.first];
  gemm::GroupedGemmArguments args = c.args;
  if (r.count > 1) {  // merged: static M, one kind (PlanLaunchesLocked)
    merged_groups_.clear();
    for (size_t i = r.first; i < r.first + r.count; ++i) {
      merged_groups_.insert(merged_groups_.end(), calls[i].args.groups.begin(),
                            calls[i].args.groups.end());
    }
    args = gemm::GroupedGemmArguments{absl::MakeConstSpan(merged_groups_), nullptr};
  }
  const gemm::KernelKind kind = r.count > 1 ? r.kind : c.kind;
  if (num_launches < 2 || !options_.use_pdl) return runner_->Prepare(args, plan, kind, stream);
  gemm::PlanOptions o;
  o.token_workspace_half = static_cast<int>(u % 2);
  o.prepass_reads_early = early;
  return runner_->PrepareWith(args, plan, kind, stream, o);
}

namespace {
// NOTES: WorkBlocks and TokenBytes run before the calls are validated (merge planning precedes
// Prepare): an extent outside [0, kMaxExtent] makes the call too large to merge (INT64_MAX /
// SIZE_MAX) instead of overflowing, and the sums saturate.
bool MergeableExtents(const gemm::GroupProblem& g) {
  const auto ok = [](int x) { return x >= 0 && x <= gemm::kMaxExtent; };
  return ok(g.m) && ok(g.n) && ok(g.k);
}
// Σ over groups of ceil(M/128)·ceil(N/128)·ceil(K/128): a call's work in 128³ blocks.
int64_t WorkBlocks(const gemm::GroupedGemmArguments& args) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t w = 0;
  for (const gemm::GroupProblem& g : args.groups) {
    if (!MergeableExtents(g)) return kMax;
    const int64_t blocks =  // < 2^51
        int64_t{(g.m + 127) / 128} * ((g.n + 127) / 128) * ((g.k + 127) / 128);
    if (w > kMax - blocks) return kMax;
    w += blocks;
  }
  return w;
}
// The fp16 bytes of a call's tokens (what its pre-pass writes).
size_t TokenBytes(const gemm::GroupedGemmArguments& args) {
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  size_t b = 0;
  for (const gemm::GroupProblem& g : args.groups) {
    if (!MergeableExtents(g)) return kMax;
    const size_t bytes = static_cast<size_t>(g.m) * static_cast<size_t>(g.k) * 2;  // < 2^49
    if (b > kMax - bytes) return kMax;
    b += bytes;
  }
  return b;
}
}  // namespace

bool GraphExecutor::MergeableLocked(const GemmCall& c) const {
  return c.args.device_m == nullptr && options_.merge_max_kblocks_per_sm > 0 &&
         WorkBlocks(c.args) <=
             int64_t{options_.merge_max_kblocks_per_sm} * std::max(1, runner_->sm_count());
}

bool GraphExecutor::IndependentLocked(absl::Span<const GemmCall> calls, CallRange r) {
  merge_reads_.Reset();
  for (size_t i = r.first; i < r.first + r.count; ++i) merge_reads_.AddOutputs(calls[i].args);
  merge_reads_.Finish();
  if (merge_reads_.OutputsMeet()) return false;
  for (size_t i = r.first; i < r.first + r.count; ++i) {
    if (merge_reads_.Overlaps(calls[i].args) || merge_reads_.TokensOverlap(calls[i].args)) {
      return false;
    }
  }
  return true;
}

bool GraphExecutor::MergedPlanKeepsLocked(absl::Span<const GemmCall> calls, CallRange* r,
                                          cudaStream_t stream) {
  const bool same_sums = options_.merge_calls == MergeCalls::kSameSums;
  gemm::LaunchPlan* probe = probe_plan_.get();
  bool tokens_converted = false;  // some call alone converts its tokens into the workspace
  for (size_t i = r->first; i < r->first + r->count; ++i) {
    if (!runner_->Prepare(calls[i].args, probe, calls[i].kind, stream).ok()) return false;
    if (same_sums && probe->kind == gemm::KernelKind::kStreamK) return false;
    tokens_converted = tokens_converted || probe->has_pre() || probe->fused_pre;
  }
  r->kind = calls[r->first].kind;
  if (!PrepareLaunchLocked(calls, *r, 0, 1, /*early=*/false, probe, stream).ok()) return false;
  if (same_sums && probe->kind == gemm::KernelKind::kStreamK) {
    if (r->kind != gemm::KernelKind::kAuto) return false;
    r->kind = gemm::KernelKind::kPersistent;
    if (!PrepareLaunchLocked(calls, *r, 0, 1, /*early=*/false, probe, stream).ok()) return false;
  }
  return !tokens_converted || probe->has_pre() || probe->fused_pre;
}

bool GraphExecutor::FitsOneLaunchLocked(absl::Span<const GemmCall> calls, CallRange r) const {
  if (r.count < 2) return true;
  int64_t work = 0;
  size_t groups = 0, tokens = 0;
  for (size_t i = r.first; i < r.first + r.count; ++i) {
    work += WorkBlocks(calls[i].args);
    groups += calls[i].args.groups.size();
    tokens += TokenBytes(calls[i].args);
  }
  return options_.merge_max_launch_kblocks_per_sm > 0 &&
         work <= int64_t{options_.merge_max_launch_kblocks_per_sm} *
                     std::max(1, runner_->sm_count()) &&
         groups <= static_cast<size_t>(gemm::kMaxGroups) &&
         tokens <= options_.merge_max_token_bytes;
}

// NOTES: a run is a maximal stretch of consecutive mergeable calls of one kind, independent as a
// whole, of at most kMaxRunGroups groups (each extension checks the whole run again: bounded
// work under mu_ however long the batch). Cutting it greedily into launches within the limits
// (FitsOneLaunchLocked) gives their count k; the run is then cut into k launches of near-equal
// call counts where those fit the limits too (else the greedy cut stays): run 187's 15 calls of
// GPU MODE shape 2 ran 24.0 us a call as 6 + 6 + 3 (the runner tiles a 3-call launch narrow) and
// 20.3 as 5 + 5 + 5. A launch whose merged plan does not keep (MergedPlanKeepsLocked) runs as
// single launches.
void GraphExecutor::PlanLaunchesLocked(absl::Span<const GemmCall> calls, cudaStream_t stream) {
  launches_.clear();
  const bool merge =
      options_.merge_calls != MergeCalls::kNever && options_.use_pdl && calls.size() > 1;
  for (size_t i = 0; i < calls.size();) {
    size_t end = i + 1;
    if (merge && MergeableLocked(calls[i])) {
      constexpr size_t kMaxRunGroups = 4 * static_cast<size_t>(gemm::kMaxGroups);
      size_t groups = calls[i].args.groups.size();
      while (end < calls.size() && calls[end].kind == calls[i].kind &&
             MergeableLocked(calls[end]) &&
             groups + calls[end].args.groups.size() <= kMaxRunGroups &&
             IndependentLocked(calls, CallRange{i, end + 1 - i})) {
        groups += calls[end].args.groups.size();
        ++end;
      }
    }
    // The greedy cut's launch from call a (as many calls as fit), and launch q of the near-equal
    // cut into k launches.
    const auto greedy = [&](size_t a) {
      size_t c = 1;
      while (a + c < end && FitsOneLaunchLocked(calls, CallRange{a, c + 1})) ++c;
      return c;
    };
    const size_t n = end - i;
    size_t k = 0;
    for (size_t a = i; a < end; ++k) a += greedy(a);
    const auto even = [&](size_t q) { return n / k + (q < n % k ? 1 : 0); };
    bool equal = true;
    for (size_t q = 0, a = i; equal && q < k; a += even(q++)) {
      equal = FitsOneLaunchLocked(calls, CallRange{a, even(q)});
    }
    for (size_t q = 0, a = i; a < end; ++q) {
      const size_t c = equal ? even(q) : greedy(a);
      CallRange r{a, c, calls[a].kind};
      if (c > 1 && !MergedPlanKeepsLocked(calls, &r, stream)) {
        for (size_t x = a; x < a + c; ++x) launches_.push_back(CallRange{x, 1, calls[x].kind});
      } else {
        launches_.push_back(r);
      }
      a += c;
    }
    i = end;
  }
}

void GraphExecutor::CountLaunchLocked(size_t calls, bool early) {
  if (early) AddLocked(counters_.early_prepass_nodes, 1);
  if (calls > 1) {
    AddLocked(counters_.merged_launches, 1);
    AddLocked(counters_.merged_calls, calls);
  }
}

bool GraphExecutor::UpdateLocked(Variant* v, absl::Span<const GemmCall> calls,
                                 const CallSignature* const* sigs, size_t fingerprint,
                                 cudaStream_t stream, FallbackReason* reason, bool* kept) {
  *kept = false;
  // A launch behind a PDL edge whose early reads now meet an output of the graph (any call's
  // bindings may have moved), or a merged launch whose calls now meet each other, cannot be
  // patched: these calls need a graph without that edge or merge (*reason stays kNone; v is
  // untouched).
  bool collected = false;
  for (size_t u = 0; u < v->launches.size(); ++u) {
    const Variant::Launch& l = v->launches[u];
    if (l.calls.count > 1 && !IndependentLocked(calls, l.calls)) {
      *kept = true;
      return false;
    }
    if (u == 0 || !l.pdl) continue;
    if (!collected) {
      CollectOutputsLocked(calls);
      collected = true;
    }
    if (RangeReadsOutputLocked(calls, l.calls, /*tokens=*/false) ||
        (l.early && RangeReadsOutputLocked(calls, l.calls, /*tokens=*/true))) {
      *kept = true;
      return false;
    }
  }
  bool patched = false;
  for (size_t u = 0; u < v->launches.size(); ++u) {
    const Variant::Launch& l = v->launches[u];
    bool same = true;
    for (size_t i = l.calls.first; same && i < l.calls.first + l.calls.count; ++i) {
      same = v->Matches(i, sigs[i]->binding);
    }
    if (same) continue;
    gemm::LaunchPlan* plan = ScratchPlanLocked(0);
    if (!PrepareLaunchLocked(calls, l.calls, u, v->launches.size(), l.early, plan, stream).ok()) {
      // This call's direct run reports the error. Untouched, the variant stays valid for the
      // bindings its nodes hold; partly patched, it is dropped: its mix of old and new bindings
      // was never checked against the PDL edges' early reads (only the new set was, above).
      if (patched) RemoveLocked(v, /*evicted=*/false);
      *reason = FallbackReason::kPrepareFailed;
      return false;
    }
    // NOTES: the token workspace half is compared too: an early pre-pass behind launch u + 1
    // writes its half while launch u still runs, which is safe only while launch u keeps off
    // that half (LeavesHalf at creation). With dynamic M a new capacity in the same M bucket
    // can make launch u's tokens outgrow its half (half -1, the whole workspace).
    if (plan->function != l.function || (l.pdl && !PlanTakesPdlEdge(*plan)) ||
        plan->prepass_reads_early != l.early || plan->token_workspace_half != l.half) {
      // *reason stays kNone: a graph of their own. Partly patched, v holds a mix of old and new
      // bindings that no plan was checked for: dropped.
      if (patched) {
        RemoveLocked(v, /*evicted=*/false);
      } else {
        *kept = true;
      }
      return false;
    }
    if (!v->graph->Patch(u, *plan).ok()) {
      RemoveLocked(v, /*evicted=*/false);
      *reason = FallbackReason::kPatchFailed;
      return false;
    }
    for (size_t i = l.calls.first; i < l.calls.first + l.calls.count; ++i) {
      v->Store(i, sigs[i]->binding);
    }
    ++mutation_epoch_;
    patched = true;
    AddLocked(counters_.patches, 1);
    CountLaunchLocked(l.calls.count, l.early);
  }
  v->fingerprint = fingerprint;
  return true;
}

GraphExecutor::Outcome GraphExecutor::CreateLocked(Entry* e, absl::Span<const GemmCall> calls,
                                                   const CallSignature* const* sigs,
                                                   absl::Span<const uint32_t> words, size_t hash,
                                                   size_t fingerprint, size_t binding_hash,
                                                   cudaStream_t stream) {
  // 1. Prepare every call before any capture begins (Prepare may encode tensor maps or touch
  //    function attributes; none of that belongs inside a capture).
  plan_ptrs_.clear();
  size_t bytes = options_.per_graph_bytes;
  size_t total_groups = 0;
  if (calls.size() > 1 && options_.use_pdl) CollectOutputsLocked(calls);
  PlanLaunchesLocked(calls, stream);
  const size_t n = launches_.size();
  const bool multi = n > 1 && options_.use_pdl;
  for (size_t u = 0; u < n; ++u) {
    const CallRange r = launches_[u];
    gemm::LaunchPlan* plan = ScratchPlanLocked(u);
    if (!PrepareLaunchLocked(calls, r, u, n, /*early=*/false, plan, stream).ok()) {
      return Outcome{false, FallbackReason::kPrepareFailed};
    }
    plan_ptrs_.push_back(plan);
    pdl_[u] = u > 0 && multi && PlanTakesPdlEdge(*plan) &&
              !RangeReadsOutputLocked(calls, r, /*tokens=*/false);
    // Behind its edge the pre-pass may convert early (ExecutorOptions::early_prepass): on its own
    // half, the launch before it off that half, its tokens no output of the graph.
    if (pdl_[u] && options_.early_prepass && plan->has_pre() && !plan->bound() &&
        plan->token_workspace_half == static_cast<int>(u % 2) &&
        LeavesHalf(*plan_ptrs_[u - 1], u - 1) &&
        !RangeReadsOutputLocked(calls, r, /*tokens=*/true)) {
      if (!PrepareLaunchLocked(calls, r, u, n, /*early=*/true, plan, stream).ok()) {
        return Outcome{false, FallbackReason::kPrepareFailed};
      }
      // (Still behind its edge: only the pre-pass's parameters changed.)
      pdl_[u] = PlanTakesPdlEdge(*plan);
    }
    bytes += LaunchBytes(*plan, options_);
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    total_groups += static_cast<size_t>(sigs[i]->binding.num_groups());
  }
  if (!lru_.Admissible(bytes)) return Outcome{false, FallbackReason::kOverBudget};
  // Never at the cost of one of e's own variants: the callers judged that by the size of e's
  // first variant, and this one's is known only now (a review found a larger one, e.g. one that
  // gained a pre-kernel, evicting its entry's others). (An entry with no variant may lose its
  // bound exec, as RunEntryLocked allows.)
  if (e != nullptr && !e->variants.empty() && WouldEvictOwnLocked(e, bytes)) {
    return Outcome{false, FallbackReason::kOverBudget};
  }

  // 2. Capture and instantiate (the backend ends the capture before judging any status).
  const size_t vhash = VariantHash(hash, binding_hash);
  bool instantiate_failed = false;
  std::unique_ptr<ExecutableGraph> graph = BuildLocked(n, &instantiate_failed);
  if (graph == nullptr) {
    // Back off: a new structure waits in the structure table; a new variant of a live one waits
    // in the variant table (meanwhile its calls are served by patching).
    (e == nullptr ? seen_ : variant_seen_)
        .Set(e == nullptr ? hash : vhash, 1 - std::max(1, options_.failure_backoff));
    return Outcome{false, instantiate_failed ? FallbackReason::kInstantiateFailed
                                             : FallbackReason::kCaptureFailed};
  }

  // 3. Make room (never removing `e` itself, which is about to gain this variant), then keep it.
  MakeRoomLocked(bytes, e);
  if (e == nullptr) {
    auto entry = std::make_unique<Entry>();
    e = entry.get();
    e->key.assign(words.begin(), words.end());
    e->hash = hash;
    e->variants.reserve(static_cast<size_t>(options_.max_bindings_per_structure));
    map_.emplace(e->key, std::move(entry));
  }
  auto variant = std::make_unique<Variant>();
  Variant* v = variant.get();
  v->entry = e;
  v->fingerprint = fingerprint;
  v->last_use = ++tick_;
  v->graph = std::move(graph);
  v->nodes.resize(calls.size());
  v->launches.resize(n);
  v->groups.resize(total_groups);
  for (size_t u = 0; u < n; ++u) {
    Variant::Launch& l = v->launches[u];
    l.calls = launches_[u];
    l.function = plan_ptrs_[u]->function;
    l.pdl = pdl_[u];
    l.early = plan_ptrs_[u]->prepass_reads_early;
    l.half = plan_ptrs_[u]->token_workspace_half;
    CountLaunchLocked(l.calls.count, l.early);
  }
  size_t first = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    Variant::Node& node = v->nodes[i];
    node.first_group = first;
    node.num_groups = sigs[i]->binding.num_groups();
    first += static_cast<size_t>(node.num_groups);
    v->Store(i, sigs[i]->binding);
  }
  e->variants.push_back(std::move(variant));
  KeepLocked(v, bytes);
  seen_.Forget(hash);
  ghosts_.Forget(hash);
  variant_seen_.Forget(vhash);
  ghosts_.Forget(vhash);

  // 4. Run it for this call.
  if (absl::Status s = v->graph->Launch(stream); !s.ok()) {
    RemoveLocked(v, /*evicted=*/false);
    return Outcome{false, FallbackReason::kLaunchFailed};
  }
  AddLocked(counters_.graph_launches, 1);
  return Outcome{true, FallbackReason::kNone, v};
}

void GraphExecutor::RemoveLocked(Variant* v, bool evicted, const Entry* keep) {
  ++mutation_epoch_;
  SubLocked(counters_.live_execs, 1);
  SubLocked(counters_.live_bytes, v->lru_bytes);
  AddLocked(evicted ? counters_.evictions : counters_.dropped, 1);
  lru_.Remove(v);
  MemoForgetLocked(v);
  Entry* e = v->entry;
  std::vector<std::unique_ptr<Variant>>& vs = e->variants;
  if (v->bound) {
    e->bound.reset();  // destroys *v: its exec, then its graph
  } else {
    if (evicted) ghosts_.Set(VariantHash(e->hash, v->HashStored()), 1);
    for (size_t i = 0; i < vs.size(); ++i) {
      if (vs[i].get() != v) continue;
      if (i + 1 != vs.size()) std::swap(vs[i], vs.back());
      vs.pop_back();  // destroys *v: its exec, then its graph
      break;
    }
  }
  if (!vs.empty() || e->bound != nullptr || e == keep) return;
  if (evicted) ghosts_.Set(e->hash, 1);
  auto it = map_.find(absl::MakeConstSpan(e->key), e->hash);
  if (it != map_.end()) map_.erase(it);  // destroys *e
}

}  // namespace encore::graph_cache
