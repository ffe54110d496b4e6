#include "gemm/reference.h"

#include <cstddef>
#include <cstdint>
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

}  // namespace

std::vector<double> ReferenceGemmDouble(const Nvfp4Matrix& a, const Nvfp4Matrix& b) {
  ABSL_RAW_CHECK(a.k == b.k, "ReferenceGemm: a.k != b.k");
  const std::vector<float> da = Dequantize(a);
  const std::vector<float> db = Dequantize(b);
  const size_t k = static_cast<size_t>(a.k);
  std::vector<double> c(static_cast<size_t>(a.rows) * static_cast<size_t>(b.rows));
  for (int i = 0; i < a.rows; ++i) {
    const float* ra = da.data() + static_cast<size_t>(i) * k;
    for (int j = 0; j < b.rows; ++j) {
      const float* rb = db.data() + static_cast<size_t>(j) * k;
      double acc = 0.0;
      // Each product has at most 12 significant bits, so it is exact in double.
      for (size_t kk = 0; kk < k; ++kk) acc += static_cast<double>(ra[kk]) * rb[kk];
      c[static_cast<size_t>(i) * static_cast<size_t>(b.rows) + static_cast<size_t>(j)] = acc;
    }
  }
  return c;
}

std::vector<uint16_t> ReferenceGemm(const Nvfp4Matrix& a, const Nvfp4Matrix& b) {
  const std::vector<double> wide = ReferenceGemmDouble(a, b);
  std::vector<uint16_t> c(wide.size());
  for (size_t i = 0; i < wide.size(); ++i) c[i] = DoubleToHalfBits(wide[i]);
  return c;
}

}  // namespace encore::gemm
