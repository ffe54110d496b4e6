// The device-ready parameter block of the sm90 NVFP4 grouped GEMM kernels (CUTLASS's "Params",
// built on the host from GroupedGemmArguments), and the compile-time tile configuration. Plain
// data, included by host code (grouped_gemm.cc) and by the kernels.
#ifndef ENCORE_GEMM_KERNELS_SM90_NVFP4_GROUPED_GEMM_PARAMS_H_
#define ENCORE_GEMM_KERNELS_SM90_NVFP4_GROUPED_GEMM_PARAMS_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#ifndef ENCORE_SM90_WIDE_N
// 0 (default, run 23): a CTA covers 128 weight rows (one 64-row strip per consumer warpgroup) and
//    up to 256 token rows, so each weight k-block is dequantized once per 256 tokens; with the
//    token pre-pass this is 13-26% faster than 1 on every GPU MODE shape.
// 1: 256 weight rows x <= 128 token rows (the default of runs 6-22: each token tile converted in
//    kernel fed twice the FLOPs, which mattered before the pre-pass).
#define ENCORE_SM90_WIDE_N 0
#endif

#ifndef ENCORE_SM90_CONSUMER_WGS
// Consumer warpgroups per CTA, one 64-row weight strip each (narrow build): 2 (default), a CTA of
// 384 threads with 128 x <= 256 tiles; 3 (the manual build _wg3), 512 threads with 192 x <= 192
// tiles (the consumers get 152 registers instead of 208, so fewer accumulators); 4 (the manual
// build _wg4), 640 threads with 256 x <= 128 tiles (104 registers a consumer: 64 accumulators;
// 4 raw stages to fit the shared memory; run 82: the loop 6-13% faster per FLOP at widths 64-128,
// every GPU MODE shape 11-42% slower). Run 66
// (benchmarks/micro/decode_ceiling.cu strips): in the micro-benchmark a third warpgroup runs the
// loop 10-25% faster at widths 64-192. Run 67, the real kernel (steady family, per weight row):
// +5..7% at widths 64-128, -1.5% at 160-192; and 192-row tiles fill the SMs worse: GPU MODE
// 110 / 63.2 / 29.8 / 18.4 us vs 111 / 60.3 / 27.9 / 16.3 (its stream-K and in-kernel kernels
// also spill at 152 registers). Not adopted.
#define ENCORE_SM90_CONSUMER_WGS 2
#endif

#ifndef ENCORE_SM90_PREPASS_RAW_STAGES
// Raw (weight) stages of the pre-pass kernels; 0: the default (6, or 4 with 4 consumer
// warpgroups). Manual builds _raw8 / _raw9 (session 34, run 228: the weight-stage wait is ~6-14%
// of the consumers' loop time, run 227's _exp_waits).
#define ENCORE_SM90_PREPASS_RAW_STAGES 0
#endif
#ifndef ENCORE_SM90_MAX_TOKEN_ROWS
// Token rows a tile covers at most (wgmma n <= this). With the pre-pass, the narrow build's fp16
// token ring holds 2 x 256 / rows stages of the same 128 KB (256: 2 stages, 128: 4).
#define ENCORE_SM90_MAX_TOKEN_ROWS    \
  (ENCORE_SM90_WIDE_N ? 128            \
   : ENCORE_SM90_CONSUMER_WGS == 2 ? 256 \
   : ENCORE_SM90_CONSUMER_WGS == 3 ? 192 \
                                   : 128)
#endif
#if ENCORE_SM90_WIDE_N && ENCORE_SM90_CONSUMER_WGS != 2
#error "the wide build has two consumer warpgroups"
#endif

#ifndef ENCORE_SM90_M_GRANULE
// Token rows of a tile are rounded up to a multiple of this (the tile's wgmma n): 16 (default) or
// 8 (the manual build _n8: wgmma n in steps of 8, e.g. GPU MODE shape 1's ragged groups of 40 /
// 76 / 196 tokens run at n = 40 / 80 / 200 instead of 48 / 80 / 208; twice the k-loop
// instantiations per kernel). Run 205: the widths it runs unpadded 1-4% faster, every other one
// 0.6-1% slower, GPU MODE geomean equal.
#define ENCORE_SM90_M_GRANULE 16
#endif
#if ENCORE_SM90_M_GRANULE != 8 && ENCORE_SM90_M_GRANULE != 16
#error "ENCORE_SM90_M_GRANULE is 8 or 16"
#endif

#ifndef ENCORE_SM90_FUSED_WEIGHTS_WAIT
// The fused pre-pass (Params::fused_prepass), kernel and runner: 1 (default since session 16, the
// manual build _fwait of run 98), every role waits, the plan is reads_after_wait and Run launches
// it with PDL (run 98: GPU MODE shape 3 -4.5% against the pre-pass kernel); 0 (manual build
// _fearly), its weight producer loads before griddepcontrol.wait as in unfused pre-pass kernels,
// so a PDL launch of a fused plan is safe only after a kernel that does not write the weights
// (LaunchPlan::reads_after_wait false, Run launches it without PDL; run 98 with PDL anyway: shape
// 1 -3.2%). (Run 98: a cooperative launch, run 97's residency guard, removed the whole PDL
// overlap; the barrier now needs no co-residency, fused_prepass.cuh.)
#define ENCORE_SM90_FUSED_WEIGHTS_WAIT 1
#endif

