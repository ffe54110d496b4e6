// GPU-side helpers of the graph cache tests: device problems with host mirrors, and the list of
// runners the GPU tests are parameterized over.
//
// Runners: every GPU test runs against each entry of GpuRunners(): the fake runner (FakeGemm in
// GPU mode: a trivial kernel whose outputs depend on every pointer and size) and, with
// ENCORE_GRAPH_CACHE_TEST_REAL_GEMM (set by this library's BUILD target), the real sm90 runner
// twice: as created by default and with the token pre-pass forced (two kernel nodes per call).
// GpuRunnerTest is the fixture base: the parameter's runner and a stream.
// Tests compare graph results with DIRECT launches of the same runner (bit for bit), which holds
// for any deterministic runner; the fake additionally checks against its host formula.
//
// Example:
//   ENCORE_ASSERT_OK_AND_ASSIGN(auto p, DeviceProblem::Create({{64, 128, 256}}, /*seed=*/1));
//   ENCORE_ASSERT_OK(p.ClearC(stream));
//   ... run ...
//   auto c = p.DownloadC(stream);   // synchronizes the stream
#ifndef ENCORE_TESTS_GRAPH_CACHE_GPU_UTIL_H_
#define ENCORE_TESTS_GRAPH_CACHE_GPU_UTIL_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuda_utils/raii.h"
#include "cuda_utils/status.h"
#include "gemm/grouped_gemm.h"
#include "gemm/problem.h"
#include "tests/graph_cache/fake_gemm.h"
#include "tests/graph_cache/fake_params.h"
#include "tests/graph_cache/host_problem.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

#if defined(ENCORE_GRAPH_CACHE_TEST_REAL_GEMM)
#include "gemm/grouped_gemm.h"
#endif

#define ENCORE_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ENCORE_ASSERT_OK_AND_ASSIGN_IMPL(ENCORE_CONCAT(_gpu_sor_, __LINE__), lhs, expr)
#define ENCORE_ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, expr)    \
  auto tmp = (expr);                                        \
  ASSERT_TRUE(tmp.ok()) << #expr << " -> " << tmp.status(); \
  lhs = std::move(*tmp)

