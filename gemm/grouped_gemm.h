// NVFP4 grouped GEMM on Hopper (sm_90a): the host entry points.
//
// Nvfp4GroupedGemm is the long-lived runner: it reads the device facts once, resolves driver
// entry points, caches encoded tensor maps by (pointer, rows, K), and turns GroupedGemmArguments
// into a LaunchPlan (device-ready, parameters by value) without allocating once warm. The free
// function GroupedGemm() is the plain cold path: it builds a runner, prepares and launches.
//
// Thread safety: Prepare/Run/Launch may be called concurrently from several threads (the tensor
// map cache is guarded by a mutex); CanImplement is const and lock-free.
// Workspaces: a token pre-pass plan writes fp16 tokens into a workspace of the stream it was
// prepared for (Prepare's `stream`; Run passes its own): launches on different streams never share
// one, launches on one stream are ordered by it. So a plan must run on its stream (or on work
// ordered with it); cudaStreamPerThread used from several threads is one handle, hence one
// workspace: give such threads their own streams. Stream-K plans keep their partial tiles in a
// workspace of their stream in the same way.
//
// Example:
//   ENCORE_ASSIGN_OR_RETURN(auto gemm, encore::gemm::Nvfp4GroupedGemm::Create());
//   ENCORE_RETURN_IF_ERROR(gemm->Run(args, stream));            // direct launch
//   encore::gemm::LaunchPlan plan;
//   ENCORE_RETURN_IF_ERROR(gemm->Prepare(args, &plan, KernelKind::kAuto, stream));  // graph node
#ifndef ENCORE_GEMM_GROUPED_GEMM_H_
#define ENCORE_GEMM_GROUPED_GEMM_H_

#include <cuda_runtime_api.h>

#include <memory>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gemm/launch.h"
#include "gemm/problem.h"
#include "gemm/stream_k_costs.h"

