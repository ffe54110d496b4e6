// sm_90a token pre-pass of the NVFP4 grouped GEMM: converts every group's packed e2m1 tokens
// (A, with blocked e4m3 scales) once per call into exact fp16 rows of a workspace, in the GEMM
// kernel's permuted k order, so the GEMM (TokenSource::kPrepass) TMA-loads fp16 token tiles
// instead of converting each token tile once per weight tile it meets.
//
// Work: one unit = (group, row, 128-k block), four threads per unit; thread q converts word
// column q (bytes 4q..4q+3 of each 16-byte quarter of the row's 64 packed bytes) into 64
// contiguous bytes of fp16 (atom q / 2, chunks 4 (q & 1) .. +3), so a warp writes 2 KB
// contiguously; the kernel stages each warp's 8 units in shared memory and stores them as whole
// 128-byte lines (ENCORE_SM90_PREPASS_STAGE, default; PrepassUnitStaged), the fused pre-pass's
// unit threads exchange chunks by shuffles so that every store instruction writes whole 32-byte
// sectors (ENCORE_SM90_PREPASS_SECTOR_STORES). A 64-k tail block
// is written as a full 128-position block with zeros for k >= 64 (its scales are zero), which the
// GEMM's zeroed weight scales there multiply.
//
// PDL: griddepcontrol.wait first (the previous GEMM on the stream may still read the workspace;
// the kernel before may write the tokens), then launch_dependents: the GEMM, whose weight producer
// reads before its own wait (ENCORE_SM90_EARLY_WEIGHTS), launches only once the kernel before this
// one has completed, so a PDL edge in front of the pre-pass is always safe (run 55: triggering at
// entry instead made no difference to the time).
//
// Example (host, gemm/grouped_gemm.cc): grid = ceil(units * 4 / 256), block = 256,
//   params = PrepassParams<G>{...} by value; launched right before the GEMM on the same stream.
// The GEMM kernel runs the same units itself when the plan fuses the pre-pass (PrepassLoad and
// PrepassStore from warps 1-11 of every CTA, then a grid barrier: fused_prepass.cuh).
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/bind_fill.cuh"
#include "gemm/kernels/internal/dequant.cuh"
#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/stamps.cuh"
#include "gemm/kernels/internal/switches.cuh"
#include "gemm/kernels/internal/token_dequant.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

// One thread's share of a work unit: its loaded words and scales and where its output goes
// (PrepassLoad), converted and stored by PrepassStore. Split so that a thread with several units
// (the fused pre-pass) can have all their loads in flight before the first conversion.
struct PrepassJob {
  uint32_t w[4];
  uint32_t s0, s1;
  uint4* dst;  // nullptr: nothing to store (a row past the step's dynamic M)
  bool upper;
};