#ifndef ENCORE_SM90_TMA_STORE
// 0 (default): every kernel's consumer threads store C (16-byte stores from the padded staging).
// 1 (manual build _tmastore): the pre-pass kernels with at most kMaxTmaStoreGroups groups store C
//    by TMA where M is static: one bulk tensor store per 32-token chunk of a 64-column strip from
//    a 128B-swizzled staging buffer (3 a consumer warpgroup, in turn; Params::out_maps), issued by
//    thread 0 of the warpgroup (epilogue.cuh); dynamic M keeps the threads' stores.
//    Run 123 put the threads' copy-out at 3.1 us a call on GPU MODE shape 1 and 2.4 on shape 0,
//    but TMA stores lost on every GPU MODE shape in the same lease: run 127 (two 16-row stores a
//    chunk, completion wait at the CTA's end) +1.0 / +1.0 / +1.0 / +0.6 us, run 128 (one 32-row
//    store a chunk, a read wait at the end) +0.5 / +0.4 / +0.7 / +0.5 and decode8 +1.1. The
//    stores' cost is their traffic, not the instructions that issue them (run 124 moved the
//    same stores to other warps and lost too).
#define ENCORE_SM90_TMA_STORE 0
#endif

#ifndef ENCORE_SM90_PREPASS_READY
// 0 (default): a GEMM after a separate token pre-pass learns that the tokens are written from
//    griddepcontrol.wait (the pre-pass grid completed: run 129's stamps, 1.3-1.5 us after its last
//    block on GPU MODE shapes 0-1, ~1.1 on shapes 2-3).
// 1 (manual build _ready): each pre-pass block counts itself done (red.release after its stores)
//    on the stream's barrier words, and the GEMM's token producer waits for the count instead
//    (Params::prepass_blocks); its consumers do not wait for the pre-pass grid at all. The weight
//    producer still waits before its trigger, so the GEMM's dependents still follow the pre-pass.
//    Run 133 (correct: kernel test 20/20): lost on every GPU MODE shape (0: 99.5 vs 97.0 us with
//    the same staged pre-pass; 1-3: +0.3..+0.7; decode8 +1.4; one_tile -0.5): each block's count
//    waits for its stores, so the blocks hold their SMs longer (the pre-pass alone 8.1 vs 7.3 us
//    on shape 0), which costs more than the grid completion's ~1.3 us.
#define ENCORE_SM90_PREPASS_READY 0
#endif
#ifndef ENCORE_SM90_EARLY_READY
// 1 (manual build _early_ready, with ENCORE_SM90_PREPASS_READY): the ready count for early
//    pre-passes too (PlanOptions::prepass_reads_early), so the GEMM after one computes as soon as
//    its pre-pass's blocks are done, possibly beside the previous GEMM's last CTAs; each
//    workspace half has its own barrier words, and stream-K plans keep the grid wait (one
//    stream-K workspace per stream). Only for calls whose C meets nothing of the call before
//    (the kernel benchmark's independent calls): graph_cache does not check that. Run 183: no
//    gain over the default build's early pre-passes (GPU MODE shapes within -0.3..+0.7%).
#define ENCORE_SM90_EARLY_READY 0
#endif
#if ENCORE_SM90_EARLY_READY && !ENCORE_SM90_PREPASS_READY
#error "ENCORE_SM90_EARLY_READY needs ENCORE_SM90_PREPASS_READY"
#endif

