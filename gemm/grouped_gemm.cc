// The sm90 runner behind Nvfp4GroupedGemm: device facts, tensor-map cache, Params assembly
// (Prepare) and cudaLaunchKernelEx (Launch).
#include "gemm/grouped_gemm.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/mutex.h"
#include "cuda_utils/device.h"
#include "cuda_utils/driver.h"
#include "cuda_utils/raii.h"
#include "cuda_utils/status.h"
#include "gemm/heuristics.h"
#include "gemm/internal/sm90_runner.h"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/launch.h"
#include "gemm/problem.h"
#include "gemm/sm90_nvfp4_grouped_gemm.h"
#include "gemm/sm90_support.h"

namespace encore::gemm {

absl::Status CheckKernelsSupport(int cc_major, int cc_minor) {
  if (cc_major == 9 && cc_minor == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("compute capability ", cc_major, ".", cc_minor,
                   " has no NVFP4 grouped GEMM kernel; built for 9.0 (sm_90a)"));
}

namespace {

// heuristics.h PrepassPdlPadBytes for a device (the runner's plans; with one block a SM, the
// largest pad of all: ConfigureKernels' limit), for the plain or the bound pre-pass kernel (more
// static shared memory).
int PrepassPadBytes(const DeviceInfo& info, int blocks_per_sm, bool bound = false) {
  return PrepassPdlPadBytes(
      info.max_smem_per_sm, info.max_smem_optin_per_block, info.reserved_smem_per_block,
      blocks_per_sm, bound ? sm90::kBoundPrepassStaticSmemBytes : sm90::kPrepassStaticSmemBytes);
}

using sm90::GroupInfo;
using sm90::Params;
using sm90::TileShape;

// Create's upper bounds on RunnerOptions::token_workspace_bytes and on each of
// RunnerOptions::stream_k_costs' constants: far above any useful value, far below what the size
// and cost arithmetic could wrap at.
constexpr size_t kMaxTokenWorkspaceBytes = size_t{1} << 48;
constexpr long long kMaxStreamKCost = 1LL << 20;

// kTokens: packed e2m1 tokens (in-kernel conversion); kTokensF16: pre-pass fp16 token rows;
// kOutput: C (fp16, TMA stores).
enum class MapRole : int { kTokens = 0, kWeights = 1, kTokensF16 = 2, kOutput = 3 };

struct MapKey {
  const void* ptr;
  int rows;
  int k;  // K; for kOutput, N (the row length)
  MapRole role;  // the roles differ in element type, box and swizzle
  int box_rows = 0;  // kTokensF16: the group's rows per token tile; kOutput: rows per store
  bool operator==(const MapKey& o) const {
    return ptr == o.ptr && rows == o.rows && k == o.k && role == o.role && box_rows == o.box_rows;
  }
};
struct MapKeyHash {
  size_t operator()(const MapKey& key) const {
    size_t h = std::hash<const void*>()(key.ptr);
    h ^= (static_cast<size_t>(key.rows) * 0x9E3779B97F4A7C15ull) + (h << 6) + (h >> 2);
    h ^= (static_cast<size_t>(key.k) * 0xC2B2AE3D27D4EB4Full) + (h << 6) + (h >> 2);
    return h ^ (static_cast<size_t>(key.role) + 4 * static_cast<size_t>(key.box_rows));
  }
};

// LRU cache of encoded tensor maps keyed by (pointer, rows, K, role). A hit moves the entry to
// the front with list::splice and allocates nothing.
class TensorMapCache {
 public:
  TensorMapCache(DriverApi api, size_t capacity)
      : api_(api), capacity_(std::max<size_t>(capacity, 1)) {}

  // Looks up (encoding on a miss) keys[i] into *outs[i] for i < n, under one lock.
  absl::Status GetAll(const MapKey* keys, CUtensorMap* const* outs, int n) {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < n; ++i) ENCORE_RETURN_IF_ERROR(GetLocked(keys[i], outs[i]));
    return absl::OkStatus();
  }

 private:
  absl::Status GetLocked(const MapKey& key, CUtensorMap* out) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      *out = it->second->second;
      return absl::OkStatus();
    }
    CUtensorMap map;
    ENCORE_RETURN_IF_ERROR(Encode(key, &map));
    if (index_.size() >= capacity_) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
    lru_.emplace_front(key, map);
    index_.emplace(key, lru_.begin());
    *out = map;
    return absl::OkStatus();
  }

  // One 2D map per role: packed e2m1 rows (K/2 bytes; tokens 64-byte swizzled, box kMaxBlockM
  // rows; weights unswizzled, box kBlockN rows) or pre-pass fp16 token rows (TokenRowHalves(K)
  // halves, 128-byte swizzled, box = the group's token-tile rows).
  absl::Status Encode(const MapKey& key, CUtensorMap* map) const {
    if (key.role == MapRole::kOutput) return EncodeOutput(key, map);
    const bool f16 = key.role == MapRole::kTokensF16;
    const bool tokens = key.role == MapRole::kTokens;
    const cuuint64_t row_elems = f16 ? static_cast<cuuint64_t>(TileShape::TokenRowHalves(key.k))
                                     : static_cast<cuuint64_t>(key.k / 2);
    const cuuint64_t dims[2] = {row_elems, static_cast<cuuint64_t>(key.rows)};
    const cuuint64_t strides[1] = {row_elems * (f16 ? 2 : 1)};  // bytes
    const cuuint32_t box_rows = f16      ? static_cast<cuuint32_t>(key.box_rows)
                                : tokens ? static_cast<cuuint32_t>(TileShape::kMaxBlockM)
                                         : static_cast<cuuint32_t>(TileShape::kBlockN);
    // 64 elements of the inner dimension: 128 fp16 bytes or kBlockK / 2 packed bytes.
    const cuuint32_t box[2] = {64, box_rows};
    static_assert(TileShape::kBlockK / 2 == 64, "packed box is one 128-k block");
    const cuuint32_t elem_strides[2] = {1, 1};
    const CUtensorMapSwizzle swizzle = f16      ? CU_TENSOR_MAP_SWIZZLE_128B
                                       : tokens ? CU_TENSOR_MAP_SWIZZLE_64B
                                                : CU_TENSOR_MAP_SWIZZLE_NONE;
    return ToStatus(
        api_.tensor_map_encode_tiled(
            map, f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8, 2,
            const_cast<void*>(key.ptr), dims, strides, box, elem_strides,
            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        f16 ? absl::StrCat("cuTensorMapEncodeTiled(fp16 tokens, rows = ", key.rows, ", k = ", key.k,
                           ", box rows = ", key.box_rows, ")")
            : absl::StrCat("cuTensorMapEncodeTiled(", tokens ? "a" : "b", ", rows = ", key.rows,
                           ", k = ", key.k, ")"));
  }

  // C: fp16 {N, M}, box {64 columns, box_rows}, 128-byte swizzle (the epilogue's staging
  // layout).
  absl::Status EncodeOutput(const MapKey& key, CUtensorMap* map) const {
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(key.k), static_cast<cuuint64_t>(key.rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(key.k) * 2};  // bytes
    const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(key.box_rows)};
    const cuuint32_t elem_strides[2] = {1, 1};
    return ToStatus(
        api_.tensor_map_encode_tiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                                     const_cast<void*>(key.ptr), dims, strides, box, elem_strides,
                                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                     CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        absl::StrCat("cuTensorMapEncodeTiled(c, m = ", key.rows, ", n = ", key.k,
                     ", box rows = ", key.box_rows, ")"));
  }

  DriverApi api_;
  size_t capacity_;
  std::mutex mu_;
  std::list<std::pair<MapKey, CUtensorMap>> lru_;
  std::unordered_map<MapKey, std::list<std::pair<MapKey, CUtensorMap>>::iterator, MapKeyHash>
      index_;
};

// What Prepare decides from the shape list alone: the schedule choice and the group-slot orders.
// NOTES: the kernels walk tiles in group-slot order and the persistent one deals them out in
// snake-ordered rounds, which balances only if tiles come in decreasing cost. A group's tile
// cost is k-blocks x rows per tile (not M: M = 248 makes two 128-row tiles, M = 128 one), so
// slots are ordered by that cost (stable over the groups sorted by M, largest first). Measured on
// GPU MODE shape 0: sorted by M, the persistent kernel took 214 us where the block scheduler's
// greedy order (simple kernel) took 169 (benchmarks/results/NOTES.md, run 13). The cost depends
// on the row cap, so there is one order for the whole-tile kinds and one for stream-K.
// A packed persistent schedule (heuristics.h PackTiles): its own slot order and per-slot row caps
// (the costliest groups' token tiles may be halved), and the CTA lists over that tile table.
struct PackedPlan {
  std::array<uint8_t, kMaxGroups> order;  // slot -> caller's group index
  std::array<int, kMaxGroups> slot_cap;   // token-tile row cap per slot
  TilePacking packing;
};

