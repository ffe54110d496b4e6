// Host-memory grouped-GEMM problems for the CPU tests of the graph cache: owned buffers with
// random contents, the GroupedGemmArguments that point at them, and the values FakeGemm must
// have written (fake_params.h). Buffers never move after construction.
//
// Example:
//   HostProblem p({{64, 128, 128}, {32, 64, 256}}, /*seed=*/1);
//   p.ClearC();
//   ENCORE_ASSERT_OK(executor->Run(p.args(), FakeStream(1), gemm::KernelKind::kSimple));
//   EXPECT_TRUE(p.Check(/*variant=*/0));
#ifndef ENCORE_TESTS_GRAPH_CACHE_HOST_PROBLEM_H_
#define ENCORE_TESTS_GRAPH_CACHE_HOST_PROBLEM_H_

#include <cstdint>
#include <random>
#include <vector>

#include "gemm/problem.h"
#include "gtest/gtest.h"
#include "tests/graph_cache/fake_params.h"

namespace encore::graph_cache::testing {

struct Dims {
  int m;
  int n;
  int k;
};

inline constexpr uint16_t kSentinel = 0xdead;

class HostProblem {
 public:
  // `capacity_rows[g]` (optional) allocates room for that many rows instead of m, so m may later
  // be raised up to it with set_m (dynamic-M capacity tests).
  HostProblem(std::vector<Dims> dims, uint32_t seed, std::vector<int> capacity_rows = {})
      : dims_(std::move(dims)) {
    std::mt19937 rng(seed);
    const size_t ng = dims_.size();
    a_.resize(ng);
    b_.resize(ng);
    sfa_.resize(ng);
    sfb_.resize(ng);
    c_.resize(ng);
    groups_.resize(ng);
    for (size_t g = 0; g < ng; ++g) {
      const Dims d = dims_[g];
      const int rows = capacity_rows.empty() ? d.m : capacity_rows[g];
      Fill(a_[g], static_cast<size_t>(rows) * d.k / 2 + 1, rng);
      Fill(b_[g], static_cast<size_t>(d.n) * d.k / 2 + 1, rng);
      Fill(sfa_[g], gemm::BlockedScaleBytes(rows > 0 ? rows : 1, d.k), rng);
      Fill(sfb_[g], gemm::BlockedScaleBytes(d.n, d.k), rng);
      c_[g].assign(static_cast<size_t>(rows > 0 ? rows : 1) * d.n, kSentinel);
      groups_[g] = gemm::GroupProblem{
          a_[g].data(), b_[g].data(), sfa_[g].data(), sfb_[g].data(), c_[g].data(), d.m, d.n, d.k};
    }
  }
  HostProblem(const HostProblem&) = delete;
  HostProblem& operator=(const HostProblem&) = delete;

  gemm::GroupedGemmArguments args() const {
    return gemm::GroupedGemmArguments{absl::MakeConstSpan(groups_),
                                      device_m_.empty() ? nullptr : device_m_.data()};
  }
  int num_groups() const { return static_cast<int>(groups_.size()); }

  // Dynamic M: the kernel computes min(rows[g], m) rows of group g. The array keeps its address
  // across calls (like a device array the caller rewrites every step).
  void set_device_m(const std::vector<int32_t>& rows) {
    if (device_m_.capacity() < rows.size()) device_m_.reserve(gemm::kMaxGroups);
    device_m_.assign(rows.begin(), rows.end());
  }
  void set_m(int g, int m) { groups_[g].m = m; }
  // Group g's arguments as the calls see them (e.g. to point one input at another problem's
  // buffer; Check then expects the values of those inputs). The buffers stay this problem's.
  gemm::GroupProblem& mutable_group(int g) { return groups_[g]; }
  const gemm::GroupProblem& group(int g) const { return groups_[g]; }
  void ClearC() {
    for (auto& c : c_) std::fill(c.begin(), c.end(), kSentinel);
  }
  // Changes the input bytes (so a stale launch would produce different values).
  void Scramble(uint32_t seed) {
    std::mt19937 rng(seed);
    for (auto& a : a_)
      for (auto& x : a) x = static_cast<uint8_t>(rng());
  }

  // Checks every C against FakeValue for `variant`; rows at or beyond the computed count keep
  // the sentinel.
  ::testing::AssertionResult Check(int variant) const {
    for (int g = 0; g < num_groups(); ++g) {
      if (::testing::AssertionResult r = CheckGroup(g, variant); !r) return r;
    }
    return ::testing::AssertionSuccess();
  }
  // The same for group g alone.
  ::testing::AssertionResult CheckGroup(int g, int variant) const {
    const gemm::GroupProblem& p = groups_[g];
    const FakeGroup fg = FakeGroupOf(p);
    int rows = p.m;
    if (!device_m_.empty()) rows = std::max(0, std::min<int>(device_m_[g], p.m));
    const size_t total = c_[g].size() / static_cast<size_t>(p.n);
    for (size_t r = 0; r < total; ++r) {
      for (int j = 0; j < p.n; ++j) {
        const uint16_t got = c_[g][r * p.n + j];
        const uint16_t want = static_cast<int>(r) < rows
                                  ? FakeValue(fg, variant, static_cast<int>(r), j)
                                  : kSentinel;
        if (got != want) {
          return ::testing::AssertionFailure()
                 << "group " << g << " C[" << r << "][" << j << "] = " << got << ", want " << want
                 << " (rows " << rows << ", variant " << variant << ")";
        }
      }
    }
    return ::testing::AssertionSuccess();
  }
  // Whether group g's C still holds only the sentinel (no launch wrote it since ClearC).
  ::testing::AssertionResult Untouched(int g) const {
    for (size_t i = 0; i < c_[g].size(); ++i) {
      if (c_[g][i] != kSentinel) {
        return ::testing::AssertionFailure() << "group " << g << " C element " << i << " written";
      }
    }
    return ::testing::AssertionSuccess();
  }

 private:
  static void Fill(std::vector<uint8_t>& v, size_t n, std::mt19937& rng) {
    v.resize(n);
    for (auto& x : v) x = static_cast<uint8_t>(rng());
  }

  std::vector<Dims> dims_;
  std::vector<std::vector<uint8_t>> a_, b_, sfa_, sfb_;
  std::vector<std::vector<uint16_t>> c_;
  std::vector<gemm::GroupProblem> groups_;
  std::vector<int32_t> device_m_;
};

}  // namespace encore::graph_cache::testing

#endif  // ENCORE_TESTS_GRAPH_CACHE_HOST_PROBLEM_H_
