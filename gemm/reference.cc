#include "gemm/reference.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/base/internal/raw_logging.h"
#include "gemm/nvfp4.h"

namespace encore::gemm {
namespace {

// The matrix dequantized to float, row-major (rows × k). Every value e2m1 · e4m3 is exact.
std::vector<float> Dequantize(const Nvfp4Matrix& m) {
  std::vector<float> out(static_cast<size_t>(m.rows) * static_cast<size_t>(m.k));
  for (int r = 0; r < m.rows; ++r) {
    float* row = out.data() + static_cast<size_t>(r) * static_cast<size_t>(m.k);
    for (int kk = 0; kk < m.k; ++kk) row[kk] = DequantizeNvfp4(m, r, kk);
  }
  return out;
}

// Rows [i0, i1) of C. Every element is one sequential sum over k from 0.0 in double: blocks of
// kCols columns only interleave independent sums (instruction-level parallelism), never reorder
// one, so the result does not depend on the blocking or on the thread that computed it.
// Each product has at most 12 significant bits, so it is exact in double.
void RowsOfC(const float* da, const float* db, size_t k, int n, int i0, int i1, double* c) {
  constexpr int kCols = 4;
  for (int i = i0; i < i1; ++i) {
    const float* ra = da + static_cast<size_t>(i) * k;
    double* crow = c + static_cast<size_t>(i) * static_cast<size_t>(n);
    int j = 0;
    for (; j + kCols <= n; j += kCols) {
      const float* rb0 = db + static_cast<size_t>(j) * k;
      const float* rb1 = rb0 + k;
      const float* rb2 = rb1 + k;
      const float* rb3 = rb2 + k;
      double acc0 = 0.0, acc1 = 0.0, acc2 = 0.0, acc3 = 0.0;
      for (size_t kk = 0; kk < k; ++kk) {
        const double x = ra[kk];
        acc0 += x * rb0[kk];
        acc1 += x * rb1[kk];
        acc2 += x * rb2[kk];
        acc3 += x * rb3[kk];
      }
      crow[j] = acc0;
      crow[j + 1] = acc1;
      crow[j + 2] = acc2;
      crow[j + 3] = acc3;
    }
    for (; j < n; ++j) {
      const float* rb = db + static_cast<size_t>(j) * k;
      double acc = 0.0;
      for (size_t kk = 0; kk < k; ++kk) acc += static_cast<double>(ra[kk]) * rb[kk];
      crow[j] = acc;
    }
  }
}

}  // namespace

std::vector<double> ReferenceGemmDouble(const Nvfp4Matrix& a, const Nvfp4Matrix& b) {
  ABSL_RAW_CHECK(a.k == b.k, "ReferenceGemm: a.k != b.k");
  const std::vector<float> da = Dequantize(a);
  const std::vector<float> db = Dequantize(b);
  const size_t k = static_cast<size_t>(a.k);
  const int m = a.rows, n = b.rows;
  std::vector<double> c(static_cast<size_t>(m) * static_cast<size_t>(n));
  // NOTES: rows are split over the machine's threads for products of >= 2^22 multiply-adds (the
  // GPU tests check GPU MODE shapes of up to ~30 G of them, one group at a time); the split
  // changes no element's value (RowsOfC).
  const double work = static_cast<double>(m) * n * static_cast<double>(k);
  const int threads = work < static_cast<double>(1 << 22)
                          ? 1
                          : static_cast<int>(std::min<unsigned>(
                                std::max(1u, std::thread::hardware_concurrency()),
                                static_cast<unsigned>(std::max(m, 1))));
  if (threads <= 1) {
    RowsOfC(da.data(), db.data(), k, n, 0, m, c.data());
    return c;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    const int i0 = static_cast<int>(static_cast<long long>(m) * t / threads);
    const int i1 = static_cast<int>(static_cast<long long>(m) * (t + 1) / threads);
    pool.emplace_back(RowsOfC, da.data(), db.data(), k, n, i0, i1, c.data());
  }
  for (std::thread& th : pool) th.join();
  return c;
}

std::vector<uint16_t> ReferenceGemm(const Nvfp4Matrix& a, const Nvfp4Matrix& b) {
  return RoundToHalf(ReferenceGemmDouble(a, b));
}

std::vector<uint16_t> RoundToHalf(const std::vector<double>& wide) {
  std::vector<uint16_t> c(wide.size());
  for (size_t i = 0; i < wide.size(); ++i) c[i] = DoubleToHalfBits(wide[i]);
  return c;
}

}  // namespace encore::gemm