namespace encore::gemm::sm90 {

// NOTES: stream-K kernels (KernelKind::kStreamK) are built by default (ENCORE_SM90_STREAM_K = 0
// leaves them out; the runner then refuses kStreamK). Until session 7 they existed in the wide
// build only: with 128 x 256 tiles ptxas kept their accumulators in local memory (~700-byte stack
// frames, 10-35x slower, run 23) because the tile walk called the consumer body from two sites
// (whole tiles, then pieces); with one call site (TileScheduler::ForEach) the frames are 0 bytes.
// Run 60 (narrow stream-K reading pre-pass tokens, equal k-block shares): one 128-row tile with
// K = 7168 (N = 256) 34.9 -> 23.0 us; forced on the GPU MODE shapes it lost 23-100%. Since
// session 10 the host balances the ranges by cost (heuristics.h PlanStreamK; run 76: shape 0
// 105-107 vs 109 us packed, one_tile 19.3).
// ENCORE_SM90_STREAM_K_PREPASS: stream-K plans may read pre-pass tokens (narrow default; the wide
// build's instantiation spilled 56 bytes before the one-call-site walk and is not re-measured).
// Not in the wide build: StreamKReduce moves each consumer thread's first nw / 2 accumulators,
// where the wide build keeps its second strip at acc[64..] (run 81: the wide kernel test failed its
// four stream-K tests, in kernel and with the pre-pass; its ptxas frames are 0 bytes either way).
#ifndef ENCORE_SM90_STREAM_K
#define ENCORE_SM90_STREAM_K (ENCORE_SM90_WIDE_N ? 0 : 1)
#endif
#ifndef ENCORE_SM90_STREAM_K_PREPASS
#define ENCORE_SM90_STREAM_K_PREPASS (ENCORE_SM90_WIDE_N ? 0 : 1)
#endif
inline constexpr bool kStreamKBuilt = ENCORE_SM90_STREAM_K != 0;
inline constexpr bool kStreamKPrepass = kStreamKBuilt && ENCORE_SM90_STREAM_K_PREPASS != 0;

// The token-tile widths (rows rounded to the wgmma granule) at which the streamed simple kernel
// streams (consumer.cuh kStreamedWidth); the runner chooses that kernel for plans whose groups'
// token tiles all have one of them (RunnerOptions::stream_simple_tiles). (Widths below 16 exist
// only in the _n8 build: its 8-row tiles stream as the 16-row ones do.)
inline constexpr bool StreamedTileRows(int rows) { return rows <= 16 || rows == 128; }

// How the kernel computes (fixed at compile time; the per-problem choices live in heuristics.h).
struct TileShape {
  // The weight operand (problem B, N side) is the register-sourced wgmma A operand: each of the
  // kConsumerWgs consumer warpgroups owns kStrips 64-row strips, so a CTA covers kBlockN columns
  // of C.
  static constexpr int kConsumerWgs = ENCORE_SM90_CONSUMER_WGS;
  static constexpr int kStrips = ENCORE_SM90_WIDE_N ? 2 : 1;  // strips per consumer warpgroup
  static constexpr int kBlockN = 64 * kStrips * kConsumerWgs;
  static constexpr int kConsumerThreads = 128 * kConsumerWgs;
  // Tokens (problem A, M side) are the wgmma N operand: a tile covers up to kMaxBlockM rows of C,
  // its width rounded up to a multiple of kMGranule at run time (wgmma n = kMGranule..kMaxBlockM).
  static constexpr int kMaxBlockM = ENCORE_SM90_MAX_TOKEN_ROWS;
  static constexpr int kMGranule = ENCORE_SM90_M_GRANULE;
  static constexpr int kBlockK = 128;   // k per pipeline stage (64 bytes of e2m1 per row)
  // warpgroup 0: TMA + token dequant; 1..kConsumerWgs: wgmma consumers
  static constexpr int kThreads = 128 * (1 + kConsumerWgs);
  // fp32 accumulators per consumer thread (strip j at 64 j; a width-n wgmma writes n / 2).
  static constexpr int kAccFloats = 64 * (kStrips - 1) + kMaxBlockM / 2;
  static constexpr int kEpilogueRows = 32;       // tokens staged per epilogue pass
  static constexpr int kEpiloguePitch = 64 + 8;  // halves per staged row (padding: no conflicts)

  // Host and device: k-blocks of a K, weight tiles of an N, token rows rounded to the granule.
  static constexpr int KBlocks(int k) { return (k + kBlockK - 1) / kBlockK; }
  static constexpr int NTiles(int n) { return (n + kBlockN - 1) / kBlockN; }
  static constexpr int RoundRows(int rows) {
    return (rows + kMGranule - 1) / kMGranule * kMGranule;
  }

  // fp16 halves per token row of a pre-pass workspace: k-blocks x 128 (a 64-k tail block is
  // padded with zeros: its k < 64 values are spread over all 128 positions, see the kernel NOTES).
  static constexpr int TokenRowHalves(int k) { return KBlocks(k) * kBlockK; }
  // Whether k-block kb (< KBlocks(k)) holds only 64 k (its second scale chunk is then neither
  // loaded nor used: the packed values there are zero, their scales forced to 0); at most the last.
  static constexpr bool HalfBlock(int k, int kb) { return 2 * kb + 1 >= k / 64; }

