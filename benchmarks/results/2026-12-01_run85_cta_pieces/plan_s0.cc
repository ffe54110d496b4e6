#include "gemm/heuristics.h"
#include <cstdio>
using namespace encore::gemm;
int main() {
  const int rows[] = {256, 176, 160, 128, 96, 80, 80, 64};
  std::vector<StreamKTile> tiles;
  for (int r : rows) for (int nt = 0; nt < 32; ++nt) tiles.push_back({56, r});
  StreamKPlan p = PlanStreamK(tiles, 132);
  printf("ctas %d makespan %lld splits %d\n", p.ctas, p.makespan, p.splits);
  for (int b : {39, 42, 45, 51, 53, 56, 63, 130}) {
    int u0 = p.begin[b], u1 = p.begin[b + 1];
    printf("block %d: units [%d,%d):", b, u0, u1);
    for (int v = u0; v < u1;) {
      int t = v / 56, kb0 = v % 56, kb1 = std::min(56, kb0 + (u1 - v));
      printf("  tile %d (w%d) kb %d-%d (%d)", t, tiles[t].rows, kb0, kb1, kb1 - kb0);
      v += kb1 - kb0;
    }
    printf("\n");
  }
}
