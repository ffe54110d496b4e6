#include "graph_cache/executor.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cuda_utils/status.h"

namespace encore::graph_cache {

const char* FallbackReasonName(FallbackReason r) {
  switch (r) {
    case FallbackReason::kNone: return "none";
    case FallbackReason::kBelowMinRepeats: return "below min_repeats";
    case FallbackReason::kThrashGuard: return "thrash guard engaged";
    case FallbackReason::kCallerCapturing: return "caller's stream is capturing";
    case FallbackReason::kCaptureStateUnknown: return "stream capture state unknown";
    case FallbackReason::kOverBudget: return "graph larger than the cache budget";
    case FallbackReason::kPrepareFailed: return "prepare failed";
    case FallbackReason::kCaptureFailed: return "capture failed";
    case FallbackReason::kInstantiateFailed: return "instantiate failed";
    case FallbackReason::kFailureBackoff: return "backing off after a failed capture";
    case FallbackReason::kPatchFailed: return "node patch failed";
    case FallbackReason::kLaunchFailed: return "graph launch failed";
  }
  return "unknown";
}

// One cached graph: its key, its exec and, per node, the binding it was last launched with.
struct GraphExecutor::Entry : internal::LruNode {
  struct Node {
    size_t first_group = 0;  // index into `groups`
    int num_groups = 0;
    const int32_t* device_m = nullptr;
    const void* function = nullptr;  // kernel the node launches
    bool pdl = false;                // the node sits behind a programmatic edge
  };
  std::vector<uint32_t> key;
  size_t hash = 0;
  std::unique_ptr<ExecutableGraph> graph;
  std::vector<Node> nodes;
  std::vector<GroupBinding> groups;