namespace encore::gemm {

// Whether the tokens are converted to fp16 once per call by a pre-pass kernel (a LaunchPlan with a
// pre-kernel) or by every CTA in the GEMM kernel.
enum class TokenPrepass : int {
  kAuto = 0,    // when the tokens meet several weight tiles and the workspace holds them
  kAlways = 1,  // every plan (stream-K ones only where sm90::kStreamKPrepass; ResourceExhausted
                // when the workspace cannot hold the tokens)
  kNever = 2,
};

// The simple kernel's streamed instantiation (RunnerOptions::stream_simple_tiles): its tiles of
// <= 128 token rows split the two fp16 token stages into four, and 16- and 128-row tiles run their
// k loop without the drain between k-blocks (the next k-block's weights loaded and first fragments
// built while this one's last wgmmas run). Unfused simple plans with pre-pass tokens only.
enum class StreamTiles : int {
  kNever = 0,
  // Plans whose every group's token tiles are 16 rows wide, or 128 with at least 32 k-blocks
  // (K > 3968; heuristics.h PreferStreamedTiles). H200, 8 groups, N = 2048, against kNever
  // (runs 154-155): 16 rows -5% at K = 7168, -3.5% at K = 2048; 128 rows -2% at K = 7168, -0.3%
  // at K = 2048; GPU MODE shape 3 (128 rows, K = 1536) +0.7% under kAlways.
  kAuto = 1,
  // Every plan whose groups' token tiles are all 16 (or 8: the _n8 build) or 128 rows wide
  // (sm90::StreamedTileRows).
  // With every <= 128-row width streaming (the manual build _ring4s; runs 151-152) 32-64 rows lost
  // 0.3-1.3% and GPU MODE shape 2's 96-112 rows 0.8%: the kernel streams only 16 and 128.
  kAlways = 2,
};

// Whether a pre-pass plan converts its tokens inside the GEMM kernel (RunnerOptions::
// fuse_token_prepass): the GEMM's warps 1-11 convert a share each, then a grid-wide barrier that
// needs no co-residency (waiting CTAs convert the shares of CTAs that have not started:
// kernels/internal/fused_prepass.cuh). One kernel instead of two, launched with PDL (every role
// waits for the previous grid).
enum class FusePrepass : int {
  kNever = 0,  // the pre-pass always runs as its own kernel
  // Whole-tile plans (simple, persistent) whose grid fits on the SMs and whose CTAs convert few
  // tokens each (heuristics.h PreferFusedPrepass), unless the runner pads its small pre-passes
  // for PDL (RunnerOptions::pad_prepass_for_pdl, the default: then never; run 117). Run 98 (H200,
  // PDL, against the unpadded pre-pass kernel): GPU MODE shape 3 (~6 K elements a CTA) -4.5%;
  // shape 1 (~16 K) -0.4%; shape 2 (~17 K) +1.1%; shape 0 (stream-K, ~56 K) +2.6%; one 128-row
  // tile with K = 7168 +28%.
  kAuto = 1,
  // Every whole-tile pre-pass plan whose grid fits on the SMs (stream-K plans keep the pre-pass
  // kernel); where kAuto would pick the simple kernel with more CTAs than SMs, the persistent one
  // runs instead (run 42: GPU MODE shape 0, 120 vs 119 us).
  kAlways = 2,
};

struct RunnerOptions {
  int device = -1;                          // -1: current device
  size_t tensor_map_cache_capacity = 4096;  // encoded maps kept (LRU beyond)
  // Let kAuto choose stream-K (KernelKind::kStreamK: every tile's k-blocks cut into one
  // contiguous, cost-balanced range per CTA, heuristics.h PlanStreamK) where the model predicts
  // >= 5% over the whole-tile schedule (run 76: GPU MODE shape 0, 109 -> 105-107 us; one 128-row
  // tile with K = 7168, 33.4 -> 19.3 us).
  // NOTES: a stream-K plan uses a workspace of the stream it was prepared for (~34 MB on 132 SMs:
  // fp32 partial tiles and arrival counters, allocated by that stream's first stream-K plan
  // outside a capture, counted in max_token_workspaces); without one, kAuto runs whole tiles.
  bool stream_k = true;
  // The stream-K partition's cost constants (gemm/stream_k_costs.h; the defaults are the fitted
  // ones). For comparing partitions of one problem (the kernel benchmark's .../stream_k/costs<i>);
  // Create rejects values outside [0, 2^20].
  StreamKCosts stream_k_costs;
  // Token pre-pass and its fp16 workspaces: one per stream, each token_workspace_bytes, allocated
  // by the first pre-pass plan prepared for that stream and kept for the runner's life (graphs
  // point into them); at most max_token_workspaces streams (token and stream-K workspaces
  // together), plans for further streams (and plans whose tokens need more bytes) convert tokens
  // in kernel, as does a stream's first plan while it captures (no cudaMalloc inside a capture),
  // and every plan of a stream whose workspace the device had no memory for (an out-of-memory
  // allocation is not retried; kAlways and kStreamK then fail with ResourceExhausted).
  TokenPrepass token_prepass = TokenPrepass::kAuto;
  size_t token_workspace_bytes = size_t{64} << 20;  // a multiple of 256, <= 2^48 (Create checks)
  int max_token_workspaces = 8;
  // The token pre-pass inside the GEMM kernel (FusePrepass above). NOTES: a fused plan's grid
  // need not fit on the SMs for correctness (a CTA that cannot start has its share converted by
  // the others after a 20-us timeout), only for speed: under an MPS SM limit or a small green
  // context, kNever avoids the timeout.
  FusePrepass fuse_token_prepass = FusePrepass::kAuto;
  // A pre-pass plan whose pre-pass would launch without PDL (heuristics.h PrepassPrefersPdl: a
  // small pre-pass before a GEMM that leaves SMs idle) launches with PDL and its pre-pass blocks
  // padded with unused shared memory, a few a SM (prepass_pad_blocks_per_sm; heuristics.h
  // PrepassPdlPadBytes, from the device's shared memory per SM). Run 117 (two a SM): GPU MODE
  // shapes 2 and 3 -5% / -8%. With it, kAuto does not fuse the pre-pass (the padded pre-pass
  // kernel is faster: shape 3 14.4 vs 15.3 us).
  bool pad_prepass_for_pdl = true;
  // A padded pre-pass's blocks per SM: max(prepass_pad_blocks_per_sm, blocks / SMs rounded up),
  // an even spread (heuristics.h PrepassSpreadBlocksPerSm; 1..8, Create rejects other values).
  // Run 119 (H200, small pre-passes at a fixed bound): 1 a SM GPU MODE shape 3 (96 blocks) 14.4 ->
  // 14.2 us and decode8 -0.1, but shape 2 (256 blocks: two waves at 1 a SM) +1.1 us, which its
  // spread of 2 a SM avoids; 3 a SM slower on shapes 2-3 and decode8.
  int prepass_pad_blocks_per_sm = 1;
  // Also pad the pre-passes that launch behind a PDL edge anyway (large ones, or before a GEMM
  // that leaves no SM idle): launched at the previous GEMM's last trigger, their blocks otherwise
  // pile up to 8 deep on the SMs its first finished CTAs free. Runs 119-120: GPU MODE shape 1
  // (256 blocks -> 2 a SM) 55.4-55.8 -> 52.8-53.1 us; shape 0 (896 -> 7) within noise.
  // (Only with pad_prepass_for_pdl.)
  bool pad_large_prepasses = true;
  // Token rows per tile at most: 0 (default) chooses per problem (heuristics.h ChooseMTileCap:
  // the cap with the smallest estimated makespan); otherwise a multiple of 16 in
  // [16, sm90::TileShape::kMaxBlockM] for every kAuto, simple and persistent plan (stream-K tiles
  // keep kMaxBlockM). Create rejects other values.
  int token_tile_rows = 0;
  // Let kAuto and kPersistent plans run a static tile-to-CTA assignment packed on the host
  // (heuristics.h PackTiles; the costliest groups' token tiles may be halved to pack finer) where
  // the cost model predicts >= 3% over both the simple kernel's greedy order and the persistent
  // kernel's snake rounds (problems of <= sm90::kMaxPackedTiles tiles). false: never.
  bool pack_tiles = true;
  // The simple kernel's streamed instantiation for unfused simple plans with pre-pass tokens
  // (StreamTiles above; heuristics.h PreferStreamedTiles).
  StreamTiles stream_simple_tiles = StreamTiles::kAuto;
};

// How a plan is prepared beyond its problem: for graph builders that know the calls around it
// (graph_cache's multi-call graphs). The defaults give Prepare's plan.
struct PlanOptions {
  // A token pre-pass plan's pre-pass writes half `token_workspace_half` (0 or 1) of its stream's
  // token workspace when the tokens fit in half (LaunchPlan::token_workspace_half says whether
  // they did); -1: the workspace from its start. Consecutive calls on alternate halves never
  // write what the call before them reads.
  int token_workspace_half = -1;
  // With a half: the pre-pass converts before its griddepcontrol.wait and waits at its end
  // (LaunchPlan::prepass_reads_early), so behind a PDL edge its work overlaps the previous
  // GEMM's last CTAs, and the GEMM after it launches (and loads its weights) meanwhile, while its
  // wait still ends after that GEMM completed. The caller promises that the kernel before it on
  // the stream is the GEMM of a plan on the other half (or one that uses no token workspace)
  // and writes none of this call's inputs (A, SFA, B, SFB, device M): a graph whose calls'
  // outputs meet none of them.
  bool prepass_reads_early = false;
};

class Nvfp4GroupedGemm {
 public:
  // FailedPrecondition "no CUDA device ..." without a GPU; FailedPrecondition naming the compute
  // capability found and the ones supported (9.0) on any other GPU.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Nvfp4GroupedGemm>> Create(
      RunnerOptions options = {});
  virtual ~Nvfp4GroupedGemm() = default;

