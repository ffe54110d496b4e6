// GPU tests of the sm90 NVFP4 grouped GEMM against the CPU reference (double accumulation, one
// fp16 rounding): fresh random data for every case, outputs poisoned before every run, both
// kernels forced on each case. Skips (with the reason) without a GPU.
#include "gemm/sm90_nvfp4_grouped_gemm.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cuda_utils/raii.h"
#include "cuda_utils/status.h"
#include "gemm/grouped_gemm.h"
#include "gemm/heuristics.h"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/launch.h"
#include "gemm/nvfp4.h"
#include "gemm/problem.h"
#include "gemm/reference.h"
#include "gemm/sm90_support.h"
#include "gemm/testing/device_problem.h"
#include "gemm/testing/host_problem.h"
#include "gemm/testing/sm_blocker.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace encore::gemm {
namespace {

using testing::DeviceGroupedProblem;
using testing::Distribution;
using testing::HostGroupedProblem;
using testing::MakeHostProblem;
using testing::Shape;

std::vector<Shape> Zip(std::vector<int> m, std::vector<int> n, std::vector<int> k) {
  std::vector<Shape> s;
  for (size_t i = 0; i < m.size(); ++i) s.push_back({m[i], n[i], k[i]});
  return s;
}

struct Case {
  std::string name;
  std::vector<Shape> shapes;
};

std::vector<Case> GpuModeCases() {
  return {
      {"gm0", Zip({96, 128}, {128, 256}, {256, 512})},
      {"gm1", Zip({256, 72}, {512, 384}, {256, 256})},
      {"gm2", Zip({128, 128}, {128, 256}, {512, 256})},
      {"gm3", Zip({80, 128, 256}, {384, 256, 128}, {256, 512, 256})},
      {"gm4", Zip({64, 72, 96}, {128, 384, 512}, {512, 512, 256})},
      {"gm5", Zip({64, 256, 128}, {768, 128, 256}, {512, 256, 512})},
      {"gm6", Zip({128, 128, 64}, {256, 512, 512}, {768, 256, 768})},
      {"gm7", Zip({128, 128, 128, 128}, {128, 128, 128, 128}, {512, 256, 512, 256})},
      {"gm8", Zip({40, 56, 384, 512}, {512, 384, 256, 128}, {256, 256, 256, 256})},
      {"gm9", Zip({512, 384, 256, 128}, {256, 256, 256, 256}, {512, 768, 512, 768})},
      // Edges: an empty group, one row, 129 rows (two tiles of 80 / 49 rows, three scale
      // blocks), K = 64 (half a k block), K = 192, N = 8 and N = 136 (partial weight tiles).
      {"edges",
       Zip({0, 1, 129, 16, 300, 7}, {128, 256, 128, 8, 136, 64}, {256, 64, 192, 64, 320, 128})},
  };
}

std::vector<Shape> SixtyFourGroups(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Shape> s;
  for (int g = 0; g < kMaxGroups; ++g) {
    s.push_back({static_cast<int>(rng() % 200), 8 * (1 + static_cast<int>(rng() % 40)),
                 64 * (1 + static_cast<int>(rng() % 6))});
  }
  return s;
}

// Waits for the device with a deadline: a hung kernel aborts the test binary (which tears the
// context down) instead of holding the GPU until an outer timeout.
void SyncOrDie(cudaStream_t stream = nullptr, double seconds = 20.0) {
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    const cudaError_t e = stream ? cudaStreamQuery(stream) : cudaStreamQuery(nullptr);
    if (e == cudaSuccess) break;
    if (e != cudaErrorNotReady) {
      std::fprintf(stderr, "device error: %s\n", cudaGetErrorString(e));
      std::abort();
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) {
      std::fprintf(stderr, "kernel did not finish within %.0f s: aborting\n", seconds);
      std::abort();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    std::fprintf(stderr, "device error: %s\n", cudaGetErrorString(e));
    std::abort();
  }
}

int OrderedHalf(uint16_t h) { return (h & 0x8000) ? -static_cast<int>(h & 0x7FFF) : h; }
bool IsNan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }

double HalfUlp(uint16_t h) {
  const int e = (h >> 10) & 0x1F;
  return std::ldexp(1.0, (e == 0 ? 1 : e) - 25);
}

// Compares group g's C with the reference; rows >= valid_rows must still hold the poison.
// max_ulps = 0 (GPU MODE data): bit-exact. Otherwise an output passes within 1 fp16 ulp of the
// reference, or, where fp32 accumulation meets cancellation (full-range data spans 2^-10 .. 2688
// per operand), within 1 ulp + k * 2^-24 * sum|a_k b_k| of the exact sum (the standard fp32
// recursive-summation bound; wgmma accumulates in fp32). Such outputs are counted and printed.
void ExpectGroupMatches(const testing::HostGroup& hg, const std::vector<uint16_t>& got,
                        int valid_rows, int max_ulps, const std::string& what) {
  // One reference product, rounded once (ReferenceGemm's own rounding); the sums of |a_k b_k|
  // only when an output needs the fp32 bound.
  const std::vector<double> exact = ReferenceGemmDouble(hg.a, hg.b);
  const std::vector<uint16_t> ref = RoundToHalf(exact);
  std::vector<double> abs_sum;
  auto abs_sums = [&]() -> const std::vector<double>& {
    if (abs_sum.empty()) {
      Nvfp4Matrix a = hg.a, b = hg.b;
      for (uint8_t& v : a.packed) v &= 0x77;
      for (uint8_t& v : b.packed) v &= 0x77;
      abs_sum = ReferenceGemmDouble(a, b);
    }
    return abs_sum;
  };
  const int m = hg.shape.m, n = hg.shape.n;
  ASSERT_EQ(got.size(), static_cast<size_t>(m) * n) << what;
  int64_t bad = 0, unwritten = 0, clobbered = 0, fp32_bound = 0;
  int worst = 0;
  size_t worst_at = 0;
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < n; ++c) {
      const size_t i = static_cast<size_t>(r) * n + c;
      if (r >= valid_rows) {
        clobbered += got[i] != 0xFFFF;
        continue;
      }
      if (IsNan(got[i])) {
        ++unwritten;
        continue;
      }
      const int d = std::abs(OrderedHalf(got[i]) - OrderedHalf(ref[i]));
      if (d > max_ulps) {
        const double err = std::abs(static_cast<double>(HalfBitsToFloat(got[i])) - exact[i]);
        const double bound =
            max_ulps == 0 ? -1.0 : HalfUlp(ref[i]) + hg.shape.k * std::ldexp(abs_sums()[i], -24);
        if (err <= bound) {
          ++fp32_bound;
        } else {
          ++bad;
          if (d > worst) {
            worst = d;
            worst_at = i;
          }
        }
      }
    }
  }
  if (fp32_bound > 0) {
    std::printf("%s: %lld of %lld outputs beyond 1 ulp, within the fp32 accumulation bound\n",
                what.c_str(), static_cast<long long>(fp32_bound),
                static_cast<long long>(valid_rows) * n);
  }
  EXPECT_EQ(unwritten, 0) << what << ": NaN (unwritten or poisoned) outputs";
  EXPECT_EQ(clobbered, 0) << what << ": rows beyond the dynamic M were written";
  EXPECT_EQ(bad, 0) << what << ": " << bad << " outputs off by more than " << max_ulps
                    << " ulp (and the fp32 bound); worst " << worst << " ulp at row "
                    << worst_at / n << " col " << worst_at % n << " (got 0x" << std::hex
                    << got[worst_at] << ", want 0x" << ref[worst_at] << std::dec << ")";
}

// Every group of `dev` against `host`'s reference (all m rows valid).
void ExpectAllGroupsMatch(const HostGroupedProblem& host, DeviceGroupedProblem& dev, int max_ulps,
                          const std::string& what) {
  for (size_t g = 0; g < host.groups.size(); ++g) {
    auto c = dev.DownloadC(static_cast<int>(g), nullptr);
    ASSERT_TRUE(c.ok()) << c.status();
    ExpectGroupMatches(host.groups[g], *c, host.groups[g].shape.m, max_ulps,
                       absl::StrCat(what, " group ", g));
  }
}

// Poisons `dev`'s outputs, launches `plan` twice back to back (the second behind a PDL edge: a
// launch must leave its workspaces and counters ready for the next) and checks every group.
void LaunchTwiceAndCheck(Nvfp4GroupedGemm* gemm, const LaunchPlan& plan,
                         const HostGroupedProblem& host, DeviceGroupedProblem& dev,
                         Distribution dist, const std::string& what) {
  ENCORE_ASSERT_OK(dev.PoisonOutputs(nullptr));
  ENCORE_ASSERT_OK(gemm->Launch(plan, nullptr, /*pdl=*/false));
  ENCORE_ASSERT_OK(gemm->Launch(plan, nullptr, /*pdl=*/true));
  SyncOrDie();
  ExpectAllGroupsMatch(host, dev, dist == Distribution::kGpuMode ? 0 : 1, what);
}

class Sm90GemmTest : public ::testing::Test {
 protected:
  // One runner per token pre-pass mode and fusion policy (kAuto, kAuto: the default options;
  // RunnerOptions::fuse_token_prepass).
  static Nvfp4GroupedGemm* Runner(TokenPrepass mode = TokenPrepass::kAuto,
                                  FusePrepass fused = FusePrepass::kAuto) {
    static std::unique_ptr<Nvfp4GroupedGemm> runners[3][3];
    std::unique_ptr<Nvfp4GroupedGemm>& runner =
        runners[static_cast<int>(fused)][static_cast<int>(mode)];
    if (runner == nullptr) {
      RunnerOptions options;
      options.token_prepass = mode;
      options.fuse_token_prepass = fused;
      auto r = Nvfp4GroupedGemm::Create(options);
      EXPECT_TRUE(r.ok()) << r.status();
      if (r.ok()) runner = std::move(*r);
    }
    return runner.get();
  }

  // Uploads, poisons, runs `kind`, checks every group.
  void RunAndCheck(const HostGroupedProblem& host, Distribution dist, KernelKind kind,
                   const std::string& what, TokenPrepass mode = TokenPrepass::kAuto,
                   FusePrepass fused = FusePrepass::kAuto) {
    Nvfp4GroupedGemm* gemm = Runner(mode, fused);
    ASSERT_NE(gemm, nullptr);
    auto dev = DeviceGroupedProblem::Upload(host);
    ASSERT_TRUE(dev.ok()) << dev.status();
    ENCORE_ASSERT_OK(dev->PoisonOutputs(nullptr));
    ENCORE_ASSERT_OK(gemm->Run(dev->args(), nullptr, kind));
    SyncOrDie();
    ExpectAllGroupsMatch(host, *dev, dist == Distribution::kGpuMode ? 0 : 1, what);
  }
};

const char* DistName(Distribution d) {
  return d == Distribution::kGpuMode ? "gpumode" : "fullrange";
}
const char* PrepassName(TokenPrepass m) {
  if (m == TokenPrepass::kAlways) return "prepass";
  return m == TokenPrepass::kNever ? "in-kernel" : "auto";
}
// The kernel kinds this build has (stream-K only where sm90::kStreamKBuilt).
std::vector<KernelKind> BuiltKinds(bool with_auto = false) {
  std::vector<KernelKind> kinds = {KernelKind::kSimple, KernelKind::kPersistent};
  if (sm90::kStreamKBuilt) kinds.push_back(KernelKind::kStreamK);
  if (with_auto) kinds.push_back(KernelKind::kAuto);
  return kinds;
}

// Both token sources: converted in kernel, and by the pre-pass (stream-K plans in kernel unless
// sm90::kStreamKPrepass).
constexpr TokenPrepass kTokenModes[] = {TokenPrepass::kNever, TokenPrepass::kAlways};