struct ShapePlan {
  ShapeChoice choice;
  bool prepass_preferred = false;  // PreferPrepass (kAuto)
  size_t prepass_bytes = 0;        // PrepassWorkspaceBytes
  std::array<uint8_t, kMaxGroups> whole_order;  // slot -> caller's group index (cap choice.cap)
  std::array<uint8_t, kMaxGroups> sk_order;     // the same for stream-K (cap kMaxBlockM)
  // The stream-K partition of the sk_order tile table (where the runner allows stream-K);
  // choice.stream_k: kAuto runs it.
  std::shared_ptr<const StreamKPlan> stream_k;
  // Set where packing predicts >= kPackMinGain over both the simple kernel's greedy order and the
  // snake rounds (kAuto and kPersistent plans then run it); shared: plans are copied per call.
  std::shared_ptr<const PackedPlan> packed;
};

// NOTES: ChooseShape (ChooseMTileCap) simulates the block scheduler over every tile for several
// row caps (tens of µs for GPU MODE-sized problems), far too slow for the per-call path, and the
// two orders cost two insertion sorts (~2 µs for 64 groups). All of it depends only on the
// (m, n, k) list in the caller's order, so it is computed once per distinct list and remembered
// here. Building the key allocates nothing; the map allocates only when a new list is inserted.
struct ShapeList {
  int count = 0;
  std::array<int, 3 * kMaxGroups> dims;  // only [0, 3 * count) is meaningful

  bool operator==(const ShapeList& o) const {
    return count == o.count && std::equal(dims.begin(), dims.begin() + 3 * count, o.dims.begin());
  }
  template <typename H>
  friend H AbslHashValue(H h, const ShapeList& s) {
    return H::combine_contiguous(H::combine(std::move(h), s.count), s.dims.data(), 3 * s.count);
  }
};

class ShapePlanMemo {
 public:
  static constexpr size_t kMaxEntries = 4096;

  // `forced_cap`: RunnerOptions::token_tile_rows (0: chosen per problem); `pack`:
  // RunnerOptions::pack_tiles; `sk_costs`: RunnerOptions::stream_k_costs. Constant per runner.
  ShapePlanMemo(int forced_cap, bool pack, const StreamKCosts& sk_costs)
      : forced_cap_(forced_cap), pack_(pack), sk_costs_(sk_costs) {}

  ShapePlan Get(absl::Span<const GroupProblem> groups, int sm_count, bool allow_stream_k) {
    ShapeList key;
    key.count = static_cast<int>(groups.size());
    for (int g = 0; g < key.count; ++g) {
      key.dims[3 * g] = groups[g].m;
      key.dims[3 * g + 1] = groups[g].n;
      key.dims[3 * g + 2] = groups[g].k;
    }
    {
      encore::MutexLock lock(&mu_);
      auto it = plans_.find(key);
      if (it != plans_.end()) return it->second;
    }
    const ShapePlan plan = Compute(key, sm_count, allow_stream_k, forced_cap_, pack_, sk_costs_);
    encore::MutexLock lock(&mu_);
    if (plans_.size() >= kMaxEntries) plans_.clear();  // bounded; recomputing is only slow
    plans_.emplace(key, plan);
    return plan;
  }

 private:
  struct Dims {
    int m, n, k;
  };

  static ShapePlan Compute(const ShapeList& key, int sm_count, bool allow_stream_k, int forced_cap,
                           bool pack, const StreamKCosts& sk_costs) {
    const int n = key.count;
    // Largest M first (stable insertion sort).
    std::array<int, kMaxGroups> by_m;
    for (int g = 0; g < n; ++g) {
      int j = g;
      while (j > 0 && key.dims[3 * by_m[j - 1]] < key.dims[3 * g]) {
        by_m[j] = by_m[j - 1];
        --j;
      }
      by_m[j] = g;
    }
    std::array<Dims, kMaxGroups> sorted;
    for (int s = 0; s < n; ++s) {
      const int g = by_m[s];
      sorted[s] = {key.dims[3 * g], key.dims[3 * g + 1], key.dims[3 * g + 2]};
    }
    ShapePlan plan;
    plan.choice = ChooseShape(sorted, n, sm_count, forced_cap);
    plan.prepass_preferred = PreferPrepass(sorted, n);
    plan.prepass_bytes = PrepassWorkspaceBytes(sorted, n);
    CostOrder(key, by_m, n, plan.choice.cap, &plan.whole_order);
    CostOrder(key, by_m, n, TileShape::kMaxBlockM, &plan.sk_order);
    if (pack) plan.packed = PlanPacking(key, by_m, n, plan, sm_count);
    if (allow_stream_k) {
      plan.stream_k = PlanStreamKFor(key, plan.sk_order, n, sm_count, sk_costs);
      if (plan.stream_k != nullptr && plan.stream_k->splits > 0) {
        plan.choice.stream_k =
            PreferStreamK(plan.stream_k->makespan, WholeMakespan(key, plan, n, sm_count));
      }
    }
    return plan;
  }

  // The stream-K partition of the tile table in slot order `order` with kMaxBlockM-row token
  // tiles, onto at most min(sm_count, kMaxPackedCtas) CTAs; nullptr where it cannot be described
  // (no tiles, or more k-blocks than an int holds) or is not planned (over kMaxStreamKTiles).
  static std::shared_ptr<const StreamKPlan> PlanStreamKFor(
      const ShapeList& key, const std::array<uint8_t, kMaxGroups>& order, int n, int sm_count,
      const StreamKCosts& sk_costs) {
    std::array<int, kMaxGroups> cap_of;
    cap_of.fill(TileShape::kMaxBlockM);
    if (TileCount(key, n, cap_of) > kMaxStreamKTiles) return nullptr;
    std::vector<StreamKTile> tiles;
    long long units = 0;
    ForEachTile(key, order, n, cap_of, [&](int rows, int kb) {
      tiles.push_back({kb, rows});
      units += kb;
    });
    if (tiles.empty() || units > std::numeric_limits<int>::max()) return nullptr;
    return std::make_shared<const StreamKPlan>(
        PlanStreamK(tiles, std::min(sm_count, sm90::kMaxPackedCtas), sk_costs));
  }

  // The modelled makespan (PackCost) of what kAuto runs with whole tiles: the packed schedule,
  // else the simple kernel's greedy order or the persistent kernel's snake rounds.
  static long long WholeMakespan(const ShapeList& key, const ShapePlan& plan, int n, int sm_count) {
    if (plan.packed != nullptr) return plan.packed->packing.makespan;
    std::array<int, kMaxGroups> cap_of;
    cap_of.fill(plan.choice.cap);
    const std::vector<long long> cost = TileCosts(key, plan.whole_order, n, cap_of);
    return ChooseKernel(static_cast<int>(cost.size()), sm_count) == KernelKind::kSimple
               ? GreedyMakespan(cost, sm_count)
               : SnakeMakespan(cost, sm_count);
  }

  // NOTES: the packed schedule must beat the better of the two unpacked orders by this much in
  // the model (its cost is fitted, not exact), in percent.
  static constexpr long long kPackMinGain = 3;
  static constexpr int kMaxPackSplits = 4;

  // Tile costs (PackCost) in linear tile order for slot order `order` and per-group row caps
  // (`cap_of[g]`, by the caller's group index; groups with M = 0 add no tiles).
  static std::vector<long long> TileCosts(const ShapeList& key,
                                          const std::array<uint8_t, kMaxGroups>& order, int n,
                                          const std::array<int, kMaxGroups>& cap_of) {
    std::vector<long long> cost;
    ForEachTile(key, order, n, cap_of,
                [&](int rows, int kb) { cost.push_back(PackCost(rows, kb)); });
    return cost;
  }

  // The tiles ForEachTile visits, counted per group (no walk over them).
  static long long TileCount(const ShapeList& key, int n,
                             const std::array<int, kMaxGroups>& cap_of) {
    long long tiles = 0;
    for (int g = 0; g < n; ++g) {
      tiles += static_cast<long long>(ChooseMTiling(key.dims[3 * g], cap_of[g]).tiles) *
               TileShape::NTiles(key.dims[3 * g + 1]);
    }
    return tiles;
  }

  // f(rows, k_blocks) for every tile of the linear tile table in slot order `order` with
  // per-group row caps (`cap_of[g]`, by the caller's group index; groups with M = 0 add none).
  template <typename F>
  static void ForEachTile(const ShapeList& key, const std::array<uint8_t, kMaxGroups>& order,
                          int n, const std::array<int, kMaxGroups>& cap_of, F&& f) {
    for (int s = 0; s < n; ++s) {
      const int g = order[s];
      const int m = key.dims[3 * g];
      const MTiling mt = ChooseMTiling(m, cap_of[g]);
      const int kb = TileShape::KBlocks(key.dims[3 * g + 2]);
      for (int nt = 0; nt < TileShape::NTiles(key.dims[3 * g + 1]); ++nt) {
        for (int i = 0; i < mt.tiles; ++i) f(TileRows(mt, m, i), kb);
      }
    }
  }

