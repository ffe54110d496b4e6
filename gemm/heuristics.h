// Per-problem choices for the sm90 NVFP4 grouped GEMM: how to split token rows into tiles, which
// schedule runs a problem (simple: one CTA per tile; persistent: one CTA per SM, snake rounds or
// packed lists; stream-K: one cost-balanced k-block range per CTA) and the cost models behind them.
#ifndef ENCORE_GEMM_HEURISTICS_H_
#define ENCORE_GEMM_HEURISTICS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/launch.h"
#include "gemm/stream_k_costs.h"

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
  const int rows = T::RoundRows((m + tiles - 1) / tiles);
  return {(m + rows - 1) / rows, rows};
}

// Token rows of tile i of a group with m rows tiled as `mt` (the last tile may hold fewer),
// rounded to the wgmma granule as the kernel does.
inline int TileRows(const MTiling& mt, int m, int i) {
  return sm90::TileShape::RoundRows(std::min(mt.rows, m - i * mt.rows));
}

// The cost model of one tile in row-equivalents: k_blocks * (rows + rows_fixed) + 48 (per-tile
// prologue/epilogue; a rough fit, see EstimateMakespan).
inline long long TileCost(int rows, int kblocks, int rows_fixed = 24) {
  return static_cast<long long>(kblocks) * (rows + rows_fixed) + 48;
}

// Output tiles of a shape list with token tiles of at most `cap` rows.
template <typename Groups>
long long CountTiles(const Groups& groups, int num_groups, int cap = sm90::TileShape::kMaxBlockM) {
  long long tiles = 0;
  for (int g = 0; g < num_groups; ++g) {
    tiles += static_cast<long long>(ChooseMTiling(groups[g].m, cap).tiles) *
             sm90::TileShape::NTiles(groups[g].n);
  }
  return tiles;
}

// Row caps tried, largest first. Smaller tiles re-read (and re-dequantize) weight tiles but fill
// more SMs when a problem has fewer big tiles than SMs (GPU MODE shapes 3 and 4).
inline constexpr int kMTileCaps[] = {256, 192, 128, 96, 64};

// The block scheduler's greedy list scheduling: each cost goes to the least loaded of `sm_count`
// SMs (at most kMaxSms; a min-heap of loads, no allocation).
class GreedyLoads {
 public:
  explicit GreedyLoads(int sm_count) : sms_(std::min(sm_count, kMaxSms)) {}
  void Add(long long cost) {  // to the least loaded SM, then restore the heap
    load_[0] += cost;
    for (int i = 0;;) {
      int l = 2 * i + 1, r = l + 1, s = i;
      if (l < sms_ && load_[l] < load_[s]) s = l;
      if (r < sms_ && load_[r] < load_[s]) s = r;
      if (s == i) break;
      std::swap(load_[i], load_[s]);
      i = s;
    }
  }
  long long Makespan() const {
    long long makespan = 0;
    for (int i = 0; i < sms_; ++i) makespan = std::max(makespan, load_[i]);
    return makespan;
  }

 private:
  static constexpr int kMaxSms = 1024;
  long long load_[kMaxSms] = {};
  int sms_;
};

// Estimated run time of the simple kernel with a row cap: greedy list scheduling (the block
// scheduler hands tiles, in kernel order, to the first free SM) of tiles costing
// k_blocks * (rows + 24) + 48 (per-tile prologue/epilogue in row-equivalents; a rough fit).
// `m`, `n`, `k` are in kernel order (groups sorted by M, largest first). No allocation.
template <typename Groups>
long long EstimateMakespan(const Groups& groups, int num_groups, int cap, int sm_count,
                           int rows_fixed = 24) {
  GreedyLoads loads(sm_count);
  for (int g = 0; g < num_groups; ++g) {
    const MTiling mt = ChooseMTiling(groups[g].m, cap);
    const int n_tiles = sm90::TileShape::NTiles(groups[g].n);
    const int kblocks = sm90::TileShape::KBlocks(groups[g].k);
    for (int nt = 0; nt < n_tiles; ++nt) {
      for (int i = 0; i < mt.tiles; ++i) {
        loads.Add(TileCost(TileRows(mt, groups[g].m, i), kblocks, rows_fixed));
      }
    }
  }
  return loads.Makespan();
}