  bool Matches(size_t i, const Binding& b) const {
    const Node& n = nodes[i];
    return n.device_m == b.device_m() && n.num_groups == b.num_groups() &&
           std::memcmp(&groups[n.first_group], b.groups().data(),
                       sizeof(GroupBinding) * static_cast<size_t>(n.num_groups)) == 0;
  }
  void Store(size_t i, const Binding& b) {
    Node& n = nodes[i];
    n.device_m = b.device_m();
    std::memcpy(&groups[n.first_group], b.groups().data(),
                sizeof(GroupBinding) * static_cast<size_t>(n.num_groups));
  }
};

GraphExecutor::GraphExecutor(gemm::Nvfp4GroupedGemm* runner,
                             std::unique_ptr<GraphBackend> backend, ExecutorOptions options)
    : runner_(runner),
      options_(std::move(options)),
      backend_(std::move(backend)),
      lru_(options_.max_entries, options_.max_device_bytes),
      seen_(options_.recurrence_slots),
      ghosts_(options_.recurrence_slots),
      guard_(options_.thrash) {
  pdl_ = std::make_unique<bool[]>(static_cast<size_t>(std::max(1, options_.max_batch_calls)));
  plans_.push_back(std::make_unique<gemm::LaunchPlan>());
  plan_ptrs_.reserve(static_cast<size_t>(std::max(1, options_.max_batch_calls)));
}

GraphExecutor::~GraphExecutor() {
  absl::MutexLock lock(&mu_);
  map_.clear();  // entries (graphs) before the backend
}

absl::StatusOr<std::unique_ptr<GraphExecutor>> GraphExecutor::Create(
    gemm::Nvfp4GroupedGemm* runner, ExecutorOptions options) {
  ENCORE_ASSIGN_OR_RETURN(std::unique_ptr<GraphBackend> backend, CreateCudaGraphBackend());
  return CreateWithBackend(runner, std::move(backend), std::move(options));
}

absl::StatusOr<std::unique_ptr<GraphExecutor>> GraphExecutor::CreateWithBackend(
    gemm::Nvfp4GroupedGemm* runner, std::unique_ptr<GraphBackend> backend,
    ExecutorOptions options) {
  if (runner == nullptr) return absl::InvalidArgumentError("runner is null");
  if (backend == nullptr) return absl::InvalidArgumentError("backend is null");
  if (options.min_repeats < 1) return absl::InvalidArgumentError("min_repeats must be ≥ 1");
  if (options.max_batch_calls < 1) {
    return absl::InvalidArgumentError("max_batch_calls must be ≥ 1");
  }
  if (options.m_bucket.mode == MBucketMode::kMultiple && options.m_bucket.multiple <= 0) {
    return absl::InvalidArgumentError("m_bucket.multiple must be > 0");
  }
  return std::unique_ptr<GraphExecutor>(
      new GraphExecutor(runner, std::move(backend), std::move(options)));
}

ExecutorCounters GraphExecutor::counters() const {
  ExecutorCounters c;
  const auto ld = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  c.calls = ld(counters_.calls);
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
  c.last_fallback =
      static_cast<FallbackReason>(counters_.last_fallback.load(std::memory_order_relaxed));
  return c;
}

void GraphExecutor::Clear() {
  absl::MutexLock lock(&mu_);
  while (internal::LruNode* n = lru_.lru()) RemoveLocked(static_cast<Entry*>(n), false);
  seen_.Clear();
  ghosts_.Clear();
}

absl::Status GraphExecutor::RunDirect(absl::Span<const GemmCall> calls, cudaStream_t stream,
                                      FallbackReason reason) {
  NoteFallback(reason);
  for (const GemmCall& c : calls) {
    counters_.direct_launches.fetch_add(1, std::memory_order_relaxed);
    ENCORE_RETURN_IF_ERROR(runner_->Run(c.args, stream, c.kind));
  }
  return absl::OkStatus();
}

absl::Status GraphExecutor::Run(const gemm::GroupedGemmArguments& args, cudaStream_t stream,
                                gemm::KernelKind kind) {
  counters_.calls.fetch_add(1, std::memory_order_relaxed);
  const GemmCall call{args, kind};
  const absl::Span<const GemmCall> calls(&call, 1);
  absl::StatusOr<bool> capturing = backend_->IsCapturing(stream);
  if (!capturing.ok()) return RunDirect(calls, stream, FallbackReason::kCaptureStateUnknown);
  if (*capturing) return RunDirect(calls, stream, FallbackReason::kCallerCapturing);

  CallSignature sig;  // on the stack: no allocation
  ENCORE_RETURN_IF_ERROR(BuildSignature(args, kind, options_.m_bucket, &sig));
  const absl::Span<const uint32_t> words = sig.key.words();
  const size_t hash = internal::WordsHash()(words);
  const CallSignature* sig_ptr = &sig;
  Outcome out;
  {
    absl::MutexLock lock(&mu_);
    out = RunLocked(calls, &sig_ptr, words, hash, stream, /*capture_immediately=*/false);
  }
  if (out.launched) return absl::OkStatus();
  return RunDirect(calls, stream, out.reason);
}

absl::Status GraphExecutor::RunBatch(absl::Span<const GemmCall> calls, cudaStream_t stream,
                                     BatchRunOptions batch_options) {
  if (calls.empty()) return absl::OkStatus();
  if (calls.size() > static_cast<size_t>(options_.max_batch_calls)) {
    return absl::InvalidArgumentError(absl::StrCat("batch of ", calls.size(),
                                                   " calls exceeds max_batch_calls = ",
                                                   options_.max_batch_calls));
  }
  counters_.calls.fetch_add(calls.size(), std::memory_order_relaxed);
  absl::StatusOr<bool> capturing = backend_->IsCapturing(stream);
  if (!capturing.ok()) return RunDirect(calls, stream, FallbackReason::kCaptureStateUnknown);
  if (*capturing) return RunDirect(calls, stream, FallbackReason::kCallerCapturing);

  Outcome out;
  {
    absl::MutexLock lock(&mu_);
    while (batch_sigs_.size() < calls.size()) {
      batch_sigs_.push_back(std::make_unique<CallSignature>());
    }
    batch_sig_ptrs_.clear();
    batch_words_.clear();
    for (size_t i = 0; i < calls.size(); ++i) {
      CallSignature* sig = batch_sigs_[i].get();
      if (absl::Status s = BuildSignature(calls[i].args, calls[i].kind, options_.m_bucket, sig);
          !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("batch call ", i, ": ", s.message()));
      }
      batch_sig_ptrs_.push_back(sig);
      const absl::Span<const uint32_t> w = sig->key.words();
      batch_words_.insert(batch_words_.end(), w.begin(), w.end());
    }
    const absl::Span<const uint32_t> words = absl::MakeConstSpan(batch_words_);
    const size_t hash = internal::WordsHash()(words);
    out = RunLocked(calls, batch_sig_ptrs_.data(), words, hash, stream,
                    batch_options.capture_immediately);
  }
  if (out.launched) return absl::OkStatus();
  return RunDirect(calls, stream, out.reason);
}