namespace encore::graph_cache::testing {

struct GpuRunner {
  std::string name;
  std::function<absl::StatusOr<std::unique_ptr<gemm::Nvfp4GroupedGemm>>()> make;
  bool is_fake = false;
};

inline std::vector<GpuRunner> GpuRunners() {
  std::vector<GpuRunner> r;
  r.push_back(GpuRunner{"Fake",
                        []() -> absl::StatusOr<std::unique_ptr<gemm::Nvfp4GroupedGemm>> {
                          return std::unique_ptr<gemm::Nvfp4GroupedGemm>(
                              new FakeGemm(FakeGemm::Device::kGpu));
                        },
                        true});
#if defined(ENCORE_GRAPH_CACHE_TEST_REAL_GEMM)
  r.push_back(GpuRunner{"Real", [] { return gemm::Nvfp4GroupedGemm::Create(); }, false});
  // Every call through the token pre-pass: two kernel nodes per launch (capture, patching and
  // batches of two-node launches).
  r.push_back(GpuRunner{"RealPrepass",
                        [] {
                          gemm::RunnerOptions options;
                          options.token_prepass = gemm::TokenPrepass::kAlways;
                          return gemm::Nvfp4GroupedGemm::Create(options);
                        },
                        false});
#endif
  return r;
}

inline std::string RunnerName(const ::testing::TestParamInfo<GpuRunner>& info) {
  return info.param.name;
}

inline constexpr unsigned char kSentinelByte = 0xad;  // C cleared to 0xadad

// A grouped problem in device memory, inputs valid NVFP4 (any e2m1 byte; e4m3 scales kept in a
// finite, moderate range) so the real kernel can run it too, with host mirrors of the inputs.
class DeviceProblem {
 public:
  static absl::StatusOr<DeviceProblem> Create(std::vector<Dims> dims, uint32_t seed,
                                              std::vector<int> capacity_rows = {}) {
    DeviceProblem p;
    p.dims_ = std::move(dims);
    std::mt19937 rng(seed);
    const size_t ng = p.dims_.size();
    p.groups_.resize(ng);
    for (size_t g = 0; g < ng; ++g) {
      const Dims d = p.dims_[g];
      const int rows = capacity_rows.empty() ? d.m : capacity_rows[g];
      const int alloc_rows = rows > 0 ? rows : 1;
      Buffers b;
      b.a_host = Random(static_cast<size_t>(alloc_rows) * d.k / 2, rng, 0, 255);
      b.b_host = Random(static_cast<size_t>(d.n) * d.k / 2, rng, 0, 255);
      b.sfa_host = Random(gemm::BlockedScaleBytes(alloc_rows, d.k), rng, 0x30, 0x40);
      b.sfb_host = Random(gemm::BlockedScaleBytes(d.n, d.k), rng, 0x30, 0x40);
      b.c_elems = static_cast<size_t>(alloc_rows) * d.n;
      ENCORE_ASSIGN_OR_RETURN(b.a, Upload(b.a_host));
      ENCORE_ASSIGN_OR_RETURN(b.b, Upload(b.b_host));
      ENCORE_ASSIGN_OR_RETURN(b.sfa, Upload(b.sfa_host));
      ENCORE_ASSIGN_OR_RETURN(b.sfb, Upload(b.sfb_host));
      ENCORE_ASSIGN_OR_RETURN(b.c, DeviceBuffer::Create(b.c_elems * sizeof(uint16_t)));
      p.groups_[g] = gemm::GroupProblem{b.a.get(), b.b.get(), b.sfa.get(), b.sfb.get(),
                                        b.c.get(), d.m,       d.n,         d.k};
      p.buffers_.push_back(std::move(b));
    }
    ENCORE_ASSIGN_OR_RETURN(p.device_m_, DeviceBuffer::Create(gemm::kMaxGroups * sizeof(int32_t)));
    return p;
  }

  gemm::GroupedGemmArguments args() const {
    return gemm::GroupedGemmArguments{absl::MakeConstSpan(groups_),
                                      dynamic_ ? device_m_.as<const int32_t>() : nullptr};
  }
  int num_groups() const { return static_cast<int>(groups_.size()); }
  void set_m(int g, int m) { groups_[g].m = m; }

  // Dynamic M: writes the per-group row counts into the (fixed) device array, in stream order.
  // The host values are copied before this returns (pageable memcpy), so `rows` may be reused.
  absl::Status SetDeviceM(const std::vector<int32_t>& rows, cudaStream_t stream) {
    dynamic_ = true;
    device_m_host_ = rows;
    ENCORE_RETURN_IF_CUDA_ERROR(
        cudaMemcpyAsync(device_m_.get(), rows.data(), rows.size() * sizeof(int32_t),
                        cudaMemcpyHostToDevice, stream),
        "upload device_m");
    return ToStatus(cudaStreamSynchronize(stream), "sync after device_m upload");
  }

  absl::Status ClearC(cudaStream_t stream) {
    for (Buffers& b : buffers_) {
      ENCORE_RETURN_IF_CUDA_ERROR(cudaMemsetAsync(b.c.get(), kSentinelByte, b.c.size(), stream),
                                  "clear C");
    }
    return absl::OkStatus();
  }

