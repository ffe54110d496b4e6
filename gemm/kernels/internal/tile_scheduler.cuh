// The sm90 kernels' tile scheduler: which (tile, k-block range) work items a CTA runs, for the
// simple, persistent and stream-K schedules, and the stream-K reduction of split tiles. Every warp
// role of a CTA walks the same item sequence, so their mbarrier phases stay in step.
//
// Example (inside the kernel):
//   const TileScheduler<kGroups, kSchedule> sched{p};
//   sched.ForEach([&](const WorkItem& w) { /* k-blocks [w.kb0, w.kb1) of tile w.t */ });
#pragma once

#include <cstdint>
#include <type_traits>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {


struct TileCoord {
  int slot = 0;  // group slot in Params (sorted order)
  int m0 = 0;    // first token row
  int rows = 0;  // valid token rows (<= 0: nothing to do)
  int nw = 0;    // wgmma n: rows rounded up to kMGranule
  int n0 = 0;    // first weight row (output column)
};

// One unit of work: k-blocks [kb0, kb1) of linear tile t. A whole tile has first == last; a
// stream-K piece of a split tile names the CTAs holding its first and last pieces.
struct WorkItem {
  int t = 0;
  int grp = 0;  // tile t's group slot
  int kb0 = 0, kb1 = 0;
  int first = 0, last = 0;
  __device__ bool split() const { return first != last; }
};

// Walks one linear tile table across all groups (group slots sorted by M, largest first; inside a
// group, consecutive tiles share a weight tile so its second read hits L2). Every warp role of a
// CTA walks the same sequence.
//   simple:     CTA b runs tile b only;
//   persistent: CTA b runs round r's tile r*G + (r even ? b : G-1-b) (snake order, balances the
//               largest-first costs), until past the end; or, with Params::packed_ctas, the
//               host's list for CTA b (a static assignment balanced by the cost model);
//   stream-K:   CTA b runs the k-block range [sk_begin[b], sk_begin[b + 1]) of all tiles'
//               k-blocks (tile-major; ranges balanced by the host), a piece per tile.
template <int kGroups, Schedule kSchedule>
struct TileScheduler {
  const Params<kGroups>& p;

  __device__ static int KbOf(const GroupInfo& gi) { return TileShape::KBlocks(gi.k); }

  __device__ StreamKPartition Partition() const { return StreamKPartition{p.sk_begin, p.sk_ctas}; }

  // CTA b's tile of persistent round `round` in a grid of g (snake order).
  __device__ static int RoundTile(int round, int g, int b) { return SnakeRoundTile(round, g, b); }

  template <typename F>
  __device__ __forceinline__ void ForEach(F&& f) const {
    const int g = static_cast<int>(gridDim.x), b = static_cast<int>(blockIdx.x);
    if constexpr (kSchedule == Schedule::kSimple) {
      if (b < p.num_tiles) f(Whole(b));
    } else if constexpr (kSchedule == Schedule::kPersistent) {
      // NOTES: one call site of f for both walks (the host's packed list, the snake rounds): with
      // two, ptxas kept the consumer body out of line and its accumulators in local memory
      // (run 68: 30x slower), as it did for stream-K's two phases.
      const bool packed = p.packed_ctas > 0;
      int i = 0, end = 0;
      if (packed && b < p.packed_ctas) i = p.packed_begin[b], end = p.packed_begin[b + 1];
      const int whole = p.num_tiles;
      for (int round = 0;; ++round) {
        const int t = packed ? (i < end ? p.packed_tiles[i++] : whole) : RoundTile(round, g, b);
        if (t >= whole) break;
        f(Whole(t));
      }
    } else {
      StreamKCursor c = StreamKBegin();
      WorkItem w;
      while (StreamKNext(&c, &w)) f(w);
    }
  }