TEST_F(Sm90GemmTest, GpuModeShapesBothKernelsBothDistributions) {
  ENCORE_SKIP_WITHOUT_GPU();
  uint64_t seed = std::random_device{}();
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  for (const Case& c : GpuModeCases()) {
    for (Distribution dist : {Distribution::kGpuMode, Distribution::kFullRange}) {
      for (KernelKind kind : BuiltKinds()) {
        for (TokenPrepass mode : kTokenModes) {
          if (kind == KernelKind::kStreamK && mode == TokenPrepass::kAlways &&
              !sm90::kStreamKPrepass) {
            continue;
          }
          const HostGroupedProblem host = MakeHostProblem(c.shapes, dist, ++seed);
          RunAndCheck(host, dist, kind,
                      absl::StrCat(c.name, " ", DistName(dist), " ", KernelKindName(kind), " ",
                                   PrepassName(mode)),
                      mode);
        }
      }
    }
  }
}

// Weight fragments are e2m1 * scale * 2^-7 in fp16 (one multiply); with the smallest e4m3 scale
// (2^-9) every code below 4 becomes an fp16 subnormal. GPU MODE-like tokens keep the sums exact,
// so any subnormal flushed by the multiplier or the tensor cores shows as a mismatch.
TEST_F(Sm90GemmTest, SubnormalWeightFragmentsAreHonored) {
  ENCORE_SKIP_WITHOUT_GPU();
  for (KernelKind kind : BuiltKinds()) {
    HostGroupedProblem host = MakeHostProblem(Zip({96, 200}, {256, 128}, {512, 256}),
                                              Distribution::kGpuMode, std::random_device{}());
    for (testing::HostGroup& hg : host.groups) {
      std::fill(hg.b.scales.begin(), hg.b.scales.end(), 0x01);  // 2^-9
      hg.sfb_blocked = ToBlockedScales(hg.b.scales, hg.shape.n, hg.shape.k);
    }
    for (TokenPrepass mode : kTokenModes) {
      RunAndCheck(host, Distribution::kGpuMode, kind,
                  absl::StrCat("subnormal weights ", KernelKindName(kind), " ", PrepassName(mode)),
                  mode);
    }
  }
}

// Token values with the one-multiply dequant (ENCORE_SM90_TOKEN_ONE_MUL) are e2m1 * scale * 2^-7:
// with token scales 2^-9 they are fp16 subnormals in shared memory (the wgmma B operand).
TEST_F(Sm90GemmTest, SubnormalTokenValuesAreHonored) {
  ENCORE_SKIP_WITHOUT_GPU();
  for (KernelKind kind : BuiltKinds()) {
    HostGroupedProblem host = MakeHostProblem(Zip({96, 200}, {256, 384}, {512, 256}),
                                              Distribution::kGpuMode, std::random_device{}());
    for (testing::HostGroup& hg : host.groups) {
      std::fill(hg.a.scales.begin(), hg.a.scales.end(), 0x01);  // 2^-9
      hg.sfa_blocked = ToBlockedScales(hg.a.scales, hg.shape.m, hg.shape.k);
    }
    for (TokenPrepass mode : kTokenModes) {
      RunAndCheck(host, Distribution::kGpuMode, kind,
                  absl::StrCat("subnormal tokens ", KernelKindName(kind), " ", PrepassName(mode)),
                  mode);
    }
  }
}

TEST_F(Sm90GemmTest, SixtyFourGroups) {
  ENCORE_SKIP_WITHOUT_GPU();
  uint64_t seed = std::random_device{}();
  for (Distribution dist : {Distribution::kGpuMode, Distribution::kFullRange}) {
    for (KernelKind kind : BuiltKinds(/*with_auto=*/true)) {
      for (TokenPrepass mode : kTokenModes) {
        seed += 2;
        const HostGroupedProblem host = MakeHostProblem(SixtyFourGroups(seed), dist, seed + 1);
        RunAndCheck(host, dist, kind,
                    absl::StrCat("64 groups ", DistName(dist), " ", KernelKindName(kind), " ",
                                 PrepassName(mode)),
                    mode);
      }
    }
  }
}

TEST_F(Sm90GemmTest, DynamicMComputesOnlyValidRows) {
  ENCORE_SKIP_WITHOUT_GPU();
  const std::vector<Shape> shapes =
      Zip({200, 384, 64, 96, 130}, {256, 128, 384, 128, 256}, {256, 512, 128, 192, 256});
  const std::vector<int32_t> device_m = {137, 0, 64, 95, 1};
  for (KernelKind kind : BuiltKinds())
  for (TokenPrepass mode : kTokenModes) {
    const HostGroupedProblem host =
        MakeHostProblem(shapes, Distribution::kFullRange, std::random_device{}());
    auto dev = DeviceGroupedProblem::Upload(host);
    ASSERT_TRUE(dev.ok()) << dev.status();
    auto dm = DeviceBuffer::Create(device_m.size() * sizeof(int32_t));
    ASSERT_TRUE(dm.ok());
    ENCORE_ASSERT_OK(
        ToStatus(cudaMemcpy(dm->get(), device_m.data(), dm->size(), cudaMemcpyHostToDevice),
                 "copy device_m"));
    ENCORE_ASSERT_OK(dev->PoisonOutputs(nullptr));
    GroupedGemmArguments args = dev->args();
    args.device_m = dm->as<int32_t>();
    ENCORE_ASSERT_OK(Runner(mode)->Run(args, nullptr, kind));
    SyncOrDie();
    for (size_t g = 0; g < shapes.size(); ++g) {
      auto c = dev->DownloadC(static_cast<int>(g), nullptr);
      ASSERT_TRUE(c.ok());
      ExpectGroupMatches(host.groups[g], *c, device_m[g], 1,
                         absl::StrCat("dynamic M ", KernelKindName(kind), " ", PrepassName(mode),
                                      " group ", g));
    }
  }
}

// Every C in one allocation between guard bytes: no kernel writes outside its group's m x n (with
// the pre-pass, C goes out by TMA stores, 16 rows a store: tiles of 48 and 200 rows end inside a
// 32-row chunk, N = 200 ends inside a 64-column strip, N = 8 leaves a whole strip past N, M = 1
// a single row), and every output is written (the guard pattern is a finite value, so an output
// left unwritten fails the comparison).
TEST_F(Sm90GemmTest, OutputsStayInsideTheirGroups) {
  ENCORE_SKIP_WITHOUT_GPU();
  const std::vector<Shape> shapes =
      Zip({48, 1, 200, 0, 130, 64}, {200, 256, 8, 128, 136, 72}, {256, 512, 256, 256, 128, 64});
  constexpr size_t kGuard = 4096;  // bytes before and after every C
  constexpr uint8_t kPattern = 0xAB;
  for (KernelKind kind : BuiltKinds(/*with_auto=*/true))
  for (TokenPrepass mode : kTokenModes) {
    const std::string what = absl::StrCat(KernelKindName(kind), " ", PrepassName(mode));
    const HostGroupedProblem host =
        MakeHostProblem(shapes, Distribution::kGpuMode, std::random_device{}());
    auto dev = DeviceGroupedProblem::Upload(host);
    ASSERT_TRUE(dev.ok()) << dev.status();
    std::vector<GroupProblem> groups = dev->problems();
    std::vector<size_t> offsets;
    size_t bytes = kGuard;
    for (const GroupProblem& p : groups) {
      offsets.push_back(bytes);
      bytes += static_cast<size_t>(p.m) * p.n * 2 + kGuard;
    }
    auto slab = DeviceBuffer::Create(bytes);
    ASSERT_TRUE(slab.ok()) << slab.status();
    for (size_t g = 0; g < groups.size(); ++g) groups[g].c = slab->as<uint8_t>() + offsets[g];
    ENCORE_ASSERT_OK(ToStatus(cudaMemset(slab->get(), kPattern, bytes), "fill the slab"));
    ENCORE_ASSERT_OK(Runner(mode)->Run(GroupedGemmArguments{absl::MakeConstSpan(groups)},
                                       nullptr, kind));
    SyncOrDie();
    std::vector<uint8_t> got(bytes);
    ENCORE_ASSERT_OK(
        ToStatus(cudaMemcpy(got.data(), slab->get(), bytes, cudaMemcpyDeviceToHost), "slab"));
    size_t at = 0;
    for (size_t g = 0; g <= groups.size(); ++g) {
      const size_t end = g < groups.size() ? offsets[g] : bytes;
      int64_t written = 0;
      for (; at < end; ++at) written += got[at] != kPattern;
      EXPECT_EQ(written, 0) << what << ": guard bytes before group " << g << " written";
      if (g == groups.size()) break;
      const size_t c_bytes = static_cast<size_t>(groups[g].m) * groups[g].n * 2;
      std::vector<uint16_t> c(c_bytes / 2);
      if (c_bytes != 0) std::memcpy(c.data(), got.data() + at, c_bytes);
      ExpectGroupMatches(host.groups[g], c, groups[g].m, 0, absl::StrCat(what, " group ", g));
      at += c_bytes;
    }
  }
}

// Stream-K with few tiles and many CTAs: a tile's k-blocks spread over many CTAs (the reduction of
// three or more pieces), ragged groups with different K (a half block at K = 64), an M = 0 group,
// and launches back to back on one stream (each reduction must leave its arrival counter at zero).
TEST_F(Sm90GemmTest, StreamKSplitsTilesAcrossManyCtas) {
  ENCORE_SKIP_WITHOUT_GPU();
  if (!sm90::kStreamKBuilt) {
    GTEST_SKIP() << "stream-K is not built for this tile shape (sm90::kStreamKBuilt)";
  }
  Nvfp4GroupedGemm* gemm = Runner();
  ASSERT_NE(gemm, nullptr);
  uint64_t seed = std::random_device{}();
  struct SkCase {
    const char* name;
    std::vector<Shape> shapes;
  };
  const SkCase cases[] = {
      {"one tile, many pieces", Zip({128}, {256}, {7168})},
      {"ragged", Zip({0, 1, 129, 40, 300}, {256, 512, 128, 384, 256}, {64, 256, 1024, 512, 1536})},
      // 200 tiles on 132 SMs: a wave of whole tiles, then 68 tiles split.
      {"whole wave + split",
       Zip({3200, 3200, 3200, 3200, 3200, 3200, 3200, 3200},
           {256, 256, 256, 256, 256, 256, 256, 256}, {64, 128, 64, 128, 64, 128, 64, 128})},
  };
  for (const SkCase& c : cases) {
    for (Distribution dist : {Distribution::kGpuMode, Distribution::kFullRange}) {
      const HostGroupedProblem host = MakeHostProblem(c.shapes, dist, ++seed);
      auto dev = DeviceGroupedProblem::Upload(host);
      ASSERT_TRUE(dev.ok()) << dev.status();
      auto plan = std::make_unique<LaunchPlan>();
      ENCORE_ASSERT_OK(gemm->Prepare(dev->args(), plan.get(), KernelKind::kStreamK));
      EXPECT_EQ(plan->kind, KernelKind::kStreamK);
      const auto* params = reinterpret_cast<const sm90::Params<8>*>(plan->params);
      EXPECT_EQ(static_cast<int>(plan->grid.x), params->sk_ctas);
      EXPECT_LE(params->sk_ctas, gemm->sm_count());
      if (c.shapes.size() == 1) {
        EXPECT_GT(params->sk_ctas, 2 * 2) << "pieces per tile";
      }
      for (int rep = 0; rep < 2; ++rep) {
        ENCORE_ASSERT_OK(dev->PoisonOutputs(nullptr));
        ENCORE_ASSERT_OK(gemm->Launch(*plan, nullptr, /*pdl=*/rep > 0));
        if (rep == 1) ENCORE_ASSERT_OK(gemm->Launch(*plan, nullptr, /*pdl=*/true));
        SyncOrDie();
        ASSERT_NO_FATAL_FAILURE(ExpectAllGroupsMatch(
            host, *dev, dist == Distribution::kGpuMode ? 0 : 1,
            absl::StrCat("stream-K ", c.name, " ", DistName(dist), " rep ", rep)));
      }
    }
  }
}

