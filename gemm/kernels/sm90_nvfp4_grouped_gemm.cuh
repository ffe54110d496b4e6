// sm_90a NVFP4 grouped GEMM: C[m][n] (fp16) = sum_k A[m][k] * B[n][k], A and B e2m1 with e4m3
// scales per 16 k (blocked 128x4 layout).
//
// Hopper has no FP4 tensor cores, so both operands are dequantized exactly to fp16 (e2m1 x e4m3
// products have <= 6 significant bits, within fp16 normals) and multiplied by wgmma with fp32
// accumulation. The transposed product D[n][m] = B.A^T is computed:
//   - weights (B, N side, the large operand) are the register-sourced wgmma A operand: each
//     consumer warpgroup dequantizes its kStrips 64-row strips straight into A fragments;
//   - tokens (A, M side, small and ragged) are the wgmma B operand (n = 16..kMaxBlockM chosen
//     per tile, the k loop instantiated per width and dispatched once per tile):
//     a dequant warp group writes them as fp16 into shared memory in the 128B-swizzled K-major
//     layout, so small M wastes little.
// Roles (warp specialization, one CTA = 1 + TileShape::kConsumerWgs warpgroups):
//   warp 0 lane 0: TMA producer (packed e2m1 tiles by tensor maps, scales by 1D bulk copies);
//   warps 1-3:     token dequant (raw stage -> fp16 token stage), TokenSource::kInKernel;
//   warp 1 lane 0: fp16 token-tile TMA producer instead, TokenSource::kPrepass (the tokens were
//                  converted once per call by sm90_nvfp4_token_prepass.cuh; warps 2-3 idle), or
//                  in the kFused instantiations warps 1-11 convert them first, warp 2 then
//                  minds the grid barrier (fused_prepass.cuh);
//   warpgroups 1..kConsumerWgs (2; 3 or 4 with ENCORE_SM90_CONSUMER_WGS): weight dequant, wgmma,
//                  epilogue (staged through shared memory, 16-byte coalesced stores masked to
//                  the valid rows and columns; bulk tensor stores by thread 0 of the warpgroup
//                  in the _tmastore build: epilogue.cuh).
// Pipelines: raw stages (inputs_arrived = raw_full, inputs_finished = raw_empty) and fp16 token
// stages (tokens_ready = tok_full, tokens_finished = tok_empty), all mbarriers.
// Parts (kernels/internal/): switches.cuh (compile-time switches), smem_layout.cuh, producer.cuh,
// consumer.cuh (the wgmma main loop), epilogue.cuh; this file holds the roles and the kernel.
//
// NOTES: the k order inside a 128-k stage is permuted (any consistent permutation of the sum is
// fine): wgmma step s (16 k), position p (0..15) holds actual k
//   32*((p%8)/2) + 8*(s/2) + 2*(s%2) + p/8 + 4*(p%2)
// so a consumer thread (lane%4 = c) reads its row's bytes [16c, 16c+16) as one 16-byte load
// covering all 8 steps, and every half2 fragment is one nibble pair of one 32-bit word: slot
// i = 2*(s%2) + p/8, nibbles kSlotNibbles[i] (ENCORE_SM90_BYTE_DECODE, the default; so actual k
// 32*((p%8)/2) + 8*(s/2) + kSlotNibbles[i][p%2]) or {i, i+4} without it (the formula above).
// The token dequant writes fp16 in exactly that order (see StoreTokenRow).
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "gemm/kernels/internal/bind_fill.cuh"
#include "gemm/kernels/internal/bind_prefetch.cuh"
#include "gemm/kernels/internal/consumer.cuh"
#include "gemm/kernels/internal/epilogue.cuh"
#include "gemm/kernels/internal/fused_prepass.cuh"
#include "gemm/kernels/internal/prepass_ready.cuh"
#include "gemm/kernels/internal/producer.cuh"
#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/smem_layout.cuh"
#include "gemm/kernels/internal/stamps.cuh"
#include "gemm/kernels/internal/switches.cuh"
#include "gemm/kernels/internal/tile_scheduler.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

