// Per-problem choices for the sm90 NVFP4 grouped GEMM: how to split token rows into tiles and
// which kernel (simple: one CTA per tile; persistent: one CTA per SM) runs a problem.
#ifndef ENCORE_GEMM_HEURISTICS_H_
#define ENCORE_GEMM_HEURISTICS_H_

#include <algorithm>
#include <utility>

#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/launch.h"

namespace encore::gemm {

// Token tiles of a group with m rows and at most `cap` rows a tile: as few as fit, balanced, each
// a multiple of the wgmma width granule (e.g. cap 256: 320 -> 2 x 160, 384 -> 2 x 192).
struct MTiling {
  int tiles = 0;
  int rows = 0;  // rows per tile (the last may hold fewer)
};
inline MTiling ChooseMTiling(int m, int cap = sm90::TileShape::kMaxBlockM) {
  using T = sm90::TileShape;
  if (m <= 0) return {};
  const int tiles = (m + cap - 1) / cap;
  int rows = (m + tiles - 1) / tiles;
  rows = (rows + T::kMGranule - 1) / T::kMGranule * T::kMGranule;
  return {(m + rows - 1) / rows, rows};
}

// Row caps tried, largest first. Smaller tiles re-read (and re-dequantize) weight tiles but fill
// more SMs when a problem has fewer big tiles than SMs (GPU MODE shapes 3 and 4).
inline constexpr int kMTileCaps[] = {256, 192, 128, 96, 64};

// Estimated run time of the simple kernel with a row cap: greedy list scheduling (the block
// scheduler hands tiles, in kernel order, to the first free SM) of tiles costing
// k_blocks * (rows + 24) + 48 (per-tile prologue/epilogue in row-equivalents; a rough fit).
// `m`, `n`, `k` are in kernel order (groups sorted by M, largest first). No allocation.
template <typename Groups>
long long EstimateMakespan(const Groups& groups, int num_groups, int cap, int sm_count) {
  constexpr int kMaxSms = 1024;
  long long load[kMaxSms] = {};  // min-heap of SM loads
  const int sms = std::min(sm_count, kMaxSms);
  auto push_min = [&](long long cost) {  // add cost to the least loaded SM, restore the heap
    load[0] += cost;
    for (int i = 0;;) {
      int l = 2 * i + 1, r = l + 1, s = i;
      if (l < sms && load[l] < load[s]) s = l;
      if (r < sms && load[r] < load[s]) s = r;
      if (s == i) break;
      std::swap(load[i], load[s]);
      i = s;
    }
  };
  long long makespan = 0;
  for (int g = 0; g < num_groups; ++g) {
    const MTiling mt = ChooseMTiling(groups[g].m, cap);
    const int n_tiles = (groups[g].n + sm90::TileShape::kBlockN - 1) / sm90::TileShape::kBlockN;
    const int kblocks = (groups[g].k + sm90::TileShape::kBlockK - 1) / sm90::TileShape::kBlockK;
    for (int nt = 0; nt < n_tiles; ++nt) {
      for (int i = 0; i < mt.tiles; ++i) {
        int rows = std::min(mt.rows, groups[g].m - i * mt.rows);
        rows = (rows + sm90::TileShape::kMGranule - 1) / sm90::TileShape::kMGranule *
               sm90::TileShape::kMGranule;
        push_min(static_cast<long long>(kblocks) * (rows + 24) + 48);
      }
    }
  }
  for (int i = 0; i < sms; ++i) makespan = std::max(makespan, load[i]);
  return makespan;
}

// The row cap with the smallest estimated makespan; 256 when the problem has many tiles per SM
// (then the estimate is not worth its cost and big tiles are best).
template <typename Groups>
int ChooseMTileCap(const Groups& groups, int num_groups, int sm_count) {
  long long tiles = 0;
  for (int g = 0; g < num_groups; ++g) {
    tiles += static_cast<long long>(ChooseMTiling(groups[g].m).tiles) *
             ((groups[g].n + sm90::TileShape::kBlockN - 1) / sm90::TileShape::kBlockN);
  }
  if (tiles > 8LL * sm_count) return sm90::TileShape::kMaxBlockM;
  int best = sm90::TileShape::kMaxBlockM;
  long long best_time = -1;
  for (int cap : kMTileCaps) {
    if (cap > sm90::TileShape::kMaxBlockM) continue;
    const long long t = EstimateMakespan(groups, num_groups, cap, sm_count);
    if (best_time < 0 || t < best_time) {
      best_time = t;
      best = cap;
    }
  }
  return best;
}

// The simple kernel lets the hardware block scheduler balance tiles of unequal cost (tiles are
// ordered largest first); the persistent kernel saves the per-CTA prologue and overlaps each
// tile's epilogue with the next tile's loads, which pays once there is more than one wave.
// Measured on the H200 (benchmarks/results/crossover.txt): simple 0.6-2% faster at <= 0.97 tiles
// per SM, persistent 2-6% faster from 1.94 tiles per SM on.
inline KernelKind ChooseKernel(int num_tiles, int sm_count) {
  return num_tiles > sm_count ? KernelKind::kPersistent : KernelKind::kSimple;
}

}  // namespace encore::gemm

#endif  // ENCORE_GEMM_HEURISTICS_H_
