// The sm90 kernel's epilogue: a consumer warpgroup's fp32 accumulators -> fp16 C through shared
// memory (stmatrix, 32 tokens per pass), then 16-byte coalesced thread stores masked to the valid
// rows/columns (or, in the _tmastore build, bulk tensor stores: ENCORE_SM90_TMA_STORE).
//
// Example (inside the kernel, after ConsumerTile; `buf` starts at 0 and lives across tiles):
//   EpilogueTile<kSrc, /*kPackFirst=*/kSchedule == Schedule::kSimple>(gi, map_or_null, tc, sm, cw,
//                                                                     ct, buf, acc);
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "gemm/kernels/internal/dequant.cuh"
#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/smem_layout.cuh"
#include "gemm/kernels/internal/switches.cuh"
#include "gemm/kernels/internal/tile_scheduler.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

// {lo * k, hi * k} rounded to fp16 (fp32 multiplies, then one cvt.rn.f16x2.f32), as volatile asm:
// NVVM may not hoist it out of the chunk loop (plain code was: every chunk's packing ran before
// the loop, 64 cvt and 128 multiplies for a 16-token tile that needs 8 and 16; run 87).
__device__ __forceinline__ uint32_t PackHalf2Scaled(float lo, float hi, float k) {
  uint32_t d;
  asm volatile(
      "{\n.reg .f32 a, b;\nmul.rn.f32 a, %1, %3;\nmul.rn.f32 b, %2, %3;\n"
      "cvt.rn.f16x2.f32 %0, b, a;\n}"
      : "=r"(d)
      : "f"(lo), "f"(hi), "f"(k));
  return d;
}

// Chunk kCh's 16 accumulators of one strip (tokens [32 kCh, 32 kCh + 32) of the thread's weight
// rows) scaled by k, packed as 8 half2: r[4 jp + q] is n8 block 4 kCh + 2 jp (+1 for q >= 2)'s pair
// q.
template <int kCh>
__device__ __forceinline__ void PackChunk(const float* strip, float k, uint32_t (&r)[8]) {
  const float* ac = strip + 16 * kCh;
#pragma unroll
  for (int i = 0; i < 8; ++i) r[i] = PackHalf2Scaled(ac[2 * i], ac[2 * i + 1], k);
}

// Chunks kCh.. of `chunks` packed, as nested branches: a tile packs the chunks it stores and then
// skips the rest with one branch.
template <int kCh, int kChunks>
__device__ __forceinline__ void PackChunksFrom(const float* strip, float k, int chunks,
                                               uint32_t (&pk)[kChunks][8]) {
  if constexpr (kCh < kChunks) {
    if (kCh < chunks) {
      PackChunk<kCh>(strip, k, pk[kCh]);
      PackChunksFrom<kCh + 1>(strip, k, chunks, pk);
    }
  }
}

// Undo the fragments' 2^-7 scalings (the pre-pass writes exact token values).
template <TokenSource kSrc>
inline constexpr float kEpilogueScale = (ENCORE_SM90_WEIGHTS_NORMAL_FP16 ? 1.0f : 128.0f) *
                                        (ENCORE_SM90_TOKEN_ONE_MUL && kSrc == TokenSource::kInKernel
                                             ? 128.0f
                                             : 1.0f);