GraphExecutor::Outcome GraphExecutor::RunLocked(absl::Span<const GemmCall> calls,
                                                const CallSignature* const* sigs,
                                                absl::Span<const uint32_t> words, size_t hash,
                                                cudaStream_t stream, bool capture_immediately) {
  auto it = map_.find(words, hash);
  if (it != map_.end()) {
    Entry* e = it->second.get();
    guard_.Record(/*miss=*/false);
    FallbackReason reason = FallbackReason::kNone;
    if (UpdateLocked(e, calls, sigs, &reason)) {
      counters_.hits.fetch_add(1, std::memory_order_relaxed);
      if (absl::Status s = e->graph->Launch(stream); !s.ok()) {
        RemoveLocked(e, /*evicted=*/false);
        return Outcome{false, FallbackReason::kLaunchFailed};
      }
      counters_.graph_launches.fetch_add(1, std::memory_order_relaxed);
      lru_.Touch(e);
      return Outcome{true, FallbackReason::kNone};
    }
    if (reason != FallbackReason::kNone) return Outcome{false, reason};
    // The entry was dropped because a plan changed beyond patching: create it afresh now.
    return CreateLocked(calls, sigs, words, hash, stream);
  }

  const int seen = seen_.Bump(hash);
  if (!capture_immediately && seen < options_.min_repeats) {
    return Outcome{false, seen <= 0 ? FallbackReason::kFailureBackoff
                                    : FallbackReason::kBelowMinRepeats};
  }
  const uint64_t engaged_before = guard_.engagements();
  if (ghosts_.Get(hash) > 0) {
    guard_.Record(/*miss=*/true);  // a reload of an evicted graph: thrash evidence
  } else {
    guard_.Tick();  // a first capture
  }
  if (guard_.engagements() != engaged_before) {
    counters_.thrash_engagements.fetch_add(1, std::memory_order_relaxed);
  }
  if (!guard_.CaptureAllowed()) return Outcome{false, FallbackReason::kThrashGuard};
  return CreateLocked(calls, sigs, words, hash, stream);
}

gemm::LaunchPlan* GraphExecutor::ScratchPlanLocked(size_t i) {
  while (plans_.size() <= i) plans_.push_back(std::make_unique<gemm::LaunchPlan>());
  return plans_[i].get();
}

