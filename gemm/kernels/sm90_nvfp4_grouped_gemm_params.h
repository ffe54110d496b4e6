// The device-ready parameter block of the sm90 NVFP4 grouped GEMM kernels (CUTLASS's "Params",
// built on the host from GroupedGemmArguments), and the compile-time tile configuration. Plain
// data, included by host code (grouped_gemm.cc) and by the kernels.
#ifndef ENCORE_GEMM_KERNELS_SM90_NVFP4_GROUPED_GEMM_PARAMS_H_
#define ENCORE_GEMM_KERNELS_SM90_NVFP4_GROUPED_GEMM_PARAMS_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#ifndef ENCORE_SM90_WIDE_N
// 1 (default, run 6): a CTA covers 256 weight rows (two 64-row strips per consumer warpgroup)
//    and at most 128 token rows, so each dequantized token tile feeds twice the FLOPs.
// 0: 128 weight rows x <= 256 token rows (faster on GPU MODE shape 0, slower on 1-3).
#define ENCORE_SM90_WIDE_N 1
#endif

namespace encore::gemm::sm90 {

// How the kernel computes (fixed at compile time; the per-problem choices live in heuristics.h).
struct TileShape {
  // The weight operand (problem B, N side) is the register-sourced wgmma A operand: each of the
  // two consumer warpgroups owns kStrips 64-row strips, so a CTA covers kBlockN columns of C.
  static constexpr int kBlockN = ENCORE_SM90_WIDE_N ? 256 : 128;
  static constexpr int kStrips = kBlockN / 128;  // 64-row weight strips per consumer warpgroup
  // Tokens (problem A, M side) are the wgmma N operand: a tile covers up to kMaxBlockM rows of C,
  // its width rounded up to a multiple of kMGranule at run time (wgmma n = 16..kMaxBlockM).
  static constexpr int kMaxBlockM = ENCORE_SM90_WIDE_N ? 128 : 256;
  static constexpr int kMGranule = 16;
  static constexpr int kBlockK = 128;   // k per pipeline stage (64 bytes of e2m1 per row)
  static constexpr int kRawStages = 3;  // TMA stages of packed e2m1 + scales
  static constexpr int kTokStages = ENCORE_SM90_WIDE_N ? 4 : 2;  // stages of fp16 tokens
  static constexpr int kThreads = 384;  // warpgroup 0: TMA + token dequant; 1-2: wgmma consumers
  static constexpr int kEpilogueRows = 32;       // tokens staged per epilogue pass
  static constexpr int kEpiloguePitch = 64 + 8;  // halves per staged row (padding: no conflicts)

  // Shared memory, in order; every stage 1024-byte aligned.
  static constexpr int kRawWeightBytes = kBlockN * kBlockK / 2;    // 16384 (narrow 8192)
  static constexpr int kRawTokenBytes = kMaxBlockM * kBlockK / 2;  // 8192 (narrow 16384)
  static constexpr int kSfWeightBytes = kStrips * 2 * 512;         // 128-row blocks
  static constexpr int kSfTokenBytes = 3 * 2 * 512;                // up to 3 row blocks
  static constexpr int kRawStageBytes =
      kRawWeightBytes + kRawTokenBytes + kSfWeightBytes + kSfTokenBytes;  // 29696 (narrow 28672)
  static constexpr int kTokAtomBytes = kMaxBlockM * 128;    // 64 k of fp16 for kMaxBlockM rows
  static constexpr int kTokStageBytes = 2 * kTokAtomBytes;  // 32768 (narrow 65536)
  static constexpr int kEpilogueBytes = 2 * kEpilogueRows * kEpiloguePitch * 2;
  static constexpr int kBarrierBytes = 128;
  static constexpr int kSmemBytes = 1024 /* alignment slack */ + kRawStages * kRawStageBytes +
                                    kTokStages * kTokStageBytes + kEpilogueBytes + kBarrierBytes;
};

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
};

struct alignas(64) GroupMaps {
  CUtensorMap a;  // tokens: uint8 {K/2, M}, box {64, kMaxBlockM}, 64-byte swizzle
  CUtensorMap b;  // weights: uint8 {K/2, N}, box {64, kBlockN}, no swizzle
};

// NOTES: passed by value (__grid_constant__); kGroups (8 or 64) keeps the block small for few
// groups. sizeof(Params<64>) must stay under kMaxParamBytes (static_assert in the launcher).
template <int kGroups>
struct alignas(64) Params {
  GroupMaps maps[kGroups];
  GroupInfo info[kGroups];
  const int32_t* device_m;  // nullptr: static M
  int num_groups;
  int num_tiles;
};

}  // namespace encore::gemm::sm90

#endif  // ENCORE_GEMM_KERNELS_SM90_NVFP4_GROUPED_GEMM_PARAMS_H_