  // The stream-K walk as a cursor over this CTA's k-block range, a piece per tile.
  // NOTES: 32-bit and without division (the host keeps units <= INT_MAX): a 64-bit division is
  // a subroutine call, which gave the in-kernel-token stream-K kernels a 16-byte stack frame
  // (run 73). (What took their k loop off the uniform datapath was StreamKReduce's branch on
  // shared memory: see its NOTES.)
  struct StreamKCursor {
    int v_begin = 0;       // this CTA's range: [v_begin, v_end)
    int v = 0, v_end = 0;  // the units left of it
    int t = 0;             // the tile holding unit v
    int tv0 = 0;           // its first unit
    int grp = 0;           // its group slot
  };
  __device__ int TilesOf(int grp) const {
    return (grp + 1 < p.num_groups ? p.info[grp + 1].tile_start : p.num_tiles) -
           p.info[grp].tile_start;
  }
  __device__ StreamKCursor StreamKBegin() const {
    StreamKCursor c;
    const int b = static_cast<int>(blockIdx.x);
    if (b >= p.sk_ctas) return c;
    c.v_begin = c.v = p.sk_begin[b];
    c.v_end = p.sk_begin[b + 1];
    while (c.grp + 1 < p.num_groups && static_cast<int>(p.info[c.grp + 1].unit_start) <= c.v) {
      ++c.grp;
    }
    const GroupInfo& gi = p.info[c.grp];
    const int kb = KbOf(gi), u0 = static_cast<int>(gi.unit_start);
    int lo = 0, hi = TilesOf(c.grp) - 1;  // the last tile starting at or before v
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (u0 + mid * kb <= c.v) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    c.t = gi.tile_start + lo;
    c.tv0 = u0 + lo * kb;
    return c;
  }
  __device__ bool StreamKNext(StreamKCursor* c, WorkItem* w) const {
    if (c->v >= c->v_end) return false;
    while (c->grp + 1 < p.num_groups && p.info[c->grp + 1].tile_start <= c->t) ++c->grp;
    const int tv1 = c->tv0 + KbOf(p.info[c->grp]);
    w->t = c->t;
    w->grp = c->grp;
    w->kb0 = c->v - c->tv0;
    w->kb1 = min(c->v_end, tv1) - c->tv0;
    // NOTES: the CTAs holding the tile's first and last units by stepping from this CTA (ranges
    // are long: a step or two) instead of StreamKPartition::CtaOf's binary search, whose every
    // probe is a dependent, dynamically indexed read of the parameter block (run 88).
    StreamKPieceCtas(
        p.sk_begin, [&] { return p.sk_ctas; }, static_cast<int>(blockIdx.x), c->v_begin,
        c->v_end, c->tv0, tv1, &w->first, &w->last);
    c->v = min(c->v_end, tv1);
    ++c->t;
    c->tv0 = tv1;
    return true;
  }

  __device__ int TileV0(const WorkItem& w) const {
    const GroupInfo& gi = p.info[w.grp];
    return static_cast<int>(gi.unit_start) + (w.t - gi.tile_start) * KbOf(gi);
  }

  __device__ int GroupOf(int t) const {
    int grp = 0;
    while (grp + 1 < p.num_groups && p.info[grp + 1].tile_start <= t) ++grp;
    return grp;
  }

  __device__ WorkItem Whole(int t) const {
    WorkItem w;
    w.t = t;
    w.grp = GroupOf(t);
    w.kb0 = 0;
    w.kb1 = KbOf(p.info[w.grp]);
    w.first = w.last = static_cast<int>(blockIdx.x);
    return w;
  }

  __device__ TileCoord Decode(const WorkItem& w) const {
    TileCoord tc;
    const int t = w.t, g = w.grp;
    const GroupInfo& gi = p.info[g];
    const int local = t - gi.tile_start;
    const int n_tile = local / gi.m_tiles;
    const int m_tile = local - n_tile * gi.m_tiles;
    int m_eff = gi.m;
    if (p.device_m != nullptr) m_eff = min(max(__ldg(p.device_m + gi.orig), 0), gi.m);
    tc.slot = g;
    tc.m0 = m_tile * gi.tile_rows;
    tc.rows = min(gi.tile_rows, m_eff - tc.m0);
    tc.nw = TileShape::RoundRows(tc.rows);
    tc.n0 = n_tile * TileShape::kBlockN;
    return tc;
  }
};

// Named barrier of the consumer warpgroups in StreamKReduce (1 .. kConsumerWgs: the epilogues').
inline constexpr uint32_t kStreamKBarrier = 1 + TileShape::kConsumerWgs;

// Stream-K piece of a split tile (all consumer threads; nw: the tile's wgmma width, so each
// thread's partial is its first nw / 2 accumulators, moved in 64-column chunks). The pieces count
// themselves in on the counter of the tile's first CTA; the last to arrive runs the epilogue
// (returns true) with the sum of all pieces in CTA order (deterministic: the same additions
// whichever piece is last):
//   2 pieces: arrive first; the first arriver stores its partial and adds kStored, the last waits
//     for that (the other CTA has arrived and only stores: no wait on a CTA that may not be
//     resident) and adds it to its own registers (a + b == b + a, bit for bit);
//   3 or more: every piece stores its partial and then arrives (nobody waits); the last reads
//     them all back in CTA order.
// The last arriver resets the counter for the next launch.
// NOTES: release = every consumer thread's stores, bar.sync, then thread 0's release atomic
// (cumulative over what the barrier ordered before it); acquire = the last arriver's acquire
// atomic or load, bar.sync, then L2 loads (ld.global.cg: L1 is not coherent). (Before run 88:
// __threadfence, i.e. fence.sc.gpu, around relaxed atomics.) The decisions read back from shared
// memory go through a warp vote (__all_sync: the same answer in every lane): branching on the plain
// load, ptxas took the whole tile loop off the uniform datapath (run 74-75 SASS: an R2UR per wgmma,
// 398 R2UR vs 147 with the vote; the kernel ran 15% slower than the simple one on equal tiles).
inline constexpr int kStreamKStored = 1 << 16;  // added per stored partial (2-piece protocol)