enum class WarpRole { kProducer, kTokenDequant, kTokenProducer, kIdle, kConsumer };

// NOTES: setmaxnreg only moves registers inside the CTA's launch allocation: with
// __launch_bounds__(384, 1) every thread starts with 168 (65536 / 384 rounded down to 8), so
// producer + 2 x consumer must stay <= 3 x 168 = 504, or setmaxnreg.inc waits forever (512
// threads: 128 each, producer + 3 x consumer <= 512).
// (640 threads, _wg4: 96 each at launch, producer 64 + 4 x consumer 104 = 480; run 82: consumers
// at 104 spill 12-36 bytes in the persistent and stream-K kernels, a 32-register producer more.)
inline constexpr uint32_t kProducerRegs =
    TileShape::kConsumerWgs == 2 ? 80 : (TileShape::kConsumerWgs == 3 ? 56 : 64);
inline constexpr uint32_t kConsumerRegs =
    TileShape::kConsumerWgs == 2 ? 208 : (TileShape::kConsumerWgs == 3 ? 152 : 104);
static_assert(kProducerRegs + TileShape::kConsumerWgs * kConsumerRegs <=
                  (1 + TileShape::kConsumerWgs) * (65536 / TileShape::kThreads / 8 * 8),
              "register reallocation exceeds the launch allocation (deadlock)");

// kFused: the token pre-pass runs inside this kernel (fused_prepass.cuh; pre-pass tokens, whole-tile
// schedules). NOTES: its own instantiation, not a runtime branch: with the fused prologue compiled
// into every pre-pass kernel behind Params::fused_prepass, the unfused ones ran 0.5-1.3% slower
// (run 108: GPU MODE shape 0 99.2-99.5 vs 98.1-98.2 us, same lease, code layout only).
// kStreamed: the simple kernel with pre-pass tokens, its tiles of <= 128 token rows on a 4-stage
// token ring, those of the widths kStreamedWidth names streaming (no drain between k-blocks): the
// manual build _ring4s's simple kernel (which streams every <= 128-row width), here its own
// instantiation (kStreamedBuilt) that the runner chooses for problems whose token tiles all have
// such widths (RunnerOptions::stream_simple_tiles; runs 152-154).
// kBound: a bound plan's GEMM (sm90_nvfp4_grouped_gemm_params.h "bound plans"): each group's
// weight map, weight scales and output come from the stream's binding block (p.bound, by the
// caller's group index), the rest from p. Unfused, unstreamed, pre-pass tokens (the token map
// points into the stream's workspace, the same for any bindings).
template <int kGroups, Schedule kSchedule, TokenSource kSrc, bool kFused = false,
          bool kStreamed = false, bool kBound = false>