// The group holding unit u: the last one whose unit_start <= u (binary search).
template <int kGroups>
__device__ __forceinline__ int GroupOfUnit(const PrepassParams<kGroups>& p, long long u) {
  int lo = 0, hi = p.num_groups - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (p.g[mid].unit_start <= u) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// Thread q (0..3) of work unit u (< p.units): its 64 packed codes and their scales.
// kBound (bound plans): the group's tokens and token scales from `bound` (the block's copy of
// the call's pointers, Sm90Nvfp4BoundPrepassKernel).
template <int kGroups, bool kBound = false>
__device__ __forceinline__ PrepassJob PrepassLoad(const PrepassParams<kGroups>& p, long long u,
                                                  int q, const TokenBindings* bound = nullptr) {
  PrepassJob j;
  j.dst = nullptr;
  const PrepassGroup& g = p.g[GroupOfUnit(p, u)];
  const int kbs = TileShape::KBlocks(g.k);
#if ENCORE_SM90_PREPASS_U32_INDEX
  // A group's units < 2^32 (the runner's plans: at most token_workspace_bytes / 256 units, and
  // it refuses pre-passes of 2^32 units or more): one 32-bit division.
  const uint32_t local = static_cast<uint32_t>(u - g.unit_start);
  const int row = static_cast<int>(local / static_cast<uint32_t>(kbs));
  const int kb = static_cast<int>(local - static_cast<uint32_t>(row) * static_cast<uint32_t>(kbs));
#else
  const long long local = u - g.unit_start;
  const int row = static_cast<int>(local / kbs);
  const int kb = static_cast<int>(local % kbs);
#endif
  const int m = p.device_m != nullptr ? min(g.m, p.device_m[g.orig]) : g.m;
  if (row >= m) return j;  // dynamic M: rows past the step's M are never read by the GEMM's stores

  const bool half = TileShape::HalfBlock(g.k, kb);
  const uint8_t* a = g.a;
  const uint8_t* sfa = g.sfa;
  if constexpr (kBound) {
    a = bound->a[g.orig];
    sfa = bound->sfa[g.orig];
  }
  const uint8_t* src = a + static_cast<size_t>(row) * (g.k / 2) + kb * 64 + 4 * q;
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    j.w[c] = (half && c >= 2) ? 0u : __ldg(reinterpret_cast<const uint32_t*>(src + 16 * c));
  }
  // Blocked scales: ((row / 128) * ceil(K / 64) + j / 4) * 512 + (row % 32) * 16 + ...
  const uint8_t* sp = sfa + (static_cast<size_t>(row / 128) * (g.k / 64) + 2 * kb) * 512 +
                      (row & 31) * 16 + ((row & 127) >> 5) * 4;
  j.s0 = __ldg(reinterpret_cast<const uint32_t*>(sp));
  j.s1 = half ? 0u : __ldg(reinterpret_cast<const uint32_t*>(sp + 512));
  j.upper = q >= 2;
  j.dst = reinterpret_cast<uint4*>(
      g.out + static_cast<size_t>(row) * TileShape::TokenRowHalves(g.k) + kb * 128 + 32 * q);
  return j;
}

#if ENCORE_SM90_PREPASS_SECTOR_STORES
// v[i] for a runtime i in 0..3 without a local-memory array (selects).
__device__ __forceinline__ uint4 PickUint4(const uint4 (&v)[4], int i) {
  const uint4 a = (i & 1) ? v[1] : v[0];
  const uint4 b = (i & 1) ? v[3] : v[2];
  return (i & 2) ? b : a;
}
__device__ __forceinline__ uint4 ShflXorUint4(unsigned mask, uint4 v, int x) {
  return make_uint4(__shfl_xor_sync(mask, v.x, x), __shfl_xor_sync(mask, v.y, x),
                    __shfl_xor_sync(mask, v.z, x), __shfl_xor_sync(mask, v.w, x));
}
#endif

// A loaded job's 64 bytes of fp16 (the thread's 4 chunks, in order).
__device__ __forceinline__ void PrepassConvert(const PrepassJob& j, uint4 (&out)[4]) {
  uint32_t sc[4][2];
  TokenScales</*kOneMul=*/false>(j.s0, j.s1, sc);
  // (no runtime array index: that would put sc in local memory)
  const uint32_t s[4] = {j.upper ? sc[0][1] : sc[0][0], j.upper ? sc[1][1] : sc[1][0],
                         j.upper ? sc[2][1] : sc[2][0], j.upper ? sc[3][1] : sc[3][0]};
  ConvertTokenColumn</*kOneMul=*/false>(j.w, s, out);
}