// Split tiles at the edges the other stream-K tests leave out (session 32's review): a K with a
// half k-block (111 x 64) split across pieces, N not a multiple of 128 (a weight tile of 8
// columns), 64 groups (Params<64>) whose tiles are split, and dynamic M on split tiles with the
// valid rows ending inside a token tile, at a tile boundary, and at 0; both token sources.
TEST_F(Sm90GemmTest, StreamKSplitsAtTheEdges) {
  ENCORE_SKIP_WITHOUT_GPU();
  if (!sm90::kStreamKBuilt) {
    GTEST_SKIP() << "stream-K is not built for this tile shape (sm90::kStreamKBuilt)";
  }
  uint64_t seed = std::random_device{}();
  struct Case {
    const char* name;
    std::vector<Shape> shapes;
    std::vector<int32_t> device_m;  // empty: static M
    int tiles;                      // whole tiles (at 256 token rows): more CTAs means a split
  };
  const std::vector<Case> cases = {
      {"half k-block", Zip({128, 40}, {256, 128}, {7104, 2112}), {}, 3},
      {"n = 136", Zip({128}, {136}, {7168}), {}, 2},
      {"64 groups", std::vector<Shape>(64, Shape{16, 128, 2048}), {}, 64},
      {"dynamic M inside a tile", Zip({384, 96}, {256, 128}, {7168, 4096}), {193, 0}, 5},
      {"dynamic M at a tile boundary", Zip({384, 96}, {256, 128}, {7168, 4096}), {192, 96}, 5},
  };
  for (const Case& c : cases)
  for (TokenPrepass mode : kTokenModes) {
    const std::string what = absl::StrCat("stream-K ", c.name, " ", PrepassName(mode));
    Nvfp4GroupedGemm* gemm = Runner(mode);
    ASSERT_NE(gemm, nullptr);
    const HostGroupedProblem host = MakeHostProblem(c.shapes, Distribution::kFullRange, ++seed);
    auto dev = DeviceGroupedProblem::Upload(host);
    ASSERT_TRUE(dev.ok()) << dev.status();
    GroupedGemmArguments args = dev->args();
    std::optional<DeviceBuffer> dm;
    if (!c.device_m.empty()) {
      auto buffer = DeviceBuffer::Create(c.device_m.size() * sizeof(int32_t));
      ASSERT_TRUE(buffer.ok());
      dm.emplace(std::move(*buffer));
      ENCORE_ASSERT_OK(ToStatus(cudaMemcpy(dm->get(), c.device_m.data(), dm->size(),
                                           cudaMemcpyHostToDevice),
                                "copy device_m"));
      args.device_m = dm->as<int32_t>();
    }
    auto plan = std::make_unique<LaunchPlan>();
    ENCORE_ASSERT_OK(gemm->Prepare(args, plan.get(), KernelKind::kStreamK));
    ASSERT_EQ(plan->kind, KernelKind::kStreamK) << what;
    EXPECT_GT(static_cast<int>(plan->grid.x), c.tiles) << what << ": some tile is split";
    for (int rep = 0; rep < 2; ++rep) {
      ENCORE_ASSERT_OK(dev->PoisonOutputs(nullptr));
      ENCORE_ASSERT_OK(gemm->Launch(*plan, nullptr, /*pdl=*/rep > 0));
      SyncOrDie();
      for (size_t g = 0; g < c.shapes.size(); ++g) {
        auto out = dev->DownloadC(static_cast<int>(g), nullptr);
        ASSERT_TRUE(out.ok()) << out.status();
        const int valid = c.device_m.empty() ? c.shapes[g].m : c.device_m[g];
        ASSERT_NO_FATAL_FAILURE(ExpectGroupMatches(
            host.groups[g], *out, valid, 1, absl::StrCat(what, " rep ", rep, " group ", g)));
      }
    }
  }
}

// M = 257 (two token tiles of 144 rows, the last holding 113) and M = 255, and problems whose
// groups are all empty, under every kernel kind and both token sources: the empty ones launch
// harmlessly and leave every output alone.
TEST_F(Sm90GemmTest, TokenTileEdgesAndAllGroupsEmpty) {
  ENCORE_SKIP_WITHOUT_GPU();
  uint64_t seed = std::random_device{}();
  for (KernelKind kind : BuiltKinds(/*with_auto=*/true))
  for (TokenPrepass mode : kTokenModes) {
    const std::string what = absl::StrCat(KernelKindName(kind), " ", PrepassName(mode));
    ASSERT_NO_FATAL_FAILURE(RunAndCheck(
        MakeHostProblem(Zip({257, 255, 17}, {256, 136, 128}, {1024, 576, 320}),
                        Distribution::kFullRange, ++seed),
        Distribution::kFullRange, kind, absl::StrCat(what, " m = 257 / 255 / 17"), mode));
    // All groups empty: C may be null, and a real output of another allocation stays poisoned.
    const HostGroupedProblem host =
        MakeHostProblem(Zip({0, 0}, {128, 256}, {256, 512}), Distribution::kFullRange, ++seed);
    auto dev = DeviceGroupedProblem::Upload(host);
    ASSERT_TRUE(dev.ok()) << dev.status();
    const HostGroupedProblem bystander_host =
        MakeHostProblem(Zip({64}, {128}, {256}), Distribution::kFullRange, ++seed);
    auto bystander = DeviceGroupedProblem::Upload(bystander_host);
    ASSERT_TRUE(bystander.ok()) << bystander.status();
    ENCORE_ASSERT_OK(bystander->PoisonOutputs(nullptr));
    const absl::Status empty = Runner(mode)->Run(dev->args(), nullptr, kind);
    ASSERT_TRUE(empty.ok()) << what << ", all empty: " << empty;
    SyncOrDie();
    auto c = bystander->DownloadC(0, nullptr);
    ASSERT_TRUE(c.ok()) << c.status();
    size_t written = 0;
    for (uint16_t v : *c) written += v != 0xFFFF;
    EXPECT_EQ(written, 0u) << what << ", all empty: another allocation was written";
  }
}

// No kernel keeps anything in local memory: a stack frame means ptxas moved the accumulators out
// of registers (runs 23 and 68: 10-35x slower, e.g. when the tile walk called the consumer body
// from two sites), which no correctness test notices.
TEST(Sm90KernelResourcesTest, NoKernelUsesLocalMemory) {
  ENCORE_SKIP_WITHOUT_GPU();
  if (sm90::TileShape::kConsumerWgs != 2) {
    GTEST_SKIP() << "the three- and four-warpgroup builds (_wg3, _wg4) spill in their stream-K "
                    "and in-kernel instantiations (runs 67, 82)";
  }
  for (sm90::TokenSource source : {sm90::TokenSource::kInKernel, sm90::TokenSource::kPrepass}) {
    for (KernelKind kind : BuiltKinds()) {
      for (int cap : sm90::kGroupCapacities) {
        for (bool fused : {false, true}) {
          // (the streamed simple kernel: streamed_f, below)
          const void* streamed_f =
              fused ? nullptr : sm90::KernelFunction(kind, cap, source, false, true);
          if (streamed_f != nullptr) {
            cudaFuncAttributes attr;
            ASSERT_EQ(cudaFuncGetAttributes(&attr, streamed_f), cudaSuccess);
            EXPECT_EQ(attr.localSizeBytes, 0u) << "streamed simple kernel, " << cap << " groups: "
                                               << attr.numRegs << " registers";
          }
          const void* f = sm90::KernelFunction(kind, cap, source, fused);
          // (stream-K with pre-pass tokens where not built; fused: pre-pass tokens, whole tiles)
          if (fused) {
            const bool built =
                source == sm90::TokenSource::kPrepass && kind != KernelKind::kStreamK;
            EXPECT_EQ(f != nullptr, built) << KernelKindName(kind) << ", fused";
          }
          if (f == nullptr) continue;
          cudaFuncAttributes attr;
          ASSERT_EQ(cudaFuncGetAttributes(&attr, f), cudaSuccess);
          EXPECT_EQ(attr.localSizeBytes, 0u)
              << KernelKindName(kind) << " kernel, " << cap << " groups, token source "
              << static_cast<int>(source) << (fused ? ", fused" : "") << ": " << attr.numRegs
              << " registers";
        }
      }
    }
  }
  const void* pre = sm90::PrepassFunction(8);
  ASSERT_NE(pre, nullptr);
  cudaFuncAttributes attr;
  ASSERT_EQ(cudaFuncGetAttributes(&attr, pre), cudaSuccess);
  EXPECT_EQ(attr.localSizeBytes, 0u) << "token pre-pass";
  // The runner's padding (heuristics.h PrepassPdlPadBytes) counts the kernel's static shared
  // memory as kPrepassStaticSmemBytes (the stamps build adds 32 bytes of stamp times, within the
  // pad's slack of one reservation a block), and its even spread (up to 8 blocks an SM) needs
  // <= 32 registers a thread (sm90_nvfp4_token_prepass.cuh NOTES; the grid-stride build has
  // 1024-thread blocks).
  EXPECT_GE(attr.sharedSizeBytes, static_cast<size_t>(sm90::kPrepassStaticSmemBytes));
  EXPECT_LE(attr.sharedSizeBytes, static_cast<size_t>(sm90::kPrepassStaticSmemBytes) + 128);
  if (!sm90::kPrepassGridStride) {
    EXPECT_LE(attr.numRegs * sm90::kPrepassThreads * 8, 65536) << "8 blocks of an SM's registers";
  }
}

// A packed persistent schedule (heuristics.h PackTiles: a static tile list per CTA) computes the
// same outputs: GPU MODE shape 1's groups with K = 256 (448 tiles of unequal cost on one CTA per
// SM), through kAuto with both token sources, launched twice back to back with PDL.
TEST_F(Sm90GemmTest, PackedPersistentScheduleMatchesReference) {
  ENCORE_SKIP_WITHOUT_GPU();
  uint64_t seed = std::random_device{}();
  const std::vector<Shape> shapes = Zip({40, 76, 168, 72, 164, 148, 196, 160},
                                        std::vector<int>(8, 7168), std::vector<int>(8, 256));
  for (Distribution dist : {Distribution::kGpuMode, Distribution::kFullRange}) {
    const HostGroupedProblem host = MakeHostProblem(shapes, dist, ++seed);
    auto dev = DeviceGroupedProblem::Upload(host);
    ASSERT_TRUE(dev.ok()) << dev.status();
    for (TokenPrepass mode : kTokenModes) {
      Nvfp4GroupedGemm* gemm = Runner(mode);
      ASSERT_NE(gemm, nullptr);
      auto plan = std::make_unique<LaunchPlan>();
      ENCORE_ASSERT_OK(gemm->Prepare(dev->args(), plan.get()));
      const auto* params = reinterpret_cast<const sm90::Params<8>*>(plan->params);
      ASSERT_EQ(plan->params_bytes, sizeof(sm90::Params<8>));
      if (sm90::TileShape::kBlockN == 128 && sm90::TileShape::kMaxBlockM == 256) {
        ASSERT_GT(params->packed_ctas, 0) << "the cost model no longer packs this shape";
      }
      if (params->packed_ctas > 0) {
        EXPECT_EQ(plan->kind, KernelKind::kPersistent);
        EXPECT_EQ(static_cast<int>(plan->grid.x), params->packed_ctas);
      }
      ASSERT_NO_FATAL_FAILURE(
          LaunchTwiceAndCheck(gemm, *plan, host, *dev, dist,
                              absl::StrCat("packed ", DistName(dist), " ", PrepassName(mode))));
    }
  }
}

