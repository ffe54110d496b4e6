#include <cstdio>
#include <random>
#include <vector>
int main() {
  std::mt19937 rng(20261202);
  std::uniform_int_distribution<int> expert(0, 63);
  std::vector<int> counts(64, 0);
  for (int slot = 0; slot < 4096; ++slot) ++counts[static_cast<size_t>(expert(rng))];
  int mn = 1 << 30, mx = 0, p16 = 0, p8 = 0;
  for (int c : counts) { mn = std::min(mn, c); mx = std::max(mx, c); p16 += (c + 15) / 16 * 16; p8 += (c + 7) / 8 * 8; }
  std::printf("M per expert: min %d max %d; padded token columns: granule 16 %d, granule 8 %d (%.1f%% fewer), exact 4096\n", mn, mx, p16, p8, 100.0 * (p16 - p8) / p16);
}