// The loaded job -> 64 bytes of fp16 (atom q / 2, chunks 4 (q & 1) .. +3).
__device__ __forceinline__ void PrepassStore(const PrepassJob& j) {
  if (j.dst == nullptr) return;
  uint4 out[4];
  PrepassConvert(j, out);
#if ENCORE_SM90_PREPASS_SECTOR_STORES
  // NOTES: the unit's 4 threads (lanes 4u..4u+3, q = lane & 3) exchange chunks (3 xor-shuffle
  // rounds) so that store k of lane q writes chunk 4k + q of the unit: each store instruction then
  // covers 64 contiguous bytes per unit (full 32-byte sectors) instead of 16 bytes every 64. The 4
  // threads arrive here together or not at all: the pre-pass kernel's tail and dynamic M skip
  // whole units, and the fused path's jobs come in aligned groups of 4 (352 and 32 | 4).
  const int q = static_cast<int>(threadIdx.x & 3);
  const unsigned mask = 0xFu << (threadIdx.x & 28);
  uint4 y[4];
  y[0] = PickUint4(out, q);
#pragma unroll
  for (int x = 1; x < 4; ++x) y[x] = ShflXorUint4(mask, PickUint4(out, q ^ x), x);
  uint4* unit = j.dst - 4 * q;
#pragma unroll
  for (int k = 0; k < 4; ++k) unit[4 * k + q] = PickUint4(y, q ^ k);
#else
#pragma unroll
  for (int i = 0; i < 4; ++i) j.dst[i] = out[i];
#endif
}

// ENCORE_SM90_PREPASS_STAGE: the whole warp (every lane, `valid` false past the last unit) converts
// its 8 units through the warp's staging `stage` (kPrepassStageChunks chunks of 16 bytes).
// NOTES: lane l holds chunks 4l..4l+3 of the warp's 2 KB (unit l / 4, its 64 bytes at 64 (l % 4));
// chunk c sits at c + c / 8 of the staging, so both the writes (lanes 0-7 at 4l + i + l / 2: 8
// distinct 16-byte bank groups) and the reads (8 consecutive chunks) are conflict free. Store k
// then writes units 2k (lanes 0-15) and 2k + 1 (lanes 16-31) whole, each from its own base (a
// unit's lanes broadcast theirs; nullptr: a row past the step's dynamic M or past the units).
template <int kGroups, bool kBound = false>
__device__ __forceinline__ void PrepassUnitStaged(const PrepassParams<kGroups>& p, long long u,
                                                  bool valid, uint4* stage,
                                                  const TokenBindings* bound = nullptr) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int q = lane & 3;
  PrepassJob j;
  j.dst = nullptr;
  if (valid) j = PrepassLoad<kGroups, kBound>(p, u, q, bound);
  if (j.dst != nullptr) {
    uint4 out[4];
    PrepassConvert(j, out);
#pragma unroll
    for (int i = 0; i < 4; ++i) stage[4 * lane + i + (lane >> 1)] = out[i];
  }
  __syncwarp();
  const unsigned long long base =
      j.dst == nullptr ? 0ull : reinterpret_cast<unsigned long long>(j.dst - 4 * q);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const unsigned long long b = __shfl_sync(~0u, base, 4 * (2 * k + (lane >> 4)));
    const int c = 32 * k + lane;
    if (b != 0) reinterpret_cast<uint4*>(b)[lane & 15] = stage[c + (c >> 3)];
  }
}

// Thread q (0..3) of work unit u (< p.units): its 64 packed codes -> 64 bytes of fp16.
template <int kGroups>
__device__ __forceinline__ void PrepassUnit(const PrepassParams<kGroups>& p, long long u, int q) {
  PrepassStore(PrepassLoad<kGroups>(p, u, q));
}

