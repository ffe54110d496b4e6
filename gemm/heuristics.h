// Per-problem choices for the sm90 NVFP4 grouped GEMM: how to split token rows into tiles and
// which kernel (simple: one CTA per tile; persistent: one CTA per SM) runs a problem.
#ifndef ENCORE_GEMM_HEURISTICS_H_
#define ENCORE_GEMM_HEURISTICS_H_

#include <algorithm>

#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/launch.h"

namespace encore::gemm {

// Token tiles of a group with m rows: as few as fit kMaxBlockM, balanced, each a multiple of the
// wgmma width granule (e.g. 320 -> 2 x 160, 384 -> 2 x 192, 80 -> 1 x 80).
struct MTiling {
  int tiles = 0;
  int rows = 0;  // rows per tile (the last may hold fewer)
};
inline MTiling ChooseMTiling(int m) {
  using T = sm90::TileShape;
  if (m <= 0) return {};
  const int tiles = (m + T::kMaxBlockM - 1) / T::kMaxBlockM;
  int rows = (m + tiles - 1) / tiles;
  rows = (rows + T::kMGranule - 1) / T::kMGranule * T::kMGranule;
  return {(m + rows - 1) / rows, rows};
}

// The simple kernel lets the hardware block scheduler balance tiles of unequal cost (tiles are
// ordered largest first); the persistent kernel saves the per-CTA prologue and overlaps each
// tile's epilogue with the next tile's loads, which pays once there are several tiles per SM.
// Crossover measured on the H200: see benchmarks/results/crossover.txt.
inline constexpr int kPersistentMinTilesPerSm = 4;

inline KernelKind ChooseKernel(int num_tiles, int sm_count) {
  return num_tiles >= kPersistentMinTilesPerSm * sm_count ? KernelKind::kPersistent
                                                          : KernelKind::kSimple;
}

}  // namespace encore::gemm

#endif  // ENCORE_GEMM_HEURISTICS_H_