// The row cap with the smallest estimated makespan; 256 when the problem has many tiles per SM
// (then the estimate is not worth its cost and big tiles are best).
template <typename Groups>
int ChooseMTileCap(const Groups& groups, int num_groups, int sm_count) {
  if (CountTiles(groups, num_groups) > 8LL * sm_count) return sm90::TileShape::kMaxBlockM;
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

// Token pre-pass (TokenSource::kPrepass): the fp16 workspace a shape list needs (each group's
// rows of TokenRowHalves(k) halves, 256-byte aligned) and the offset of group g's rows.
inline size_t PrepassGroupBytes(int m, int k) {
  const size_t bytes = static_cast<size_t>(std::max(m, 0)) *
                       static_cast<size_t>(sm90::TileShape::TokenRowHalves(k)) * 2;
  return (bytes + 255) / 256 * 256;
}
template <typename Groups>
size_t PrepassWorkspaceBytes(const Groups& groups, int num_groups) {
  size_t bytes = 0;
  for (int g = 0; g < num_groups; ++g) bytes += PrepassGroupBytes(groups[g].m, groups[g].k);
  return bytes;
}

// Whether kAuto converts tokens once in a pre-pass rather than in every weight tile's CTA. In
// kernel, a token is converted NTiles(n) times, by three warps per CTA (slow for 256-row tiles);
// the pre-pass costs one more kernel, mostly hidden behind the GEMM's prologue by PDL.
// NOTES (run 23, 128 x 256 tiles): the pre-pass won on every measured shape with >= 2 weight
// tiles (one 128-row tile, N = 256, K = 7168: 41.4 vs 63.3 us; GPU MODE shapes 13-39%) and lost
// only on the tiny problem (8 x 128 x 256: 6.11 vs 5.96 us). So: in kernel only for single weight
// tiles with little token work (under kPrepassMinRowBlocks rows x k-blocks).
inline constexpr int kPrepassMinWeightTiles = 2;
inline constexpr long long kPrepassMinRowBlocks = 1024;
template <typename Groups>
bool PreferPrepass(const Groups& groups, int num_groups) {
  long long rows = 0, conversions = 0;
  for (int g = 0; g < num_groups; ++g) {
    if (groups[g].m <= 0) continue;
    const long long work =
        static_cast<long long>(groups[g].m) * sm90::TileShape::KBlocks(groups[g].k);
    rows += work;
    conversions += work * sm90::TileShape::NTiles(groups[g].n);
  }
  return rows > 0 && (conversions >= kPrepassMinWeightTiles * rows || rows >= kPrepassMinRowBlocks);
}

// Whether Run launches a plan with a pre-kernel of `blocks` blocks and a GEMM grid of `grid` CTAs
// with PDL (LaunchPlan::prefers_pdl). Pre-pass blocks launched early park at griddepcontrol.wait
// on the SMs the previous GEMM leaves idle, up to 8 a SM, and convert there once it completes: a
// few crowded SMs then hold the pre-pass up. The previous GEMM is taken to be like this one (a
// recurring call): the edge pays when its last wave leaves no SM idle, or when the pre-pass has so
// many blocks per SM that the parked ones are no crowd.
// NOTES (runs 55, 57, 58; the pre-pass waits before it triggers): with the edge, GPU MODE shape 0
// (simple, 256 CTAs: 8 SMs idle in the last wave; 896 pre-pass blocks) 116 -> 112 us, shape 1
// (persistent, 132 CTAs; 256 blocks) 62.7 -> 61.4; without it, shape 2 (120 CTAs; 256 blocks)
// 29.4-29.8 -> 28.5-28.7 and shape 3 (128 CTAs; 96 blocks) 17.7 -> 16.4-16.5. (At most one
// grid-stride block per SM, the manual build _pgrid: 28.1 / 16.4 with the edge, but 29.4 / 17.6
// without it and 115 / 62.4 on shapes 0-1.)
// Where this says no, a runner with RunnerOptions::pad_prepass_for_pdl launches the pre-pass with
// PDL anyway, its blocks padded (PrepassPdlPadBytes) to an even spread over the SMs
// (PrepassSpreadBlocksPerSm); where it says yes, RunnerOptions::pad_large_prepasses pads them the
// same way (run 119: shape 1 -4.8%).
inline constexpr int kPrepassPdlBlocksPerSm = 3;
inline bool PrepassPrefersPdl(long long blocks, int grid, int sm_count) {
  const int idle_in_last_wave = (sm_count - grid % sm_count) % sm_count;
  return idle_in_last_wave == 0 ||
         blocks >= static_cast<long long>(kPrepassPdlBlocksPerSm) * sm_count;
}

// Unused dynamic shared memory per pre-pass block that lets at most `blocks_per_sm` blocks be
// resident on one SM (each also holds the runtime's `reserved_per_block`, 1 KB on the H200; the
// pad leaves one more reservation of slack and is a multiple of 128 bytes): the pre-pass blocks
// launched early behind a PDL edge then cannot crowd the few SMs the previous GEMM leaves idle;
// the rest start on SMs as the GEMM's CTAs leave. 0 where the device facts are missing or cannot
// bound it.
// NOTES (run 117, H200, 112 KB a block: 2 per SM; A/B against the unpadded launch without the
// edge, 3 rounds): GPU MODE shape 2 27.2-27.3 -> 25.8-25.9 us, shape 3 (unfused) 15.6-15.8 ->
// 14.4-14.5 (the fused kernel: 15.3), one 128-row tile with K = 7168 18.2-18.3 -> 17.2; shape 1
// (already behind an edge) equal. Without padding the edge lost (runs 51, 57: +4..8%). Runs
// 119-121: the bound as an even spread (PrepassSpreadBlocksPerSm) for every pre-pass behind an
// edge.
// `static_per_block`: the pre-pass kernel's own static shared memory (sm90::kPrepassStaticSmemBytes).
inline int PrepassPdlPadBytes(int smem_per_sm, int smem_optin_per_block, int reserved_per_block,
                              int blocks_per_sm, int static_per_block = 0) {
  if (smem_per_sm <= 0 || smem_optin_per_block <= 0 || reserved_per_block < 0 ||
      blocks_per_sm < 1 || static_per_block < 0) {
    return 0;
  }
  const int pad =
      (smem_per_sm / blocks_per_sm - 2 * reserved_per_block - static_per_block) / 128 * 128;
  if (pad <= 0 || pad + static_per_block > smem_optin_per_block ||
      static_cast<long long>(blocks_per_sm + 1) * (pad + static_per_block + reserved_per_block) <=
          smem_per_sm) {
    return 0;
  }
  return pad;
}

// The blocks per SM a padded pre-pass of `blocks` blocks is bounded to (RunnerOptions::
// pad_prepass_for_pdl, pad_large_prepasses): no fewer than `min_per_sm`
// (RunnerOptions::prepass_pad_blocks_per_sm), and enough for all blocks to be resident at once,
// spread evenly over the SMs instead of up to 8 deep on the SMs the previous GEMM frees first.
inline int PrepassSpreadBlocksPerSm(long long blocks, int sm_count, int min_per_sm) {
  if (sm_count <= 0) return min_per_sm;
  const long long even = (blocks + sm_count - 1) / sm_count;
  return static_cast<int>(std::max<long long>(min_per_sm, std::min<long long>(even, 1 << 20)));
}

// Whether FusePrepass::kAuto fuses a whole-tile plan's pre-pass into its `grid` CTAs (only on a
// runner that does not pad its small pre-passes for PDL, which beats the fusion: run 117): when
// each converts at most kFusedMaxUnitsPerCta units (a token row's 128-k block each). Run 98 (H200,
// PDL, fused vs the unpadded pre-pass kernel): GPU MODE shape 3 (48 units a CTA) -4.5%, shape 1
// (124) -0.4%, shape 2 (137) +1.1%; a CTA's share is converted before its first token load, so
// large shares delay every tile.
inline constexpr long long kFusedMaxUnitsPerCta = 64;
inline bool PreferFusedPrepass(long long units, int grid) {
  return grid > 0 && units <= kFusedMaxUnitsPerCta * grid;
}

// What Prepare runs for a shape list: the row cap of the whole-tile kernels (simple, persistent)
// and whether kAuto takes stream-K (ShapePlanMemo sets it from PlanStreamK's makespan against the
// whole-tile schedule's, PreferStreamK).
struct ShapeChoice {
  int cap = sm90::TileShape::kMaxBlockM;
  bool stream_k = false;
};
// `forced_cap` > 0: that row cap (RunnerOptions::token_tile_rows) instead of ChooseMTileCap's.
template <typename Groups>
ShapeChoice ChooseShape(const Groups& groups, int num_groups, int sm_count, int forced_cap = 0) {
  ShapeChoice c;
  c.cap = forced_cap > 0 ? forced_cap : ChooseMTileCap(groups, num_groups, sm_count);
  return c;
}

// The simple kernel lets the hardware block scheduler balance tiles of unequal cost greedily;
// the persistent kernel deals them out in fixed snake-ordered rounds (tiles sorted by cost),
// saving the per-CTA prologue and overlapping each tile's epilogue with the next tile's loads.
// Measured on the H200 with the current kernel (run 15, benchmarks/results/NOTES.md): uniform
// tiles, persistent 1-4% faster from ~2 tiles per SM on (crossover/*); ragged tiles (GPU MODE
// shape 1, 2.76 tiles per SM) simple 10% faster (87.6 vs 97.1 us), shape 0 (1.33) simple 1%.
// So the persistent kernel only past 3 tiles per SM -- unless the runner has a packed schedule for
// the problem (PackTiles below; it then runs the persistent kernel on the packed lists).
inline KernelKind ChooseKernel(int num_tiles, int sm_count) {
  return num_tiles > 3 * sm_count ? KernelKind::kPersistent : KernelKind::kSimple;
}

// ---- packed persistent schedule ----
// Whole tiles can leave SMs idle at the end even in the best order: GPU MODE shape 0 has ~2 tiles
// per SM of unequal cost (the 248-token group's 128 x 256 tiles cost 2.2x the 64-token ones), so
// the block scheduler's greedy order and the persistent kernel's snake rounds both give SMs a
// large tile plus another one. The persistent kernel can instead run a static assignment packed
// by the host (LPT, then moves and swaps off the most loaded CTA), optionally with the costliest
// groups' token tiles halved (finer pieces to pack).

// A tile's cost for packing, in units of ~4.5 ns of the H200's main loop: k_blocks x effective
// rows + a per-tile fixed cost. Fitted to run 67's steady family (the main loop per k-block of a
// 128-row weight tile at widths 64 / 96 / 128 / 160 / 192 / 256: 0.500 / 0.569 / 0.650 / 0.741 /
// 0.869 / 1.159 us, i.e. max(w, (w + 160) / 2) rows at 4.5 ns: narrow tiles pay for the weight
// decode they cannot hide).
inline constexpr long long kPackTileFixed = 150;
inline constexpr long long kPackDecodeRows = 160;
// One k-block of a tile with `rows` token rows (PackCost without the fixed cost).
inline long long PackKBlockCost(int rows, long long decode_rows = kPackDecodeRows) {
  return std::max<long long>(rows, (rows + decode_rows) / 2);
}
inline long long PackCost(int rows, int kblocks) {
  return kblocks * PackKBlockCost(rows) + kPackTileFixed;
}

// A static assignment of tiles to CTAs: CTA b runs tiles[begin[b] .. begin[b + 1]).
struct TilePacking {
  int ctas = 0;
  std::vector<uint16_t> begin;  // ctas + 1 entries
  std::vector<uint16_t> tiles;  // every tile exactly once
  long long makespan = 0;       // the most loaded CTA's cost
  long long bound = 0;          // no packing does better: max(largest tile, total / ctas)
};

// Packs tiles of the given costs (linear tile order) onto min(ctas, tiles) CTAs: longest
// processing time first, then up to `max_moves` improving moves or swaps off the most loaded CTA
// (each against the kPackPartners least loaded CTAs), until no move helps or the most loaded CTA
// is at the lower bound. Each CTA's list is in decreasing cost. Host only, once per shape
// (allocates; 20-50 us for GPU MODE shapes 0-1 on 132 CTAs on the development machine's CPU;
// their packings converge in < 256 moves).
inline constexpr int kPackPartners = 8;
inline TilePacking PackTiles(const std::vector<long long>& cost, int ctas, int max_moves = 256) {
  TilePacking out;
  const int n = static_cast<int>(cost.size());
  out.ctas = std::max(1, std::min(ctas, n));
  // Decreasing cost, ties by tile index (deterministic).
  auto costlier = [&](int a, int b) { return cost[a] > cost[b] || (cost[a] == cost[b] && a < b); };
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), costlier);
  std::vector<std::vector<int>> bins(out.ctas);
  std::vector<long long> load(out.ctas, 0);
  {  // LPT: each tile to the least loaded CTA (lowest index on ties)
    using Entry = std::pair<long long, int>;
    std::vector<Entry> heap;
    for (int b = 0; b < out.ctas; ++b) heap.push_back({0, b});
    auto later = [](const Entry& x, const Entry& y) { return x > y; };  // min-heap
    std::make_heap(heap.begin(), heap.end(), later);
    for (int t : order) {
      std::pop_heap(heap.begin(), heap.end(), later);
      Entry& e = heap.back();
      bins[e.second].push_back(t);
      e.first += cost[t];
      load[e.second] = e.first;
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  long long total = 0, largest = 0;
  for (long long c : cost) total += c, largest = std::max(largest, c);
  const long long bound = std::max(largest, (total + out.ctas - 1) / out.ctas);
  out.bound = bound;
  std::set<std::pair<long long, int>> by_load;  // (load, CTA): the most loaded last
  for (int b = 0; b < out.ctas; ++b) by_load.insert({load[b], b});
  std::vector<int> partners;
  for (int move = 0; move < max_moves; ++move) {
    const int hi = std::prev(by_load.end())->second;
    if (load[hi] <= bound) break;
    partners.clear();
    for (auto it = by_load.begin();
         it != by_load.end() && static_cast<int>(partners.size()) < kPackPartners; ++it) {
      if (it->second != hi) partners.push_back(it->second);
    }
    // The best move (a tile of hi to CTA b) or swap (a tile of hi for a cheaper one of b): the
    // smallest resulting max(load[hi], load[b]) below load[hi].
    long long best = load[hi];
    int bi = -1, bb = -1, bj = -1;  // index in bins[hi], target CTA, index in bins[bb] (-1: move)
    for (int i = 0; i < static_cast<int>(bins[hi].size()); ++i) {
      const long long a = cost[bins[hi][i]];
      for (const int b : partners) {
        const long long moved = std::max(load[hi] - a, load[b] + a);
        if (moved < best) {
          best = moved;
          bi = i, bb = b, bj = -1;
        }
        for (int j = 0; j < static_cast<int>(bins[b].size()); ++j) {
          const long long c = cost[bins[b][j]];
          if (c >= a) continue;
          const long long swapped = std::max(load[hi] - a + c, load[b] + a - c);
          if (swapped < best) {
            best = swapped;
            bi = i, bb = b, bj = j;
          }
        }
      }
    }
    if (bi < 0) break;
    by_load.erase({load[hi], hi});
    by_load.erase({load[bb], bb});
    const int t = bins[hi][bi];
    if (bj < 0) {
      bins[hi].erase(bins[hi].begin() + bi);
      bins[bb].push_back(t);
      load[hi] -= cost[t];
      load[bb] += cost[t];
    } else {
      const int u = bins[bb][bj];
      bins[hi][bi] = u;
      bins[bb][bj] = t;
      load[hi] += cost[u] - cost[t];
      load[bb] += cost[t] - cost[u];
    }
    by_load.insert({load[hi], hi});
    by_load.insert({load[bb], bb});
  }
  out.begin.reserve(out.ctas + 1);
  out.tiles.reserve(n);
  out.begin.assign(1, 0);
  for (int b = 0; b < out.ctas; ++b) {
    std::sort(bins[b].begin(), bins[b].end(), costlier);
    for (int t : bins[b]) out.tiles.push_back(static_cast<uint16_t>(t));
    out.begin.push_back(static_cast<uint16_t>(out.tiles.size()));
    out.makespan = std::max(out.makespan, load[b]);
  }
  return out;
}

// The same costs as the simple kernel's block scheduler runs them (tiles in order, each to the
// first free SM) and as the persistent kernel's snake rounds deal them: the makespans PackTiles
// must beat.
inline long long GreedyMakespan(const std::vector<long long>& cost, int sms) {
  GreedyLoads loads(std::max(sms, 1));
  for (long long c : cost) loads.Add(c);
  return loads.Makespan();
}
inline long long SnakeMakespan(const std::vector<long long>& cost, int ctas) {
  const int n = static_cast<int>(cost.size());
  const int g = std::max(1, std::min(ctas, n));
  long long makespan = 0;
  for (int b = 0; b < g; ++b) {
    long long load = 0;
    for (int round = 0;; ++round) {
      const int t = sm90::SnakeRoundTile(round, g, b);
      if (t >= n) break;
      load += cost[t];
    }
    makespan = std::max(makespan, load);
  }
  return makespan;
}

// ---- stream-K partition ----
// Whole tiles leave SMs idle wherever tile costs do not pack evenly onto the SMs (shape 0: ~2
// tiles of unequal cost per SM). Stream-K cuts the tile table's k-blocks (tile after tile) into
// one contiguous range per CTA, balanced by PackCost, so every CTA gets about the same modelled
// load; a tile cut between CTAs is summed through fp32 partials (StreamKReduce). McNaughton's
// wrap-around rule with the costs of a split (StreamKCosts, by default the fitted constants): a
// piece pays piece_fixed (kPackTileFixed), and storing or reading its partial costs io_fixed
// (kStreamKIoFixed) + io_per_row (kStreamKIoPerRow) units per token row (in 64-row chunks). A CTA
// ends on a tile boundary where the next tile does not fit, unless a piece of at least
// kStreamKMinPieceKb k-blocks does.
// NOTES (run 75, H200; refitted in run 92, below): 4 units per row (512 bytes a row in ~18 ns:
// ~28 GB/s per SM, all SMs moving partials at about the same moments) fit what the first model
// (1 unit: ~110 GB/s) got wrong: shape 0 measured 104 us against 109 packed (model -14%), shape 2
// 34.1 against 27.8 for the simple kernel's 120 narrower tiles (model -20%), shape 1 67.8
// against 59.2 (model +4%). With 4, kAuto split shape 0 and one long tile (fewtiles/one_tile
// 18.8 us vs 33.4 simple) and none of shapes 1-3.
// NOTES (run 92, H200): session 12's stamps put a split's store or read at ~1 us + ~0.01 us per
// token row; of six candidate constants (the benchmark's .../stream_k/costs<i>) io 230 + 2 per
// row partitioned shape 0 best: 98.3 us vs 99.7 with 4 per row (3 processes), one_tile equal
// (18.0-18.1), and kAuto's choice unchanged on every benchmark and test shape (host check).
struct StreamKTile {
  int kblocks = 0;
  int rows = 0;  // wgmma width (token rows rounded to the granule)
};
struct StreamKPlan {
  int ctas = 0;
  std::vector<int> begin;  // ctas + 1 unit offsets, strictly increasing, begin[0] == 0
  long long makespan = 0;  // the most loaded CTA's modelled cost (PackCost units)
  int splits = 0;          // tiles cut between CTAs
};
inline constexpr int kStreamKMinPieceKb = 2;
inline constexpr long long kStreamKIoFixed = 230;
inline constexpr long long kStreamKIoPerRow = 2;
static_assert(StreamKCosts{}.piece_fixed == kPackTileFixed &&
                  StreamKCosts{}.io_fixed == kStreamKIoFixed &&
                  StreamKCosts{}.io_per_row == kStreamKIoPerRow &&
                  StreamKCosts{}.decode_rows == kPackDecodeRows,
              "StreamKCosts' defaults are the fitted constants");

// Fills CTAs in order up to `target` each (a CTA whose first item alone exceeds it takes at least
// a minimum piece); returns the plan, whose ctas may exceed max_ctas (then target is too small).
inline StreamKPlan FillStreamK(const std::vector<StreamKTile>& tiles, long long target,
                               int max_ctas, const StreamKCosts& costs = {}) {
  StreamKPlan out;
  out.begin.assign(1, 0);
  long long load = 0;
  int unit = 0;
  auto close = [&]() {
    out.makespan = std::max(out.makespan, load);
    out.begin.push_back(unit);
    load = 0;
  };
  for (const StreamKTile& t : tiles) {
    const long long per = PackKBlockCost(t.rows, costs.decode_rows);
    const long long io =
        costs.io_fixed + costs.io_per_row * ((t.rows + 63) / 64 * 64);  // 64-column chunks
    int left = t.kblocks;
    bool split = false;  // an earlier CTA holds this tile's first piece
    while (left > 0) {
      const long long rest = left * per + costs.piece_fixed + (split ? io : 0);
      if (load + rest <= target || (load == 0 && left < 2 * kStreamKMinPieceKb)) {
        load += rest;
        unit += left;
        left = 0;
        break;
      }
      // A piece here: the tile's first piece (it ends its CTA, so it arrives last and reads the
      // others: one per further CTA the rest spans) or a middle one (stores its partial).
      const long long after =
          std::max<long long>(1, (left * per + target - 1) / std::max(target, 1LL));
      const long long piece_io = split ? io : io * after;
      long long fit = (target - load - costs.piece_fixed - piece_io) / per;
      if (load == 0) fit = std::max<long long>(fit, kStreamKMinPieceKb);
      fit = std::min<long long>(fit, left - kStreamKMinPieceKb);
      if (fit >= kStreamKMinPieceKb) {
        load += fit * per + costs.piece_fixed + piece_io;
        unit += static_cast<int>(fit);
        left -= static_cast<int>(fit);
        if (!split) ++out.splits;
        split = true;
      }
      close();
      if (static_cast<int>(out.begin.size()) - 1 > max_ctas) {
        out.ctas = max_ctas + 1;
        return out;
      }
    }
  }
  if (load > 0) close();
  out.ctas = static_cast<int>(out.begin.size()) - 1;
  return out;
}

// The most tiles a problem may have for a stream-K partition (the runner plans none beyond: kAuto
// runs whole tiles, a forced kStreamK fails). NOTES: planning costs ~150 passes over the tiles,
// once per shape (a review measured 30 s and 528 MB for 2^26 tiles), and past a few thousand
// tiles a whole-tile schedule leaves under a thousandth of the SM time idle in its last wave.
inline constexpr long long kMaxStreamKTiles = 1LL << 20;

// The balanced partition onto at most max_ctas CTAs: the smallest target that fits (binary
// search), then larger targets (fewer, longer pieces: a tile cut into many pieces costs its last
// CTA a read per piece, so the makespan is not monotonic in the target) in steps of 5% up to the
// total, then steps of 1% around the best; the smallest makespan wins (ties: fewer splits). Host
// only, once per shape (allocates; ~150 fills of O(tiles)).
inline StreamKPlan PlanStreamK(const std::vector<StreamKTile>& tiles, int max_ctas,
                               const StreamKCosts& costs = {}) {
  max_ctas = std::max(1, max_ctas);
  long long total = 0;
  for (const StreamKTile& t : tiles) {
    total += t.kblocks * PackKBlockCost(t.rows, costs.decode_rows) + costs.piece_fixed;
  }
  if (tiles.empty()) return StreamKPlan{0, {0}, 0, 0};
  long long lo = std::max<long long>(1, total / max_ctas), hi = total + 1;
  while (lo < hi) {
    const long long mid = lo + (hi - lo) / 2;
    if (FillStreamK(tiles, mid, max_ctas, costs).ctas <= max_ctas) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  StreamKPlan best = FillStreamK(tiles, lo, max_ctas, costs);
  long long best_target = lo;
  auto consider = [&](long long target) {
    StreamKPlan p = FillStreamK(tiles, target, max_ctas, costs);
    if (p.ctas > max_ctas) return;
    if (p.makespan < best.makespan || (p.makespan == best.makespan && p.splits < best.splits)) {
      best = std::move(p);
      best_target = target;
    }
  };
  for (long long target = lo + lo / 20 + 1; target <= total; target += target / 20 + 1) {
    consider(target);
  }
  const long long around = best_target;
  for (int step = -5; step <= 5; ++step) {
    if (step != 0) consider(around + around * step / 100);
  }
  return best;
}

// The simple kernel's streamed instantiation (StreamTiles::kAuto) for a plan whose every group
// with rows satisfies this (its token tiles `tile_rows` wide, its K `k`): 16-row tiles at any K,
// 128-row tiles from kStreamedMinKBlocks k-blocks (runs 154-155: 128 rows gain 2% at 56 k-blocks,
// 0.3% at 16 and lose 0.7% at 12; 16 rows gain 3.5-5% at 16-56).
inline constexpr int kStreamedMinKBlocks = 32;
inline bool PreferStreamedTiles(int tile_rows, int k) {
  return tile_rows <= 16 ||
         (tile_rows == 128 && sm90::TileShape::KBlocks(k) >= kStreamedMinKBlocks);
}

// NOTES: kAuto takes stream-K where its modelled makespan is at least this many percent below
// the whole-tile schedule's (simple, persistent or packed; PackCost units for all).
inline constexpr long long kStreamKMinGain = 5;
inline bool PreferStreamK(long long stream_k_makespan, long long whole_makespan) {
  return 100 * stream_k_makespan <= (100 - kStreamKMinGain) * whole_makespan;
}

}  // namespace encore::gemm

#endif  // ENCORE_GEMM_HEURISTICS_H_