  // The packed schedule for `plan`'s whole tiles, or nullptr where it predicts too little (or the
  // tables cannot hold the problem). Tries the chosen cap for every group, then halves the token
  // tiles of the costliest group (up to kMaxPackSplits times) while that packs better.
  static std::shared_ptr<const PackedPlan> PlanPacking(const ShapeList& key,
                                                       const std::array<int, kMaxGroups>& by_m,
                                                       int n, const ShapePlan& plan, int sm_count) {
    if (sm_count > sm90::kMaxPackedCtas || n == 0) return nullptr;
    std::array<int, kMaxGroups> cap_of;
    cap_of.fill(plan.choice.cap);
    // Only problems with more tiles than SMs: with fewer, every tile has an SM to itself and
    // smaller tiles are ChooseMTileCap's choice to make (its model measures more than the loop).
    // (Counted first: the table of a huge problem is not built to be refused.)
    const long long count = TileCount(key, n, cap_of);
    if (count <= sm_count || count > sm90::kMaxPackedTiles) return nullptr;
    const std::vector<long long> base = TileCosts(key, plan.whole_order, n, cap_of);
    const long long unpacked =
        std::min(GreedyMakespan(base, sm_count), SnakeMakespan(base, sm_count));
    auto pack = [&](const std::array<int, kMaxGroups>& caps) -> std::shared_ptr<PackedPlan> {
      auto p = std::make_shared<PackedPlan>();
      // Slots by per-tile cost under these caps, largest first (stable over the M order).
      CostOrder(key, by_m, n, caps, [](int rows, int kb) { return PackCost(rows, kb); },
                &p->order);
      for (int s = 0; s < n; ++s) p->slot_cap[s] = caps[p->order[s]];
      const std::vector<long long> cost = TileCosts(key, p->order, n, caps);
      if (cost.size() > static_cast<size_t>(sm90::kMaxPackedTiles)) return nullptr;
      p->packing = PackTiles(cost, sm_count);
      return p;
    };
    std::shared_ptr<PackedPlan> best = pack(cap_of);
    for (int split = 0; best != nullptr && split < kMaxPackSplits; ++split) {
      // Within 2% of the bound (shape 1: 448 tiles, 1.2%) halving tiles (more work) cannot pay.
      if (100 * best->packing.makespan <= 102 * best->packing.bound) break;
      // The group whose tiles cost most (per tile) and can still be halved.
      int worst = -1;
      long long worst_cost = -1;
      for (int g = 0; g < n; ++g) {
        const MTiling mt = ChooseMTiling(key.dims[3 * g], cap_of[g]);
        if (mt.tiles == 0 || mt.rows < 2 * TileShape::kMGranule) continue;
        const long long c = PackCost(mt.rows, TileShape::KBlocks(key.dims[3 * g + 2]));
        if (c > worst_cost) worst_cost = c, worst = g;
      }
      if (worst < 0) break;
      std::array<int, kMaxGroups> trial = cap_of;
      const MTiling mt = ChooseMTiling(key.dims[3 * worst], cap_of[worst]);
      trial[worst] = TileShape::RoundRows((mt.rows + 1) / 2);
      std::shared_ptr<PackedPlan> p = pack(trial);
      if (p == nullptr || p->packing.makespan >= best->packing.makespan) break;
      best = std::move(p);
      cap_of = trial;
    }
    if (best == nullptr || 100 * best->packing.makespan > (100 - kPackMinGain) * unpacked) {
      return nullptr;
    }
    return best;
  }

  // Stable insertion sort of the M order by tile cost, largest first.
  static void CostOrder(const ShapeList& key, const std::array<int, kMaxGroups>& by_m, int n,
                        int cap, std::array<uint8_t, kMaxGroups>* out) {
    std::array<int, kMaxGroups> cap_of;
    cap_of.fill(cap);
    CostOrder(key, by_m, n, cap_of, [](int rows, int kb) { return TileCost(rows, kb); }, out);
  }
  // `cap_of[g]`: group g's token-tile row cap (caller's index); `tile_cost(rows, k_blocks)`: the
  // cost of one of its tiles (TileCost for the whole-tile and stream-K orders, PackCost for the
  // packed schedule's).
  template <typename TileCostFn>
  static void CostOrder(const ShapeList& key, const std::array<int, kMaxGroups>& by_m, int n,
                        const std::array<int, kMaxGroups>& cap_of, TileCostFn tile_cost,
                        std::array<uint8_t, kMaxGroups>* out) {
    std::array<long long, kMaxGroups> cost;
    for (int s = 0; s < n; ++s) {
      const int g = by_m[s];
      const MTiling mt = ChooseMTiling(key.dims[3 * g], cap_of[g]);
      const long long c =
          mt.tiles == 0 ? -1 : tile_cost(mt.rows, TileShape::KBlocks(key.dims[3 * g + 2]));
      int j = s;
      while (j > 0 && cost[j - 1] < c) {
        (*out)[j] = (*out)[j - 1];
        cost[j] = cost[j - 1];
        --j;
      }
      (*out)[j] = static_cast<uint8_t>(g);
      cost[j] = c;
    }
  }

  const int forced_cap_;
  const bool pack_;
  const StreamKCosts sk_costs_;
  encore::Mutex mu_;
  absl::flat_hash_map<ShapeList, ShapePlan> plans_ ABSL_GUARDED_BY(mu_);
};

// One stream's binding ring (bound plans): kBindingRingSlots slots of kMaxBoundGroups
// HostBindings in pinned, mapped host memory, the device's count of bound calls done (written by
// each bound GEMM into the same pinned buffer), and the device block the bound pre-pass fills.
// NOTES: slot n % slots holds the bindings of the n-th bound launch on the stream; the host
// refills a slot only after the device has read it (consumed > n - slots), so it never runs more
// than kBindingRingSlots launches ahead. Host stores before the launch call are visible to the
// bound kernels' system-scope loads (the launch orders them).
struct BindingRing {
  DeviceBuffer device_buffer;  // sm90::BindingRingDevice, zeroed (seq 0)
  PinnedHostBuffer host_buffer;
  sm90::BindingRingDevice* device = nullptr;
  sm90::HostBinding* slots = nullptr;                  // host view
  const sm90::HostBinding* slots_device = nullptr;     // device view
  const volatile uint32_t* consumed = nullptr;         // host view
  uint32_t* consumed_device = nullptr;                 // device view
  uint32_t* tags = nullptr;                            // host view: slot s holds launch tags[s]
  const uint32_t* tags_device = nullptr;
  // Orders the writes (and LaunchWithBindings' write + launch pairs) of several threads.
  encore::Mutex mu;
  uint32_t next = 0;           // bound launches written (32-bit, like the device's count)
  uint32_t consumed_seen = 0;  // the last value read from `consumed`

  static constexpr size_t kSlotsBytes = sizeof(sm90::HostBinding) * sm90::kMaxBoundGroups *
                                        static_cast<size_t>(sm90::kBindingRingSlots);

  static absl::StatusOr<std::unique_ptr<BindingRing>> Create(cudaStream_t stream) {
    auto r = std::make_unique<BindingRing>();
    ENCORE_ASSIGN_OR_RETURN(r->device_buffer,
                            DeviceBuffer::Create(sizeof(sm90::BindingRingDevice)));
    ENCORE_RETURN_IF_CUDA_ERROR(
        cudaMemsetAsync(r->device_buffer.get(), 0, sizeof(sm90::BindingRingDevice), stream),
        "cudaMemsetAsync (binding block)");
    ENCORE_ASSIGN_OR_RETURN(
        r->host_buffer,
        PinnedHostBuffer::Create(kSlotsBytes + 64 + sizeof(uint32_t) * sm90::kBindingRingSlots));
    r->device = r->device_buffer.as<sm90::BindingRingDevice>();
    // The pinned buffer: [slots | consumed, on its own 64 bytes | tags], seen from both sides.
    const auto host_at = [&](size_t offset) {
      return static_cast<void*>(static_cast<char*>(r->host_buffer.host()) + offset);
    };
    const auto device_at = [&](size_t offset) {
      return static_cast<void*>(static_cast<char*>(r->host_buffer.device()) + offset);
    };
    r->slots = static_cast<sm90::HostBinding*>(host_at(0));
    r->slots_device = static_cast<const sm90::HostBinding*>(device_at(0));
    r->consumed = static_cast<const volatile uint32_t*>(host_at(kSlotsBytes));
    r->consumed_device = static_cast<uint32_t*>(device_at(kSlotsBytes));
    r->tags = static_cast<uint32_t*>(host_at(kSlotsBytes + 64));
    r->tags_device = static_cast<const uint32_t*>(device_at(kSlotsBytes + 64));
    // No slot is written yet: a tag that no launch number matches before its slot is written.
    for (int i = 0; i < sm90::kBindingRingSlots; ++i) r->tags[i] = ~uint32_t{0};
    return r;
  }