template <int kGroups, Schedule kSchedule>
__device__ __forceinline__ bool StreamKReduce(const Params<kGroups>& p,
                                              const TileScheduler<kGroups, kSchedule>& sched,
                                              const WorkItem& w, int nw, int* arrivals, int x,
                                              float (&acc)[TileShape::kAccFloats]) {
  const int v0 = sched.TileV0(w);
  const int self = static_cast<int>(blockIdx.x);
  const int pieces = w.last - w.first + 1;
  // NOTES: a CTA reduces at most two split pieces a launch, its range's first tile (a piece
  // after the tile's first, self != w.first) and its last (the tile's first piece), each on its
  // own `arrivals` word: in the 3-piece path no barrier follows the threads' reads of the word,
  // so a lagging warp could otherwise read the next reduce's value (a write-after-read race,
  // session 32's review; never seen).
  arrivals += self == w.first ? 0 : 1;
  // Pieces after the first are the first piece of their CTA's range (slot 2c); only the first
  // CTA's slot depends on where its range starts.
  const int first_slot = sched.Partition().Slot(w.first, v0);
  auto slot_of = [&](int c) { return c == w.first ? first_slot : 2 * c; };
  const float4* partials = reinterpret_cast<const float4*>(p.sk_partials);
  constexpr int kSlot4 = kStreamKSlotFloats / 4;
  constexpr int kX = TileShape::kConsumerThreads;  // float4 stride between a thread's values
  constexpr int kAcc4 = TileShape::kAccFloats / 4;
  static_assert(kAcc4 * kX == kSlot4, "a slot holds every consumer thread's accumulators");
  // NOTES: partials move in chunks of 8 float4s (64 columns), the chunks holding columns < nw;
  // a chunk's 8 loads are in flight together. Per-float4 predicates made ptxas spill (the loads
  // hoisted with 128 temporaries), a break per float4 would serialize the loads.
  constexpr int kChunk = 8;
  const int chunks = (nw + 2 * 4 * kChunk - 1) / (2 * 4 * kChunk);
  uint32_t* counter = reinterpret_cast<uint32_t*>(p.sk_counters + w.first);
  auto store_mine = [&]() {
    float4* mine =
        reinterpret_cast<float4*>(p.sk_partials) + static_cast<size_t>(slot_of(self)) * kSlot4 + x;
#pragma unroll
    for (int ch = 0; ch < kAcc4 / kChunk; ++ch) {
      if (ch >= chunks) break;
#pragma unroll
      for (int j = 0; j < kChunk; ++j) {
        const int i = ch * kChunk + j;
        __stcg(mine + i * kX,
               make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
      }
    }
  };
  // acc = (kAdd ? acc : 0) + the partial at `from` (this thread's share).
  auto load_partial = [&](const float4* from, auto add) {
#pragma unroll
    for (int ch = 0; ch < kAcc4 / kChunk; ++ch) {
      if (ch >= chunks) break;
      float4 v[kChunk];
#pragma unroll
      for (int j = 0; j < kChunk; ++j) v[j] = __ldcg(from + (ch * kChunk + j) * kX);
#pragma unroll
      for (int j = 0; j < kChunk; ++j) {
        const int i = ch * kChunk + j;
        if constexpr (decltype(add)::value) {
          acc[4 * i] += v[j].x;
          acc[4 * i + 1] += v[j].y;
          acc[4 * i + 2] += v[j].z;
          acc[4 * i + 3] += v[j].w;
        } else {
          acc[4 * i] = v[j].x;
          acc[4 * i + 1] = v[j].y;
          acc[4 * i + 2] = v[j].z;
          acc[4 * i + 3] = v[j].w;
        }
      }
    }
  };
  if (pieces == 2) {
    if (x == 0) *arrivals = static_cast<int>(atomicAdd(counter, 1u) & (kStreamKStored - 1));
    NamedBarrierSync(kStreamKBarrier, kX);
    if (__all_sync(~0u, *arrivals == 0)) {  // first to arrive: store, publish, done
      store_mine();
      NamedBarrierSync(kStreamKBarrier, kX);
      if (x == 0) RedReleaseGpuAdd(counter, kStreamKStored);
      return false;
    }
    if (x == 0) {
      while ((LdAcquireGpu(counter) >> 16) == 0) {
      }
      *counter = 0;  // both pieces are done with it in this launch
    }
    NamedBarrierSync(kStreamKBarrier, kX);
    load_partial(
        partials + static_cast<size_t>(slot_of(self == w.first ? w.last : w.first)) * kSlot4 + x,
        std::true_type());
    return true;
  }
  store_mine();
  NamedBarrierSync(kStreamKBarrier, kX);
  if (x == 0) {
    const int seen = static_cast<int>(AtomAddAcqRelGpu(counter, 1u));
    if (seen == pieces - 1) *counter = 0;  // nobody else touches it in this launch
    *arrivals = seen;
  }
  NamedBarrierSync(kStreamKBarrier, kX);
  if (__all_sync(~0u, *arrivals != pieces - 1)) return false;
  // Every piece (this CTA's too: each thread reads back what it stored) from L2, in CTA order.
  load_partial(partials + static_cast<size_t>(first_slot) * kSlot4 + x, std::false_type());
  for (int c = w.first + 1; c <= w.last; ++c) {
    load_partial(partials + static_cast<size_t>(2 * c) * kSlot4 + x, std::true_type());
  }
  return true;
}

}  // namespace encore::gemm::sm90