// Whether a plan runs the streamed simple kernel under `mode`: every slot with rows has token
// tiles of a width it streams (kAlways), and (kAuto) where it pays (PreferStreamedTiles).
bool WantsStreamed(const LaunchPlan& plan, StreamTiles mode) {
  auto all = [mode](const auto& p) {
    bool any = false;
    for (int s = 0; s < p.num_groups; ++s) {
      if (p.info[s].m <= 0) continue;
      any = true;
      if (!sm90::StreamedTileRows(p.info[s].tile_rows)) return false;
      if (mode == StreamTiles::kAuto && !PreferStreamedTiles(p.info[s].tile_rows, p.info[s].k)) {
        return false;
      }
    }
    return any && mode != StreamTiles::kNever;
  };
  return plan.params_bytes == sizeof(sm90::Params<8>)
             ? all(*reinterpret_cast<const sm90::Params<8>*>(plan.params))
             : all(*reinterpret_cast<const sm90::Params<64>*>(plan.params));
}

// The streamed simple kernel (RunnerOptions::stream_simple_tiles: tiles of <= 128 token rows on a
// 4-stage token ring, streaming at 16 and 128 rows) against the reference, launched twice back to
// back (the second behind a PDL edge), both distributions: decode steps of <= 16 tokens an expert
// (8 and 64 groups, M = 0 included, K with a 64-k tail block) at the runner's own row cap, and
// 128-row tiles with long K (with 16-row ones) at a cap of 128, by default (kAuto); the GPU MODE
// test cases at a cap of 128 with kAlways (128-row tiles at short K).
TEST_F(Sm90GemmTest, StreamedSimpleKernelMatchesReference) {
  ENCORE_SKIP_WITHOUT_GPU();
  const void* streamed[2] = {
      sm90::KernelFunction(KernelKind::kSimple, 8, sm90::TokenSource::kPrepass, false, true),
      sm90::KernelFunction(KernelKind::kSimple, 64, sm90::TokenSource::kPrepass, false, true)};
  if (streamed[0] == nullptr) GTEST_SKIP() << "this build has no streamed simple kernel";
  uint64_t seed = std::random_device{}();
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  std::mt19937_64 rng(seed);
  std::vector<Shape> decode64;
  for (int g = 0; g < kMaxGroups; ++g) {
    decode64.push_back({static_cast<int>(rng() % 17), 8 * (1 + static_cast<int>(rng() % 40)),
                        64 * (1 + static_cast<int>(rng() % 20))});
  }
  struct StreamCase {
    Case c;
    int cap;           // RunnerOptions::token_tile_rows (0: the runner's choice)
    StreamTiles mode;  // RunnerOptions::stream_simple_tiles
    bool must_stream;  // the plan must run the streamed kernel
  };
  std::vector<StreamCase> cases = {
      {{"decode8", Zip({16, 3, 0, 16, 9, 1, 16, 12}, std::vector<int>(8, 512),
                       std::vector<int>(8, 4160))},
       0, StreamTiles::kAuto, true},
      {{"decode2_k64", Zip({5, 16}, {256, 136}, {64, 192})}, 0, StreamTiles::kAuto, true},
      {{"decode64", decode64}, 0, StreamTiles::kAuto, true},
      {{"rows128", Zip({128, 250, 7, 0}, {256, 384, 136, 128}, {4160, 4096, 320, 256})}, 128,
       StreamTiles::kAuto, true},
  };
  for (const Case& c : GpuModeCases()) cases.push_back({c, 128, StreamTiles::kAlways, false});
  for (const StreamCase& sc : cases) {
    RunnerOptions o;
    o.token_prepass = TokenPrepass::kAlways;
    o.fuse_token_prepass = FusePrepass::kNever;
    o.token_tile_rows = sc.cap;
    o.stream_simple_tiles = sc.mode;
    auto gemm = Nvfp4GroupedGemm::Create(o);
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    for (Distribution dist : {Distribution::kGpuMode, Distribution::kFullRange}) {
      const HostGroupedProblem host = MakeHostProblem(sc.c.shapes, dist, ++seed);
      auto dev = DeviceGroupedProblem::Upload(host);
      ASSERT_TRUE(dev.ok()) << dev.status();
      auto plan = std::make_unique<LaunchPlan>();
      ENCORE_ASSERT_OK((*gemm)->Prepare(dev->args(), plan.get(), KernelKind::kSimple));
      const bool want = WantsStreamed(*plan, sc.mode);
      if (sc.must_stream) EXPECT_TRUE(want) << sc.c.name;
      const int num_groups = static_cast<int>(dev->args().groups.size());
      EXPECT_EQ(plan->function == streamed[num_groups > 8 ? 1 : 0], want) << sc.c.name;
      ASSERT_NO_FATAL_FAILURE(LaunchTwiceAndCheck(
          gemm->get(), *plan, host, *dev, dist,
          absl::StrCat(sc.c.name, " ", DistName(dist), want ? " streamed" : " plain")));
    }
  }
}

// The balanced stream-K partition (heuristics.h PlanStreamK: one contiguous k-block range per CTA,
// tiles cut in two pieces or more) computes the same outputs: GPU MODE shape 0's groups with
// N = 1024 and K = 2048 (64 ragged tiles of 16 k-blocks), with both token sources and both
// distributions, launched twice back to back with PDL (each reduction leaves its counter at zero
// for the next).
TEST_F(Sm90GemmTest, BalancedStreamKMatchesReference) {
  ENCORE_SKIP_WITHOUT_GPU();
  if (!sm90::kStreamKBuilt) GTEST_SKIP() << "stream-K is not built (sm90::kStreamKBuilt)";
  uint64_t seed = std::random_device{}();
  const std::vector<Shape> shapes = Zip({80, 176, 128, 72, 64, 248, 96, 160},
                                        std::vector<int>(8, 1024), std::vector<int>(8, 2048));
  for (Distribution dist : {Distribution::kGpuMode, Distribution::kFullRange}) {
    const HostGroupedProblem host = MakeHostProblem(shapes, dist, ++seed);
    auto dev = DeviceGroupedProblem::Upload(host);
    ASSERT_TRUE(dev.ok()) << dev.status();
    for (TokenPrepass mode : kTokenModes) {
      if (mode == TokenPrepass::kAlways && !sm90::kStreamKPrepass) continue;
      Nvfp4GroupedGemm* gemm = Runner(mode);
      ASSERT_NE(gemm, nullptr);
      auto plan = std::make_unique<LaunchPlan>();
      ENCORE_ASSERT_OK(gemm->Prepare(dev->args(), plan.get(), KernelKind::kStreamK));
      EXPECT_EQ(plan->kind, KernelKind::kStreamK);
      const auto* params = reinterpret_cast<const sm90::Params<8>*>(plan->params);
      EXPECT_EQ(static_cast<int>(plan->grid.x), params->sk_ctas);
      EXPECT_GT(params->sk_ctas, 64) << "64 tiles: some split";
      ASSERT_NO_FATAL_FAILURE(LaunchTwiceAndCheck(
          gemm, *plan, host, *dev, dist,
          absl::StrCat("balanced stream-K ", DistName(dist), " ", PrepassName(mode))));
    }
  }
}

// Stream-K plans keep their partial tiles in a workspace of their stream: kAuto takes stream-K
// for one long-K tile on two streams, each with its own workspace, and both run at the same time
// on different data; a fresh stream's first plan inside a global-mode capture gets none (no
// cudaMalloc there): kAuto runs whole tiles, a forced kStreamK says why.
TEST_F(Sm90GemmTest, StreamKWorkspacesArePerStream) {
  ENCORE_SKIP_WITHOUT_GPU();
  if (!sm90::kStreamKBuilt) GTEST_SKIP() << "stream-K is not built (sm90::kStreamKBuilt)";
  auto runner = Nvfp4GroupedGemm::Create();  // fresh: no stream has a workspace yet
  ASSERT_TRUE(runner.ok()) << runner.status();
  uint64_t seed = std::random_device{}();
  const std::vector<Shape> one_tile = Zip({128}, {256}, {7168});
  std::vector<HostGroupedProblem> hosts;
  std::vector<DeviceGroupedProblem> devs;
  std::vector<Stream> streams;
  std::vector<std::unique_ptr<LaunchPlan>> plans;
  for (int i = 0; i < 2; ++i) {
    hosts.push_back(MakeHostProblem(one_tile, Distribution::kFullRange, ++seed));
    auto dev = DeviceGroupedProblem::Upload(hosts.back());
    ASSERT_TRUE(dev.ok()) << dev.status();
    devs.push_back(std::move(*dev));
    auto stream = Stream::Create();
    ASSERT_TRUE(stream.ok());
    streams.push_back(std::move(*stream));
    plans.push_back(std::make_unique<LaunchPlan>());
    ENCORE_ASSERT_OK((*runner)->Prepare(devs[i].args(), plans[i].get(), KernelKind::kAuto,
                                        streams[i].get()));
    ASSERT_EQ(plans[i]->kind, KernelKind::kStreamK) << "stream " << i;
  }
  const auto* p0 = reinterpret_cast<const sm90::Params<8>*>(plans[0]->params);
  const auto* p1 = reinterpret_cast<const sm90::Params<8>*>(plans[1]->params);
  EXPECT_NE(p0->sk_partials, p1->sk_partials) << "two streams, one stream-K workspace";
  for (int i = 0; i < 2; ++i) {
    ENCORE_ASSERT_OK(devs[i].PoisonOutputs(streams[i].get()));
    SyncOrDie(streams[i].get());
  }
  for (int rep = 0; rep < 4; ++rep) {
    for (int i = 0; i < 2; ++i) {
      ENCORE_ASSERT_OK((*runner)->Launch(*plans[i], streams[i].get(), /*pdl=*/false));
    }
  }
  for (int i = 0; i < 2; ++i) {
    SyncOrDie(streams[i].get());
    ASSERT_NO_FATAL_FAILURE(
        ExpectAllGroupsMatch(hosts[i], devs[i], 1, absl::StrCat("stream-K on stream ", i)));
  }
  // A third stream, first seen inside a capture.
  auto stream = Stream::Create();
  ASSERT_TRUE(stream.ok());
  ASSERT_EQ(cudaStreamBeginCapture(stream->get(), cudaStreamCaptureModeGlobal), cudaSuccess);
  auto plan = std::make_unique<LaunchPlan>();
  const absl::Status automatic =
      (*runner)->Prepare(devs[0].args(), plan.get(), KernelKind::kAuto, stream->get());
  const KernelKind automatic_kind = plan->kind;
  const absl::Status forced =
      (*runner)->Prepare(devs[0].args(), plan.get(), KernelKind::kStreamK, stream->get());
  cudaGraph_t raw = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream->get(), &raw);  // always end
  Graph graph(raw);
  ASSERT_EQ(ended, cudaSuccess) << "the capture was invalidated";
  ENCORE_ASSERT_OK(automatic);
  EXPECT_NE(automatic_kind, KernelKind::kStreamK) << "no workspace inside the capture";
  EXPECT_EQ(forced.code(), absl::StatusCode::kResourceExhausted) << forced;
  ENCORE_ASSERT_OK((*runner)->Prepare(devs[0].args(), plan.get(), KernelKind::kAuto,
                                      stream->get()));
  EXPECT_EQ(plan->kind, KernelKind::kStreamK) << "outside the capture the stream gets its own";
}

