// Session 21, host only: how far GPU MODE shape 0's stream-K partition (gemm/heuristics.h
// PlanStreamK) is from what other cut constants, group orders or tile orders would give, all
// judged by the default cost model (StreamKCosts{}: PackKBlockCost at decode_rows 160, a piece's
// fixed cost, the split's io charged as FillStreamK charges it: the first piece reads one partial
// per further piece, every further piece stores one).
// Build and run (repo root):
//   g++ -std=c++17 -O2 -I. -I/usr/local/cuda/include -o /tmp/partition_host \
//     benchmarks/results/2026-12-01_session21_partition_host/partition_host.cc && /tmp/partition_host
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "gemm/heuristics.h"

using namespace encore::gemm;

namespace {

constexpr int kSms = 132, kN = 4096, kK = 7168;
const std::vector<int> kM = {248, 176, 160, 128, 96, 80, 72, 64};  // GPU MODE shape 0, by M

// The busiest CTA's load of plan `p` over `tiles` under the cost model `ref`.
long long RefMax(const std::vector<StreamKTile>& tiles, const StreamKPlan& p,
                 const StreamKCosts& ref) {
  std::vector<int> t0(tiles.size() + 1, 0);
  for (size_t i = 0; i < tiles.size(); ++i) t0[i + 1] = t0[i] + tiles[i].kblocks;
  std::vector<long long> load(p.ctas, 0);
  int c0 = 0;
  for (size_t i = 0; i < tiles.size(); ++i) {
    const long long per = PackKBlockCost(tiles[i].rows, ref.decode_rows);
    const long long io = ref.io_fixed + ref.io_per_row * ((tiles[i].rows + 63) / 64 * 64);
    while (c0 < p.ctas && p.begin[c0 + 1] <= t0[i]) ++c0;
    int pieces = 0;
    for (int c = c0; c < p.ctas && p.begin[c] < t0[i + 1]; ++c) ++pieces;
    int j = 0;
    for (int c = c0; c < p.ctas && p.begin[c] < t0[i + 1]; ++c, ++j) {
      const int a = std::max(p.begin[c], t0[i]), b = std::min(p.begin[c + 1], t0[i + 1]);
      long long l = (b - a) * per + ref.piece_fixed;
      if (pieces > 1) l += (j == 0) ? io * (pieces - 1) : io;
      load[c] += l;
    }
  }
  return *std::max_element(load.begin(), load.end());
}

// Tiles of the row widths `rows` in that order, partitioned with `cut` costs, judged by `ref`.
long long Judge(const std::vector<int>& rows, const StreamKCosts& cut, const StreamKCosts& ref,
                StreamKPlan* plan = nullptr) {
  std::vector<StreamKTile> tiles;
  for (int r : rows) tiles.push_back({kK / 128, r});
  StreamKPlan p = PlanStreamK(tiles, kSms, cut);
  const long long mx = RefMax(tiles, p, ref);
  if (plan != nullptr) *plan = std::move(p);
  return mx;
}

std::vector<int> GroupTiles(const std::vector<int>& group_order) {
  std::vector<int> rows;
  for (int g : group_order) {
    for (int t = 0; t < kN / 128; ++t) rows.push_back(sm90::TileShape::RoundRows(kM[g]));
  }
  return rows;
}

}  // namespace

int main() {
  const StreamKCosts ref;
  std::vector<int> order(kM.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  const std::vector<int> rows = GroupTiles(order);  // the runner's order: widest first
  long long total = 0;
  for (int r : rows) total += (kK / 128) * PackKBlockCost(r) + ref.piece_fixed;
  std::printf("tiles %zu, model total %lld, average per CTA %lld\n", rows.size(), total,
              total / kSms);

  std::printf("\n1. cut with decode_rows d, judged at 160 (the runner's order)\n");
  for (int d = 64; d <= 256; d += 8) {
    StreamKCosts cut = ref;
    cut.decode_rows = d;
    StreamKPlan p;
    const long long mx = Judge(rows, cut, ref, &p);
    std::printf("d=%3d ctas=%d splits=%3d own_makespan=%lld judged_max=%lld\n", d, p.ctas,
                p.splits, p.makespan, mx);
  }

  std::printf("\n2. every order of the 8 groups (their tiles contiguous)\n");
  long long best = -1, worst = 0;
  std::vector<int> best_order;
  do {
    const long long mx = Judge(GroupTiles(order), ref, ref);
    if (best < 0 || mx < best) best = mx, best_order = order;
    worst = std::max(worst, mx);
  } while (std::next_permutation(order.begin(), order.end()));
  std::printf("runner's order %lld, best %lld, worst %lld; best order (M):", Judge(rows, ref, ref),
              best, worst);
  for (int g : best_order) std::printf(" %d", kM[g]);

  std::printf("\n\n3. tile-level orders (a table the kernel does not have)\n");
  std::vector<int> alt;  // widest, narrowest, next widest, ...
  for (int i = 0, j = static_cast<int>(rows.size()) - 1, f = 1; i <= j; f ^= 1) {
    alt.push_back(f ? rows[i++] : rows[j--]);
  }
  std::printf("alternating %lld\n", Judge(alt, ref, ref));
  std::mt19937 rng(1);
  std::vector<int> cur = alt;
  long long cur_max = Judge(cur, ref, ref);
  for (int it = 0; it < 20000; ++it) {  // random swaps, kept when not worse
    std::vector<int> c = cur;
    std::swap(c[rng() % c.size()], c[rng() % c.size()]);
    const long long v = Judge(c, ref, ref);
    if (v <= cur_max) cur_max = v, cur = std::move(c);
  }
  std::printf("local search (20000 swaps from the alternating order) %lld\n", cur_max);
  return 0;
}