  // Validate() plus the limits of the built kernels (tile count, parameter block size); the
  // status says why not.
  [[nodiscard]] virtual absl::Status CanImplement(const GroupedGemmArguments& args) const = 0;

  // Fills `plan` for launches on `stream` (its token workspace; see Workspaces above). kind = kAuto
  // chooses the schedule (simple, persistent, or stream-K when the runner allows it) and the
  // token-tile rows by the problem (gemm/heuristics.h); a forced kind is honoured (kStreamK:
  // FailedPrecondition when RunnerOptions::stream_k is false or it is not built, ResourceExhausted
  // when the stream has no stream-K workspace and cannot get one now). The runner's device
  // (RunnerOptions::device) must be current, here (FailedPrecondition otherwise) and for Launch
  // (which does not check: the launch fails). A failed Prepare leaves `plan` unlaunchable
  // (Launch: InvalidArgument).
  [[nodiscard]] virtual absl::Status Prepare(const GroupedGemmArguments& args, LaunchPlan* plan,
                                             KernelKind kind = KernelKind::kAuto,
                                             cudaStream_t stream = nullptr) = 0;
  // Prepare with PlanOptions (above). This runner's default ignores them (Prepare's plan).
  [[nodiscard]] virtual absl::Status PrepareWith(const GroupedGemmArguments& args, LaunchPlan* plan,
                                                 KernelKind kind, cudaStream_t stream,
                                                 const PlanOptions& options) {
    (void)options;
    return Prepare(args, plan, kind, stream);
  }

  // cudaLaunchKernelEx of a prepared plan (with the PDL attribute when `pdl` and supported). A
  // plan that is not reads_after_wait (a fused pre-pass of the manual build _fearly) reads its
  // weights, weight scales and dynamic M early: with `pdl`, the kernel before it on the stream
  // must not write them (LaunchPlan::supports_pdl). `pdl = plan.reads_after_wait` is always safe;
  // Run uses plan.prefers_pdl.
  [[nodiscard]] virtual absl::Status Launch(const LaunchPlan& plan, cudaStream_t stream,
                                            bool pdl = false) const = 0;