// Bound plans (rebind without node patches): one plan per (kind, capacity) serves buffer sets it
// was not prepared for, once WriteBindings queued each launch's pointers; launched directly
// (with and without PDL) and as one captured graph, past the ring's wrap-around (more launches
// than kBindingRingSlots), every output poisoned before its launch.
TEST_F(Sm90GemmTest, BoundPlansServeAnyBuffersOfTheirStructure) {
  ENCORE_SKIP_WITHOUT_GPU();
  auto runner = Nvfp4GroupedGemm::Create();  // fresh: its stream has no ring yet
  ASSERT_TRUE(runner.ok()) << runner.status();
  Nvfp4GroupedGemm* gemm = runner->get();
  auto stream = Stream::Create();
  ASSERT_TRUE(stream.ok());
  uint64_t seed = std::random_device{}();
  struct Case {
    std::vector<Shape> shapes;
    KernelKind kind;
  };
  std::vector<Case> cases = {
      {Zip({96, 0, 1, 129}, {128, 256, 128, 384}, {256, 512, 64, 512}), KernelKind::kSimple},
      {Zip({80, 176, 128, 72}, {512, 256, 384, 128}, {1024, 512, 768, 256}),
       KernelKind::kPersistent},
      {SixtyFourGroups(seed + 7), KernelKind::kAuto},
  };
  if (sm90::kStreamKPrepass) {
    cases.push_back({Zip({128}, {256}, {7168}), KernelKind::kStreamK});
  }
  for (const Case& c : cases) {
    const std::string what = absl::StrCat(KernelKindName(c.kind), ", ", c.shapes.size(),
                                          " groups");
    constexpr int kSets = 3;
    std::vector<HostGroupedProblem> hosts;
    std::vector<DeviceGroupedProblem> devs;
    for (int i = 0; i < kSets; ++i) {
      hosts.push_back(MakeHostProblem(
          c.shapes, i == 0 ? Distribution::kGpuMode : Distribution::kFullRange, ++seed));
      auto dev = DeviceGroupedProblem::Upload(hosts.back());
      ASSERT_TRUE(dev.ok()) << dev.status();
      devs.push_back(std::move(*dev));
    }
    auto plan = std::make_unique<LaunchPlan>();
    if (&c == &cases[0]) {
      EXPECT_EQ(gemm->WriteBindings(devs[0].args(), stream->get()).code(),
                absl::StatusCode::kFailedPrecondition)
          << "no ring before the first PrepareBound";
    }
    ENCORE_ASSERT_OK(gemm->PrepareBound(devs[0].args(), plan.get(), c.kind, stream->get()));
    ASSERT_TRUE(plan->bound()) << what;
    ASSERT_TRUE(plan->has_pre()) << what;
    EXPECT_EQ(plan->num_kernels(), 2) << "the bound pre-pass and the GEMM";
    // Directly: set 1, 2, 0, 1, ... with alternating PDL (set 0 is the one it was prepared for).
    for (int rep = 0; rep < 2 * kSets; ++rep) {
      const int i = (rep + 1) % kSets;
      ENCORE_ASSERT_OK(devs[i].PoisonOutputs(stream->get()));
      ENCORE_ASSERT_OK(gemm->WriteBindings(devs[i].args(), stream->get()));
      ENCORE_ASSERT_OK(gemm->Launch(*plan, stream->get(), /*pdl=*/rep % 2 == 1));
      SyncOrDie(stream->get());
      ASSERT_NO_FATAL_FAILURE(ExpectAllGroupsMatch(
          hosts[i], devs[i], i == 0 ? 0 : 1, absl::StrCat(what, ", direct, set ", i)));
    }
    // As one captured graph (two kernel nodes), launched for each set in turn.
    cudaGraph_t raw = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream->get(), cudaStreamCaptureModeThreadLocal),
              cudaSuccess);
    const absl::Status launched = gemm->Launch(*plan, stream->get(), /*pdl=*/false);
    const cudaError_t ended = cudaStreamEndCapture(stream->get(), &raw);
    Graph graph(raw);
    ENCORE_ASSERT_OK(launched);
    ASSERT_EQ(ended, cudaSuccess);
    size_t nodes = 0;
    ASSERT_EQ(cudaGraphGetNodes(graph.get(), nullptr, &nodes), cudaSuccess);
    EXPECT_EQ(nodes, static_cast<size_t>(plan->num_kernels()));
    auto exec = GraphExec::Instantiate(graph.get());
    ASSERT_TRUE(exec.ok()) << exec.status();
    for (int rep = 0; rep < 2 * kSets; ++rep) {
      const int i = rep % kSets;
      ENCORE_ASSERT_OK(devs[i].PoisonOutputs(stream->get()));
      ENCORE_ASSERT_OK(gemm->WriteBindings(devs[i].args(), stream->get()));
      ASSERT_EQ(cudaGraphLaunch(exec->get(), stream->get()), cudaSuccess);
      SyncOrDie(stream->get());
      ASSERT_NO_FATAL_FAILURE(ExpectAllGroupsMatch(
          hosts[i], devs[i], i == 0 ? 0 : 1, absl::StrCat(what, ", graph, set ", i)));
    }
  }
  // Past the ring's wrap-around without a sync (the host waits for free slots): the small
  // case's sets in rotation, each set's last launch checked at the end.
  const std::vector<Shape> small = Zip({40, 64}, {128, 256}, {256, 512});
  std::vector<HostGroupedProblem> hosts;
  std::vector<DeviceGroupedProblem> devs;
  for (int i = 0; i < 4; ++i) {
    hosts.push_back(MakeHostProblem(small, Distribution::kFullRange, ++seed));
    auto dev = DeviceGroupedProblem::Upload(hosts.back());
    ASSERT_TRUE(dev.ok()) << dev.status();
    devs.push_back(std::move(*dev));
    ENCORE_ASSERT_OK(devs.back().PoisonOutputs(stream->get()));
  }
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->PrepareBound(devs[0].args(), plan.get(), KernelKind::kAuto,
                                      stream->get()));
  const int launches = 2 * sm90::kBindingRingSlots + 3;
  for (int n = 0; n < launches; ++n) {
    const int i = n % 4;
    ENCORE_ASSERT_OK(gemm->WriteBindings(devs[i].args(), stream->get()));
    ENCORE_ASSERT_OK(gemm->Launch(*plan, stream->get(), /*pdl=*/true));
  }
  SyncOrDie(stream->get());
  for (int i = 0; i < 4; ++i) {
    ASSERT_NO_FATAL_FAILURE(
        ExpectAllGroupsMatch(hosts[i], devs[i], 1, absl::StrCat("wrap-around, set ", i)));
  }
  // Bound kernels keep no local memory either.
  for (KernelKind kind : BuiltKinds()) {
    for (int cap : sm90::kGroupCapacities) {
      const void* f =
          sm90::KernelFunction(kind, cap, sm90::TokenSource::kPrepass, false, false, true);
      if (kind == KernelKind::kStreamK && !sm90::kStreamKPrepass) continue;
      ASSERT_NE(f, nullptr) << KernelKindName(kind) << ", " << cap;
      cudaFuncAttributes attr;
      ASSERT_EQ(cudaFuncGetAttributes(&attr, f), cudaSuccess);
      EXPECT_EQ(attr.localSizeBytes, 0u) << "bound " << KernelKindName(kind) << ", " << cap;
    }
    for (const void* f : {sm90::PrepassFunction(8, true), sm90::PrepassFunction(64, true)}) {
      cudaFuncAttributes attr;
      ASSERT_EQ(cudaFuncGetAttributes(&attr, f), cudaSuccess);
      EXPECT_EQ(attr.localSizeBytes, 0u) << "bound pre-pass";
      // Its padding for PDL is computed for this much static shared memory.
      EXPECT_LE(attr.sharedSizeBytes, static_cast<size_t>(sm90::kBoundPrepassStaticSmemBytes));
    }
  }
}

// LaunchWithBindings whose launch fails after the previous bound call's GEMM prefetched the slot
// it had written: the retry (same slot, same call number, other buffers) runs on its own
// pointers, not on the dropped call's. Before session 32 the staged copy survived the take-back,
// and the retry computed into the dropped call's outputs.
TEST_F(Sm90GemmTest, FailedBoundLaunchDropsItsPrefetchedSlot) {
  ENCORE_SKIP_WITHOUT_GPU();
  auto runner = Nvfp4GroupedGemm::Create();
  ASSERT_TRUE(runner.ok()) << runner.status();
  Nvfp4GroupedGemm* gemm = runner->get();
  auto stream = Stream::Create();
  ASSERT_TRUE(stream.ok());
  const std::vector<Shape> shapes = Zip({64, 96}, {256, 128}, {512, 256});
  uint64_t seed = std::random_device{}();
  std::vector<HostGroupedProblem> hosts;
  std::vector<DeviceGroupedProblem> devs;  // 0: the call before, 1: dropped, 2: its retry
  for (int i = 0; i < 3; ++i) {
    hosts.push_back(MakeHostProblem(shapes, Distribution::kFullRange, ++seed));
    auto dev = DeviceGroupedProblem::Upload(hosts.back());
    ASSERT_TRUE(dev.ok()) << dev.status();
    devs.push_back(std::move(*dev));
  }
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->PrepareBound(devs[0].args(), plan.get(), KernelKind::kAuto,
                                      stream->get()));
  for (const DeviceGroupedProblem& d : devs) ENCORE_ASSERT_OK(d.PoisonOutputs(stream->get()));
  SyncOrDie(stream->get());
  // The stream is held by a host function until the dropped call's slot is written, so the call
  // before's GEMM runs (and prefetches that slot) inside the failing launch.
  std::atomic<bool> go{false};
  ASSERT_EQ(cudaLaunchHostFunc(
                stream->get(),
                [](void* flag) {
                  while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::yield();
                },
                &go),
            cudaSuccess);
  ENCORE_ASSERT_OK(gemm->WriteBindings(devs[0].args(), stream->get()));
  ENCORE_ASSERT_OK(gemm->Launch(*plan, stream->get(), /*pdl=*/false));
  const absl::Status dropped = gemm->LaunchWithBindings(
      devs[1].args(), stream->get(),
      [&] {
        go.store(true);
        if (cudaStreamSynchronize(stream->get()) != cudaSuccess) {
          return absl::InternalError("the call before failed");
        }
        return absl::UnavailableError("test: this launch fails");
      },
      /*wait_for_slot=*/true);
  EXPECT_EQ(dropped.code(), absl::StatusCode::kUnavailable) << dropped;
  ENCORE_ASSERT_OK(gemm->LaunchWithBindings(
      devs[2].args(), stream->get(),
      [&] { return gemm->Launch(*plan, stream->get(), /*pdl=*/true); },
      /*wait_for_slot=*/true));
  SyncOrDie(stream->get());
  ASSERT_NO_FATAL_FAILURE(ExpectAllGroupsMatch(hosts[0], devs[0], 1, "the call before"));
  ASSERT_NO_FATAL_FAILURE(ExpectAllGroupsMatch(hosts[2], devs[2], 1, "the retry"));
  for (int g = 0; g < static_cast<int>(shapes.size()); ++g) {
    auto c = devs[1].DownloadC(g, stream->get());
    ASSERT_TRUE(c.ok()) << c.status();
    size_t written = 0;
    for (uint16_t v : *c) written += v != 0xFFFF;
    EXPECT_EQ(written, 0u) << "the dropped call's group " << g << " output was written";
  }
}

// A problem that converts its tokens in kernel has no bound plan; nothing is launched.
TEST_F(Sm90GemmTest, BoundPlansNeedThePrepass) {
  ENCORE_SKIP_WITHOUT_GPU();
  Nvfp4GroupedGemm* gemm = Runner(TokenPrepass::kNever);
  ASSERT_NE(gemm, nullptr);
  const HostGroupedProblem host =
      MakeHostProblem(Zip({64}, {128}, {256}), Distribution::kGpuMode, 5);
  auto dev = DeviceGroupedProblem::Upload(host);
  ASSERT_TRUE(dev.ok()) << dev.status();
  // kNever still plans bound calls with the pre-pass (the bound kernels need it) ...
  LaunchPlan plan;
  ENCORE_ASSERT_OK(gemm->PrepareBound(dev->args(), &plan, KernelKind::kAuto, nullptr));
  EXPECT_TRUE(plan.has_pre());
  // ... but a problem whose tokens do not fit the workspace cannot have one.
  RunnerOptions options;
  options.token_workspace_bytes = 1024;
  auto small = Nvfp4GroupedGemm::Create(options);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ((*small)->PrepareBound(dev->args(), &plan, KernelKind::kAuto, nullptr).code(),
            absl::StatusCode::kFailedPrecondition);
}