  // `wait` false: ResourceExhausted at once where the ring is full, nothing written.
  absl::Status Write(const GroupedGemmArguments& args, cudaStream_t stream, bool wait = true) {
    constexpr uint32_t kSlots = sm90::kBindingRingSlots;
    if (next - consumed_seen >= kSlots) {
      consumed_seen = *consumed;
      if (!wait && next - consumed_seen >= kSlots) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "binding ring: the host is ", kSlots, " bound launches ahead of the device"));
      }
      // Full: wait for the device to read the oldest slot (the host is kSlots launches ahead).
      for (;;) {
        consumed_seen = *consumed;
        if (next - consumed_seen < kSlots) break;
        const cudaError_t q = cudaStreamQuery(stream);
        if (q == cudaSuccess && next - *consumed >= kSlots) {
          return absl::InternalError(absl::StrCat(
              "binding ring: ", next, " bound launches written, ", consumed_seen,
              " read, and the stream is idle (a launch was lost after WriteBindings)"));
        }
        if (q != cudaSuccess && q != cudaErrorNotReady) {
          ENCORE_RETURN_IF_CUDA_ERROR(q, "cudaStreamQuery (waiting for a binding slot)");
        }
        std::this_thread::yield();
      }
    }
    sm90::HostBinding* slot =
        slots + static_cast<size_t>(next % kSlots) * sm90::kMaxBoundGroups;
    for (const GroupProblem& p : args.groups) {
      *slot++ = sm90::HostBinding{p.a, p.sfa, p.b, p.sfb, p.c};
    }
    // NOTES: released after the slot: a running GEMM may be prefetching this slot right now
    // (bind_prefetch.cuh), and it acquires the tag before it loads the slot.
    __atomic_store_n(&tags[next % kSlots], next, __ATOMIC_RELEASE);
    ++next;
    return absl::OkStatus();
  }

  // Takes back the last Write after its launch failed. NOTES: a GEMM of the previous bound call
  // that was still running may have prefetched the slot already (staged_tag = the slot's call
  // + 1): the staged copy is invalidated in stream order, after that GEMM and before the next
  // bound launch, or the next call (same slot, same number) would run on this one's pointers.
  // Not while the stream captures (nothing then runs on it; a capture a failed launch has not
  // already invalidated would record the reset). (staged_tag 0 is a real tag only after 2^32 - 1
  // bound calls on the stream.)
  absl::Status Unwrite(cudaStream_t stream) {
    --next;
    tags[next % sm90::kBindingRingSlots] = ~uint32_t{0};
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamIsCapturing(stream, &capture),
                                "cudaStreamIsCapturing (taking back a binding write)");
    if (capture != cudaStreamCaptureStatusNone) return absl::OkStatus();
    ENCORE_RETURN_IF_CUDA_ERROR(
        cudaMemsetAsync(&device->staged_tag, 0, sizeof(uint32_t), stream),
        "cudaMemsetAsync (invalidating a prefetched binding slot)");
    return absl::OkStatus();
  }
};

class Sm90Nvfp4GroupedGemm final : public Nvfp4GroupedGemm {
 public:
  // `fake_token_workspace` (runners without a device): the address plans use as the pre-pass
  // workspace, never dereferenced on the host.
  Sm90Nvfp4GroupedGemm(DeviceInfo info, DriverApi api, const RunnerOptions& options,
                       bool has_device, void* fake_token_workspace = nullptr)
      : info_(std::move(info)),
        maps_(api, options.tensor_map_cache_capacity),
        shape_plans_(options.token_tile_rows, options.pack_tiles, options.stream_k_costs),
        stream_k_(options.stream_k),
        token_prepass_(options.token_prepass),
        token_workspace_bytes_(options.token_workspace_bytes),
        max_token_workspaces_(options.max_token_workspaces),
        fuse_token_prepass_(options.fuse_token_prepass),
        pad_small_prepasses_(options.pad_prepass_for_pdl &&
                             PrepassPadBytes(info_, options.prepass_pad_blocks_per_sm) > 0),
        prepass_pad_blocks_per_sm_(options.prepass_pad_blocks_per_sm),
        pad_large_prepasses_(options.pad_prepass_for_pdl && options.pad_large_prepasses),
        stream_tiles_(options.stream_simple_tiles),
        has_device_(has_device),
        fake_token_workspace_(fake_token_workspace) {}

  absl::Status CanImplement(const GroupedGemmArguments& args) const override {
    ENCORE_RETURN_IF_ERROR(Validate(args));
    // Counted at the narrowest token tile any plan may use (RunnerOptions::token_tile_rows), so
    // that no plan's 32-bit tile counts can overflow.
    const long long tiles = CountTiles(args.groups, static_cast<int>(args.groups.size()),
                                       TileShape::kMGranule);
    if (tiles > (int64_t{1} << 30)) {
      return absl::InvalidArgumentError(
          absl::StrCat("groups: ", tiles, " output tiles exceed the kernel limit of 2^30"));
    }
    return absl::OkStatus();
  }

  absl::Status Prepare(const GroupedGemmArguments& args, LaunchPlan* plan, KernelKind kind,
                       cudaStream_t stream) override {
    return PrepareWith(args, plan, kind, stream, PlanOptions{});
  }