// Thread t of kThreads per block: jobs (one thread's share of a unit: job j = unit j / 4,
// quarter j % 4) j0, j0 + T, ... of all p.units * 4, with j0 = blockIdx.x * kThreads + t and
// T = gridDim.x * kThreads, kBatch loaded before any is converted (memory-level parallelism). The
// 4 threads of a unit have consecutive j0 and T is a multiple of 4, so they take the same branches
// (the sector-store shuffle needs all 4).
// `block` / `blocks`: the share's index and the number of shares (blockIdx.x and gridDim.x, or
// another CTA's share that the fused pre-pass converts for it, fused_prepass.cuh).
template <int kBatch, int kThreads, int kGroups>
__device__ __forceinline__ void PrepassStrided(const PrepassParams<kGroups>& p, int block,
                                               int blocks, int t) {
  static_assert(kThreads % kPrepassThreadsPerUnit == 0, "a unit's threads in one block");
  const long long jobs = p.units * kPrepassThreadsPerUnit;
  const long long stride = static_cast<long long>(blocks) * kThreads;
  for (long long j0 = static_cast<long long>(block) * kThreads + t; j0 < jobs;
       j0 += kBatch * stride) {
    PrepassJob job[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const long long j = j0 + b * stride;
      job[b].dst = nullptr;
      if (j < jobs) job[b] = PrepassLoad(p, j / kPrepassThreadsPerUnit,
                                         static_cast<int>(j % kPrepassThreadsPerUnit));
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) PrepassStore(job[b]);
  }
}

// NOTES: the kernel is bounded to 8 blocks an SM (sm_90's 2048 threads: 32 registers) wherever
// it could take more: the staged kernel (ENCORE_SM90_PREPASS_STAGE, default: 30 registers, no
// spills), the stamps build (_exp_stamps: 31 with the staging; with the shuffles it spilled 16
// bytes, and unbounded its 40 registers let only 6 blocks fit, so the padded 896-block pre-pass
// of GPU MODE shape 0, 7 a SM, ran in two waves: run 125) and _ready (40 unbounded). Not the
// grid-stride build (_pgrid): its loop of two jobs takes 64 registers.
#if ENCORE_SM90_EXP_STAMPS || ENCORE_SM90_PREPASS_READY || \
    (ENCORE_SM90_PREPASS_STAGE && !ENCORE_SM90_PREPASS_GRID_STRIDE)
inline constexpr int kSm90ThreadsPerSm = 2048;
#define ENCORE_SM90_PREPASS_BOUNDS \
  __launch_bounds__(kPrepassThreads, kSm90ThreadsPerSm / kPrepassThreads)
#else
#define ENCORE_SM90_PREPASS_BOUNDS __launch_bounds__(kPrepassThreads)
#endif
template <int kGroups>
__global__ void ENCORE_SM90_PREPASS_BOUNDS
    Sm90Nvfp4TokenPrepassKernel(const __grid_constant__ PrepassParams<kGroups> p) {
  // (_exp_stamps: thread 0 keeps the times of entry, wait and done; recorded after its unit)
  if (threadIdx.x == 0) StampTimeAt(0);
  const bool early = (p.flags & kPrepassReadsEarly) != 0;
  if (!early) GridDependencyWait();
  GridDependentsLaunch();
  if (threadIdx.x == 0) StampTimeAt(1);
  if constexpr (kPrepassGridStride) {
    PrepassStrided</*kBatch=*/2, kPrepassThreads>(p, static_cast<int>(blockIdx.x),
                                                  static_cast<int>(gridDim.x),
                                                  static_cast<int>(threadIdx.x));
  } else {
    const long long tid = static_cast<long long>(blockIdx.x) * kPrepassThreads + threadIdx.x;
    const long long u = tid / kPrepassThreadsPerUnit;
#if ENCORE_SM90_PREPASS_STAGE
    // (No early return: every lane takes part in its warp's staging, and with
    // ENCORE_SM90_PREPASS_READY the whole block meets at the count below.)
    __shared__ uint4 stage[kPrepassThreads / 32][kPrepassStageChunks];
    PrepassUnitStaged<kGroups>(p, u, u < p.units, stage[threadIdx.x / 32]);
#else
    if (u >= p.units) return;
    PrepassUnit<kGroups>(p, u, static_cast<int>(tid % kPrepassThreadsPerUnit));
#endif
  }
#if ENCORE_SM90_PREPASS_READY
#if !ENCORE_SM90_PREPASS_STAGE || ENCORE_SM90_PREPASS_GRID_STRIDE
#error "ENCORE_SM90_PREPASS_READY counts blocks of the staged one-job kernel"
#endif
  // NOTES: the block counts itself done once every thread's stores are (the GEMM's token
  // producer acquires the count, then TMA-loads these rows): each thread's proxy fence (its
  // generic stores, read next by the async proxy), the block barrier, one red.release by thread 0
  // (cumulative over the barrier). Every block counts, whether it had units or not; the GEMM
  // waits for gridDim.x of them (Params::prepass_blocks) and its last CTA resets the count.
  if (p.ready != nullptr) {
    FenceProxyAsyncGlobal();
    __syncthreads();
    if (threadIdx.x == 0) RedReleaseGpuAdd(p.ready, 1u);
  }
#endif
  // kPrepassReadsEarly: this grid completes only after the one before it (the GEMM after this
  // pre-pass, whose wait is for this grid, thus still starts after that one completed). One
  // thread of the last block holds it; every other block leaves its SM to the next GEMM's CTAs,
  // which start their prologue and weight loads there before their own wait. (After the ready
  // count of ENCORE_SM90_EARLY_READY, which the next GEMM's token producer waits for instead.)
  if (early && blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) GridDependencyWait();
  if (threadIdx.x == 0) {
    StampTimeAt(2);
    StampDeferred({StampEvent::kPrepassEntry, StampEvent::kPrepassWaited, StampEvent::kPrepassDone});
  }
}