// A token workspace the device has no memory for (4 TB): kAuto plans convert tokens in kernel
// (and compute the right result), nothing is retried or left as a stale error; kAlways says why.
TEST_F(Sm90GemmTest, WorkspaceTheDeviceCannotHoldFallsBackUnderAuto) {
  ENCORE_SKIP_WITHOUT_GPU();
  RunnerOptions options;
  options.token_workspace_bytes = size_t{1} << 42;
  auto gemm = Nvfp4GroupedGemm::Create(options);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  const HostGroupedProblem host =
      MakeHostProblem(Zip({128, 384}, {1024, 1024}, {512, 512}), Distribution::kGpuMode, 31);
  auto dev = DeviceGroupedProblem::Upload(host);
  ASSERT_TRUE(dev.ok()) << dev.status();
  auto stream = Stream::Create();
  ASSERT_TRUE(stream.ok());
  for (int rep = 0; rep < 2; ++rep) {
    LaunchPlan plan;
    ENCORE_ASSERT_OK((*gemm)->Prepare(dev->args(), &plan, KernelKind::kAuto, stream->get()));
    EXPECT_FALSE(plan.has_pre()) << "rep " << rep;
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "rep " << rep;
    ENCORE_ASSERT_OK(dev->PoisonOutputs(stream->get()));
    ENCORE_ASSERT_OK((*gemm)->Run(dev->args(), stream->get()));
    SyncOrDie(stream->get());
    ExpectAllGroupsMatch(host, *dev, 0, absl::StrCat("no workspace, rep ", rep));
  }
  options.token_prepass = TokenPrepass::kAlways;
  auto always = Nvfp4GroupedGemm::Create(options);
  ASSERT_TRUE(always.ok()) << always.status();
  LaunchPlan plan;
  const absl::Status s = (*always)->Prepare(dev->args(), &plan, KernelKind::kAuto, stream->get());
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "no memory")) << s;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// A stream's first plan allocates its workspaces. While this thread (or any thread) captures
// ANOTHER stream in global mode, a cudaMalloc in the default mode fails and invalidates that
// capture; the runner allocates in relaxed mode, so the plan gets its workspace and the capture
// survives.
TEST_F(Sm90GemmTest, FirstPlanBesideAGlobalCaptureLeavesThatCaptureIntact) {
  ENCORE_SKIP_WITHOUT_GPU();
  auto gemm = Nvfp4GroupedGemm::Create();  // fresh: no workspace yet
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  const HostGroupedProblem host =
      MakeHostProblem(Zip({128, 384}, {1024, 1024}, {512, 512}), Distribution::kGpuMode, 32);
  auto dev = DeviceGroupedProblem::Upload(host);
  ASSERT_TRUE(dev.ok()) << dev.status();
  auto captured = Stream::Create();
  auto other = Stream::Create();
  ASSERT_TRUE(captured.ok() && other.ok());
  auto scratch = DeviceBuffer::Create(256);
  ASSERT_TRUE(scratch.ok());
  ASSERT_EQ(cudaStreamBeginCapture(captured->get(), cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(scratch->get(), 0, 256, captured->get()), cudaSuccess);
  LaunchPlan plan;
  const absl::Status prepared =
      (*gemm)->Prepare(dev->args(), &plan, KernelKind::kAuto, other->get());
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(captured->get(), &graph);
  if (graph != nullptr) cudaGraphDestroy(graph);
  ENCORE_ASSERT_OK(prepared);
  EXPECT_EQ(ended, cudaSuccess) << cudaGetErrorName(ended);
  EXPECT_TRUE(plan.has_pre()) << "the workspace was allocated";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  ENCORE_ASSERT_OK(dev->PoisonOutputs(other->get()));
  ENCORE_ASSERT_OK((*gemm)->Launch(plan, other->get()));
  SyncOrDie(other->get());
  ExpectAllGroupsMatch(host, *dev, 0, "planned beside a global capture");
}

// The graph layer relies on Prepare being deterministic: the same call gives the same launch
// (function, grid, parameter bytes), also across the runner's remembered tiling decisions.
TEST_F(Sm90GemmTest, PrepareIsDeterministic) {
  ENCORE_SKIP_WITHOUT_GPU();
  Nvfp4GroupedGemm* gemm = Runner();
  ASSERT_NE(gemm, nullptr);
  const HostGroupedProblem a = MakeHostProblem(Zip({96, 40, 72}, {384, 256, 128}, {256, 256, 512}),
                                               Distribution::kGpuMode, 11);
  const HostGroupedProblem b =
      MakeHostProblem(Zip({200, 8}, {512, 128}, {256, 64}), Distribution::kGpuMode, 12);
  auto da = DeviceGroupedProblem::Upload(a);
  auto db = DeviceGroupedProblem::Upload(b);
  ASSERT_TRUE(da.ok() && db.ok());
  auto first = std::make_unique<LaunchPlan>();
  auto other = std::make_unique<LaunchPlan>();
  auto again = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->Prepare(da->args(), first.get()));
  ENCORE_ASSERT_OK(gemm->Prepare(db->args(), other.get()));
  ENCORE_ASSERT_OK(gemm->Prepare(da->args(), again.get()));
  EXPECT_TRUE(first->SameLaunch(*again));
  EXPECT_FALSE(first->SameLaunch(*other));
  // And the remembered plan still computes the right answer.
  RunAndCheck(a, Distribution::kGpuMode, KernelKind::kAuto, "prepare twice");
}

TEST_F(Sm90GemmTest, InvalidArgumentsLaunchNothing) {
  ENCORE_SKIP_WITHOUT_GPU();
  const HostGroupedProblem host =
      MakeHostProblem(Zip({64, 32}, {128, 128}, {128, 128}), Distribution::kGpuMode, 7);
  auto dev = DeviceGroupedProblem::Upload(host);
  ASSERT_TRUE(dev.ok());
  struct Bad {
    const char* expect;
    void (*mutate)(GroupProblem&);
  };
  const Bad bads[] = {
      {"group 1: b is null", [](GroupProblem& p) { p.b = nullptr; }},
      {"group 1: k = 96", [](GroupProblem& p) { p.k = 96; }},
      {"group 1: n = 12", [](GroupProblem& p) { p.n = 12; }},
      {"group 1: m = -1", [](GroupProblem& p) { p.m = -1; }},
      {"group 1: sfa is not 16-byte aligned",
       [](GroupProblem& p) { p.sfa = static_cast<const char*>(p.sfa) + 4; }},
  };
  for (const Bad& bad : bads) {
    std::vector<GroupProblem> groups = dev->problems();
    bad.mutate(groups[1]);
    ENCORE_ASSERT_OK(dev->PoisonOutputs(nullptr));
    const absl::Status s = Runner()->Run(GroupedGemmArguments{groups, nullptr}, nullptr);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(bad.expect), absl::string_view::npos) << s;
    SyncOrDie();
    auto c0 = dev->DownloadC(0, nullptr);
    ASSERT_TRUE(c0.ok());
    EXPECT_TRUE(std::all_of(c0->begin(), c0->end(), [](uint16_t h) { return h == 0xFFFF; }))
        << "group 0 was written although the arguments were rejected (" << bad.expect << ")";
  }
  const absl::Status empty = Runner()->Run(GroupedGemmArguments{}, nullptr);
  EXPECT_NE(empty.message().find("groups is empty"), absl::string_view::npos) << empty;
}

// The launch description the graph layer uses: a kernel node built from NodeParams, replayed.
TEST_F(Sm90GemmTest, LaunchPlanAsGraphNodeAndPdl) {
  ENCORE_SKIP_WITHOUT_GPU();
  const HostGroupedProblem host = MakeHostProblem(
      Zip({96, 128, 0}, {256, 128, 128}, {512, 256, 64}), Distribution::kFullRange, 11);
  auto dev = DeviceGroupedProblem::Upload(host);
  ASSERT_TRUE(dev.ok());
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(Runner()->Prepare(dev->args(), plan.get()));
  EXPECT_TRUE(plan->supports_pdl);
  EXPECT_LE(plan->params_bytes, kMaxParamBytes);
  auto again = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(Runner()->Prepare(dev->args(), again.get()));
  EXPECT_TRUE(plan->SameLaunch(*again)) << "Prepare is not deterministic";

  auto graph = Graph::Create();
  ASSERT_TRUE(graph.ok());
  void* slot = nullptr;
  const cudaKernelNodeParams node_params = plan->NodeParams(&slot);
  cudaGraphNode_t node;
  ENCORE_ASSERT_OK(ToStatus(cudaGraphAddKernelNode(&node, graph->get(), nullptr, 0, &node_params),
                            "cudaGraphAddKernelNode"));
  auto exec = GraphExec::Instantiate(graph->get());
  ASSERT_TRUE(exec.ok()) << exec.status();
  for (int rep = 0; rep < 2; ++rep) {
    ENCORE_ASSERT_OK(dev->PoisonOutputs(nullptr));
    ENCORE_ASSERT_OK(ToStatus(cudaGraphLaunch(exec->get(), nullptr), "cudaGraphLaunch"));
    SyncOrDie();
    ASSERT_NO_FATAL_FAILURE(
        ExpectAllGroupsMatch(host, *dev, 1, absl::StrCat("graph replay ", rep)));
  }
  // PDL launch on a stream: two back-to-back launches, the second programmatic.
  auto stream = Stream::Create();
  ASSERT_TRUE(stream.ok());
  ENCORE_ASSERT_OK(dev->PoisonOutputs(stream->get()));
  ENCORE_ASSERT_OK(Runner()->Launch(*plan, stream->get(), /*pdl=*/true));
  ENCORE_ASSERT_OK(Runner()->Launch(*plan, stream->get(), /*pdl=*/true));
  SyncOrDie(stream->get());
  ASSERT_NO_FATAL_FAILURE(ExpectAllGroupsMatch(host, *dev, 1, "pdl"));
}