  absl::Status PrepareWith(const GroupedGemmArguments& args, LaunchPlan* plan, KernelKind kind,
                           cudaStream_t stream, const PlanOptions& options) override {
    ENCORE_RETURN_IF_ERROR(CheckPrepare(plan, kind));
    if (options.token_workspace_half < -1 || options.token_workspace_half > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "options.token_workspace_half: ", options.token_workspace_half, " is not -1, 0 or 1"));
    }
    ENCORE_RETURN_IF_ERROR(CanImplement(args));
    return FillForGroups(args, plan, kind, stream, nullptr, options);
  }

  absl::Status PrepareBound(const GroupedGemmArguments& args, LaunchPlan* plan, KernelKind kind,
                            cudaStream_t stream) override {
    ENCORE_RETURN_IF_ERROR(CheckPrepare(plan, kind));
    ENCORE_RETURN_IF_ERROR(CanImplement(args));
    ENCORE_ASSIGN_OR_RETURN(BindingRing * ring, RingOf(stream, /*create=*/true));
    if (ring == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "PrepareBound: no binding ring for this stream: ", max_token_workspaces_,
          " streams own workspaces already (RunnerOptions::max_token_workspaces)"));
    }
    return FillForGroups(args, plan, kind, stream, ring, PlanOptions{});
  }

  absl::Status WriteBindings(const GroupedGemmArguments& args, cudaStream_t stream) override {
    ENCORE_ASSIGN_OR_RETURN(BindingRing * ring, RingForWrite(args, stream, "WriteBindings"));
    encore::MutexLock lock(&ring->mu);
    return ring->Write(args, stream);
  }

  absl::Status LaunchWithBindings(const GroupedGemmArguments& args, cudaStream_t stream,
                                  absl::FunctionRef<absl::Status()> launch,
                                  bool wait_for_slot) override {
    ENCORE_ASSIGN_OR_RETURN(BindingRing * ring, RingForWrite(args, stream, "LaunchWithBindings"));
    encore::MutexLock lock(&ring->mu);
    ENCORE_RETURN_IF_ERROR(ring->Write(args, stream, wait_for_slot));
    absl::Status launched = launch();
    if (!launched.ok()) {
      if (absl::Status taken_back = ring->Unwrite(stream); !taken_back.ok()) {
        return absl::Status(launched.code(), absl::StrCat(launched.message(), "; and then ",
                                                          taken_back.message()));
      }
    }
    return launched;
  }

  absl::Status Launch(const LaunchPlan& plan, cudaStream_t stream, bool pdl) const override {
    if (plan.function == nullptr) return absl::InvalidArgumentError("plan is not prepared");
    ENCORE_RETURN_IF_CUDA_ERROR(
        LaunchOnStream(plan, stream, pdl),
        absl::StrCat("cudaLaunchKernelEx(", KernelKindName(plan.kind), " NVFP4 grouped GEMM)"));
    return absl::OkStatus();
  }

  absl::Status Run(const GroupedGemmArguments& args, cudaStream_t stream,
                   KernelKind kind) override {
    thread_local LaunchPlan scratch;
    ENCORE_RETURN_IF_ERROR(Prepare(args, &scratch, kind, stream));
    return Launch(scratch, stream, /*pdl=*/scratch.prefers_pdl);
  }

  int sm_count() const override { return info_.sm_count; }

 private:
  // What every Prepare checks before it touches a workspace, the map cache or the plan: the
  // plan, the kind, and that the runner's device is current (its workspaces are allocated and its
  // kernels configured there; Create leaves the caller's device current).
  absl::Status CheckPrepare(const LaunchPlan* plan, KernelKind kind) const {
    if (plan == nullptr) return absl::InvalidArgumentError("plan is null");
    if (kind != KernelKind::kAuto && kind != KernelKind::kSimple &&
        kind != KernelKind::kPersistent && kind != KernelKind::kStreamK) {
      return absl::InvalidArgumentError(
          absl::StrCat("kind = ", static_cast<int>(kind), " is not a kernel kind"));
    }
    if (has_device_) {
      int current = -1;
      ENCORE_RETURN_IF_CUDA_ERROR(cudaGetDevice(&current), "cudaGetDevice");
      if (current != info_.ordinal) {
        return absl::FailedPreconditionError(absl::StrCat(
            "device: the runner was created for device ", info_.ordinal, ", but device ",
            current, " is current (cudaSetDevice(", info_.ordinal,
            ") before preparing or launching its plans)"));
      }
    }
    return absl::OkStatus();
  }

  // Fill for the group capacity `args` needs (validated arguments).
  absl::Status FillForGroups(const GroupedGemmArguments& args, LaunchPlan* plan, KernelKind kind,
                             cudaStream_t stream, const BindingRing* ring,
                             const PlanOptions& options) {
    const int cap = sm90::GroupCapacityFor(static_cast<int>(args.groups.size()));
    return cap == 8 ? Fill<8>(args, plan, kind, stream, ring, options)
                    : Fill<64>(args, plan, kind, stream, ring, options);
  }

  // `ring`: a bound plan's (PrepareBound), else nullptr.
  template <int kGroups>
  absl::Status Fill(const GroupedGemmArguments& args, LaunchPlan* plan, KernelKind kind,
                    cudaStream_t stream, const BindingRing* ring, const PlanOptions& options) {
    const bool bound = ring != nullptr;
    static_assert(sizeof(Params<kGroups>) <= kMaxParamBytes, "params too large");
    // Unlaunchable until the end (Launch refuses a plan without a function): a Fill that fails
    // part way leaves zeroed or half-written parameters behind.
    plan->function = nullptr;
    plan->pre.function = nullptr;
    const int num_groups = static_cast<int>(args.groups.size());
    if (kind == KernelKind::kStreamK && !stream_k_) {
      return absl::FailedPreconditionError(
          "kind = stream_k: this runner was created with RunnerOptions::stream_k = false");
    }
    if (kind == KernelKind::kStreamK && !sm90::kStreamKBuilt) {
      return absl::FailedPreconditionError(
          "kind = stream_k: not built (ENCORE_SM90_STREAM_K = 0, sm90::kStreamKBuilt)");
    }
    const ShapePlan shape =
        shape_plans_.Get(args.groups, info_.sm_count, stream_k_ && sm90::kStreamKBuilt);
    void* sk_workspace = nullptr;
    if (kind == KernelKind::kStreamK || (kind == KernelKind::kAuto && shape.choice.stream_k)) {
      ENCORE_ASSIGN_OR_RETURN(sk_workspace, StreamKWorkspace(stream));
      if (sk_workspace == nullptr && kind == KernelKind::kStreamK) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "kind = stream_k: no stream-K workspace for this stream: the runner has no device, ",
            max_token_workspaces_,
            " streams own workspaces already (RunnerOptions::max_token_workspaces), the "
            "stream is capturing and has none yet (prepare one stream-K plan for it outside the "
            "capture first), or the device had no memory for it"));
      }
      if (sk_workspace != nullptr) kind = KernelKind::kStreamK;  // kAuto: else whole tiles
    }
    // (A pre-pass's units, at most prepass_bytes / 256, stay below 2^32: the kernel's 32-bit
    // unit index, ENCORE_SM90_PREPASS_U32_INDEX.)
    const bool fits = shape.prepass_bytes <= token_workspace_bytes_ &&
                      shape.prepass_bytes / 256 <= std::numeric_limits<uint32_t>::max();
    // Stream-K plans convert tokens in kernel unless sm90::kStreamKPrepass
    // (sm90_nvfp4_grouped_gemm_prepass.cu NOTES).
    const bool prepass_kind = kind != KernelKind::kStreamK || sm90::kStreamKPrepass;
    if (token_prepass_ == TokenPrepass::kAlways && !fits && prepass_kind) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "token_prepass = kAlways: the tokens need ", shape.prepass_bytes,
          " bytes of fp16 workspace; RunnerOptions::token_workspace_bytes is ",
          token_workspace_bytes_));
    }
    // (A bound plan always has the pre-pass: its token map points into the stream's workspace,
    // the same whatever the bindings.)
    bool prepass = fits && prepass_kind &&
                   (bound || token_prepass_ == TokenPrepass::kAlways ||
                    (token_prepass_ == TokenPrepass::kAuto && shape.prepass_preferred));
    uint8_t* token_ws = nullptr;
    if (prepass) {
      ENCORE_ASSIGN_OR_RETURN(void* ws, TokenWorkspace(stream));
      token_ws = static_cast<uint8_t*>(ws);
      if (token_ws == nullptr) {  // no workspace for this stream (see TokenWorkspace)
        if (token_prepass_ == TokenPrepass::kAlways) {
          return absl::ResourceExhaustedError(absl::StrCat(
              "token_prepass = kAlways: no token workspace for this stream: ",
              max_token_workspaces_,
              " streams own one already (RunnerOptions::max_token_workspaces), the stream is "
              "capturing and has none yet (prepare one plan for it outside the capture first), "
              "or the device had no memory for it"));
        }
        prepass = false;
      }
    }
    if (bound && !prepass) {
      return absl::FailedPreconditionError(absl::StrCat(
          "bound plans need the token pre-pass: this problem's tokens need ", shape.prepass_bytes,
          " bytes of workspace (token_workspace_bytes ", token_workspace_bytes_,
          "), its kind converts tokens in kernel, or the stream has no workspace"));
    }
    auto* pre = reinterpret_cast<sm90::PrepassParams<kGroups>*>(plan->pre.params);
    if (prepass) std::memset(static_cast<void*>(pre), 0, sizeof(sm90::PrepassParams<kGroups>));
    // PlanOptions::token_workspace_half: the half's start, where the tokens fit in half (256-byte
    // aligned halves; bound plans keep the whole workspace).
    const size_t half_bytes = token_workspace_bytes_ / 2 / 256 * 256;
    const int half = prepass && !bound && options.token_workspace_half >= 0 &&
                             shape.prepass_bytes <= half_bytes
                         ? options.token_workspace_half
                         : -1;
    size_t ws_offset = half > 0 ? half_bytes : 0;
    long long pre_units = 0;
    // The packed schedule (kAuto and kPersistent, where the shape plan has one).
    const PackedPlan* packed = (kind == KernelKind::kAuto || kind == KernelKind::kPersistent)
                                   ? shape.packed.get()
                                   : nullptr;
    const int cap = kind == KernelKind::kStreamK ? TileShape::kMaxBlockM : shape.choice.cap;
    const std::array<uint8_t, kMaxGroups>& order = packed != nullptr ? packed->order
                                                   : kind == KernelKind::kStreamK
                                                       ? shape.sk_order
                                                       : shape.whole_order;
    auto* params = reinterpret_cast<Params<kGroups>*>(plan->params);
    std::memset(static_cast<void*>(params), 0, sizeof(Params<kGroups>));
    int tiles = 0;
    bool streamed_widths = true;              // every group's tiles sm90::StreamedTileRows
    bool streamed_pays = true;                // every group's PreferStreamedTiles
    long long units = 0;                      // k-blocks of all tiles so far (stream-K)
    std::array<MapKey, 4 * kMaxGroups> keys;  // tensor maps to fetch, under one cache lock
    std::array<CUtensorMap*, 4 * kMaxGroups> outs;
    int num_keys = 0;
    // C by TMA stores (the _tmastore build, epilogue.cuh): pre-pass kernels with static M, where
    // Params has the maps (sm90::OutputMaps).
    constexpr bool kOutputMaps = sm90::OutputMaps<kGroups>::kPresent;
    const bool store_by_tma = kOutputMaps && prepass && !bound && args.device_m == nullptr;
    for (int s = 0; s < num_groups; ++s) {
      const int g = order[s];
      const GroupProblem& p = args.groups[g];
      const MTiling mt = ChooseMTiling(p.m, packed != nullptr ? packed->slot_cap[s] : cap);
      GroupInfo& gi = params->info[s];
      gi.sfa = static_cast<const uint8_t*>(p.sfa);
      gi.sfb = static_cast<const uint8_t*>(p.sfb);
      gi.c = static_cast<uint16_t*>(p.c);
      gi.m = p.m;
      gi.n = p.n;
      gi.k = p.k;
      gi.orig = g;
      gi.tile_start = tiles;
      gi.m_tiles = std::max(mt.tiles, 1);
      gi.tile_rows = mt.rows;
      gi.unit_start = units;
      if (prepass) {  // every slot, M = 0 included: unit_start must be monotonic (binary search)
        sm90::PrepassGroup& pg = pre->g[s];
        pg.a = static_cast<const uint8_t*>(p.a);
        pg.sfa = static_cast<const uint8_t*>(p.sfa);
        pg.out = reinterpret_cast<uint16_t*>(token_ws + ws_offset);
        pg.m = p.m;
        pg.k = p.k;
        pg.orig = g;
        pg.unit_start = pre_units;
        pre_units += static_cast<long long>(p.m) * TileShape::KBlocks(p.k);
        ws_offset += PrepassGroupBytes(p.m, p.k);
      }
      if (mt.tiles == 0) continue;
      streamed_widths = streamed_widths && sm90::StreamedTileRows(mt.rows);
      streamed_pays = streamed_pays && PreferStreamedTiles(mt.rows, p.k);
      const int group_tiles = mt.tiles * TileShape::NTiles(p.n);
      tiles += group_tiles;
      units += static_cast<long long>(group_tiles) * TileShape::KBlocks(p.k);
      if (prepass) {
        keys[num_keys] = MapKey{pre->g[s].out, p.m, p.k, MapRole::kTokensF16, mt.rows};
      } else {
        keys[num_keys] = MapKey{p.a, p.m, p.k, MapRole::kTokens};
      }
      outs[num_keys++] = &params->maps[s].a;
      keys[num_keys] = MapKey{p.b, p.n, p.k, MapRole::kWeights};
      outs[num_keys++] = &params->maps[s].b;
      if constexpr (kOutputMaps) {
        if (store_by_tma) {
          keys[num_keys] = MapKey{p.c, p.m, p.n, MapRole::kOutput, sm90::kOutputBoxRows};
          outs[num_keys++] = &params->out_maps[2 * s];
          keys[num_keys] = MapKey{p.c, p.m, p.n, MapRole::kOutput, sm90::kOutputTailRows};
          outs[num_keys++] = &params->out_maps[2 * s + 1];
        }
      }
    }
    params->store_by_tma = store_by_tma ? 1 : 0;
    ENCORE_RETURN_IF_ERROR(maps_.GetAll(keys.data(), outs.data(), num_keys));
    params->device_m = args.device_m;
    params->num_groups = num_groups;
    params->num_tiles = tiles;

    const bool auto_kind = kind == KernelKind::kAuto;
    if (auto_kind) {
      kind = packed != nullptr ? KernelKind::kPersistent : ChooseKernel(tiles, info_.sm_count);
    }
    // A fused pre-pass wants one CTA per SM (each converts its own share): where the automatic
    // choice is the simple kernel with more CTAs than SMs, the persistent one runs instead (run
    // 42: GPU MODE shape 0, 256 tiles, simple 120 us, persistent 119 us).
    if (auto_kind && prepass && fuse_token_prepass_ == FusePrepass::kAlways &&
        kind == KernelKind::kSimple && tiles > info_.sm_count) {
      kind = KernelKind::kPersistent;
    }
    int grid = kind == KernelKind::kSimple ? tiles : std::min(tiles, info_.sm_count);
    if (packed != nullptr) {
      const TilePacking& pk = packed->packing;
      if (static_cast<int>(pk.tiles.size()) != tiles) {  // computed from the same dims
        return absl::InternalError(
            absl::StrCat("packed schedule holds ", pk.tiles.size(), " tiles, the plan ", tiles));
      }
      grid = pk.ctas;
      params->packed_ctas = pk.ctas;
      std::copy(pk.begin.begin(), pk.begin.end(), params->packed_begin);
      std::copy(pk.tiles.begin(), pk.tiles.end(), params->packed_tiles);
    }
    if (kind == KernelKind::kStreamK) {
      const StreamKPlan* sk = shape.stream_k.get();
      if (units == 0) {  // no tiles (every M = 0): one CTA without a range
        grid = 1;
        params->sk_ctas = 0;
      } else if (sk == nullptr || sk->begin.back() != units || sk->ctas > sm90::kMaxPackedCtas) {
        return absl::InvalidArgumentError(
            absl::StrCat("kind = stream_k: the problem's ", units,
                         " k-blocks in ", tiles,
                         " tiles have no stream-K partition (more k-blocks than an int holds, "
                         "or more tiles than kMaxStreamKTiles, 2^20)"));
      } else {
        grid = sk->ctas;
        params->sk_ctas = sk->ctas;
        std::copy(sk->begin.begin(), sk->begin.end(), params->sk_begin);
      }
      params->sk_partials = static_cast<float*>(sk_workspace);
      params->sk_counters = reinterpret_cast<int*>(static_cast<char*>(sk_workspace) +
                                                   sm90::StreamKCountersOffset(info_.sm_count));
    }
    const sm90::TokenSource source =
        prepass ? sm90::TokenSource::kPrepass : sm90::TokenSource::kInKernel;
    // The pre-pass inside the GEMM (its own kernel instantiation): whole-tile plans whose grid
    // fits on the SMs; kAuto only where each CTA converts little (PreferFusedPrepass) and small
    // pre-pass kernels are not padded for PDL (which beats the fusion: run 117).
    const bool fuse =
        prepass && !bound && kind != KernelKind::kStreamK &&
        grid <= std::min(info_.sm_count, sm90::kMaxFusedCtas) &&
        (fuse_token_prepass_ == FusePrepass::kAlways ||
         (fuse_token_prepass_ == FusePrepass::kAuto && !pad_small_prepasses_ &&
          PreferFusedPrepass(pre_units, grid)));
    // The streamed simple kernel (RunnerOptions::stream_simple_tiles) where the build has it.
    const bool streamed =
        prepass && !bound && !fuse && kind == KernelKind::kSimple && tiles > 0 &&
        streamed_widths &&
        (stream_tiles_ == StreamTiles::kAlways ||
         (stream_tiles_ == StreamTiles::kAuto && streamed_pays));
    plan->function = sm90::KernelFunction(kind, kGroups, source, fuse, streamed, bound);
    if (plan->function == nullptr && streamed) {
      plan->function = sm90::KernelFunction(kind, kGroups, source, fuse);
    }
    if (plan->function == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("kind = ", static_cast<int>(kind), " is not a kernel kind"));
    }
    plan->grid = dim3(static_cast<unsigned>(std::max(grid, 1)), 1, 1);
    plan->block = dim3(TileShape::kThreads, 1, 1);
    plan->dynamic_smem_bytes = prepass ? sm90::Pipeline<sm90::TokenSource::kPrepass>::kSmemBytes
                                       : sm90::Pipeline<sm90::TokenSource::kInKernel>::kSmemBytes;
    plan->supports_pdl = true;
    plan->reads_after_wait = true;  // but a fused pre-pass (below)
    plan->prefers_pdl = true;       // but a small pre-kernel (below)
    plan->pre.function = nullptr;
    plan->pre.grid = dim3(1, 1, 1);
    plan->pre.block = dim3(1, 1, 1);
    plan->pre.dynamic_smem_bytes = 0;
    plan->pre.params_bytes = 0;
    plan->fused_pre = false;
    plan->binds_from_ring = false;
    plan->prepass_reads_early = false;
    if (prepass) {
      static_assert(sizeof(sm90::PrepassParams<kGroups>) <= kMaxPrepassParamBytes,
                    "pre-pass params too large");
      pre->device_m = args.device_m;
      pre->num_groups = num_groups;
      pre->units = pre_units;
      if (fuse) {
        // Fused: the GEMM's warps 1-11 run the same units, then a grid barrier (no co-residency
        // needed, fused_prepass.cuh; grid <= SM count so that every CTA converts its own share);
        // no pre-kernel.
        std::memcpy(static_cast<void*>(&params->pre), pre, sizeof(sm90::PrepassParams<kGroups>));
        params->fused_prepass = 1;
        // (Ready-count builds: the half's own words, as for the ready count below: an early ready
        // pre-pass of the other half adds to its words before its wait, i.e. possibly while this
        // GEMM's barrier still runs.)
        params->grid_sync = reinterpret_cast<unsigned int*>(
            token_ws + token_workspace_bytes_ +
            (ENCORE_SM90_PREPASS_READY && half == 1 ? sm90::kFusedSyncBytes : 0));
        plan->fused_pre = true;
        plan->reads_after_wait = ENCORE_SM90_FUSED_WEIGHTS_WAIT != 0;
        plan->prefers_pdl = ENCORE_SM90_FUSED_WEIGHTS_WAIT != 0;
      } else {
        const long long threads = pre_units * sm90::kPrepassThreadsPerUnit;
        plan->pre.function = sm90::PrepassFunction(kGroups, bound);
        long long blocks = (threads + sm90::kPrepassThreads - 1) / sm90::kPrepassThreads;
        if (sm90::kPrepassGridStride) blocks = std::min<long long>(blocks, info_.sm_count);
        if (bound) ++blocks;  // its block 0 fills the binding block
        plan->pre.grid = dim3(static_cast<unsigned>(std::max<long long>(1, blocks)));
        plan->prefers_pdl = PrepassPrefersPdl(blocks, grid, info_.sm_count);
        // RunnerOptions::pad_prepass_for_pdl: a small pre-pass goes behind a PDL edge too; it and
        // (pad_large_prepasses) one behind an edge anyway get blocks padded to an even spread.
        const bool pad = plan->prefers_pdl ? pad_large_prepasses_ : pad_small_prepasses_;
        if (pad) {
          plan->pre.dynamic_smem_bytes = static_cast<unsigned>(PrepassPadBytes(
              info_, PrepassSpreadBlocksPerSm(blocks, info_.sm_count, prepass_pad_blocks_per_sm_),
              bound));
          plan->prefers_pdl = plan->pre.dynamic_smem_bytes > 0 || plan->prefers_pdl;
        }
        plan->pre.block = dim3(sm90::kPrepassThreads, 1, 1);
        plan->pre.params_bytes = sizeof(sm90::PrepassParams<kGroups>);
#if ENCORE_SM90_PREPASS_READY
        // The GEMM waits for the pre-pass blocks' count on the stream's barrier words (those of
        // its workspace half) instead of the pre-pass grid (sm90 prepass_ready.cuh); with
        // ENCORE_SM90_EARLY_READY not in stream-K plans; never in bound ones.
        if (!bound && (!ENCORE_SM90_EARLY_READY || kind != KernelKind::kStreamK)) {
          params->grid_sync = reinterpret_cast<unsigned int*>(
              token_ws + token_workspace_bytes_ + (half == 1 ? sm90::kFusedSyncBytes : 0));
          params->prepass_blocks = static_cast<int>(plan->pre.grid.x);
          pre->ready = params->grid_sync;
        }
#endif
        // PlanOptions::prepass_reads_early, on a workspace half: the pre-pass converts before
        // its wait and waits at its end (kPrepassReadsEarly). Not with the ready count of the
        // manual build _ready, whose GEMM would start before the pre-pass grid, and so before
        // the GEMM ahead, completed (_early_ready: that overlap is its experiment).
        if (options.prepass_reads_early && half >= 0 && !bound && sm90::kEarlyPrepassBuilt &&
            (!ENCORE_SM90_PREPASS_READY || ENCORE_SM90_EARLY_READY)) {
          pre->flags |= sm90::kPrepassReadsEarly;
          plan->prepass_reads_early = true;
          plan->reads_after_wait = false;
        }
      }
    }
    plan->token_workspace_half = half;
    if (bound) FillBound<kGroups>(args, *ring, plan);
    plan->kind = kind;
    plan->num_tiles = tiles;
    plan->params_bytes = sizeof(Params<kGroups>);
    return absl::OkStatus();
  }

  // A bound plan's pre-pass and GEMM pointed at the stream's ring (the weight maps Fill encoded
  // for this call become the pre-pass's templates: its block 0 writes them into the binding block
  // with each call's global address).
  template <int kGroups>
  void FillBound(const GroupedGemmArguments& args, const BindingRing& ring, LaunchPlan* plan) {
    auto* params = reinterpret_cast<Params<kGroups>*>(plan->params);
    auto* bound = reinterpret_cast<sm90::BoundPrepassParams<kGroups>*>(plan->pre.params);
    static_assert(offsetof(sm90::BoundPrepassParams<kGroups>, pre) == 0,
                  "the pre-pass proper first: Fill wrote it there");
    static_assert(sizeof(sm90::BoundPrepassParams<kGroups>) <= kMaxPrepassParamBytes,
                  "bound pre-pass params");
    std::memset(static_cast<void*>(bound->b), 0, sizeof(bound->b));
    const int num_groups = static_cast<int>(args.groups.size());
    for (int s = 0; s < num_groups; ++s) bound->b[params->info[s].orig] = params->maps[s].b;
    const sm90::BindingRingRef ref{ring.slots_device, ring.tags_device, ring.consumed_device,
                                   ring.device};
    bound->pre.ring = ref;
    params->bound = ring.device->groups;
    params->ring = ref;
    plan->pre.params_bytes = sizeof(sm90::BoundPrepassParams<kGroups>);
    plan->binds_from_ring = true;
  }

  // The per-stream workspaces of the first max_token_workspaces streams that ask for one: the
  // token pre-pass's fp16 tokens (RunnerOptions::token_workspace_bytes) and stream-K's partial
  // tiles and arrival counters, each allocated by the first plan that needs it for that stream,
  // never reallocated or freed before the runner (captured graphs keep pointing into them). So
  // launches on different streams never share one, and launches on one stream are ordered by it.
  // NOTES: a linear scan of at most max_token_workspaces entries under the mutex; allocation only
  // on a stream's first plan of each kind. Never cudaMalloc while the stream captures (a
  // global-mode capture, e.g. a framework capturing a whole step, would be invalidated by it):
  // such a plan goes without (tokens converted in kernel, whole tiles instead of stream-K), and
  // the stream gets its workspace at its first such plan outside a capture.
  struct StreamWorkspaces {
    std::unique_ptr<BindingRing> ring;  // bound plans' (PrepareBound), created by the first
    cudaStream_t stream = nullptr;
    int index = 0;            // creation order (the fake token workspace's slice)
    void* tokens = nullptr;   // token_workspace_bytes_ + kFusedSyncBytes (barrier words zeroed;
                              // ready-count builds: a second set, for half 1)
    DeviceBuffer token_buffer;  // empty for the fake
    void* stream_k = nullptr;   // StreamKWorkspaceBytes(sm_count) (counters zeroed)
    DeviceBuffer stream_k_buffer;
    // An allocation failed for lack of device memory: the stream does without that workspace
    // from then on (never retried: no allocation attempt on every later call).
    bool tokens_failed = false;
    bool stream_k_failed = false;
  };

  // A workspace's buffer, or an empty one (and `*failed` set) when the device is out of memory;
  // other errors are returned.
  static absl::StatusOr<DeviceBuffer> WorkspaceBuffer(size_t bytes, size_t zero_from,
                                                      cudaStream_t stream, const char* what,
                                                      bool* failed) {
    absl::StatusOr<DeviceBuffer> buffer = CreateWithZeroedTail(bytes, zero_from, stream, what);
    if (buffer.ok() || !absl::IsResourceExhausted(buffer.status())) return buffer;
    (void)cudaGetLastError();  // cudaMalloc's failure is not sticky: leave no stale error
    *failed = true;
    return DeviceBuffer();
  }

  // `stream`'s entry, created on first use (`create`); nullptr when it has none and `create` is
  // false, or max_token_workspaces streams have one.
  StreamWorkspaces* WorkspacesOf(cudaStream_t stream, bool create = true)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(workspace_mu_) {
    for (StreamWorkspaces& w : workspaces_) {
      if (w.stream == stream) return &w;
    }
    if (!create || static_cast<int>(workspaces_.size()) >= max_token_workspaces_) return nullptr;
    StreamWorkspaces w;
    w.stream = stream;
    w.index = static_cast<int>(workspaces_.size());
    workspaces_.push_back(std::move(w));
    return &workspaces_.back();
  }

  // OK(true) when `stream` may allocate now (it is not capturing).
  static absl::StatusOr<bool> MayAllocate(cudaStream_t stream) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamIsCapturing(stream, &capture),
                                "cudaStreamIsCapturing (before allocating a workspace)");
    return capture == cudaStreamCaptureStatusNone;
  }

  // A device buffer of `bytes` whose bytes [zero_from, bytes) are zeroed in `stream`'s order.
  static absl::StatusOr<DeviceBuffer> CreateWithZeroedTail(size_t bytes, size_t zero_from,
                                                           cudaStream_t stream, const char* what) {
    DeviceBuffer buffer;
    ENCORE_RETURN_IF_ERROR(WithRelaxedCaptureMode([&]() -> absl::Status {
      ENCORE_ASSIGN_OR_RETURN(buffer, DeviceBuffer::Create(bytes));
      return absl::OkStatus();
    }));
    ENCORE_RETURN_IF_CUDA_ERROR(
        cudaMemsetAsync(static_cast<char*>(buffer.get()) + zero_from, 0, bytes - zero_from, stream),
        what);
    return buffer;
  }

  // `stream`'s binding ring; nullptr when it has none and `create` is false (or it cannot have
  // one: max_token_workspaces streams own workspaces already).
  absl::StatusOr<BindingRing*> RingOf(cudaStream_t stream, bool create) {
    encore::MutexLock lock(&workspace_mu_);
    // (A lookup takes no slot: a stream's entry is made only by what allocates for it.)
    StreamWorkspaces* w = WorkspacesOf(stream, create);
    if (w == nullptr || w->ring != nullptr || !create) {
      return w == nullptr ? nullptr : w->ring.get();
    }
    if (!has_device_) {
      return absl::FailedPreconditionError("bound plans need a device (runner without device)");
    }
    ENCORE_ASSIGN_OR_RETURN(const bool may_allocate, MayAllocate(stream));
    if (!may_allocate) {
      return absl::FailedPreconditionError(
          "PrepareBound: the stream is capturing and has no binding ring yet (prepare a bound "
          "plan for it outside the capture first)");
    }
    ENCORE_RETURN_IF_ERROR(WithRelaxedCaptureMode([&]() -> absl::Status {
      ENCORE_ASSIGN_OR_RETURN(w->ring, BindingRing::Create(stream));
      return absl::OkStatus();
    }));
    return w->ring.get();
  }

  // The ring `args`' bindings go to: InvalidArgument for malformed arguments, FailedPrecondition
  // (naming `who`) when `stream` has none yet.
  absl::StatusOr<BindingRing*> RingForWrite(const GroupedGemmArguments& args, cudaStream_t stream,
                                            const char* who) {
    ENCORE_RETURN_IF_ERROR(Validate(args));
    ENCORE_ASSIGN_OR_RETURN(BindingRing * ring, RingOf(stream, /*create=*/false));
    if (ring == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          who, ": this stream has no binding ring (PrepareBound a plan for it first)"));
    }
    return ring;
  }

  // `stream`'s token pre-pass workspace; nullptr when it has none and cannot get one now.
  absl::StatusOr<void*> TokenWorkspace(cudaStream_t stream) {
    encore::MutexLock lock(&workspace_mu_);
    StreamWorkspaces* w = WorkspacesOf(stream);
    if (w == nullptr || w->tokens_failed) return nullptr;
    if (w->tokens != nullptr) return w->tokens;
    if (fake_token_workspace_ != nullptr) {  // host-only runner: distinct, never dereferenced
      w->tokens = static_cast<char*>(fake_token_workspace_) + w->index * token_workspace_bytes_;
      return w->tokens;
    }
    if (!has_device_) {
      return absl::FailedPreconditionError(
          "the token pre-pass needs a device workspace (runner without device)");
    }
    ENCORE_ASSIGN_OR_RETURN(const bool may_allocate, MayAllocate(stream));
    if (!may_allocate) return nullptr;
    // The tokens, then the fused pre-pass's barrier words, zeroed in stream order.
    ENCORE_ASSIGN_OR_RETURN(
        w->token_buffer,
        WorkspaceBuffer(token_workspace_bytes_ +
                            (ENCORE_SM90_PREPASS_READY ? 2 : 1) * sm90::kFusedSyncBytes,
                        token_workspace_bytes_, stream, "cudaMemsetAsync (grid barrier words)",
                        &w->tokens_failed));
    w->tokens = w->token_buffer.get();  // nullptr when it failed
    return w->tokens;
  }

  // `stream`'s stream-K workspace (for a grid of sm_count CTAs); nullptr when it has none and
  // cannot get one now, or the runner has no device.
  absl::StatusOr<void*> StreamKWorkspace(cudaStream_t stream) {
    encore::MutexLock lock(&workspace_mu_);
    if (!has_device_) return nullptr;
    StreamWorkspaces* w = WorkspacesOf(stream);
    if (w == nullptr || w->stream_k_failed) return nullptr;
    if (w->stream_k != nullptr) return w->stream_k;
    ENCORE_ASSIGN_OR_RETURN(const bool may_allocate, MayAllocate(stream));
    if (!may_allocate) return nullptr;
    const int ctas = info_.sm_count;
    ENCORE_ASSIGN_OR_RETURN(
        w->stream_k_buffer,
        WorkspaceBuffer(sm90::StreamKWorkspaceBytes(ctas), sm90::StreamKCountersOffset(ctas),
                        stream, "cudaMemsetAsync (stream-K arrival counters)",
                        &w->stream_k_failed));
    w->stream_k = w->stream_k_buffer.get();  // nullptr when it failed
    return w->stream_k;
  }

  DeviceInfo info_;
  TensorMapCache maps_;
  ShapePlanMemo shape_plans_;
  const bool stream_k_;
  const TokenPrepass token_prepass_;
  const size_t token_workspace_bytes_;
  const int max_token_workspaces_;
  const FusePrepass fuse_token_prepass_;
  // RunnerOptions::pad_prepass_for_pdl, and the device's facts can bound the blocks per SM.
  const bool pad_small_prepasses_;
  const int prepass_pad_blocks_per_sm_;
  const bool pad_large_prepasses_;  // RunnerOptions::pad_large_prepasses
  const StreamTiles stream_tiles_;  // RunnerOptions::stream_simple_tiles
  const bool has_device_;
  void* const fake_token_workspace_;
  encore::Mutex workspace_mu_;
  // Per stream (a deque: entries never move while another stream's is added).
  std::deque<StreamWorkspaces> workspaces_ ABSL_GUARDED_BY(workspace_mu_);
};

}  // namespace