// The pre-pass of a bound plan: block 0 fills the stream's binding block for the GEMM
// (FillBindingBlock), blocks 1.. convert the units of the plain kernel's blocks 0... Each of them
// first copies the tokens' pointers of the groups its units meet (usually one or two) into shared
// memory, one thread a group (LoadTokenBindings: the staged copy, or the block 0 filled), so the
// units read them there: run 172 had every thread load them itself (bound GPU MODE calls 5-8x
// their time), run 173 every block read a slot that was not staged over the bus (~1 us a block).
// The GEMM reads the binding block only after its own wait.
// NOTES: this grid neither advances the ring's sequence number nor tells the host a slot is free:
// every block must read the same seq, so the GEMM after it (its wait: this grid complete) does.
template <int kGroups>
__global__ void ENCORE_SM90_PREPASS_BOUNDS
    Sm90Nvfp4BoundPrepassKernel(const __grid_constant__ BoundPrepassParams<kGroups> p) {
  // (ENCORE_SM90_PREPASS_READY builds: bound plans keep the grid wait, no ready count.)
  static_assert(!kPrepassGridStride && ENCORE_SM90_PREPASS_STAGE,
                "bound pre-passes: the staged one-job kernel");
  static_assert(kMaxBoundGroups <= kPrepassThreads, "block 0: a thread per group");
  GridDependencyWait();
  GridDependentsLaunch();
  if (blockIdx.x == 0) {
    FillBindingBlock(p, static_cast<int>(threadIdx.x));
    return;
  }
  constexpr int kUnitsPerBlock = kPrepassThreads / kPrepassThreadsPerUnit;
  const long long u0 = static_cast<long long>(blockIdx.x - 1) * kUnitsPerBlock;
  __shared__ TokenBindings bound;
  const bool any = u0 < p.pre.units;  // (the grid has no block without units; kept safe)
  const int first = any ? GroupOfUnit(p.pre, u0) : 0;
  const int last = any ? GroupOfUnit(p.pre, min(u0 + kUnitsPerBlock, p.pre.units) - 1) : -1;
  LoadTokenBindings(p.pre, first, last, &bound);
  const long long u = u0 + threadIdx.x / kPrepassThreadsPerUnit;
  __shared__ uint4 stage[kPrepassThreads / 32][kPrepassStageChunks];
  PrepassUnitStaged<kGroups, true>(p.pre, u, u < p.pre.units, stage[threadIdx.x / 32], &bound);
}

#undef ENCORE_SM90_PREPASS_BOUNDS

}  // namespace encore::gemm::sm90