// Plans read nothing before the kernel before them completed (LaunchPlan::reads_after_wait: tokens
// in kernel, or a pre-pass that waits before it triggers the GEMM, whose weight producer reads
// early), so a PDL launch of them is always safe; Run uses one where it pays (prefers_pdl). A long
// GEMM, then a short one writing the same outputs (same M x N, K = 2048 / 3072 vs 512 / 448), by
// Launch(pdl = true) and by Run, tokens in kernel and by a pre-pass (whose grid here is large
// enough for Run's PDL): the outputs must be the short one's, every time (a write before the long
// GEMM completed would be overwritten by its later tiles).
TEST_F(Sm90GemmTest, PlansLaunchBehindTheKernelBeforeThem) {
  ENCORE_SKIP_WITHOUT_GPU();
  uint64_t seed = std::random_device{}();
  for (TokenPrepass mode : kTokenModes) {
    Nvfp4GroupedGemm* gemm = Runner(mode);
    ASSERT_NE(gemm, nullptr);
    // (the long one's fp16 tokens, 41 MB, fit the runner's 64 MB workspace)
    const HostGroupedProblem h1 = MakeHostProblem(Zip({4096, 4000}, {128, 128}, {2048, 3072}),
                                                  Distribution::kGpuMode, ++seed);
    const HostGroupedProblem h2 = MakeHostProblem(Zip({4096, 4000}, {128, 128}, {512, 448}),
                                                  Distribution::kGpuMode, ++seed);
    auto d1 = DeviceGroupedProblem::Upload(h1);
    auto d2 = DeviceGroupedProblem::Upload(h2);
    ASSERT_TRUE(d1.ok() && d2.ok());
    // The short problem's inputs with the long one's outputs.
    std::vector<GroupProblem> short_into_long = d2->problems();
    for (size_t g = 0; g < short_into_long.size(); ++g) short_into_long[g].c = d1->problems()[g].c;
    const GroupedGemmArguments second{absl::MakeConstSpan(short_into_long)};
    auto p1 = std::make_unique<LaunchPlan>();
    auto p2 = std::make_unique<LaunchPlan>();
    ENCORE_ASSERT_OK(gemm->Prepare(d1->args(), p1.get()));
    ENCORE_ASSERT_OK(gemm->Prepare(second, p2.get()));
    ASSERT_TRUE(p1->reads_after_wait && p2->reads_after_wait);
    ASSERT_EQ(p2->has_pre(), mode == TokenPrepass::kAlways);
    if (mode == TokenPrepass::kAlways) {
      EXPECT_TRUE(p2->prefers_pdl) << "pre-pass grid too small";
    }
    auto stream = Stream::Create();
    ASSERT_TRUE(stream.ok());
    for (int rep = 0; rep < 4; ++rep) {
      const bool by_run = rep % 2 == 1;
      ENCORE_ASSERT_OK(d1->PoisonOutputs(stream->get()));
      if (by_run) {
        ENCORE_ASSERT_OK(gemm->Run(d1->args(), stream->get()));
        ENCORE_ASSERT_OK(gemm->Run(second, stream->get()));
      } else {
        ENCORE_ASSERT_OK(gemm->Launch(*p1, stream->get(), /*pdl=*/true));
        ENCORE_ASSERT_OK(gemm->Launch(*p2, stream->get(), /*pdl=*/true));
      }
      SyncOrDie(stream->get());
      ASSERT_NO_FATAL_FAILURE(ExpectAllGroupsMatch(
          h2, *d1, 0,
          absl::StrCat(PrepassName(mode), ": short after long by ", by_run ? "Run" : "Launch",
                       ", rep ", rep)));
    }
  }
}

// Pre-pass plans: two kernels sharing the runner's token workspace. Ragged K with 64-k tail blocks
// (K = 64, 192, 320: the tail's k < 64 values are spread over a whole 128-position block), an M = 0
// group, M = 1 and M = 129; (1) two problems of the same shapes launched back to back on one
// stream with PDL, so the second pre-pass must not overwrite the workspace while the first GEMM
// still reads it; (2) a two-node graph (pre-kernel -> GEMM) built from the node parameters,
// replayed twice with poisoned outputs.
TEST_F(Sm90GemmTest, PrepassPlansBackToBackAndAsGraph) {
  ENCORE_SKIP_WITHOUT_GPU();
  Nvfp4GroupedGemm* gemm = Runner(TokenPrepass::kAlways, FusePrepass::kNever);
  ASSERT_NE(gemm, nullptr);
  const std::vector<Shape> shapes = Zip({129, 0, 1, 200, 64}, {1024, 256, 512, 2048, 768},
                                        {192, 256, 64, 320, 1024});
  uint64_t seed = std::random_device{}();
  for (Distribution dist : {Distribution::kGpuMode, Distribution::kFullRange}) {
    for (KernelKind kind : {KernelKind::kSimple, KernelKind::kPersistent}) {
      const HostGroupedProblem h1 = MakeHostProblem(shapes, dist, ++seed);
      const HostGroupedProblem h2 = MakeHostProblem(shapes, dist, ++seed);
      auto d1 = DeviceGroupedProblem::Upload(h1);
      auto d2 = DeviceGroupedProblem::Upload(h2);
      ASSERT_TRUE(d1.ok() && d2.ok());
      auto p1 = std::make_unique<LaunchPlan>();
      auto p2 = std::make_unique<LaunchPlan>();
      ENCORE_ASSERT_OK(gemm->Prepare(d1->args(), p1.get(), kind));
      ENCORE_ASSERT_OK(gemm->Prepare(d2->args(), p2.get(), kind));
      ASSERT_TRUE(p1->has_pre() && p2->has_pre());
      const int max_ulps = dist == Distribution::kGpuMode ? 0 : 1;
      auto check = [&](const HostGroupedProblem& h, DeviceGroupedProblem& d,
                       const std::string& what) {
        ExpectAllGroupsMatch(h, d, max_ulps,
                             absl::StrCat(what, " ", DistName(dist), " ", KernelKindName(kind)));
      };
      auto stream = Stream::Create();
      ASSERT_TRUE(stream.ok());
      for (int rep = 0; rep < 3; ++rep) {
        ENCORE_ASSERT_OK(d1->PoisonOutputs(stream->get()));
        ENCORE_ASSERT_OK(d2->PoisonOutputs(stream->get()));
        ENCORE_ASSERT_OK(gemm->Launch(*p1, stream->get(), /*pdl=*/true));
        ENCORE_ASSERT_OK(gemm->Launch(*p2, stream->get(), /*pdl=*/true));
        SyncOrDie(stream->get());
        check(h1, *d1, absl::StrCat("back to back, first, rep ", rep));
        check(h2, *d2, absl::StrCat("back to back, second, rep ", rep));
      }

      auto graph = Graph::Create();
      ASSERT_TRUE(graph.ok());
      void* pre_slot = nullptr;
      void* slot = nullptr;
      const cudaKernelNodeParams pre_params = p1->pre.NodeParams(&pre_slot);
      const cudaKernelNodeParams params = p1->NodeParams(&slot);
      cudaGraphNode_t pre_node, node;
      ENCORE_ASSERT_OK(ToStatus(
          cudaGraphAddKernelNode(&pre_node, graph->get(), nullptr, 0, &pre_params), "pre node"));
      ENCORE_ASSERT_OK(ToStatus(
          cudaGraphAddKernelNode(&node, graph->get(), &pre_node, 1, &params), "GEMM node"));
      auto exec = GraphExec::Instantiate(graph->get());
      ASSERT_TRUE(exec.ok()) << exec.status();
      for (int rep = 0; rep < 2; ++rep) {
        ENCORE_ASSERT_OK(d1->PoisonOutputs(nullptr));
        ENCORE_ASSERT_OK(ToStatus(cudaGraphLaunch(exec->get(), nullptr), "cudaGraphLaunch"));
        SyncOrDie();
        check(h1, *d1, absl::StrCat("graph replay ", rep));
      }
    }
  }
}

// PlanOptions for a multi-call graph: calls on alternate halves of the stream's token workspace,
// each pre-pass converting before its wait (kPrepassReadsEarly), launched back to back with PDL:
// every call's pre-pass overlaps the GEMM before it, which reads the other half. Every kind, both
// distributions, outputs poisoned each round; a problem whose tokens fit only the whole workspace
// keeps Prepare's plan.
TEST_F(Sm90GemmTest, EarlyPrepassPlansOnAlternateHalves) {
  ENCORE_SKIP_WITHOUT_GPU();
  Nvfp4GroupedGemm* gemm = Runner(TokenPrepass::kAlways, FusePrepass::kNever);
  ASSERT_NE(gemm, nullptr);
  const std::vector<std::vector<Shape>> calls = {
      Zip({96, 200, 0, 17}, {1024, 512, 256, 768}, {1024, 512, 256, 2048}),
      Zip({129, 1}, {2048, 256}, {1536, 64}),
      Zip({64, 64, 64}, {512, 512, 512}, {4096, 192, 320}),
      Zip({300}, {1536}, {768}),
      // 16-row tiles: kAuto's streamed simple kernel (StreamTiles::kAuto).
      Zip({16, 16}, {1024, 512}, {2048, 512}),
  };
  uint64_t seed = std::random_device{}();
  for (Distribution dist : {Distribution::kGpuMode, Distribution::kFullRange}) {
    for (KernelKind kind : BuiltKinds(/*with_auto=*/true)) {
      std::vector<HostGroupedProblem> hosts;
      std::vector<DeviceGroupedProblem> devs;
      std::vector<std::unique_ptr<LaunchPlan>> plans;
      for (size_t i = 0; i < calls.size(); ++i) {
        hosts.push_back(MakeHostProblem(calls[i], dist, ++seed));
        auto d = DeviceGroupedProblem::Upload(hosts.back());
        ASSERT_TRUE(d.ok()) << d.status();
        devs.push_back(std::move(*d));
        plans.push_back(std::make_unique<LaunchPlan>());
        PlanOptions o;
        o.token_workspace_half = static_cast<int>(i % 2);
        o.prepass_reads_early = true;
        ENCORE_ASSERT_OK(
            gemm->PrepareWith(devs.back().args(), plans.back().get(), kind, nullptr, o));
        const LaunchPlan& p = *plans.back();
        if (!p.has_pre()) continue;  // (stream-K plans convert in kernel unless kStreamKPrepass)
        EXPECT_EQ(p.token_workspace_half, static_cast<int>(i % 2)) << "call " << i;
        EXPECT_EQ(p.prepass_reads_early, sm90::kEarlyPrepassBuilt) << "call " << i;
        EXPECT_EQ(p.reads_after_wait, !sm90::kEarlyPrepassBuilt) << "call " << i;
      }
      const std::string what = absl::StrCat(DistName(dist), " ", KernelKindName(kind));
      auto stream = Stream::Create();
      ASSERT_TRUE(stream.ok());
      for (int rep = 0; rep < 3; ++rep) {
        for (DeviceGroupedProblem& d : devs) ENCORE_ASSERT_OK(d.PoisonOutputs(stream->get()));
        for (auto& p : plans) ENCORE_ASSERT_OK(gemm->Launch(*p, stream->get(), /*pdl=*/true));
        SyncOrDie(stream->get());
        for (size_t i = 0; i < calls.size(); ++i) {
          ExpectAllGroupsMatch(hosts[i], devs[i], dist == Distribution::kGpuMode ? 0 : 1,
                               absl::StrCat(what, " call ", i, " rep ", rep));
        }
      }
    }
  }

  // Tokens that fit the workspace but not half of it: Prepare's plan (whole workspace, no early
  // reads). A half other than -1, 0, 1 is rejected.
  RunnerOptions small;
  small.token_prepass = TokenPrepass::kAlways;
  small.fuse_token_prepass = FusePrepass::kNever;
  small.token_workspace_bytes = size_t{1} << 20;
  auto runner = Nvfp4GroupedGemm::Create(small);
  ASSERT_TRUE(runner.ok()) << runner.status();
  // 600 KB of fp16 tokens
  const HostGroupedProblem h =
      MakeHostProblem(Zip({300}, {256}, {1024}), Distribution::kGpuMode, ++seed);
  auto d = DeviceGroupedProblem::Upload(h);
  ASSERT_TRUE(d.ok()) << d.status();
  PlanOptions o;
  o.token_workspace_half = 1;
  o.prepass_reads_early = true;
  LaunchPlan plan;
  ENCORE_ASSERT_OK((*runner)->PrepareWith(d->args(), &plan, KernelKind::kSimple, nullptr, o));
  ASSERT_TRUE(plan.has_pre());
  EXPECT_EQ(plan.token_workspace_half, -1);
  EXPECT_FALSE(plan.prepass_reads_early);
  EXPECT_TRUE(plan.reads_after_wait);
  LaunchTwiceAndCheck(runner->get(), plan, h, *d, Distribution::kGpuMode, "whole workspace");
  o.token_workspace_half = 2;
  EXPECT_EQ((*runner)->PrepareWith(d->args(), &plan, KernelKind::kSimple, nullptr, o).code(),
            absl::StatusCode::kInvalidArgument);
}