bool GraphExecutor::UpdateLocked(Entry* e, absl::Span<const GemmCall> calls,
                                 const CallSignature* const* sigs, FallbackReason* reason) {
  for (size_t i = 0; i < calls.size(); ++i) {
    if (e->Matches(i, sigs[i]->binding)) continue;
    gemm::LaunchPlan* plan = ScratchPlanLocked(0);
    if (!runner_->Prepare(calls[i].args, plan, calls[i].kind).ok()) {
      // The entry stays valid for its old bindings; this call's direct run reports the error.
      *reason = FallbackReason::kPrepareFailed;
      return false;
    }
    const Entry::Node& node = e->nodes[i];
    if (plan->function != node.function || (node.pdl && !plan->supports_pdl)) {
      RemoveLocked(e, /*evicted=*/false);  // *reason stays kNone: re-create
      return false;
    }
    if (!e->graph->Patch(i, *plan).ok()) {
      RemoveLocked(e, /*evicted=*/false);
      *reason = FallbackReason::kPatchFailed;
      return false;
    }
    e->Store(i, sigs[i]->binding);
    counters_.patches.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

GraphExecutor::Outcome GraphExecutor::CreateLocked(absl::Span<const GemmCall> calls,
                                                   const CallSignature* const* sigs,
                                                   absl::Span<const uint32_t> words, size_t hash,
                                                   cudaStream_t stream) {
  // 1. Prepare every call before any capture begins (Prepare may encode tensor maps or touch
  //    function attributes; none of that belongs inside a capture).
  plan_ptrs_.clear();
  size_t bytes = options_.per_graph_bytes;
  size_t total_groups = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    gemm::LaunchPlan* plan = ScratchPlanLocked(i);
    if (!runner_->Prepare(calls[i].args, plan, calls[i].kind).ok()) {
      return Outcome{false, FallbackReason::kPrepareFailed};
    }
    plan_ptrs_.push_back(plan);
    pdl_[i] = i > 0 && options_.use_pdl && plan->supports_pdl;
    bytes += options_.per_node_bytes + plan->params_bytes;
    total_groups += static_cast<size_t>(sigs[i]->binding.num_groups());
  }
  if (!lru_.Admissible(bytes)) return Outcome{false, FallbackReason::kOverBudget};

  // 2. Capture and instantiate (the backend ends the capture before judging any status).
  BuildReport report;
  absl::StatusOr<std::unique_ptr<ExecutableGraph>> graph = backend_->Build(
      *runner_, absl::MakeConstSpan(plan_ptrs_),
      absl::MakeConstSpan(pdl_.get(), calls.size()), &report);
  if (report.capture_begun) counters_.captures.fetch_add(1, std::memory_order_relaxed);
  if (report.instantiated) counters_.instantiations.fetch_add(1, std::memory_order_relaxed);
  if (!graph.ok() || *graph == nullptr) {
    const bool instantiate_failed = report.captured && !report.instantiated;
    (instantiate_failed ? counters_.instantiate_failures : counters_.capture_failures)
        .fetch_add(1, std::memory_order_relaxed);
    seen_.Set(hash, 1 - std::max(1, options_.failure_backoff));
    return Outcome{false, instantiate_failed ? FallbackReason::kInstantiateFailed
                                             : FallbackReason::kCaptureFailed};
  }

  // 3. Make room, then keep it.
  while (internal::LruNode* victim = lru_.NextVictim(bytes)) {
    RemoveLocked(static_cast<Entry*>(victim), /*evicted=*/true);
  }
  auto entry = std::make_unique<Entry>();
  Entry* e = entry.get();
  e->key.assign(words.begin(), words.end());
  e->hash = hash;
  e->graph = *std::move(graph);
  e->nodes.resize(calls.size());
  e->groups.resize(total_groups);
  size_t first = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    Entry::Node& n = e->nodes[i];
    n.first_group = first;
    n.num_groups = sigs[i]->binding.num_groups();
    n.function = plan_ptrs_[i]->function;
    n.pdl = pdl_[i];
    first += static_cast<size_t>(n.num_groups);
    e->Store(i, sigs[i]->binding);
  }
  lru_.Insert(e, bytes);
  map_.emplace(e->key, std::move(entry));
  seen_.Forget(hash);
  ghosts_.Forget(hash);
  counters_.live_execs.fetch_add(1, std::memory_order_relaxed);
  counters_.live_bytes.fetch_add(bytes, std::memory_order_relaxed);

  // 4. Run it for this call.
  if (absl::Status s = e->graph->Launch(stream); !s.ok()) {
    RemoveLocked(e, /*evicted=*/false);
    return Outcome{false, FallbackReason::kLaunchFailed};
  }
  counters_.graph_launches.fetch_add(1, std::memory_order_relaxed);
  return Outcome{true, FallbackReason::kNone};
}

void GraphExecutor::RemoveLocked(Entry* e, bool evicted) {
  counters_.live_execs.fetch_sub(1, std::memory_order_relaxed);
  counters_.live_bytes.fetch_sub(e->lru_bytes, std::memory_order_relaxed);
  (evicted ? counters_.evictions : counters_.dropped).fetch_add(1, std::memory_order_relaxed);
  lru_.Remove(e);
  if (evicted) ghosts_.Set(e->hash, 1);
  auto it = map_.find(absl::MakeConstSpan(e->key), e->hash);
  if (it != map_.end()) map_.erase(it);  // destroys *e: its exec, then its graph
}

}  // namespace encore::graph_cache