  // Shared-memory pieces (the stage counts depend on the token source: Pipeline below).
  static constexpr int kRawWeightBytes = kBlockN * kBlockK / 2;    // 16384 (narrow 8192)
  static constexpr int kRawTokenBytes = kMaxBlockM * kBlockK / 2;  // 8192 (narrow 16384)
  // 128-row scale blocks a weight tile touches (a 192-row tile starts at row 0 or 64 of a block).
  static constexpr int kSfWeightBlocks = (kBlockN + (kBlockN % 128) + 127) / 128;
  static constexpr int kSfWeightBytes = kSfWeightBlocks * 2 * 512;
  static constexpr int kSfTokenBytes = 3 * 2 * 512;                // up to 3 row blocks
  static constexpr int kTokAtomBytes = kMaxBlockM * 128;    // 64 k of fp16 for kMaxBlockM rows
  static constexpr int kTokStageBytes = 2 * kTokAtomBytes;  // 32768 (narrow 65536)
  // The padded staging (thread stores): one 32-token chunk a consumer warpgroup.
  static constexpr int kEpiloguePaddedBytes = kConsumerWgs * kEpilogueRows * kEpiloguePitch * 2;
  // The swizzled staging (TMA stores): a 32-token chunk of one 64-column strip, 32 rows of 128
  // bytes in the 128-byte swizzle (16-byte piece j of row r at piece j ^ (r % 8)), 1024-aligned.
  static constexpr int kEpilogueChunkBytes = kEpilogueRows * 64 * 2;  // 4096
  static constexpr int kBarrierBytes = 256;
};

// The sm_90 opt-in shared memory a block may use (227 KB; the runner checks the device's own).
inline constexpr int kSm90SmemOptinBytes = 232448;
inline constexpr bool kTmaStoreBuilt = ENCORE_SM90_TMA_STORE != 0;
// Output tensor maps exist in Params<kGroups> for kGroups <= this (64 more maps would not fit
// in Params<64>'s 32 KB).
inline constexpr int kMaxTmaStoreGroups = 8;
// Token rows a C store covers: a whole 32-token chunk, or kOutputTailRows for a tile's last chunk
// with at most that many rows left (tile rows are multiples of 16, so a store never crosses into
// the next tile's rows; rows past M are clipped by the map).
inline constexpr int kOutputBoxRows = 32;
inline constexpr int kOutputTailRows = 16;

// Where the consumers' fp16 token tiles come from (a kernel template argument).
enum class TokenSource : int {
  // Three dequant warps convert each raw stage's packed token tile into an fp16 stage: every token
  // tile is converted once per weight tile it meets (N / kBlockN times per call).
  kInKernel = 0,
  // A pre-pass kernel (sm90_nvfp4_token_prepass.cuh) converted every token once per call into an
  // fp16 workspace; TMA loads those tiles straight into the fp16 stages (no dequant warps).
  kPrepass = 1,
};

// The kernel's pipelines per token source. Shared memory, in order, every stage 1024-byte
// aligned: raw stages | fp16 token stages | epilogue staging | barriers.
template <TokenSource kSource>
struct Pipeline {
  static constexpr bool kPrepass = kSource == TokenSource::kPrepass;
  // Raw stages: packed e2m1 weights + weight scales (+ packed tokens + token scales in kernel).
  // NOTES: with the pre-pass a raw stage is 9 KB (18 KB wide), so the weight stream (from HBM,
  // the long latency) runs 6 stages ahead; the fp16 token stages come from L2 (the workspace was
  // just written) and are fed by their own producer warp, so neither stream waits for the other.
  // (Neither more stages (_raw8 / _raw9, run 228) nor fills of two k-blocks on one barrier pair
  // (_wpair at 6928dc2, run 234: shape 0 -0.8%, shape 2 +1.6%, steady w64 +2.4%, decode +0.8..2.2%;
  // removed) made the weight stream faster; 64-byte row pieces do not cap HBM (run 233).)
  static constexpr int kRawStages =
      !kPrepass                           ? 3
      : ENCORE_SM90_PREPASS_RAW_STAGES > 0 ? ENCORE_SM90_PREPASS_RAW_STAGES
      : TileShape::kConsumerWgs == 4      ? 4
                                          : 6;
  static constexpr int kTokStages =
      ENCORE_SM90_WIDE_N ? (kPrepass ? 3 : 4) : (kPrepass ? 512 / TileShape::kMaxBlockM : 2);
  static constexpr int kRawStageBytes =
      TileShape::kRawWeightBytes + TileShape::kSfWeightBytes +
      (kPrepass ? 0 : TileShape::kRawTokenBytes + TileShape::kSfTokenBytes);
  // (in kernel / pre-pass: 28672 / 9216 bytes; the wide build's 29696 / 18432)
  static constexpr int kBaseSmemBytes = 1024 /* alignment slack */ + kRawStages * kRawStageBytes +
                                        kTokStages * TileShape::kTokStageBytes +
                                        TileShape::kBarrierBytes;
  // Epilogue staging: with TMA stores (pre-pass kernels, kTmaStoreBuilt) kEpiBuffers swizzled
  // chunk buffers per consumer warpgroup, used in turn (a buffer is written again only after the
  // store kEpiBuffers - 1 chunks back has read it: 3 buffers let the last store run on during
  // the next chunk), fewer where the shared memory does not hold 3 (_wide: 2); 0: the padded
  // staging and thread stores (in-kernel tokens; builds that hold no 2, _wg4).
  static constexpr int EpiBytes(int buffers) {
    return buffers == 0 ? TileShape::kEpiloguePaddedBytes
                        : buffers * TileShape::kConsumerWgs * TileShape::kEpilogueChunkBytes;
  }
  static constexpr int kEpiBuffers =
      !(kPrepass && kTmaStoreBuilt)                           ? 0
      : kBaseSmemBytes + EpiBytes(3) <= kSm90SmemOptinBytes ? 3
      : kBaseSmemBytes + EpiBytes(2) <= kSm90SmemOptinBytes ? 2
                                                             : 0;
  static constexpr int kEpilogueBytes = EpiBytes(kEpiBuffers);
  static constexpr int kSmemBytes = kBaseSmemBytes + kEpilogueBytes;
  static_assert(kRawStageBytes % 1024 == 0, "stages must stay 1024-byte aligned");
  static_assert(TileShape::kTokStageBytes % 1024 == 0, "the staging must stay 1024-byte aligned");
};
// The larger of the two (what a runner must be allowed to use).
inline constexpr int kMaxSmemBytes =
    Pipeline<TokenSource::kInKernel>::kSmemBytes > Pipeline<TokenSource::kPrepass>::kSmemBytes
        ? Pipeline<TokenSource::kInKernel>::kSmemBytes
        : Pipeline<TokenSource::kPrepass>::kSmemBytes;

// Per group, after the host sorted groups by M (largest first) for load balance.
struct GroupInfo {
  const uint8_t* sfa;  // token scales (blocked)
  const uint8_t* sfb;  // weight scales (blocked)
  uint16_t* c;         // fp16 output, m x n row-major
  int m;               // rows (capacity when dynamic M)
  int n;
  int k;
  int orig;        // index in the caller's group list (device_m lookup)
  int tile_start;  // first linear tile of this group
  int m_tiles;     // token tiles
  int tile_rows;   // rows per token tile (multiple of kMGranule, <= kMaxBlockM)
  int pad;
  long long unit_start;  // stream-K: k-blocks of all tiles before this group's first tile
};

// How CTAs walk the tile table (a kernel template argument).
enum class Schedule : int {
  kSimple = 0,      // one CTA per tile
  kPersistent = 1,  // grid = SM count, whole tiles in snake-ordered rounds
  kStreamK = 2,     // grid = SM count: CTA b runs the k-blocks [sk_begin[b], sk_begin[b + 1]) of
                    // the tile table (cost-balanced by the host; split tiles' pieces reduced
                    // through a workspace)
};

#if defined(__CUDACC__)
#define ENCORE_HOST_DEVICE __host__ __device__
#else
#define ENCORE_HOST_DEVICE
#endif

// Schedule::kPersistent's snake rounds: CTA b's tile in round `round` of a grid of g. Shared by
// the kernel's tile scheduler and the host's cost model of that order (heuristics.h).
ENCORE_HOST_DEVICE constexpr int SnakeRoundTile(int round, int g, int b) {
  return round * g + ((round & 1) ? g - 1 - b : b);
}

// Stream-K partition: the k-blocks of every tile, tile after tile (a group's tiles from its
// GroupInfo::unit_start), cut into `ctas` contiguous ranges by the host (heuristics.h
// PlanStreamK: balanced by the cost model, most ranges ending on a tile boundary): CTA b < ctas
// runs [begin[b], begin[b + 1]), never empty (a split tile's pieces come from every CTA in
// [CtaOf(start), CtaOf(end - 1)], which the reduction relies on); CTAs from `ctas` on have no
// range. Shared by the kernel and tests.
struct StreamKPartition {
  const int* begin;  // ctas + 1 entries, strictly increasing, begin[0] == 0
  int ctas;