namespace internal {
std::unique_ptr<Nvfp4GroupedGemm> CreateSm90RunnerWithoutDevice(DeviceInfo info, DriverApi api,
                                                                size_t tensor_map_cache_capacity,
                                                                void* fake_token_workspace) {
  RunnerOptions options;
  options.tensor_map_cache_capacity = tensor_map_cache_capacity;
  options.stream_k = false;
  options.token_prepass =
      fake_token_workspace != nullptr ? TokenPrepass::kAuto : TokenPrepass::kNever;
  return CreateSm90RunnerWithoutDevice(std::move(info), api, options, fake_token_workspace);
}
std::unique_ptr<Nvfp4GroupedGemm> CreateSm90RunnerWithoutDevice(DeviceInfo info, DriverApi api,
                                                                const RunnerOptions& options,
                                                                void* fake_token_workspace) {
  return std::make_unique<Sm90Nvfp4GroupedGemm>(std::move(info), api, options,
                                                /*has_device=*/false, fake_token_workspace);
}
}  // namespace internal

absl::StatusOr<std::unique_ptr<Nvfp4GroupedGemm>> Nvfp4GroupedGemm::Create(RunnerOptions options) {
  if (options.token_tile_rows != 0 && (options.token_tile_rows < sm90::TileShape::kMGranule ||
                                       options.token_tile_rows > sm90::TileShape::kMaxBlockM ||
                                       options.token_tile_rows % sm90::TileShape::kMGranule != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.token_tile_rows = ", options.token_tile_rows, ": 0 or a multiple of ",
                     sm90::TileShape::kMGranule, " in [", sm90::TileShape::kMGranule, ", ",
                     sm90::TileShape::kMaxBlockM, "]"));
  }
  if (options.prepass_pad_blocks_per_sm < 1 || options.prepass_pad_blocks_per_sm > 8) {
    return absl::InvalidArgumentError(absl::StrCat("options.prepass_pad_blocks_per_sm = ",
                                                   options.prepass_pad_blocks_per_sm,
                                                   ": must be in [1, 8]"));
  }
  // NOTES: the fused pre-pass's barrier words sit right after the workspace's bytes
  // (Params::grid_sync), and the halves are 256-byte multiples: other sizes would misalign them.
  // (The cap keeps the workspace's size arithmetic, its barrier words included, far from
  // wrapping: a size near 2^64 passed the multiple-of-256 check and wrapped to a 1 KB buffer.)
  if (options.token_workspace_bytes % 256 != 0 ||
      options.token_workspace_bytes > kMaxTokenWorkspaceBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.token_workspace_bytes = ", options.token_workspace_bytes,
                     ": must be a multiple of 256 and at most 2^48"));
  }
  const StreamKCosts& sk = options.stream_k_costs;
  const auto cost_ok = [](long long c) { return c >= 0 && c <= kMaxStreamKCost; };
  if (!cost_ok(sk.piece_fixed) || !cost_ok(sk.io_fixed) || !cost_ok(sk.io_per_row) ||
      !cost_ok(sk.decode_rows)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options.stream_k_costs = {piece_fixed ", sk.piece_fixed, ", io_fixed ", sk.io_fixed,
        ", io_per_row ", sk.io_per_row, ", decode_rows ", sk.decode_rows,
        "}: costs must be in [0, 2^20]"));
  }
  ENCORE_ASSIGN_OR_RETURN(DeviceInfo info, QueryDevice(options.device));
  ENCORE_RETURN_IF_ERROR(CheckKernelsSupport(info.cc_major, info.cc_minor));
  if (info.max_smem_optin_per_block < sm90::kMaxSmemBytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "device ", info.ordinal, " allows ", info.max_smem_optin_per_block,
        " bytes of shared memory per block; the kernels need ", sm90::kMaxSmemBytes));
  }
  ENCORE_ASSIGN_OR_RETURN(DriverApi api, DriverApi::Load());
  int current = 0;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGetDevice(&current), "cudaGetDevice");
  if (current != info.ordinal) {
    ENCORE_RETURN_IF_CUDA_ERROR(cudaSetDevice(info.ordinal), "cudaSetDevice");
  }
  const cudaError_t configured =
      sm90::ConfigureKernels(PrepassPadBytes(info, 1), PrepassPadBytes(info, 1, /*bound=*/true));
  const cudaError_t restored = current != info.ordinal ? cudaSetDevice(current) : cudaSuccess;
  ENCORE_RETURN_IF_CUDA_ERROR(configured,
                              "cudaFuncSetAttribute(MaxDynamicSharedMemorySize) of the kernels");
  ENCORE_RETURN_IF_CUDA_ERROR(restored, "cudaSetDevice (back to the caller's device)");
  return std::unique_ptr<Nvfp4GroupedGemm>(
      new Sm90Nvfp4GroupedGemm(std::move(info), api, options, /*has_device=*/true));
}

absl::Status GroupedGemm(const GroupedGemmArguments& args, cudaStream_t stream, KernelKind kind) {
  RunnerOptions options;
  options.stream_k = false;  // no workspaces for a runner that lives for one call
  options.token_prepass = TokenPrepass::kNever;
  ENCORE_ASSIGN_OR_RETURN(std::unique_ptr<Nvfp4GroupedGemm> gemm,
                          Nvfp4GroupedGemm::Create(options));
  return gemm->Run(args, stream, kind);
}

}  // namespace encore::gemm