  // Bound plans: rebind without node patches. PrepareBound fills `plan` like Prepare, but its
  // kernels read every group's pointers (a, sfa, b, sfb, c) from `stream`'s binding ring (its
  // pre-pass's block 0 fills the stream's binding block for the GEMM, LaunchPlan::bound()): so one
  // launch description — or one graph captured from it — serves any buffers of the problem's
  // structure (groups, M, N, K, kind, device_m). Before every launch of such a plan or graph on
  // `stream`, WriteBindings queues the call's pointers (a few host stores into pinned memory; no
  // CUDA call), in the same order as the launches. Pre-pass plans only (FailedPrecondition when
  // the problem would convert its tokens in kernel), never fused or streamed; the stream's ring
  // (kBindingRingSlots slots: ~660 KB of pinned memory, and ~19 KB of device memory for the block
  // and the prefetched next slot) is allocated by its first PrepareBound, which must not run
  // while the stream captures. A WriteBindings and its launch from one thread must not
  // interleave with another pair on the same stream: LaunchWithBindings holds the ring's lock
  // across both (the graph cache uses it); the slot tags catch a write without its launch, not
  // two writers' pairs crossing. Cost: WriteBindings is a few dozen host stores; on the device,
  // the pre-pass first reads the call's pointers (from L2: the GEMM before it prefetches the next
  // slot while it computes, when the host runs ahead) and the GEMM's weight loads wait for the
  // pre-pass (session 25; before, a fetch kernel in front cost ~3 us a call, run 167).
  [[nodiscard]] virtual absl::Status PrepareBound(const GroupedGemmArguments& args,
                                                  LaunchPlan* plan,
                                                  KernelKind kind = KernelKind::kAuto,
                                                  cudaStream_t stream = nullptr) {
    (void)args, (void)plan, (void)kind, (void)stream;
    return absl::UnimplementedError("this runner has no bound plans");
  }
  // Queues `args`' pointers for the next bound launch on `stream` (its groups must have the
  // structure the launched plan was prepared for). When the host runs kBindingRingSlots bound
  // launches ahead of the device it waits here for the oldest slot. InvalidArgument for malformed
  // arguments, FailedPrecondition when `stream` has no ring (no PrepareBound for it yet).
  [[nodiscard]] virtual absl::Status WriteBindings(const GroupedGemmArguments& args,
                                                   cudaStream_t stream) {
    (void)args, (void)stream;
    return absl::UnimplementedError("this runner has no bound plans");
  }
  // WriteBindings(args, stream), then `launch` (which must enqueue exactly one bound launch on
  // `stream`: Launch of a bound plan, or of a graph captured from one), both under the stream
  // ring's lock, so that pairs from several threads or graph caches sharing this runner and
  // stream never cross. A failed `launch` takes the write back (the next launch reads its own
  // slot; a copy of the slot that the previous bound call's GEMM may have prefetched meanwhile is
  // invalidated in stream order) and its status is returned. `wait_for_slot` false: where the host
  // is kBindingRingSlots bound launches ahead, ResourceExhausted at once, nothing written and
  // `launch` not called (for callers holding a lock of their own here, such as the graph cache:
  // a wait for the device there could stall, or deadlock, every other thread).
  [[nodiscard]] virtual absl::Status LaunchWithBindings(const GroupedGemmArguments& args,
                                                        cudaStream_t stream,
                                                        absl::FunctionRef<absl::Status()> launch,
                                                        bool wait_for_slot) {
    (void)args, (void)stream, (void)launch, (void)wait_for_slot;
    return absl::UnimplementedError("this runner has no bound plans");
  }

  // Prepare + Launch through a per-thread scratch plan, with PDL where it is safe and faster
  // (LaunchPlan::prefers_pdl). NOTES: behind a PDL edge a plan reads and writes nothing before its
  // wait, which waits for the kernel just before it on the stream; that is enough as long as that
  // kernel completes only after its own predecessors did. Encore's kernels do; a caller's kernel
  // launched with programmatic stream serialization must call cudaGridDependencySynchronize (or
  // be launched without the attribute), or an earlier Encore GEMM may still read the stream's
  // token workspace when the next call's pre-pass rewrites it.
  [[nodiscard]] virtual absl::Status Run(const GroupedGemmArguments& args, cudaStream_t stream,
                                         KernelKind kind = KernelKind::kAuto) = 0;

  virtual int sm_count() const = 0;
};

// Cold path: create a runner, encode tensor maps, prepare and launch (asynchronous on `stream`).
// Its runner has RunnerOptions::stream_k = false and token_prepass = kNever (no workspace for one
// call).
[[nodiscard]] absl::Status GroupedGemm(const GroupedGemmArguments& args, cudaStream_t stream,
                                       KernelKind kind = KernelKind::kAuto);

}  // namespace encore::gemm

#endif  // ENCORE_GEMM_GROUPED_GEMM_H_