  // Synchronizes `stream`, then copies every C back.
  absl::StatusOr<std::vector<std::vector<uint16_t>>> DownloadC(cudaStream_t stream) const {
    ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream), "sync before download");
    std::vector<std::vector<uint16_t>> out;
    for (const Buffers& b : buffers_) {
      std::vector<uint16_t> c(b.c_elems);
      ENCORE_RETURN_IF_CUDA_ERROR(
          cudaMemcpy(c.data(), b.c.get(), b.c_elems * sizeof(uint16_t), cudaMemcpyDeviceToHost),
          "download C");
      out.push_back(std::move(c));
    }
    return out;
  }

  // What FakeGemm (variant) must have written, from the host mirrors.
  std::vector<std::vector<uint16_t>> FakeExpected(int variant) const {
    std::vector<std::vector<uint16_t>> out;
    for (int g = 0; g < num_groups(); ++g) {
      const Buffers& b = buffers_[g];
      const gemm::GroupProblem& p = groups_[g];
      const FakeGroup fg{b.a_host.data(),
                         b.b_host.data(),
                         b.sfa_host.data(),
                         b.sfb_host.data(),
                         nullptr,
                         p.m,
                         p.n,
                         p.k,
                         0};
      int rows = p.m;
      if (dynamic_) rows = std::max(0, std::min<int>(device_m_host_[g], p.m));
      std::vector<uint16_t> c(b.c_elems, static_cast<uint16_t>(kSentinelByte * 0x101));
      for (int r = 0; r < rows; ++r) {
        for (int j = 0; j < p.n; ++j) {
          c[static_cast<size_t>(r) * p.n + j] = FakeValue(fg, variant, r, j);
        }
      }
      out.push_back(std::move(c));
    }
    return out;
  }

 private:
  struct Buffers {
    std::vector<uint8_t> a_host, b_host, sfa_host, sfb_host;
    size_t c_elems = 0;
    DeviceBuffer a, b, sfa, sfb, c;
  };
  static std::vector<uint8_t> Random(size_t n, std::mt19937& rng, int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<uint8_t> v(n);
    for (auto& x : v) x = static_cast<uint8_t>(d(rng));
    return v;
  }
  static absl::StatusOr<DeviceBuffer> Upload(const std::vector<uint8_t>& host) {
    ENCORE_ASSIGN_OR_RETURN(DeviceBuffer d, DeviceBuffer::Create(host.size()));
    ENCORE_RETURN_IF_CUDA_ERROR(
        cudaMemcpy(d.get(), host.data(), host.size(), cudaMemcpyHostToDevice), "upload");
    return d;
  }

  std::vector<Dims> dims_;
  std::vector<Buffers> buffers_;
  std::vector<gemm::GroupProblem> groups_;
  DeviceBuffer device_m_;
  std::vector<int32_t> device_m_host_;
  bool dynamic_ = false;
};

// Runs `p` directly with `runner` (C cleared first) and returns the outputs: the reference any
// graph replay must match bit for bit.
inline absl::StatusOr<std::vector<std::vector<uint16_t>>> DirectReference(
    gemm::Nvfp4GroupedGemm& runner, DeviceProblem& p, cudaStream_t stream,
    gemm::KernelKind kind = gemm::KernelKind::kAuto) {
  ENCORE_RETURN_IF_ERROR(p.ClearC(stream));
  ENCORE_RETURN_IF_ERROR(runner.Run(p.args(), stream, kind));
  return p.DownloadC(stream);
}

// The common part of the GPU fixtures: the parameter's runner and a stream (skips without a GPU).
// A derived SetUp calls GpuRunnerTest::SetUp() first and returns if it skipped or failed.
class GpuRunnerTest : public ::testing::TestWithParam<GpuRunner> {
 protected:
  void SetUp() override {
    ENCORE_SKIP_WITHOUT_GPU();
    auto r = GetParam().make();
    ASSERT_TRUE(r.ok()) << r.status();
    runner_ = *std::move(r);
    auto s = Stream::Create();
    ASSERT_TRUE(s.ok()) << s.status();
    stream_ = *std::move(s);
  }
  bool SetUpStopped() const { return IsSkipped() || HasFatalFailure(); }

  std::unique_ptr<gemm::Nvfp4GroupedGemm> runner_;
  Stream stream_;
};

}  // namespace encore::graph_cache::testing

#endif  // ENCORE_TESTS_GRAPH_CACHE_GPU_UTIL_H_