// NOTES: the chunk loop is rolled: the epilogue runs once per tile, so every instruction of it is
// fetched cold. Unrolled over the 8 chunks it was ~500 instructions executed once each, and run
// 86's ncu source view of shape 3 put 34% of all warp samples in it, 76% of those stall_no_inst
// (the instruction fetch): the ~0.32 us per 32-token chunk of run 83's CTA profile. The packing
// needs compile-time accumulator indices:
//   kPackFirst (the simple kernel): the tile's chunks are packed first, in straight-line code
//     (the fetch streams it), and the loop's switch picks chunk ch's registers: shape 3 15.8 us
//     vs 16.2 with the packing in the switch's cases (run 89);
//   else (persistent, stream-K): each switch case packs its chunk; packing first needs 64 more
//     live registers there, and ptxas put 128-136 bytes in local memory (run 89).
// Copy-out, per 32-token chunk of a 64-column strip:
//   out_map != nullptr (Pipeline::kEpiBuffers > 0; static M; out_map[0] with 32-row boxes,
//     out_map[1] with 16): the chunk is staged in the 128B-swizzled buffer `buf` (the
//     warpgroup's kEpiBuffers buffers in turn, `buf` carried across tiles), one barrier, then
//     thread 0 of the warpgroup stores it with one bulk tensor store (a 16-row box where at most
//     16 of the tile's rows are left: rows past the tile are never written, and the map clips
//     rows past M and columns past N). Run 127: two 16-row stores a chunk lost ~1 us a call on
//     every GPU MODE shape (a TMA operation costs ~80 ns of the SM's unit whatever its size, run
//     80). Before the barrier thread 0 waits until the store kEpiBuffers - 1 chunks back has read
//     its buffer, the next one written. The caller waits for the last reads before the CTA exits;
//   else: barrier, 16-byte stores by every thread masked to the valid rows and columns, barrier.
template <TokenSource kSrc, bool kPackFirst>
__device__ __forceinline__ void EpilogueTile(const GroupInfo& gi, const CUtensorMap* out_map,
                                             const TileCoord& tc, const SmemLayout<kSrc>& sm,
                                             int cw, int ct, uint32_t& buf,
                                             const float (&acc)[TileShape::kAccFloats]) {
  using T = TileShape;
  constexpr int kBufs = Pipeline<kSrc>::kEpiBuffers;
  static_assert(kBufs == 0 || kBufs >= 2, "a staging buffer is rewritten only after its store");
  static_assert(T::kEpilogueRows == 32, "PackChunk packs 32-token chunks");
  static_assert(T::kEpilogueRows == kOutputBoxRows && 2 * kOutputTailRows == kOutputBoxRows,
                "an output box is a chunk or its first half");
  // (A tile's last chunk goes out in a kOutputTailRows box: with 8-row granules, e.g. tiles of 40
  // rows, that box would write 8 rows of the next tile, which another CTA stores.)
  static_assert(kBufs == 0 || T::kMGranule % kOutputTailRows == 0,
                "TMA stores need tile rows in multiples of the tail box (no _n8 with _tmastore)");
  constexpr int kChunks = T::kMaxBlockM / T::kEpilogueRows;
  constexpr float kOut = kEpilogueScale<kSrc>;
  const int lane = ct & 31;
  // Padded staging: warpgroup cw's chunk at stage_s; swizzled: buffer `buf` at EpiChunk(cw, buf).
  const uint32_t stage_s = sm.EpiAddr() + 2 * cw * T::kEpilogueRows * T::kEpiloguePitch;
  constexpr int P = T::kEpiloguePitch;
  // The n8 blocks of a chunk: four 8x8 matrices per stmatrix (weight rows 16 warp + 0..7 and
  // + 8..15 of n8 blocks 2 jp, 2 jp + 1), stored transposed (token rows of 8 weights, 16 bytes).
  // Run 36: -2% on GPU MODE shape 1 against one 2-byte store per value. Lane L writes token row
  // 8 (mat / 2) + L % 8 (+ 16 for jp = 1), 16-byte piece 2 warp + mat % 2 (swizzled: piece
  // j of row r at j ^ (r % 8), and r % 8 = L % 8); addr0/addr1 are offsets from the buffer there.
  const int mat = lane >> 3, t = lane & 7;
  const uint32_t addr0 =
      kBufs == 0 ? stage_s + 2 * ((8 * (mat >> 1) + t) * P + (ct >> 5) * 16 + 8 * (mat & 1))
                 : (8 * (mat >> 1) + t) * 128 + (((2 * (ct >> 5) + (mat & 1)) ^ t) << 4);
  const uint32_t addr1 = addr0 + (kBufs == 0 ? 2 * 16 * P : 16 * 128);  // jp = 1: rows 16..31
  const int chunks = (tc.nw + T::kEpilogueRows - 1) / T::kEpilogueRows;
  static_assert(kChunks <= 8, "the chunk switch has 8 cases");
  // Copy-out by threads: thread ct moves 16-byte pieces idx = ct, ct + 128 (token row idx / 8,
  // weights 8 (idx % 8) ..): rows past tc.rows and columns past gi.n are not written.
  const int row0 = ct >> 3, col8 = ct & 7;
#pragma unroll
  for (int sj = 0; sj < T::kStrips; ++sj) {
    const float* strip = acc + 64 * sj;
    uint32_t pk[kPackFirst ? kChunks : 1][8];
    if constexpr (kPackFirst) PackChunksFrom<0>(strip, kOut, chunks, pk);
    const int n = tc.n0 + (cw * T::kStrips + sj) * 64 + col8 * 8;
    const bool n_ok = n < gi.n;
    uint16_t* out = gi.c + static_cast<size_t>(tc.m0) * gi.n + n;
#pragma unroll 1
    for (int ch = 0; ch < chunks; ++ch) {
      uint32_t r[8];
      switch (ch) {
#define ENCORE_CHUNK(c)                            \
  case c:                                          \
    if constexpr (c < kChunks && kPackFirst) {     \
      for (int i = 0; i < 8; ++i) r[i] = pk[c][i]; \
    } else if constexpr (c < kChunks) {            \
      PackChunk<c>(strip, kOut, r);                \
    }                                              \
    break;
        ENCORE_CHUNK(0)
        ENCORE_CHUNK(1)
        ENCORE_CHUNK(2)
        ENCORE_CHUNK(3)
        ENCORE_CHUNK(4)
        ENCORE_CHUNK(5)
        ENCORE_CHUNK(6)
        ENCORE_CHUNK(7)
#undef ENCORE_CHUNK
        default:
          break;
      }
      const uint32_t stage = kBufs == 0 ? 0 : sm.EpiChunk(cw, buf);
      StMatrixX4Trans(stage + addr0, r[0], r[1], r[2], r[3]);
      StMatrixX4Trans(stage + addr1, r[4], r[5], r[6], r[7]);
      if constexpr (kBufs > 0) {
        if (out_map != nullptr) {
          FenceProxyAsyncShared();  // the staged chunk -> the async proxy (the store's reads)
          if (ct == 0) BulkWaitGroupRead<kBufs - 2>();
          NamedBarrierSync(1 + cw, 128);
          if (ct == 0) {
            // Thread 0 (col8 = 0): n is the strip's first column.
            if ((ENCORE_SM90_EXP_EPILOGUE != 1 || kPackFirst) && n < gi.n) {
              const bool tail = tc.rows - ch * T::kEpilogueRows <= kOutputTailRows;
              TmaStore2D(out_map + (tail ? 1 : 0), stage, n, tc.m0 + ch * T::kEpilogueRows);
            }
            BulkCommitGroup();  // every chunk a group (maybe empty): the wait above counts chunks
          }
          buf = buf + 1 == kBufs ? 0 : buf + 1;
          continue;
        }
      }
      NamedBarrierSync(1 + cw, 128);
      if constexpr (ENCORE_SM90_EXP_EPILOGUE == 1 && !kPackFirst) continue;
#pragma unroll
      for (int h = 0; h < T::kEpilogueRows * 8 / 128; ++h) {
        const int row = row0 + 16 * h;
        const int m = ch * T::kEpilogueRows + row;
        if (m < tc.rows && n_ok) {
          *reinterpret_cast<uint4*>(out + static_cast<size_t>(m) * gi.n) = LdShared128(
              kBufs == 0 ? stage_s + 2 * (row * P + col8 * 8)
                         : stage + row * 128 + ((col8 ^ (row & 7)) << 4));
        }
      }
      NamedBarrierSync(1 + cw, 128);
    }
  }
}

}  // namespace encore::gemm::sm90
