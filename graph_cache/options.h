// Tunables of the graph cache, in one place so the pure-CPU policy classes (graph_cache/internal/)
// and the executor share them. Every field has a working default.
//
// Example:
//   encore::graph_cache::ExecutorOptions options;
//   options.min_repeats = 3;                        // capture a structure at its 3rd sighting
//   options.max_entries = 128;
//   options.max_device_bytes = 64 << 20;
//   options.m_bucket = {encore::graph_cache::MBucketMode::kMultiple, 128};
#ifndef ENCORE_GRAPH_CACHE_OPTIONS_H_
#define ENCORE_GRAPH_CACHE_OPTIONS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "graph_cache/signature.h"

namespace encore::graph_cache {

// The thrash guard watches lookups of recurring structures: hits (including calls served by
// patching a live variant), and reloads — captures of a structure, or of a (structure, bindings)
// variant, that the cache held before and evicted (remembered in a fixed "ghost" table of evicted
// hashes). First-time captures are not misses: a warm-up burst of new structures or new binding
// sets never trips the guard. A window where reloads exceed `engage_miss_ratio` means graphs are
// evicted before they pay off: capturing stops for
// `cooldown_lookups` lookups (calls run directly; live graphs still replay), then resumes. If the
// next full window thrashes again, the cooldown doubles (up to `max_cooldown_lookups`); only a
// window whose miss ratio is at or below `release_miss_ratio` resets it (hysteresis).
struct ThrashGuardOptions {
  bool enabled = true;
  int window = 64;
  double engage_miss_ratio = 0.5;
  double release_miss_ratio = 0.125;
  int cooldown_lookups = 256;
  int max_cooldown_lookups = 16384;  // <= 2^30
};

// How a live structure serves bindings that no variant holds (and that do not get a variant of
// their own: not recurring, or the structure is full).
enum class RebindMode : int {
  // Patch the kernel nodes of the structure's least recently used variant
  // (cudaGraphExecKernelNodeSetParams): no device cost, ~1.5-2.5 us of host time per node
  // (benchmarks/micro/node_patch.cu, run 80).
  kPatch = 0,
  // Single calls: one more exec per structure, captured from a bound plan
  // (Nvfp4GroupedGemm::PrepareBound), whose kernels read the call's pointers from the stream's
  // binding block; each such call writes its pointers into the stream's binding ring and launches
  // it, with nothing patched. The host pays a few stores; the device pays the pre-pass's wait for
  // its pointers and the GEMM's weight loads after its wait. Problems without the token pre-pass, batches, and calls with another
  // stream, device_m or exact M than the bound exec was captured for are patched as in kPatch.
  kBound = 1,
};

// Whether consecutive independent calls of a multi-call graph (a GemmBatch, a recorded period) run
// as one grouped-GEMM launch of all their groups. Calls qualify when each is small (its work is
// at most merge_max_kblocks_per_sm), has static M and the same kind as its neighbours, and no call
// of the launch reads or writes what another one writes (every A, SFA, B, SFB against every C;
// the Cs disjoint). H200, 15 independent calls back to back (runs 184-185; per call, the calls'
// own multi-call graph -> merged): GPU MODE shape 2 24.7 -> 20.1 us (8 calls a launch), shape 3
// 13.4 -> 10.9 (15), eight 16-row groups with K = 7168 26.2 -> 25.4 (4), M = 8 N = 128 K = 256
// 4.2 -> 0.64 (15); one 128-row tile with K = 7168 15.8 -> 2.3 (15, stream-K: kAlways only).
// Shapes 0-1 (88-149 blocks a call per SM) run slower merged (51.7 -> 54.1, 92.9 -> 99.7) and do
// not qualify.
enum class MergeCalls : int {
  kNever = 0,
  // Only where neither a call's own plan nor the merged launch splits K between CTAs (stream-K):
  // every output element is then summed in the order of the call's own launch, so the results
  // are bit for bit those of Run.
  kSameSums = 1,
  // Also across stream-K plans: an element's fp32 partial sums may then be added in another
  // order than in the call's own launch (the last bit of an fp16 result may differ from Run's;
  // exact for data whose sums are exact, such as the GPU MODE distribution).
  kAlways = 2,
};

struct ExecutorOptions {
  // A structure runs directly until it has been seen this many times; the call that reaches the
  // count is captured (so 1 = capture at first sight).
  int min_repeats = 2;
  // Bounds of the cache, counted in execs (each binding variant of a structure is one exec; see
  // max_bindings_per_structure); the least recently used exec is evicted to stay within both.
  size_t max_entries = 256;
  size_t max_device_bytes = size_t{256} << 20;
  // Execs ("variants") one structure may keep, each instantiated for its own bindings (pointers,
  // exact m): a workload that rotates through a fixed set of buffers (the same layer shapes with
  // per-layer weights, a harness cycling over its input sets) then replays a variant per call
  // with no patching. A binding set gets its own variant once it has recurred min_repeats times
  // while the structure has room; otherwise the structure's least recently used variant is
  // patched to it. 1 = one exec per structure, patched on every binding change. With
  // min_repeats = 1 every new binding set is captured at first sight while there is room.
  int max_bindings_per_structure = 16;
  // Device-byte estimate of one cached exec: per_graph_bytes + Σ over nodes of
  // (per_node_bytes + the node's parameter block bytes).
  size_t per_graph_bytes = 16 * 1024;
  size_t per_node_bytes = 4 * 1024;
  // Slots of the recurrence table and of the ghost table of evicted keys (4-way set-associative,
  // allocated once each; 1..2^24).
  size_t recurrence_slots = 4096;
  // After a failed capture/instantiation the structure must recur this many more times before
  // the next attempt.
  int failure_backoff = 64;
  // Dynamic-M key buckets (see signature.h: the launch is always planned for the exact m).
  MBucketPolicy m_bucket;
  // Programmatic dependent launch between consecutive nodes of multi-kernel graphs, for nodes
  // whose LaunchPlan::supports_pdl, that have no pre-kernel or one they prefer PDL for
  // (LaunchPlan::prefers_pdl: unpadded small pre-passes measured slower behind an edge, see
  // executor.cc) and whose early reads (weights, weight scales, dynamic M) do not overlap an
  // output of the graph's calls (internal/early_reads.h).
  bool use_pdl = true;
  // Behind such an edge, a call's token pre-pass converts before its wait (gemm::PlanOptions::
  // prepass_reads_early): consecutive calls of the graph take alternate halves of the stream's
  // token workspace, and a call whose tokens, token scales or dynamic M meet no output of the
  // graph's calls converts while the GEMM before it finishes. Run 178 (H200, the 15 calls of a
  // GPU MODE batch back to back): shapes 0-3 -0.9 / -1.2 / -3.1 / -4.9%, one 128-row tile with
  // K = 7168 -8.7%. (Only with use_pdl.)
  bool early_prepass = true;
  // Bindings without a variant of their own (RebindMode above).
  RebindMode rebind = RebindMode::kPatch;
  // Largest number of calls in one batch (explicit batches and recorded periods).
  int max_batch_calls = 256;
  // Merged launches of independent calls (MergeCalls above; only with use_pdl, which multi-call
  // graphs are built for). A call's work is Σ over its groups of ceil(M/128)·ceil(N/128)·
  // ceil(K/128) blocks; it qualifies when that is at most merge_max_kblocks_per_sm × the SM count,
  // and a merged launch takes calls while their work stays within merge_max_launch_kblocks_per_sm
  // × the SM count, their groups within gemm::kMaxGroups and their tokens as fp16 (Σ M·K·2) within
  // merge_max_token_bytes (the token pre-pass converts them into one half of the stream's
  // workspace: 32 MB of the default 64). 0 in either limit merges nothing.
  MergeCalls merge_calls = MergeCalls::kSameSums;
  int merge_max_kblocks_per_sm = 64;
  int merge_max_launch_kblocks_per_sm = 256;
  size_t merge_max_token_bytes = size_t{24} << 20;
  ThrashGuardOptions thrash;
};

// OK, or InvalidArgument naming the first field whose value makes no sense (min_repeats < 1,
// max_entries == 0, max_bindings_per_structure < 1, a thrash ratio outside [0, 1], ...).
// GraphExecutor::Create / CreateWithBackend call it.
[[nodiscard]] absl::Status ValidateExecutorOptions(const ExecutorOptions& options);

}  // namespace encore::graph_cache

#endif  // ENCORE_GRAPH_CACHE_OPTIONS_H_