// The pre-pass fused into the GEMM (RunnerOptions::fuse_token_prepass): every GPU MODE test case
// with both kernels (their grids fit on the SMs: one kernel, no pre-kernel), 64 groups, and many
// launches back to back on one stream with PDL (the grid barrier's counter across launches) and as
// a graph.
TEST_F(Sm90GemmTest, FusedPrepassMatchesReference) {
  ENCORE_SKIP_WITHOUT_GPU();
  Nvfp4GroupedGemm* gemm = Runner(TokenPrepass::kAlways, FusePrepass::kAlways);
  ASSERT_NE(gemm, nullptr);
  uint64_t seed = std::random_device{}();
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  for (const Case& c : GpuModeCases()) {
    for (Distribution dist : {Distribution::kGpuMode, Distribution::kFullRange}) {
      for (KernelKind kind : {KernelKind::kSimple, KernelKind::kPersistent}) {
        const HostGroupedProblem host = MakeHostProblem(c.shapes, dist, ++seed);
        RunAndCheck(host, dist, kind,
                    absl::StrCat(c.name, " ", DistName(dist), " ", KernelKindName(kind), " fused"),
                    TokenPrepass::kAlways, FusePrepass::kAlways);
      }
    }
  }
  std::vector<Shape> many;
  for (int g = 0; g < 64; ++g) many.push_back(Shape{(g * 37) % 150, 128, 256 + 64 * (g % 3)});
  RunAndCheck(MakeHostProblem(many, Distribution::kFullRange, ++seed), Distribution::kFullRange,
              KernelKind::kPersistent, "64 groups fused", TokenPrepass::kAlways, FusePrepass::kAlways);

  const std::vector<Shape> shapes = Zip({129, 0, 1, 200, 64}, {1024, 256, 512, 2048, 768},
                                        {192, 256, 64, 320, 1024});
  for (KernelKind kind : {KernelKind::kSimple, KernelKind::kPersistent}) {
    const HostGroupedProblem h1 = MakeHostProblem(shapes, Distribution::kGpuMode, ++seed);
    const HostGroupedProblem h2 = MakeHostProblem(shapes, Distribution::kGpuMode, ++seed);
    auto d1 = DeviceGroupedProblem::Upload(h1);
    auto d2 = DeviceGroupedProblem::Upload(h2);
    ASSERT_TRUE(d1.ok() && d2.ok());
    auto p1 = std::make_unique<LaunchPlan>();
    auto p2 = std::make_unique<LaunchPlan>();
    auto stream = Stream::Create();
    ASSERT_TRUE(stream.ok());
    ENCORE_ASSERT_OK(gemm->Prepare(d1->args(), p1.get(), kind, stream->get()));
    ENCORE_ASSERT_OK(gemm->Prepare(d2->args(), p2.get(), kind, stream->get()));
    ASSERT_FALSE(p1->has_pre()) << "expected a fused plan (" << p1->grid.x << " CTAs)";
    ASSERT_TRUE(p1->fused_pre);
    auto check = [&](const HostGroupedProblem& h, DeviceGroupedProblem& d,
                     const std::string& what) {
      ExpectAllGroupsMatch(h, d, 0, absl::StrCat(what, " ", KernelKindName(kind)));
    };
    ENCORE_ASSERT_OK(d1->PoisonOutputs(stream->get()));
    ENCORE_ASSERT_OK(d2->PoisonOutputs(stream->get()));
    for (int rep = 0; rep < 20; ++rep) {  // 40 launches: 40 spans of the barrier counter
      ENCORE_ASSERT_OK(gemm->Launch(*p1, stream->get(), /*pdl=*/true));
      ENCORE_ASSERT_OK(gemm->Launch(*p2, stream->get(), /*pdl=*/true));
    }
    SyncOrDie(stream->get());
    check(h1, *d1, "back to back, first");
    check(h2, *d2, "back to back, second");

    auto graph = Graph::Create();
    ASSERT_TRUE(graph.ok());
    void* slot = nullptr;
    const cudaKernelNodeParams params = p1->NodeParams(&slot);
    cudaGraphNode_t node;
    ENCORE_ASSERT_OK(
        ToStatus(cudaGraphAddKernelNode(&node, graph->get(), nullptr, 0, &params), "GEMM node"));
    auto exec = GraphExec::Instantiate(graph->get());
    ASSERT_TRUE(exec.ok()) << exec.status();
    for (int rep = 0; rep < 2; ++rep) {
      ENCORE_ASSERT_OK(d1->PoisonOutputs(stream->get()));
      ENCORE_ASSERT_OK(
          ToStatus(cudaGraphLaunch(exec->get(), stream->get()), "cudaGraphLaunch"));
      SyncOrDie(stream->get());
      check(h1, *d1, absl::StrCat("graph replay ", rep));
    }
  }
  // More tiles than SMs with the simple kernel: not fused (a separate pre-pass kernel).
  const std::vector<Shape> big = Zip({256}, {128 * (gemm->sm_count() + 8)}, {256});
  auto dbig = DeviceGroupedProblem::Upload(MakeHostProblem(big, Distribution::kGpuMode, ++seed));
  ASSERT_TRUE(dbig.ok());
  auto pbig = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->Prepare(dbig->args(), pbig.get(), KernelKind::kSimple));
  EXPECT_TRUE(pbig->has_pre());
  EXPECT_FALSE(pbig->fused_pre);
  // ... unless the kernel is the runner's choice: the persistent kernel, fused.
  ENCORE_ASSERT_OK(gemm->Prepare(dbig->args(), pbig.get()));
  EXPECT_TRUE(pbig->fused_pre);
  RunAndCheck(MakeHostProblem(big, Distribution::kFullRange, ++seed), Distribution::kFullRange,
              KernelKind::kAuto, "more tiles than SMs, the runner's choice (persistent, fused)",
              TokenPrepass::kAlways, FusePrepass::kAlways);
}

// The fused pre-pass's grid barrier needs no co-residency. With 8 SMs held by other work, 8 of
// the fused plan's sm_count CTAs cannot start; the others convert the missing CTAs' shares after
// kFusedStealAfterNs, pass the barrier, store their tiles and exit, and the 8 then run on the
// freed SMs: the GEMM completes while the SMs are still held, and every output matches. (Run
// 97's barrier waited for every CTA: the resident ones could never pass, a deadlock until the
// SMs were released.)
TEST_F(Sm90GemmTest, FusedPrepassCompletesWithoutCoResidency) {
  ENCORE_SKIP_WITHOUT_GPU();
  Nvfp4GroupedGemm* gemm = Runner(TokenPrepass::kAlways, FusePrepass::kAlways);
  ASSERT_NE(gemm, nullptr);
  const int sms = gemm->sm_count();
  constexpr int kHeld = 8;
  ASSERT_GT(sms, 2 * kHeld);
  // sm_count tiles of 128 weight rows x one token tile (M <= 64: one tile at any row cap): a
  // fused simple plan of sm_count CTAs.
  const std::vector<Shape> shapes =
      Zip({64, 40}, {128 * (sms / 2), 128 * (sms - sms / 2)}, {512, 1024});
  const uint64_t seed = std::random_device{}();
  const HostGroupedProblem host = MakeHostProblem(shapes, Distribution::kFullRange, seed);
  auto dev = DeviceGroupedProblem::Upload(host);
  ASSERT_TRUE(dev.ok()) << dev.status();
  auto stream = Stream::Create();
  auto side = Stream::Create();
  ASSERT_TRUE(stream.ok() && side.ok());
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->Prepare(dev->args(), plan.get(), KernelKind::kSimple, stream->get()));
  ASSERT_TRUE(plan->fused_pre);
  ASSERT_EQ(plan->grid.x, static_cast<unsigned>(sms));
  for (int rep = 0; rep < 2; ++rep) {  // the second launch: the barrier words were reset
    ENCORE_ASSERT_OK(dev->PoisonOutputs(stream->get()));
    SyncOrDie(stream->get());
    auto blocker = testing::SmBlocker::Start(kHeld, side->get());
    ASSERT_TRUE(blocker.ok()) << blocker.status();
    ENCORE_ASSERT_OK((*blocker)->WaitResident(absl::Seconds(10)));
    ENCORE_ASSERT_OK(gemm->Launch(*plan, stream->get(), /*pdl=*/false));
    cudaError_t state = cudaErrorNotReady;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (state == cudaErrorNotReady && std::chrono::steady_clock::now() < deadline) {
      state = cudaStreamQuery(stream->get());
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const cudaError_t held = cudaStreamQuery(side->get());
    (*blocker)->Release();
    SyncOrDie(stream->get());
    EXPECT_EQ(held, cudaErrorNotReady) << "the blocker had exited: nothing was held";
    EXPECT_EQ(state, cudaSuccess) << "the fused GEMM did not complete in 5 s while " << kHeld
                                  << " SMs were held (" << cudaGetErrorString(state) << ")";
    ExpectAllGroupsMatch(host, *dev, 1, absl::StrCat("fused, ", kHeld, " SMs held, launch ", rep));
  }
}

// A stream's first pre-pass plan inside a global-mode capture (a framework capturing a whole step):
// the runner must not cudaMalloc a workspace there (that would invalidate the capture), so the
// plan converts tokens in kernel (one node) and still computes; outside the capture the stream
// gets its workspace.
TEST_F(Sm90GemmTest, FirstPlanInsideACaptureConvertsTokensInKernel) {
  ENCORE_SKIP_WITHOUT_GPU();
  auto runner = Nvfp4GroupedGemm::Create();  // fresh: no stream has a workspace yet
  ASSERT_TRUE(runner.ok()) << runner.status();
  const HostGroupedProblem host = MakeHostProblem(Zip({96, 200}, {1024, 512}, {512, 256}),
                                                  Distribution::kFullRange, std::random_device{}());
  auto dev = DeviceGroupedProblem::Upload(host);
  ASSERT_TRUE(dev.ok()) << dev.status();
  auto stream = Stream::Create();
  ASSERT_TRUE(stream.ok());
  ENCORE_ASSERT_OK(dev->PoisonOutputs(stream->get()));
  SyncOrDie(stream->get());
  ASSERT_EQ(cudaStreamBeginCapture(stream->get(), cudaStreamCaptureModeGlobal), cudaSuccess);
  const absl::Status run = (*runner)->Run(dev->args(), stream->get());
  cudaGraph_t raw = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream->get(), &raw);  // always end
  Graph graph(raw);
  ENCORE_ASSERT_OK(run);
  ASSERT_EQ(ended, cudaSuccess) << "the capture was invalidated";
  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph.get(), nullptr, &nodes), cudaSuccess);
  EXPECT_EQ(nodes, 1u) << "inside the capture the plan converts tokens in kernel";
  auto exec = GraphExec::Instantiate(graph.get());
  ASSERT_TRUE(exec.ok()) << exec.status();
  ENCORE_ASSERT_OK(ToStatus(cudaGraphLaunch(exec->get(), stream->get()), "cudaGraphLaunch"));
  SyncOrDie(stream->get());
  ASSERT_NO_FATAL_FAILURE(ExpectAllGroupsMatch(host, *dev, 1, "captured first plan,"));
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK((*runner)->Prepare(dev->args(), plan.get(), KernelKind::kAuto, stream->get()));
  EXPECT_TRUE(plan->has_pre() || plan->fused_pre)
      << "outside the capture the stream gets its workspace";
}

TEST(Sm90SupportTest, OnlyComputeCapability90) {
  EXPECT_TRUE(CheckKernelsSupport(9, 0).ok());
  for (auto [major, minor] :
       {std::pair{8, 0}, std::pair{8, 9}, std::pair{10, 0}, std::pair{12, 0}, std::pair{9, 1}}) {
    const absl::Status s = CheckKernelsSupport(major, minor);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(s.message().find(absl::StrCat(major, ".", minor)), absl::string_view::npos) << s;
    EXPECT_NE(s.message().find("9.0"), absl::string_view::npos) << s;
  }
}

TEST(Sm90SupportTest, CreateWithoutGpuSaysNoDevice) {
  if (CudaDeviceAvailable().ok()) GTEST_SKIP() << "a GPU is present";
  auto r = Nvfp4GroupedGemm::Create();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no CUDA device"), absl::string_view::npos) << r.status();
  const absl::Status s = GroupedGemm(GroupedGemmArguments{}, nullptr);
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace encore::gemm