  ENCORE_HOST_DEVICE int RangeBegin(int b) const { return begin[b]; }
  // The CTA whose range holds unit v (0 <= v < begin[ctas]): max b with begin[b] <= v.
  ENCORE_HOST_DEVICE int CtaOf(int v) const {
    int lo = 0, hi = ctas - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (begin[mid] <= v) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }
  // Workspace slot of CTA c's piece of a split tile that starts at unit tile_v0: 2c when the
  // tile is the first one c's range touches, else 2c + 1 (then it is the last one c touches).
  ENCORE_HOST_DEVICE int Slot(int c, int tile_v0) const {
    return 2 * c + (RangeBegin(c) >= tile_v0 ? 0 : 1);
  }
};

// The CTAs holding units tv0 and tv1 - 1 of a tile that CTA `self`'s range [v_begin, v_end)
// (= [begin[self], begin[self + 1])) touches: StreamKPartition::CtaOf of each, found by stepping
// from self (only a range's first tile starts in an earlier CTA and only its last one ends in a
// later one). `ctas()` gives the partition's CTA count, read only when the tile ends past v_end
// (the kernel's stream-K walk, tile_scheduler.cuh, reads it from the parameter block there).
template <typename Ctas>
ENCORE_HOST_DEVICE void StreamKPieceCtas(const int* begin, Ctas ctas, int self, int v_begin,
                                         int v_end, int tv0, int tv1, int* first, int* last) {
  int f = self, l = self;
  if (tv0 < v_begin) {
    while (f > 0 && begin[f] > tv0) --f;
  }
  if (tv1 > v_end) {
    while (l + 1 < ctas() && begin[l + 1] <= tv1 - 1) ++l;
  }
  *first = f;
  *last = l;
}

// Stream-K workspace: per CTA two fp32 partial-tile slots (a CTA holds at most two pieces of
// split tiles: the one its range starts in and the one it ends in; a piece of a tile nw tokens
// wide uses the first nw / 2 floats of each consumer thread's share) and one arrival counter
// (indexed by the first CTA of a split tile; zero between launches: the last arriver resets it).
inline constexpr int kStreamKSlotFloats = TileShape::kBlockN * TileShape::kMaxBlockM;
// Layout: [2 * ctas slots of fp32 partials | ctas counters (16 bytes each reserved)].
inline constexpr size_t StreamKCountersOffset(int ctas) {
  return static_cast<size_t>(ctas) * 2 * kStreamKSlotFloats * sizeof(float);
}
inline constexpr size_t StreamKWorkspaceBytes(int ctas) {
  return StreamKCountersOffset(ctas) + static_cast<size_t>(ctas) * 16;
}

// ---- bound plans: rebind without node patches ----
// A bound plan's kernels read every group's pointers from the stream's binding block (BoundGroup,
// indexed by the caller's group index) instead of their parameter blocks. The plan's token
// pre-pass (Sm90Nvfp4BoundPrepassKernel) fills the block with its block 0, from the stream's
// binding ring: pinned host slots the host fills before each launch
// (Nvfp4GroupedGemm::WriteBindings), or the copy of the slot the previous bound GEMM prefetched
// (internal/bind_prefetch.cuh); its other blocks take their tokens' pointers from the same source.
// So one graph serves any buffers of its structure, and a call with new buffers costs the host a
// few stores instead of a kernel-node patch.
// One group's pointers in a ring slot, written by the host.
struct HostBinding {
  const void* a;
  const void* sfa;
  const void* b;
  const void* sfb;
  void* c;
};
// Ring slots per stream (a slot holds kMaxBoundGroups HostBindings); the host waits for a free
// slot when it runs this many bound launches ahead of the device.
inline constexpr int kBindingRingSlots = 256;
inline constexpr int kMaxBoundGroups = 64;
// One group's bindings on the device: its weight map (the plan's, global address replaced by the
// pre-pass's block 0 with tensormap.replace; the GEMM acquires it with fence.proxy.tensormap) and
// its pointers.
struct alignas(128) BoundGroup {
  CUtensorMap b;
  const uint8_t* a;
  const uint8_t* sfa;
  const uint8_t* sfb;
  uint16_t* c;
};
// The stream's ring state on the device, zero when allocated: the binding block the GEMM reads,
// the sequence number (slot seq % slots is the current bound call's; the GEMM advances it), the
// next call's slot as the GEMM before it prefetched it (staged_tag = its launch number + 1; 0:
// none), and `filled` = seq + 1 once the bound pre-pass's block 0 has filled the block for call
// seq (its other blocks wait for it when the slot was not staged).
struct BindingRingDevice {
  BoundGroup groups[kMaxBoundGroups];
  HostBinding staged[kMaxBoundGroups];
  uint32_t seq;
  uint32_t staged_tag;
  uint32_t filled;
};
// The stream's ring as the bound kernels see it (PrepassParams::ring, Params::ring).
struct BindingRingRef {
  const HostBinding* slots;  // kBindingRingSlots x kMaxBoundGroups, device view of pinned host
  const uint32_t* tags;      // kBindingRingSlots: slot s holds launch tags[s] (pinned host)
  uint32_t* consumed;        // device view of a pinned host word: the bound calls done (seq + 1)
  BindingRingDevice* device;
};

// ---- token pre-pass ----
// One group of the pre-pass: converts rows [0, m) (device_m[orig] when dynamic) of the packed
// tokens into fp16 rows of TokenRowHalves(k) halves at `out`, in the GEMM kernel's permuted k
// order. A work unit is one (row, 128-k block), four threads each.
struct PrepassGroup {
  const uint8_t* a;    // packed e2m1, m x k/2
  const uint8_t* sfa;  // blocked e4m3 scales
  uint16_t* out;       // fp16 (as bits), m x TokenRowHalves(k)
  int m;               // rows (capacity when dynamic M)
  int k;
  int orig;  // index in the caller's group list (device_m lookup)
  int pad;
  long long unit_start;  // work units of all groups before this one
};

// PrepassParams::flags. kPrepassReadsEarly: the plain pre-pass converts before its
// griddepcontrol.wait and waits at its end instead, so its work overlaps the tail of the kernel
// before it while its completion still implies that kernel's. Only when that kernel writes none
// of this call's tokens, token scales or device M and does not read the workspace this pre-pass
// writes (a graph whose calls alternate between two workspaces; graph_cache decides).
inline constexpr int kPrepassReadsEarly = 1;
// NOTES: that the GEMM two calls back (the half's last reader) has completed when an early
// pre-pass starts writing rests on every GEMM triggering its dependents only after its own
// griddepcontrol.wait. The manual build _earlytrig (ENCORE_SM90_PRODUCER_WAITS_LATE = 0, a
// header switch for this) triggers before it: the runner prepares no early pre-passes there.
#if defined(ENCORE_SM90_PRODUCER_WAITS_LATE) && !ENCORE_SM90_PRODUCER_WAITS_LATE
inline constexpr bool kEarlyPrepassBuilt = false;
#else
inline constexpr bool kEarlyPrepassBuilt = true;
#endif

template <int kGroups>
struct alignas(64) PrepassParams {
  PrepassGroup g[kGroups];
  const int32_t* device_m;  // nullptr: static M
  int num_groups;
  int flags;        // kPrepassReadsEarly
  long long units;  // all groups' (row, k-block) units
  // ENCORE_SM90_PREPASS_READY: the ready count (kFusedSyncDone of the stream's barrier words) each
  // block adds 1 to once its stores are done; nullptr: the GEMM waits for the grid instead.
  unsigned int* ready;
  // Bound plans (Sm90Nvfp4BoundPrepassKernel): the stream's ring, where a and sfa come from (by
  // PrepassGroup::orig); else zero.
  BindingRingRef ring;
};
// A bound plan's pre-pass: the pre-pass proper (first: the runner fills it as any pre-pass's) and
// the weight maps by caller group index (the plan's, as templates: block 0 writes each group's
// into the binding block with this call's global address).
template <int kGroups>
struct alignas(64) BoundPrepassParams {
  PrepassParams<kGroups> pre;
  CUtensorMap b[kGroups];
};
#ifndef ENCORE_SM90_PREPASS_THREADS
#define ENCORE_SM90_PREPASS_THREADS 256  // threads per token pre-pass block
#endif
inline constexpr int kPrepassThreads = ENCORE_SM90_PREPASS_THREADS;
#ifndef ENCORE_SM90_PREPASS_GRID_STRIDE
// 0 (default): one pre-pass thread per unit share (grid = units * 4 / kPrepassThreads).
// 1: at most one block per SM, each thread walking its unit shares with the grid's stride (two
//    units' loads in flight), so blocks launched early behind a PDL edge and parked on the few
//    idle SMs hold a 1/grid share each instead of piling up there (experiment).
#define ENCORE_SM90_PREPASS_GRID_STRIDE 0
#endif
inline constexpr bool kPrepassGridStride = ENCORE_SM90_PREPASS_GRID_STRIDE != 0;
inline constexpr int kPrepassThreadsPerUnit = 4;
#ifndef ENCORE_SM90_PREPASS_STAGE
// 1 (default since run 133): each warp of the pre-pass kernel stages its 8 units (2 KB) in shared
//    memory and stores them back as 4 instructions of 2 whole units (512 bytes, 4 full 128-byte
//    lines): fewer instructions and registers (30) than the shuffles' selects (run 132: 370
//    instructions a warp, issue-latency bound). Run 133 (with ENCORE_SM90_PREPASS_U32_INDEX, 2
//    rounds): GPU MODE shape 0's pre-pass alone 7.28-7.37 us vs 7.93-7.98, the call 97.0-97.2 vs
//    97.6-97.7; shapes 1-3 and the few-tile shapes equal.
// 0 (manual build _shuffle, with the 64-bit index: the pre-pass before run 133): the 4 threads of
//    a unit exchange their converted chunks by shuffles (ENCORE_SM90_PREPASS_SECTOR_STORES), each
//    store instruction writing 64 contiguous bytes of each of a warp's 8 units. (The fused
//    pre-pass inside the GEMM kernel always exchanges by shuffles: its shared memory is taken.)
#define ENCORE_SM90_PREPASS_STAGE 1
#endif
// The staging: per warp 8 units of 16 chunks (16 bytes), one chunk of padding every 8 (no bank
// conflicts on either side).
inline constexpr int kPrepassStageChunks = 8 * 16 + 8 * 16 / 8;
// (The grid-stride build, _pgrid, stores through PrepassStore: no staging.)
inline constexpr int kPrepassStaticSmemBytes = ENCORE_SM90_PREPASS_STAGE && !kPrepassGridStride
                                                   ? kPrepassThreads / 32 * kPrepassStageChunks * 16
                                                   : 0;
// The tokens' pointers of a bound call by caller group index (a bound pre-pass block's copy, in
// shared memory: internal/bind_fill.cuh LoadTokenBindings).
struct TokenBindings {
  const uint8_t* a[kMaxBoundGroups];
  const uint8_t* sfa[kMaxBoundGroups];
};
// The bound pre-pass's static shared memory: the staging, its TokenBindings and one word
// (16-byte aligned): what its padding for PDL adds to.
inline constexpr int kBoundPrepassStaticSmemBytes =
    kPrepassStaticSmemBytes + static_cast<int>(sizeof(TokenBindings)) + 16;

struct alignas(64) GroupMaps {
  // tokens: in kernel, packed uint8 {K/2, M}, box {64, kMaxBlockM}, 64-byte swizzle; with the
  // pre-pass, its fp16 rows {TokenRowHalves(K), M}, box {64, tile_rows}, 128-byte swizzle.
  CUtensorMap a;
  CUtensorMap b;  // weights: uint8 {K/2, N}, box {64, kBlockN}, no swizzle
};

// Packed persistent schedule limits (Params::packed_*; kMaxPackedCtas also bounds the stream-K
// CTAs, Params::sk_begin): CTAs and tiles a table can describe.
inline constexpr int kMaxPackedCtas = 256;
// The fused pre-pass's barrier words (Params::grid_sync, 32-bit): the count of converted shares,
// the count of CTAs past the barrier (on its own 128-byte line), then one claim word per share
// (CTA); all zero between launches (the last CTA past the barrier resets them).
inline constexpr int kMaxFusedCtas = kMaxPackedCtas;
inline constexpr int kFusedSyncDone = 0;
inline constexpr int kFusedSyncPassed = 32;
inline constexpr int kFusedSyncClaims = 64;
inline constexpr int kFusedSyncBytes = 4 * (kFusedSyncClaims + kMaxFusedCtas);
inline constexpr int kMaxPackedTiles = 1024;

// C's tensor maps (fp16 {N, M}, 128-byte swizzle), two per group slot s: out_maps[2 s] with
// boxes of {64, kOutputBoxRows}, out_maps[2 s + 1] of {64, kOutputTailRows}; where
// Params<kGroups> has room (kGroups <= kMaxTmaStoreGroups, kTmaStoreBuilt).
template <int kGroups, bool kHas = kTmaStoreBuilt && kGroups <= kMaxTmaStoreGroups>
struct OutputMaps {
  static constexpr bool kPresent = false;
};
template <int kGroups>
struct alignas(64) OutputMaps<kGroups, true> {
  static constexpr bool kPresent = true;
  CUtensorMap out_maps[2 * kGroups];
};

// NOTES: passed by value (__grid_constant__); kGroups (8 or 64) keeps the block small for few
// groups. sizeof(Params<64>) must stay under kMaxParamBytes (static_assert in the launcher).
// (C's maps are a base: empty where absent, so the default build's layout is unchanged.)
template <int kGroups>
struct alignas(64) Params : OutputMaps<kGroups> {
  GroupMaps maps[kGroups];
  GroupInfo info[kGroups];
  const int32_t* device_m;  // nullptr: static M
  int num_groups;
  int num_tiles;
  // Stream-K only (Schedule::kStreamK): CTA b < sk_ctas runs the units (k-blocks of the tile
  // table) [sk_begin[b], sk_begin[b + 1]) (StreamKPartition).
  float* sk_partials;  // 2 * gridDim.x slots of kStreamKSlotFloats
  int* sk_counters;    // gridDim.x, zero between launches
  int sk_ctas;
  int sk_begin[kMaxPackedCtas + 1];
  // Fused token pre-pass (the kernels instantiated with kFused, grid <= kMaxFusedCtas; the host
  // sets fused_prepass = 1 for them): warps 1-11 of every CTA convert a share of `pre`'s units,
  // then a grid-wide barrier on the words at grid_sync (kFusedSync*; fused_prepass.cuh), before
  // the first token load. Shares of CTAs that are not resident are converted by waiting CTAs, so
  // the barrier needs no co-residency.
  int fused_prepass;
  // store_by_tma != 0 (set by the host for pre-pass plans with static M where OutputMaps are
  // present): the epilogue stores C through out_maps[2 slot], [2 slot + 1]; else the threads.
  int store_by_tma;
  unsigned int* grid_sync;  // kFusedSyncBytes in the stream's token workspace, zero when allocated
  // Packed persistent schedule (Schedule::kPersistent with packed_ctas > 0): CTA b runs the tiles
  // packed_tiles[packed_begin[b] .. packed_begin[b + 1]) in that order, a static assignment the
  // host balanced by its cost model (heuristics.h PackTiles); packed_ctas == 0: snake rounds.
  int packed_ctas;
  // ENCORE_SM90_PREPASS_READY: > 0 where a separate pre-pass of this many blocks runs right before
  // (the token producer waits for their count at grid_sync[kFusedSyncDone] instead of the grid's
  // completion; the last CTA past it resets the words); 0: griddepcontrol.wait.
  int prepass_blocks;
  uint16_t packed_begin[kMaxPackedCtas + 1];
  uint16_t packed_tiles[kMaxPackedTiles];
  PrepassParams<kGroups> pre;
  // Bound plans (the kernels instantiated with kBound): the stream's binding block, and its ring
  // (CTA 0 prefetches the next bound call's slot while this GEMM runs); else nullptr.
  const BoundGroup* bound;
  BindingRingRef ring;
};


}  // namespace encore::gemm::sm90

#endif  // ENCORE_GEMM_KERNELS_SM90_NVFP4_GROUPED_GEMM_PARAMS_H_