__global__ void __launch_bounds__(TileShape::kThreads, 1)
    Sm90Nvfp4GroupedGemmKernel(const __grid_constant__ Params<kGroups> p) {
  using P = Pipeline<kSrc>;
  static_assert(!kBound || (P::kPrepass && !kFused && !kStreamed),
                "bound plans: unfused, unstreamed, pre-pass tokens");
  static_assert(!kFused || (P::kPrepass && kSchedule != Schedule::kStreamK),
                "the fused pre-pass writes pre-pass tokens, for whole-tile schedules");
  static_assert(!kStreamed || (kStreamedBuilt && P::kPrepass && kSchedule == Schedule::kSimple &&
                               !kFused),
                "the streamed instantiation is the unfused simple kernel with pre-pass tokens");
  extern __shared__ uint8_t smem_raw[];
  uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) &
                                             ~static_cast<uintptr_t>(1023));
  const SmemLayout<kSrc> sm(base);
  const TileScheduler<kGroups, kSchedule> sched{p};
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const WarpRole role =
      warp == 0 ? WarpRole::kProducer
                : (warp >= 4 ? WarpRole::kConsumer
                             : (!P::kPrepass ? WarpRole::kTokenDequant
                                             : (warp == 1 ? WarpRole::kTokenProducer
                                                          : WarpRole::kIdle)));

  if (tid == 0) {
    StampCtaBegin(StampEvent::kGemmEntry);
    WaitCountersInit();
    // Arrivals: raw stages are released by every consumer (and the dequant warps in kernel);
    // with the pre-pass the token stages are filled by TMA (one expect_tx arrival).
    for (int s = 0; s < P::kRawStages; ++s) {
      MbarInit(sm.RawFull(s), 1);
      MbarInit(sm.RawEmpty(s), (P::kPrepass ? 0 : kDequantThreads) + kConsumerThreads);
    }
    for (int s = 0; s < SmemLayout<kSrc>::kTokBarriers; ++s) {
      MbarInit(sm.TokFull(s), P::kPrepass ? 1 : kDequantThreads);
      MbarInit(sm.TokEmpty(s), kConsumerThreads);
    }
    FenceBarrierInit();
  }
  __syncthreads();
  if constexpr (ENCORE_SM90_PREFETCH_MAPS) {
    // The descriptors live in this grid's parameters (no input): legal before the wait. kBound's
    // weight maps come from the binding block instead (only the token maps are requested).
    if (warp == 1) {
      for (int g = tid - 32; g < p.num_groups; g += 32) {
        PrefetchTensorMap(&p.maps[g].a);
        if constexpr (!kBound) PrefetchTensorMap(&p.maps[g].b);
      }
    }
  }
  // PDL: nothing below reads inputs or writes outputs before the previous grid completed (with
  // ENCORE_SM90_EARLY_WEIGHTS, except the weight producer's loads in unfused pre-pass kernels,
  // whose pre-kernel completed the kernel before them, and in fused ones built with
  // ENCORE_SM90_FUSED_WEIGHTS_WAIT = 0).
  // (The weight producer of unfused pre-pass kernels waits before it triggers instead,
  // ENCORE_SM90_PRODUCER_WAITS_LATE, so a trigger of this grid also says the pre-pass before it
  // completed: the dependents' ordering never rests on the consumers' progress. Run 131: equal
  // to the early trigger within 0.1 us on every GPU MODE and few-tile shape, four rounds.)
  // (kBound: the weight maps and pointers of the binding block come from the pre-pass's block 0;
  // the weight producer waits for its `filled` release before it reads them, bind_fill.cuh.)
  // NOTES: the early weight producer also walks the tiles, so it reads device_m before its wait:
  // every role must see the same device_m, or their k-block counts (and mbarrier phases) part and
  // the grid hangs. That holds because no kernel that may still run writes device_m: the pre-pass
  // before this GEMM waited before it triggered, and a graph keeps a launch whose device_m meets
  // an output of the graph off its PDL edge (graph_cache/internal/early_reads.h).
  constexpr bool kProducerWaitsLate = ENCORE_SM90_EARLY_WEIGHTS && P::kPrepass &&
                                      !(ENCORE_SM90_FUSED_WEIGHTS_WAIT && kFused);
  // (ENCORE_SM90_PREPASS_READY, Params::prepass_blocks > 0: only the weight producer waits for
  // the pre-pass grid, before its trigger; the token producer waits for the blocks' count,
  // prepass_ready.cuh.)
  constexpr bool kReadyBuilt = ENCORE_SM90_PREPASS_READY && P::kPrepass && !kFused;
  // ENCORE_SM90_SIMPLE_RING4 or kStreamed: this kernel splits its token stages for groups whose
  // token tiles are <= 128 rows; with ENCORE_SM90_SIMPLE_STREAM or kStreamed those tiles stream.
  constexpr bool kRing4 =
      (ENCORE_SM90_SIMPLE_RING4 || kStreamed) && P::kPrepass && kSchedule == Schedule::kSimple;
  constexpr bool kStream =
      kStreamed || (ENCORE_SM90_SIMPLE_STREAM && kSchedule == Schedule::kSimple &&
                    (kRing4 || !ENCORE_SM90_SIMPLE_RING4));
  const bool ready_count = kReadyBuilt && p.prepass_blocks > 0;
  if (!(kProducerWaitsLate && role == WarpRole::kProducer) &&
      !(ready_count && role != WarpRole::kProducer)) {
    GridDependencyWait();
  }
  if (tid == 128) StampCta(StampEvent::kGemmWaited);

  if constexpr (kFused) {
    // Before the register reallocation: the converters keep the launch's 168 registers.
    if (warp != 0) FusedPrepass(p, tid - 32, role == WarpRole::kConsumer);
  }

  uint32_t it = 0;  // k-block counter across tiles (pipeline stage and phase)
  if (role != WarpRole::kConsumer) {
    RegDealloc<kProducerRegs>();
    if (role == WarpRole::kProducer) {
      if ((tid & 31) == 0) {
        const uint64_t pol_first = PolicyEvictFirst();
        const uint64_t pol_last = PolicyEvictLast();
        // kBound: the weight scales of the last group seen, and the groups whose weight maps this
        // CTA acquired (once each: the map does not change during the grid).
        [[maybe_unused]] int bound_orig = -1;
        [[maybe_unused]] const uint8_t* bound_sfb = nullptr;
        [[maybe_unused]] uint64_t acquired = 0;
        if constexpr (kBound) {
          if constexpr (kProducerWaitsLate) WaitBindingBlockFilled(p.ring);
        }
        sched.ForEach([&](const WorkItem& w) {
          const TileCoord tc = sched.Decode(w);
          if (tc.rows <= 0) return;
          if constexpr (kBound) {
            const int orig = p.info[tc.slot].orig;
            const BoundGroup& bg = p.bound[orig];
            if (orig != bound_orig) {
              bound_orig = orig;
              bound_sfb = LdPointerCg(&bg.sfb);
              if (((acquired >> orig) & 1) == 0) {
                TensorMapAcquire(&bg.b);
                acquired |= uint64_t{1} << orig;
              }
            }
            GroupInfo gi = p.info[tc.slot];
            gi.sfb = bound_sfb;
            ProducerTile<kSrc>(&p.maps[tc.slot].a, &bg.b, gi, tc, sm, it, w.kb0, w.kb1,
                               pol_first, pol_last);
          } else {
            ProducerTile<kSrc>(&p.maps[tc.slot].a, &p.maps[tc.slot].b, p.info[tc.slot], tc, sm,
                               it, w.kb0, w.kb1, pol_first, pol_last);
          }
        });
        // Every weight load is issued: dependents may start launching (they wait for our
        // completion with griddepcontrol.wait before touching memory).
        // NOTES: runs 49-50 (stamps) saw no dependent of this kernel start before its last CTA
        // ended, also with every thread triggering first; see benchmarks/results/NOTES.md.
        if constexpr (kProducerWaitsLate && ENCORE_SM90_PRODUCER_WAITS_LATE) GridDependencyWait();
        GridDependentsLaunch();
        StampCta(StampEvent::kTrigger);
      }
    } else if constexpr (P::kPrepass) {
      if constexpr (kFused) {
        if (warp == 2) FusedPrepassCountPassed(p, tid & 31);
      }
      if constexpr (kBound) {
        // Warp 2 of CTA 0 (otherwise idle, past its wait: the pre-pass complete) advances the
        // ring to the next bound call and reads that call's bindings over the bus while this one
        // computes: its pre-pass then reads them from device memory (bind_prefetch.cuh).
        if (warp == 2 && blockIdx.x == 0) AdvanceAndPrefetchBindings(p.ring, tid & 31);
      }
      if (role == WarpRole::kTokenProducer && (tid & 31) == 0) {
        const uint64_t pol_last = PolicyEvictLast();
        [[maybe_unused]] bool pre_done = !ready_count;
        sched.ForEach([&](const WorkItem& w) {
          const TileCoord tc = sched.Decode(w);
          if (tc.rows <= 0) return;
          if constexpr (kReadyBuilt) {
            if (!pre_done) PrepassReadyWait(p.grid_sync, p.prepass_blocks);
            pre_done = true;
          }
          TokenProducerTile<kRing4>(&p.maps[tc.slot].a, p.info[tc.slot], tc, sm, it, w.kb0,
                                    w.kb1, pol_last);
        });
        if constexpr (kReadyBuilt) {
          if (ready_count) PrepassReadyPass(p.grid_sync, p.prepass_blocks);
        }
      }
    } else {  // WarpRole::kTokenDequant
      sched.ForEach([&](const WorkItem& w) {
        const TileCoord tc = sched.Decode(w);
        if (tc.rows <= 0) return;
        DequantTile(p.info[tc.slot], tc, sm, it, w.kb0, w.kb1, tid - 32);
      });
    }
  } else {
    RegAlloc<kConsumerRegs>();
    const long long t_cta = WaitClock();
    const int cw = warp / 4 - 1;
    const int ct = tid - 128 * (cw + 1);
    float acc[TileShape::kAccFloats];
    uint32_t epi_buf = 0;  // the warpgroup's next staging buffer (TMA stores)
    const bool tma_store = P::kEpiBuffers > 0 && OutputMaps<kGroups>::kPresent && p.store_by_tma;
    // NOTES: always_inline: out of line, the body takes `acc` by reference and ptxas keeps it in
    // local memory (672-byte frames, wgmmas serialized: C7510), as the _n8 build's 32-case width
    // switch made NVVM choose without it.
    sched.ForEach([&](const WorkItem& w) __attribute__((always_inline)) {
      const TileCoord tc = sched.Decode(w);
      if (tc.rows <= 0) return;
      if (tid == 128) StampCta(StampEvent::kTileStart, static_cast<uint32_t>(w.t), w.kb0, w.kb1);
      // kBound: the output pointer loaded before the loop (its latency hidden behind it).
      [[maybe_unused]] uint16_t* bound_c = nullptr;
      if constexpr (kBound) bound_c = LdPointerCg(&p.bound[p.info[tc.slot].orig].c);
      const long long t_loop = WaitClock();
      ConsumerTile<kSrc, kSchedule, kStream, kRing4, !kStreamed>(p.info[tc.slot], tc, sm, it,
                                                                  w.kb0, w.kb1, cw, ct, acc);
      WaitAdd(WaitCounter::kLoop, t_loop);
      const long long t_epi = WaitClock();
      if (tid == 128) StampCta(StampEvent::kTileLoopEnd);
      if (kSchedule == Schedule::kStreamK && w.split() &&
          !StreamKReduce(p, sched, w, tc.nw, sm.SkArrivals(), 128 * cw + ct, acc)) {
        WaitAdd(WaitCounter::kEpilogue, t_epi);
        return;
      }
      const CUtensorMap* out_map = nullptr;
      if constexpr (OutputMaps<kGroups>::kPresent) {
        if (tma_store) out_map = &p.out_maps[2 * tc.slot];
      }
      if constexpr (kBound) {
        GroupInfo gi = p.info[tc.slot];
        gi.c = bound_c;
        EpilogueTile<kSrc, kSchedule == Schedule::kSimple>(gi, out_map, tc, sm, cw, ct, epi_buf,
                                                           acc);
      } else {
        EpilogueTile<kSrc, kSchedule == Schedule::kSimple>(p.info[tc.slot], out_map, tc, sm, cw,
                                                           ct, epi_buf, acc);
      }
      WaitAdd(WaitCounter::kEpilogue, t_epi);
      if (tid == 128) StampCta(StampEvent::kTileEnd);
    });
    WaitAdd(WaitCounter::kCta, t_cta);
    WaitCountersFlush(128 * cw + ct, kStreamKBarrier, kConsumerThreads);
    // The staging must outlive the stores' reads (their writes need no wait: run 127 waited for
    // them, CUTLASS's epilogue does not).
    if (tma_store && ct == 0) BulkWaitGroupRead<0>();
  }
}

}  // namespace encore::gemm::sm90
