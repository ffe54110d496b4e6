// Host-only tests of the sm90 runner's Prepare (no GPU): plan contents, kernel choice, tensor-map
// caching, determinism and error paths. The driver's tensor-map encoder is replaced by a fake.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "cuda_utils/device.h"
#include "cuda_utils/driver.h"
#include "gemm/grouped_gemm.h"
#include "gemm/heuristics.h"
#include "gemm/internal/sm90_runner.h"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/launch.h"
#include "gemm/problem.h"
#include "gemm/sm90_nvfp4_grouped_gemm.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

// Counts heap allocations made by this thread while g_count_allocations is set.
thread_local bool g_count_allocations = false;
std::atomic<int64_t> g_allocations{0};

void* operator new(size_t n) {
  if (g_count_allocations) g_allocations.fetch_add(1);
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) std::abort();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace encore::gemm {
namespace {

std::atomic<int> encode_calls{0};
const void* fail_on = nullptr;  // the encoder fails for this global address

CUresult FakeEncode(CUtensorMap* map, CUtensorMapDataType, cuuint32_t, void* address,
                    const cuuint64_t* dims, const cuuint64_t*, const cuuint32_t* box,
                    const cuuint32_t*,
                    CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                    CUtensorMapFloatOOBfill) {
  encode_calls.fetch_add(1);
  if (address == fail_on) return CUDA_ERROR_INVALID_VALUE;
  std::memset(map, 0, sizeof(*map));
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::memcpy(map, &a, sizeof(a));  // recognisable contents
  std::memcpy(reinterpret_cast<char*>(map) + 8, dims, 2 * sizeof(cuuint64_t));
  std::memcpy(reinterpret_cast<char*>(map) + 24, box, 2 * sizeof(cuuint32_t));
  return CUDA_SUCCESS;
}

const void* Addr(uintptr_t a) { return reinterpret_cast<const void*>(a); }

// Groups whose buffers sit at fake, 16-byte aligned addresses (never dereferenced on the host).
std::vector<GroupProblem> Groups(const std::vector<int>& ms, int n, int k, uintptr_t salt) {
  std::vector<GroupProblem> g;
  for (size_t i = 0; i < ms.size(); ++i) {
    const uintptr_t base = (salt << 36) + (static_cast<uintptr_t>(i) + 1) * 0x10000000ull;
    GroupProblem p;
    p.a = Addr(base);
    p.b = Addr(base + 0x1000000);
    p.sfa = Addr(base + 0x2000000);
    p.sfb = Addr(base + 0x3000000);
    p.c = const_cast<void*>(Addr(base + 0x4000000));
    p.m = ms[i];
    p.n = n;
    p.k = k;
    g.push_back(p);
  }
  return g;
}

// The H200's shared-memory facts (HostRunner's `smem_facts`) and the pre-pass padding they give
// for a bound of `blocks_per_sm`.
constexpr int kSmemPerSm = 233472, kSmemOptin = 232448, kReservedPerBlock = 1024;
unsigned H200PadBytes(int blocks_per_sm) {
  return static_cast<unsigned>(
      PrepassPdlPadBytes(kSmemPerSm, kSmemOptin, kReservedPerBlock, blocks_per_sm,
                         sm90::kPrepassStaticSmemBytes));
}

// A runner without a device on 132 SMs (with `smem_facts`, the H200's shared-memory facts too)
// with the fake encoder; `fake_workspace`: the token workspace address its pre-pass plans use
// (nullptr: none).
std::unique_ptr<Nvfp4GroupedGemm> HostRunner(const RunnerOptions& options,
                                             void* fake_workspace = nullptr,
                                             bool smem_facts = false) {
  DeviceInfo info;
  info.sm_count = 132;
  if (smem_facts) {
    info.max_smem_per_sm = kSmemPerSm;
    info.max_smem_optin_per_block = kSmemOptin;
    info.reserved_smem_per_block = kReservedPerBlock;
  }
  DriverApi api;
  api.tensor_map_encode_tiled = &FakeEncode;
  return internal::CreateSm90RunnerWithoutDevice(info, api, options, fake_workspace);
}

class Sm90RunnerHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    encode_calls = 0;
    fail_on = nullptr;
    DeviceInfo info;
    info.sm_count = 132;
    DriverApi api;
    api.tensor_map_encode_tiled = &FakeEncode;
    gemm_ = internal::CreateSm90RunnerWithoutDevice(info, api, /*capacity=*/64);
    plan_ = std::make_unique<LaunchPlan>();
  }
  std::unique_ptr<Nvfp4GroupedGemm> gemm_;
  std::unique_ptr<LaunchPlan> plan_;
};

TEST_F(Sm90RunnerHostTest, PrepareFillsADeviceReadyPlan) {
  const auto g = Groups({128, 384}, 4096, 1536, 1);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{g}, plan_.get()));
  EXPECT_NE(plan_->function, nullptr);
  EXPECT_GT(plan_->num_tiles, 0);
  EXPECT_GT(plan_->params_bytes, 0u);
  EXPECT_LE(plan_->params_bytes, kMaxParamBytes);
  EXPECT_GT(plan_->dynamic_smem_bytes, 48u * 1024);
  EXPECT_TRUE(plan_->supports_pdl);
  EXPECT_EQ(encode_calls.load(), 4) << "one map per operand per group";
}

TEST_F(Sm90RunnerHostTest, KernelChoiceFollowsTheTileCount) {
  // Few tiles: one CTA per tile (grid = tiles).
  const auto small = Groups({64}, 256, 256, 2);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{small}, plan_.get()));
  EXPECT_EQ(plan_->kind, KernelKind::kSimple);
  EXPECT_EQ(static_cast<int>(plan_->grid.x), plan_->num_tiles);
  // Up to 3 tiles per SM (GPU MODE shape 1's groups with half its N: 224 tiles of 128 x 256, 182
  // of 256 x 128): still the block scheduler (where no packed schedule is predicted to gain: a
  // runner with RunnerOptions::pack_tiles = false).
  RunnerOptions unpacked_options;
  unpacked_options.stream_k = false;
  unpacked_options.token_prepass = TokenPrepass::kNever;
  unpacked_options.pack_tiles = false;
  const auto unpacked = HostRunner(unpacked_options);
  const auto big = Groups({40, 76, 168, 72, 164, 148, 196, 160}, 3584, 2048, 3);
  ENCORE_ASSERT_OK(unpacked->Prepare(GroupedGemmArguments{big}, plan_.get()));
  EXPECT_GT(plan_->num_tiles, 132);
  EXPECT_LE(plan_->num_tiles, 3 * 132);
  EXPECT_EQ(plan_->kind, KernelKind::kSimple);
  // More than 3 tiles per SM: the persistent kernel on one CTA per SM.
  const auto huge = Groups({256, 256, 256, 256, 256, 256, 256, 256}, 8192, 2048, 5);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{huge}, plan_.get()));
  EXPECT_GT(plan_->num_tiles, 3 * 132);
  EXPECT_EQ(plan_->kind, KernelKind::kPersistent);
  EXPECT_EQ(plan_->grid.x, 132u);
  // Stream-K is never chosen by a runner without a device (no workspace), and forcing it says so.
  EXPECT_EQ(gemm_->Prepare(GroupedGemmArguments{small}, plan_.get(), KernelKind::kStreamK).code(),
            absl::StatusCode::kFailedPrecondition);
  // Forced kinds are honoured.
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{big}, plan_.get(), KernelKind::kSimple));
  EXPECT_EQ(plan_->kind, KernelKind::kSimple);
  EXPECT_EQ(static_cast<int>(plan_->grid.x), plan_->num_tiles);
}

// A runner that allows stream-K but has no device has no stream-K workspace: where the model
// picks stream-K (one 128-row group, N = 256, K = 7168: a few tiles on 132 SMs) kAuto runs whole
// tiles, and a forced stream-K says why (ResourceExhausted) instead of failing at launch.
TEST_F(Sm90RunnerHostTest, StreamKWithoutAWorkspaceFallsBackToWholeTiles) {
  RunnerOptions options;
  options.stream_k = true;
  options.token_prepass = TokenPrepass::kNever;
  auto gemm = HostRunner(options);
  const auto one_tile = Groups({128}, 256, 7168, 9);
  ENCORE_ASSERT_OK(gemm->Prepare(GroupedGemmArguments{one_tile}, plan_.get()));
  EXPECT_EQ(plan_->kind, KernelKind::kSimple);
  EXPECT_EQ(static_cast<int>(plan_->grid.x), plan_->num_tiles) << "one CTA per whole tile";
  const absl::Status forced =
      gemm->Prepare(GroupedGemmArguments{one_tile}, plan_.get(), KernelKind::kStreamK);
  if (sm90::kStreamKBuilt) {
    EXPECT_EQ(forced.code(), absl::StatusCode::kResourceExhausted) << forced;
  } else {
    EXPECT_EQ(forced.code(), absl::StatusCode::kFailedPrecondition) << forced;
  }
}

// Group slots (the order the kernels walk tiles in) go by tile cost, k-blocks x (rows per tile +
// 24), stably over M largest first, not by M: M = 300 makes two 150-row tiles (rounded to 160:
// cost 184 per k-block), M = 256 one 256-row tile (280), M = 200 one (232), M = 150 one (184). The
// persistent kernel's snake balance relies on it.
TEST_F(Sm90RunnerHostTest, GroupSlotsAreOrderedByTileCost) {
  const auto g = Groups({150, 300, 200, 256}, 8192, 7168, 4);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{g}, plan_.get(), KernelKind::kPersistent));
  ASSERT_EQ(plan_->params_bytes, sizeof(sm90::Params<8>));
  const auto* params = reinterpret_cast<const sm90::Params<8>*>(plan_->params);
  std::vector<int> slot_m, slot_orig;
  long long prev = -1;
  for (int s = 0; s < params->num_groups; ++s) {
    const sm90::GroupInfo& gi = params->info[s];
    slot_m.push_back(gi.m);
    slot_orig.push_back(gi.orig);
    const long long cost = TileCost(gi.tile_rows, sm90::TileShape::KBlocks(gi.k));
    if (s > 0) {
      EXPECT_LE(cost, prev) << "slot " << s << " costs more than slot " << s - 1;
    }
    prev = cost;
  }
  if (sm90::TileShape::kMaxBlockM == 256) {
    EXPECT_EQ(slot_m, (std::vector<int>{256, 200, 300, 150}));
    EXPECT_EQ(slot_orig, (std::vector<int>{3, 2, 1, 0}));
  }
}

// Per-CTA loads (PackCost) of a plan's persistent schedule: the packed lists, or the snake rounds.
std::vector<long long> CtaLoads(const sm90::Params<8>& p, int grid) {
  auto tile_cost = [&](int t) {
    int s = 0;
    while (s + 1 < p.num_groups && p.info[s + 1].tile_start <= t) ++s;
    const sm90::GroupInfo& gi = p.info[s];
    const int m_tile = (t - gi.tile_start) % gi.m_tiles;
    const int rows = TileRows(MTiling{gi.m_tiles, gi.tile_rows}, gi.m, m_tile);
    return PackCost(rows, sm90::TileShape::KBlocks(gi.k));
  };
  std::vector<long long> load(grid, 0);
  if (p.packed_ctas > 0) {
    for (int b = 0; b < p.packed_ctas; ++b) {
      for (int i = p.packed_begin[b]; i < p.packed_begin[b + 1]; ++i) {
        load[b] += tile_cost(p.packed_tiles[i]);
      }
    }
  } else {
    for (int b = 0; b < grid; ++b) {
      for (int round = 0; sm90::SnakeRoundTile(round, grid, b) < p.num_tiles; ++round) {
        load[b] += tile_cost(sm90::SnakeRoundTile(round, grid, b));
      }
    }
  }
  return load;
}

// The GPU MODE shapes 0 and 1 (uneven tiles, ~2 and ~3.4 per SM) get a packed persistent schedule
// that runs every tile exactly once and loads the busiest CTA less than the snake rounds would;
// shapes 2 and 3 (one wave of near-equal tiles) gain nothing and keep their kernels. With
// RunnerOptions::pack_tiles = false no plan is packed.
TEST(Sm90PackedScheduleTest, GpuModeShapesPackWhereTheModelGains) {
  struct Shape {
    std::vector<int> m;
    int n, k;
    bool packed;
  };
  const Shape shapes[] = {{{80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168, true},
                          {{40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048, true},
                          {{192, 320}, 3072, 4096, false},
                          {{128, 384}, 4096, 1536, false}};
  RunnerOptions options;  // tokens in kernel: a runner without a device has no workspace
  options.token_prepass = TokenPrepass::kNever;
  RunnerOptions unpacked_options = options;
  unpacked_options.pack_tiles = false;
  auto packed_runner = HostRunner(options);
  auto unpacked_runner = HostRunner(unpacked_options);
  for (const Shape& sh : shapes) {
    SCOPED_TRACE(::testing::Message() << "M[0] = " << sh.m[0]);
    const auto g = Groups(sh.m, sh.n, sh.k, 30);
    auto plan = std::make_unique<LaunchPlan>();
    ENCORE_ASSERT_OK(packed_runner->Prepare(GroupedGemmArguments{g}, plan.get()));
    const auto& p = *reinterpret_cast<const sm90::Params<8>*>(plan->params);
    auto snake_plan = std::make_unique<LaunchPlan>();
    ENCORE_ASSERT_OK(unpacked_runner->Prepare(GroupedGemmArguments{g}, snake_plan.get(),
                                              KernelKind::kPersistent));
    const auto& snake = *reinterpret_cast<const sm90::Params<8>*>(snake_plan->params);
    EXPECT_EQ(snake.packed_ctas, 0);
    if (sm90::TileShape::kMaxBlockM != 256 || sm90::TileShape::kBlockN != 128) continue;
    ASSERT_EQ(p.packed_ctas > 0, sh.packed);
    if (!sh.packed) continue;
    EXPECT_EQ(plan->kind, KernelKind::kPersistent);
    EXPECT_EQ(static_cast<int>(plan->grid.x), p.packed_ctas);
    EXPECT_LE(p.packed_ctas, 132);
    ASSERT_EQ(p.packed_begin[0], 0);
    ASSERT_EQ(p.packed_begin[p.packed_ctas], p.num_tiles);
    std::vector<int> seen(p.num_tiles, 0);
    for (int b = 0; b < p.packed_ctas; ++b) {
      ASSERT_LE(p.packed_begin[b], p.packed_begin[b + 1]);
      for (int i = p.packed_begin[b]; i < p.packed_begin[b + 1]; ++i) {
        ASSERT_LT(p.packed_tiles[i], p.num_tiles);
        ++seen[p.packed_tiles[i]];
      }
    }
    for (int t = 0; t < p.num_tiles; ++t) EXPECT_EQ(seen[t], 1) << "tile " << t;
    const std::vector<long long> packed_load = CtaLoads(p, p.packed_ctas);
    const std::vector<long long> snake_load = CtaLoads(snake, static_cast<int>(snake_plan->grid.x));
    const long long packed_max = *std::max_element(packed_load.begin(), packed_load.end());
    const long long snake_max = *std::max_element(snake_load.begin(), snake_load.end());
    EXPECT_LT(packed_max, snake_max);
    std::printf("M[0] = %d: %d tiles on %d CTAs, busiest CTA %lld vs %lld in snake rounds; rows:",
                sh.m[0], p.num_tiles, p.packed_ctas, packed_max, snake_max);
    for (int s = 0; s < p.num_groups; ++s) {
      std::printf(" %dx%d", p.info[s].m_tiles, p.info[s].tile_rows);
    }
    std::printf("\n");
    // Every slot's token tiles stay within the row cap the kernel supports.
    for (int s = 0; s < p.num_groups; ++s) {
      EXPECT_LE(p.info[s].tile_rows, sm90::TileShape::kMaxBlockM);
      EXPECT_EQ(p.info[s].tile_rows % sm90::TileShape::kMGranule, 0);
    }
  }
}

// RunnerOptions::token_tile_rows: Create rejects a cap that is not 0 or a multiple of 16 in
// [16, kMaxBlockM] before it looks for a device; a valid cap bounds every group's token tiles
// (GPU MODE shape 0 at cap 64: the 248-row group in 4 tiles of 64 rows).
// The fused pre-pass's barrier words follow the workspace's bytes: a size that is not a multiple
// of 256 is rejected by Create (it used to misalign them), and so is one over 2^48 (a size near
// 2^64 passed the multiple check and wrapped, with the barrier words, to a 1 KB allocation that
// every pre-pass plan was told held its tokens).
TEST(RunnerOptionsTest, TokenWorkspaceBytesMustBeAMultipleOf256AtMost2To48) {
  for (size_t bytes : {(size_t{64} << 20) + 2, size_t{1000}, ~size_t{0} & ~size_t{255},
                       (size_t{1} << 48) + 256}) {
    RunnerOptions o;
    o.token_workspace_bytes = bytes;
    const auto r = Nvfp4GroupedGemm::Create(o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bytes;
    EXPECT_TRUE(absl::StrContains(r.status().message(), "token_workspace_bytes")) << r.status();
  }
}

TEST(TokenTileRowsTest, InvalidCapsAreRejectedAndValidOnesBoundTheTiles) {
  for (int rows : {-16, 8, 24, sm90::TileShape::kMaxBlockM + 16}) {
    RunnerOptions o;
    o.token_tile_rows = rows;
    const auto r = Nvfp4GroupedGemm::Create(o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << rows;
    EXPECT_TRUE(absl::StrContains(r.status().message(), "token_tile_rows")) << r.status();
  }
  RunnerOptions o;
  o.token_prepass = TokenPrepass::kNever;
  o.token_tile_rows = 64;
  auto runner = HostRunner(o);
  const auto g = Groups({80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168, 42);
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(runner->Prepare(GroupedGemmArguments{g}, plan.get()));
  const auto& p = *reinterpret_cast<const sm90::Params<8>*>(plan->params);
  for (int s = 0; s < p.num_groups; ++s) {
    EXPECT_LE(p.info[s].tile_rows, 64) << "slot " << s;
    if (p.info[s].m == 248) {
      EXPECT_EQ(p.info[s].m_tiles, 4);
    }
  }
}

// RunnerOptions::stream_k_costs: Create rejects costs outside [0, 2^20] before it looks for a
// device (larger ones overflowed the partition's signed cost sums).
TEST(StreamKCostsTest, CostsOutsideTheirRangeAreRejected) {
  for (long long value : {-1LL, (1LL << 20) + 1, 1LL << 62}) {
    for (int field = 0; field < 4; ++field) {
      RunnerOptions o;
      (field == 0   ? o.stream_k_costs.piece_fixed
       : field == 1 ? o.stream_k_costs.io_fixed
       : field == 2 ? o.stream_k_costs.io_per_row
                    : o.stream_k_costs.decode_rows) = value;
      const auto r = Nvfp4GroupedGemm::Create(o);
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << field << " " << value;
      EXPECT_TRUE(absl::StrContains(r.status().message(), "stream_k_costs")) << r.status();
    }
  }
}

TEST_F(Sm90RunnerHostTest, TensorMapsAreEncodedOncePerPointerAndShape) {
  const auto g = Groups({80, 176, 128, 72}, 4096, 7168, 4);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{g}, plan_.get()));
  EXPECT_EQ(encode_calls.load(), 8);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{g}, plan_.get()));
  EXPECT_EQ(encode_calls.load(), 8) << "second Prepare: every map from the cache";
  auto moved = g;
  moved[2].b = Addr(reinterpret_cast<uintptr_t>(moved[2].b) + 0x100);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{moved}, plan_.get()));
  EXPECT_EQ(encode_calls.load(), 9) << "one new weight pointer: one new map";
}

TEST_F(Sm90RunnerHostTest, PrepareIsDeterministicAndPointerSensitive) {
  const auto g = Groups({96, 40, 72}, 384, 256, 5);
  auto first = std::make_unique<LaunchPlan>();
  auto again = std::make_unique<LaunchPlan>();
  auto other = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{g}, first.get()));
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{g}, again.get()));
  EXPECT_TRUE(first->SameLaunch(*again));
  auto moved = g;
  moved[1].c = static_cast<char*>(moved[1].c) + 16;
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{moved}, other.get()));
  EXPECT_FALSE(first->SameLaunch(*other)) << "a new C pointer must change the parameter block";
}

// The steady-state call path: once the tensor maps and the tiling choice are cached, Prepare
// (direct launches, graph-node patches) allocates nothing.
TEST_F(Sm90RunnerHostTest, WarmPrepareAllocatesNothing) {
  const auto a = Groups({80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168, 20);
  const auto b = Groups({80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168, 21);
  g_allocations = 0;
  g_count_allocations = true;  // the counter works: a cold Prepare fills the caches
  const absl::Status cold = gemm_->Prepare(GroupedGemmArguments{a}, plan_.get());
  g_count_allocations = false;
  ENCORE_ASSERT_OK(cold);
  EXPECT_GT(g_allocations.load(), 0);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{b}, plan_.get()));
  g_allocations = 0;
  g_count_allocations = true;
  absl::Status s = absl::OkStatus();
  for (int i = 0; i < 10 && s.ok(); ++i) {
    s = gemm_->Prepare(GroupedGemmArguments{i % 2 ? a : b}, plan_.get());
  }
  g_count_allocations = false;
  ENCORE_ASSERT_OK(s);
  EXPECT_EQ(g_allocations.load(), 0);
}

TEST_F(Sm90RunnerHostTest, EmptyGroupsEncodeNothing) {
  const auto g = Groups({0, 64, 0}, 128, 128, 6);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{g}, plan_.get()));
  EXPECT_EQ(encode_calls.load(), 2) << "maps only for the group with rows";
  EXPECT_GT(plan_->num_tiles, 0);
}

TEST_F(Sm90RunnerHostTest, EncoderFailureNamesTheOperand) {
  const auto g = Groups({64, 64}, 128, 128, 7);
  fail_on = g[1].b;
  const absl::Status s = gemm_->Prepare(GroupedGemmArguments{g}, plan_.get());
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "cuTensorMapEncodeTiled(b")) << s;
}

TEST_F(Sm90RunnerHostTest, InvalidArgumentsArePreparedNever) {
  auto g = Groups({64, 64}, 128, 128, 8);
  g[1].k = 96;
  const absl::Status s = gemm_->Prepare(GroupedGemmArguments{g}, plan_.get());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "group 1")) << s;
  EXPECT_EQ(encode_calls.load(), 0) << "validation comes before any encoding";
  EXPECT_EQ(gemm_->Prepare(GroupedGemmArguments{g}, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
}

// The kernel's tile limit (2^30) is judged at the narrowest token tile a plan may use
// (16 rows), so no plan's 32-bit tile counts wrap: 8 groups of 2^24 x 2^24 are 8 x 2^37 tiles
// there (2^33 at 256 rows, also over) and are rejected before any encoding; the largest single
// extents stay implementable.
TEST_F(Sm90RunnerHostTest, TileLimitIsJudgedAtTheNarrowestTile) {
  // Buffers this large (a C of 2^24 x 2^24 halves is 2^49 bytes) need addresses 2^50 apart, or
  // Validate reports them overlapping first.
  const auto spread = [](std::vector<GroupProblem> groups) {
    for (size_t i = 0; i < groups.size(); ++i) {
      const auto at = [&](uintptr_t field) { return Addr((i * 8 + field + 1) << 50); };
      groups[i].a = at(0);
      groups[i].b = at(1);
      groups[i].sfa = at(2);
      groups[i].sfb = at(3);
      groups[i].c = const_cast<void*>(at(4));
    }
    return groups;
  };
  const auto huge = spread(Groups(std::vector<int>(8, kMaxExtent), kMaxExtent, 64, 9));
  const absl::Status s = gemm_->CanImplement(GroupedGemmArguments{huge});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "exceed the kernel limit of 2^30")) << s;
  // 2^20 token tiles of 16 rows x 2^10 weight tiles = 2^30: at the limit, implementable.
  const auto edge = spread(Groups({kMaxExtent}, 128 * 1024, 64, 10));
  ENCORE_EXPECT_OK(gemm_->CanImplement(GroupedGemmArguments{edge}));
  // One more weight tile: 2^30 + 2^20 at 16 rows (2^26 + 2^16 at 256: the old count passed it).
  const auto over = spread(Groups({kMaxExtent}, 128 * 1024 + 128, 64, 11));
  EXPECT_EQ(gemm_->CanImplement(GroupedGemmArguments{over}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(encode_calls.load(), 0);
}

// A kind outside the enum is refused before Prepare encodes a map or touches the plan (it used
// to be refused only at the end, after the maps, the memo and a stream's workspace).
TEST_F(Sm90RunnerHostTest, AKindOutOfRangeIsRefusedBeforeAnyWork) {
  const auto g = Groups({128, 384}, 4096, 1536, 12);
  for (int kind : {-1, 4, 7}) {
    const absl::Status s =
        gemm_->Prepare(GroupedGemmArguments{g}, plan_.get(), static_cast<KernelKind>(kind));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), absl::StrCat("kind = ", kind))) << s;
  }
  EXPECT_EQ(encode_calls.load(), 0);
  EXPECT_EQ(plan_->function, nullptr);
}

// A Prepare that fails part way (here the weight map of a moved pointer) leaves the plan
// unlaunchable: it used to keep the previous plan's kernel beside zeroed parameters, which Launch
// would have run.
TEST_F(Sm90RunnerHostTest, AFailedPrepareLeavesNoLaunchablePlan) {
  const auto g = Groups({64, 64}, 128, 128, 13);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{g}, plan_.get()));
  ASSERT_NE(plan_->function, nullptr);
  auto moved = g;
  moved[1].b = Addr(reinterpret_cast<uintptr_t>(moved[1].b) + 0x100);
  fail_on = moved[1].b;
  EXPECT_FALSE(gemm_->Prepare(GroupedGemmArguments{moved}, plan_.get()).ok());
  EXPECT_EQ(plan_->function, nullptr);
  EXPECT_EQ(plan_->pre.function, nullptr);
  const absl::Status launched = gemm_->Launch(*plan_, nullptr, /*pdl=*/false);
  EXPECT_EQ(launched.code(), absl::StatusCode::kInvalidArgument) << launched;
  EXPECT_TRUE(absl::StrContains(launched.message(), "not prepared")) << launched;
}

// Planning a problem of 2^26 tiles (one group of 2^24 x 2^17, K = 64: implementable) builds no
// per-tile tables: its stream-K partition is not planned (kMaxStreamKTiles) and its packed
// schedule is refused from the tile count. A review measured the first Prepare of it at 30 s and
// 528 MB when both walked every tile first; here a cold Prepare allocates a few dozen times.
TEST(HugeProblemTest, PlanningBuildsNoPerTileTables) {
  RunnerOptions o;
  o.stream_k = true;
  o.token_prepass = TokenPrepass::kNever;
  auto runner = HostRunner(o);
  auto g = Groups({kMaxExtent}, 128 * 1024, 64, 14);
  g[0].a = Addr(uintptr_t{1} << 50);  // buffers this large need addresses far apart
  g[0].b = Addr(uintptr_t{2} << 50);
  g[0].sfa = Addr(uintptr_t{3} << 50);
  g[0].sfb = Addr(uintptr_t{4} << 50);
  g[0].c = const_cast<void*>(Addr(uintptr_t{5} << 50));
  auto plan = std::make_unique<LaunchPlan>();
  g_allocations = 0;
  g_count_allocations = true;
  const absl::Status s = runner->Prepare(GroupedGemmArguments{g}, plan.get());
  g_count_allocations = false;
  ENCORE_ASSERT_OK(s);
  EXPECT_NE(plan->kind, KernelKind::kStreamK);
  EXPECT_LT(g_allocations.load(), 100);
}

TEST_F(Sm90RunnerHostTest, CacheCapacityBoundsTheMapsKept) {
  // Capacity 64 maps; 40 distinct 1-group calls need 80: the oldest are re-encoded later.
  for (uintptr_t i = 0; i < 40; ++i) {
    const auto g = Groups({64}, 128, 128, 100 + i);
    ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{g}, plan_.get()));
  }
  EXPECT_EQ(encode_calls.load(), 80);
  const auto newest = Groups({64}, 128, 128, 139);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{newest}, plan_.get()));
  EXPECT_EQ(encode_calls.load(), 80) << "recent maps stay";
  const auto oldest = Groups({64}, 128, 128, 100);
  ENCORE_ASSERT_OK(gemm_->Prepare(GroupedGemmArguments{oldest}, plan_.get()));
  EXPECT_EQ(encode_calls.load(), 82) << "evicted maps are encoded again";
}

// ---- token pre-pass plans ----

struct MapView {  // what FakeEncode recorded
  uintptr_t address;
  uint64_t dims[2];
  uint32_t box[2];
};
MapView View(const CUtensorMap& m) {
  MapView v;
  std::memcpy(&v.address, &m, 8);
  std::memcpy(v.dims, reinterpret_cast<const char*>(&m) + 8, 16);
  std::memcpy(v.box, reinterpret_cast<const char*>(&m) + 24, 8);
  return v;
}

// Slot s's two C maps (the _tmastore build: 32- and 16-row boxes of fp16 {N, M}); nothing to
// check where Params has none.
template <int kGroups>
void ExpectOutputMaps(const sm90::Params<kGroups>& params, int s, const void* c, int n, int m) {
  if constexpr (sm90::OutputMaps<kGroups>::kPresent) {
    for (int i = 0; i < 2; ++i) {
      const MapView v = View(params.out_maps[2 * s + i]);
      EXPECT_EQ(v.address, reinterpret_cast<uintptr_t>(c)) << "slot " << s;
      EXPECT_EQ(v.dims[0], static_cast<uint64_t>(n));
      EXPECT_EQ(v.dims[1], static_cast<uint64_t>(m));
      EXPECT_EQ(v.box[0], 64u);
      EXPECT_EQ(v.box[1], static_cast<uint32_t>(i == 0 ? sm90::kOutputBoxRows
                                                       : sm90::kOutputTailRows));
    }
  }
}

class Sm90PrepassHostTest : public ::testing::Test {
 protected:
  static constexpr uintptr_t kWorkspace = 0x7f0000000000ull;
  // A runner with the H200's shared-memory facts (the pre-pass padding needs them), no stream-K.
  static std::unique_ptr<Nvfp4GroupedGemm> MakeWithSmemFacts(RunnerOptions options) {
    options.stream_k = false;
    return HostRunner(options, const_cast<void*>(Addr(kWorkspace)), /*smem_facts=*/true);
  }
  std::unique_ptr<Nvfp4GroupedGemm> Make(TokenPrepass mode, size_t bytes = size_t{64} << 20,
                                         int max_workspaces = 8,
                                         FusePrepass fuse = FusePrepass::kNever,
                                         bool pack = true) {
    RunnerOptions options;
    options.pack_tiles = pack;
    options.stream_k = false;
    options.token_prepass = mode;
    options.token_workspace_bytes = bytes;
    options.max_token_workspaces = max_workspaces;
    options.fuse_token_prepass = fuse;
    return HostRunner(options, const_cast<void*>(Addr(kWorkspace)));
  }
};

// GPU MODE shape 0 (16 weight tiles per token tile): kAuto converts the tokens once, in a
// pre-kernel whose groups, units and workspace regions line up with the GEMM's slots and maps.
TEST_F(Sm90PrepassHostTest, PrepassPlanLinesUpWithTheGemm) {
  auto gemm = Make(TokenPrepass::kAuto);
  const std::vector<int> ms = {80, 176, 128, 72, 64, 248, 0, 160};
  const std::vector<GroupProblem> groups = Groups(ms, 4096, 7168, 3);
  GroupedGemmArguments args{absl::MakeConstSpan(groups)};
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->Prepare(args, plan.get()));
  ASSERT_TRUE(plan->has_pre());
  EXPECT_EQ(plan->num_kernels(), 2);
  EXPECT_TRUE(plan->reads_after_wait) << "the pre-pass triggers the GEMM after its wait";
  EXPECT_GE(plan->pre.grid.x, 3u * 132);
  EXPECT_TRUE(plan->prefers_pdl) << "a pre-kernel of >= 3 blocks per SM: Run uses PDL";
  EXPECT_EQ(plan->pre.block.x, static_cast<unsigned>(sm90::kPrepassThreads));
  EXPECT_EQ(plan->pre.params_bytes, sizeof(sm90::PrepassParams<8>));
  const auto* pre = reinterpret_cast<const sm90::PrepassParams<8>*>(plan->pre.params);
  const auto* params = reinterpret_cast<const sm90::Params<8>*>(plan->params);
  const int kbs = sm90::TileShape::KBlocks(7168);
  long long units = 0;
  for (int m : ms) units += static_cast<long long>(m) * kbs;
  EXPECT_EQ(pre->units, units);
  EXPECT_EQ(pre->num_groups, 8);
  EXPECT_EQ(pre->device_m, nullptr);
  EXPECT_EQ(static_cast<long long>(plan->pre.grid.x),
            (units * sm90::kPrepassThreadsPerUnit + sm90::kPrepassThreads - 1) /
                sm90::kPrepassThreads);
  const size_t row_bytes = sm90::TileShape::TokenRowHalves(7168) * 2;
  long long expect_start = 0;
  uintptr_t end = kWorkspace;
  for (int s = 0; s < 8; ++s) {
    const sm90::PrepassGroup& g = pre->g[s];
    const sm90::GroupInfo& gi = params->info[s];
    EXPECT_EQ(g.orig, gi.orig) << "slot " << s;
    EXPECT_EQ(g.unit_start, expect_start) << "slot " << s << ": units must follow the slots";
    if (gi.m == 0) continue;
    EXPECT_EQ(g.a, groups[g.orig].a);
    EXPECT_EQ(g.sfa, groups[g.orig].sfa);
    EXPECT_EQ(g.m, ms[g.orig]);
    EXPECT_EQ(g.k, 7168);
    expect_start += static_cast<long long>(g.m) * kbs;
    const uintptr_t out = reinterpret_cast<uintptr_t>(g.out);
    EXPECT_EQ(out, end) << "regions are packed in slot order";
    EXPECT_EQ(out % 256, 0u);
    end = out + (g.m * row_bytes + 255) / 256 * 256;
    const MapView a = View(params->maps[s].a);
    EXPECT_EQ(a.address, out) << "the GEMM reads the pre-pass rows";
    EXPECT_EQ(a.dims[0], static_cast<uint64_t>(sm90::TileShape::TokenRowHalves(7168)));
    EXPECT_EQ(a.dims[1], static_cast<uint64_t>(g.m));
    EXPECT_EQ(a.box[0], 64u);
    EXPECT_EQ(a.box[1], static_cast<uint32_t>(gi.tile_rows)) << "one box = one token tile";
    ExpectOutputMaps(*params, s, groups[g.orig].c, 4096, g.m);
    EXPECT_EQ(gi.tile_rows % sm90::kOutputTailRows, 0) << "a store never crosses into a tile";
  }
  EXPECT_EQ(params->store_by_tma, sm90::kTmaStoreBuilt ? 1 : 0);
  EXPECT_EQ(expect_start, units);
  EXPECT_LE(end - kWorkspace, size_t{64} << 20);
  EXPECT_EQ(plan->dynamic_smem_bytes,
            static_cast<unsigned>(sm90::Pipeline<sm90::TokenSource::kPrepass>::kSmemBytes));

  // Deterministic, and pointer-sensitive through the pre-pass block too.
  auto again = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->Prepare(args, again.get()));
  EXPECT_TRUE(plan->SameLaunch(*again));
  std::vector<GroupProblem> moved = groups;
  moved[0].sfa = Addr(reinterpret_cast<uintptr_t>(moved[0].sfa) + 0x100);
  ENCORE_ASSERT_OK(gemm->Prepare(GroupedGemmArguments{absl::MakeConstSpan(moved)}, again.get()));
  EXPECT_FALSE(plan->SameLaunch(*again)) << "the token scales are read by the pre-kernel only";
}

// fuse_token_prepass: a pre-pass plan whose grid fits on the SMs carries the pre-pass block inside
// the GEMM's parameters (one kernel) with the stream's barrier words after its token region; one
// with more CTAs than SMs keeps the pre-kernel.
TEST_F(Sm90PrepassHostTest, FusedPrepassFoldsIntoTheGemm) {
  const size_t bytes = size_t{64} << 20;
  auto gemm = Make(TokenPrepass::kAlways, bytes, 8, FusePrepass::kAlways);
  const std::vector<int> ms = {192, 320};  // GPU MODE shape 2: 120 tiles
  const std::vector<GroupProblem> groups = Groups(ms, 3072, 4096, 5);
  GroupedGemmArguments args{absl::MakeConstSpan(groups)};
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->Prepare(args, plan.get(), KernelKind::kSimple));
  ASSERT_LE(plan->grid.x, 132u);
  EXPECT_FALSE(plan->has_pre());
  EXPECT_TRUE(plan->fused_pre);
  // Every role waits (default) or the weight producer reads early (_fearly).
  EXPECT_EQ(plan->reads_after_wait, ENCORE_SM90_FUSED_WEIGHTS_WAIT != 0);
  EXPECT_EQ(plan->prefers_pdl, ENCORE_SM90_FUSED_WEIGHTS_WAIT != 0);
  EXPECT_EQ(plan->num_kernels(), 1);
  const auto* params = reinterpret_cast<const sm90::Params<8>*>(plan->params);
  EXPECT_EQ(params->fused_prepass, 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(params->grid_sync), kWorkspace + bytes);
  long long units = 0;
  for (int m : ms) units += static_cast<long long>(m) * sm90::TileShape::KBlocks(4096);
  EXPECT_EQ(params->pre.units, units);
  EXPECT_EQ(params->pre.num_groups, 2);
  for (int s = 0; s < 2; ++s) {
    EXPECT_EQ(params->pre.g[s].a, groups[params->info[s].orig].a);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(params->pre.g[s].out), View(params->maps[s].a).address);
  }
  // The same problem unfused (a pre-kernel) through a runner with kNever.
  auto plain = Make(TokenPrepass::kAlways, bytes);
  auto unfused = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(plain->Prepare(args, unfused.get(), KernelKind::kSimple));
  EXPECT_TRUE(unfused->has_pre());
  EXPECT_FALSE(unfused->fused_pre);
  EXPECT_EQ(reinterpret_cast<const sm90::Params<8>*>(unfused->params)->fused_prepass, 0);
  // Fused plans run their own instantiation of the kernel.
  EXPECT_NE(plan->function, unfused->function);
  EXPECT_EQ(plan->function,
            sm90::KernelFunction(KernelKind::kSimple, 8, sm90::TokenSource::kPrepass, true));
  // More CTAs than SMs: GPU MODE shape 0 with the simple kernel (256 tiles).
  const std::vector<GroupProblem> big = Groups({80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168, 6);
  ENCORE_ASSERT_OK(gemm->Prepare(GroupedGemmArguments{absl::MakeConstSpan(big)}, plan.get(),
                                 KernelKind::kSimple));
  EXPECT_GT(plan->grid.x, 132u);
  EXPECT_TRUE(plan->has_pre());
  EXPECT_FALSE(plan->fused_pre);
  // ... unless the kernel is the runner's choice: then the persistent kernel, fused.
  ENCORE_ASSERT_OK(gemm->Prepare(GroupedGemmArguments{absl::MakeConstSpan(big)}, plan.get()));
  EXPECT_EQ(plan->kind, KernelKind::kPersistent);
  EXPECT_EQ(plan->grid.x, 132u);
  EXPECT_TRUE(plan->fused_pre);
  EXPECT_FALSE(plan->has_pre());
  // Without fusion: a pre-kernel, and the packed persistent schedule (the model packs shape 0:
  // Sm90PackedScheduleTest), or without packing the simple kernel.
  ENCORE_ASSERT_OK(plain->Prepare(GroupedGemmArguments{absl::MakeConstSpan(big)}, plan.get()));
  EXPECT_EQ(plan->kind, KernelKind::kPersistent);
  EXPECT_GT(reinterpret_cast<const sm90::Params<8>*>(plan->params)->packed_ctas, 0);
  EXPECT_TRUE(plan->has_pre());
  auto unpacked = Make(TokenPrepass::kAlways, bytes, 8, FusePrepass::kNever, /*pack=*/false);
  ENCORE_ASSERT_OK(unpacked->Prepare(GroupedGemmArguments{absl::MakeConstSpan(big)}, plan.get()));
  EXPECT_EQ(plan->kind, KernelKind::kSimple);
  EXPECT_TRUE(plan->has_pre());
}

// FusePrepass::kAuto (the default) fuses whole-tile plans whose grid fits and whose CTAs convert
// at most kFusedMaxUnitsPerCta units each: GPU MODE shape 3 (48 a CTA), not shapes 1 and 2
// (124, 137).
TEST_F(Sm90PrepassHostTest, AutoFusesOnlySmallSharesOfWholeTilePlans) {
  EXPECT_EQ(RunnerOptions{}.fuse_token_prepass, FusePrepass::kAuto);
  auto gemm = Make(TokenPrepass::kAuto, size_t{64} << 20, 8, FusePrepass::kAuto);
  struct Case {
    std::vector<int> ms;
    int n, k;
    bool fused;
  };
  const Case cases[] = {
      {{128, 384}, 4096, 1536, true},                                   // shape 3
      {{192, 320}, 3072, 4096, false},                                  // shape 2
      {{40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048, false},       // shape 1
  };
  for (const Case& c : cases) {
    const std::vector<GroupProblem> groups = Groups(c.ms, c.n, c.k, 7);
    auto plan = std::make_unique<LaunchPlan>();
    ENCORE_ASSERT_OK(gemm->Prepare(GroupedGemmArguments{absl::MakeConstSpan(groups)}, plan.get()));
    long long units = 0;
    for (int m : c.ms) units += static_cast<long long>(m) * sm90::TileShape::KBlocks(c.k);
    SCOPED_TRACE(::testing::Message() << "n " << c.n << " k " << c.k << " grid " << plan->grid.x
                                      << " units " << units);
    ASSERT_LE(plan->grid.x, 132u);
    EXPECT_EQ(plan->fused_pre, c.fused);
    EXPECT_EQ(plan->has_pre(), !c.fused);
    EXPECT_EQ(PreferFusedPrepass(units, static_cast<int>(plan->grid.x)), c.fused);
    EXPECT_TRUE(plan->reads_after_wait) << "fused or not, every role waits (default build)";
    if (c.fused) {
      EXPECT_TRUE(plan->prefers_pdl);
    }
  }
  // (Stream-K plans, never fused by kAuto, need a device workspace: not on this host runner.)
}

// RunnerOptions::stream_simple_tiles: unfused simple plans with pre-pass tokens whose groups'
// token tiles are all 16 rows wide, or 128 with K > 3968 (kAuto, the default; any K: kAlways),
// run the streamed simple kernel (its own instantiation); other widths, other kinds, fused or
// in-kernel plans, and kNever keep the plain one.
TEST_F(Sm90PrepassHostTest, SixteenAndOneTwentyEightRowTilesRunTheStreamedSimpleKernel) {
  EXPECT_EQ(RunnerOptions{}.stream_simple_tiles, StreamTiles::kAuto);
  EXPECT_TRUE(PreferStreamedTiles(16, 64));
  EXPECT_TRUE(PreferStreamedTiles(128, 4096));
  EXPECT_FALSE(PreferStreamedTiles(128, 3968));  // 31 k-blocks
  EXPECT_FALSE(PreferStreamedTiles(112, 7168));
  for (int rows = 16; rows <= sm90::TileShape::kMaxBlockM; rows += 16) {
    EXPECT_EQ(sm90::StreamedTileRows(rows), rows == 16 || rows == 128) << rows;
  }
  const void* plain_simple = sm90::KernelFunction(KernelKind::kSimple, 8,
                                                  sm90::TokenSource::kPrepass);
  const void* streamed = sm90::KernelFunction(KernelKind::kSimple, 8, sm90::TokenSource::kPrepass,
                                              /*fused=*/false, /*streamed=*/true);
  ASSERT_NE(plain_simple, nullptr);
  // Built in the default tile (2 token stages of 256-row atoms, 2 parts a stage), not in every
  // manual build; the others run the plain kernel.
  if (streamed == nullptr) GTEST_SKIP() << "this build has no streamed simple kernel";
  EXPECT_NE(streamed, plain_simple);
  EXPECT_EQ(sm90::KernelFunction(KernelKind::kSimple, 8, sm90::TokenSource::kInKernel, false, true),
            nullptr);
  EXPECT_EQ(sm90::KernelFunction(KernelKind::kPersistent, 8, sm90::TokenSource::kPrepass, false,
                                 true),
            nullptr);
  EXPECT_EQ(sm90::KernelFunction(KernelKind::kSimple, 8, sm90::TokenSource::kPrepass, true, true),
            nullptr);
  EXPECT_NE(sm90::KernelFunction(KernelKind::kSimple, 64, sm90::TokenSource::kPrepass, false,
                                 true),
            nullptr);
  auto gemm = Make(TokenPrepass::kAlways);  // unfused
  auto plan = std::make_unique<LaunchPlan>();
  auto function_of = [&](Nvfp4GroupedGemm* runner, const std::vector<int>& ms, int n, int k,
                         KernelKind kind) -> const void* {
    const std::vector<GroupProblem> groups = Groups(ms, n, k, 9);
    const absl::Status s =
        runner->Prepare(GroupedGemmArguments{absl::MakeConstSpan(groups)}, plan.get(), kind);
    EXPECT_TRUE(s.ok()) << s;
    return plan->function;
  };
  // A decode step (8 experts of <= 16 tokens, one M = 0): streamed.
  EXPECT_EQ(function_of(gemm.get(), {16, 3, 0, 16, 9, 1, 16, 12}, 2048, 7168, KernelKind::kAuto),
            streamed);
  EXPECT_EQ(plan->kind, KernelKind::kSimple);
  // 128-row tiles (M = 128, and 250 as two tiles of 128; at a cap of 128, where the model would
  // split these few tiles further), alone or with 16-row ones, at 32 k-blocks or more: streamed.
  RunnerOptions o;
  o.stream_k = false;
  o.token_prepass = TokenPrepass::kAlways;
  o.fuse_token_prepass = FusePrepass::kNever;
  o.token_tile_rows = 128;
  auto capped = HostRunner(o, const_cast<void*>(Addr(kWorkspace)));
  EXPECT_EQ(function_of(capped.get(), {128, 250}, 2048, 7168, KernelKind::kSimple), streamed);
  EXPECT_EQ(function_of(capped.get(), {128, 7}, 2048, 7168, KernelKind::kSimple), streamed);
  EXPECT_EQ(function_of(capped.get(), {128, 100}, 2048, 7168, KernelKind::kSimple), plain_simple);
  EXPECT_EQ(function_of(capped.get(), {128, 7}, 2048, 2048, KernelKind::kSimple), plain_simple);
  // GPU MODE shape 3 (128-row tiles at the model's cap, K = 1536): plain; shape 2 (96 / 112):
  // plain.
  EXPECT_EQ(function_of(gemm.get(), {128, 384}, 4096, 1536, KernelKind::kAuto), plain_simple);
  EXPECT_EQ(function_of(gemm.get(), {192, 320}, 3072, 4096, KernelKind::kAuto), plain_simple);
  // A 32-row tile among 16-row ones: plain.
  EXPECT_EQ(function_of(gemm.get(), {16, 17}, 2048, 7168, KernelKind::kAuto), plain_simple);
  // The persistent kind: its own kernel.
  EXPECT_NE(function_of(gemm.get(), {16, 3}, 2048, 7168, KernelKind::kPersistent), streamed);
  // Tokens converted in kernel: no pre-pass, plain.
  auto in_kernel = Make(TokenPrepass::kNever);
  EXPECT_EQ(function_of(in_kernel.get(), {16, 3}, 2048, 7168, KernelKind::kSimple),
            sm90::KernelFunction(KernelKind::kSimple, 8, sm90::TokenSource::kInKernel));
  // The pre-pass fused: its own kernel.
  auto fused = Make(TokenPrepass::kAlways, size_t{64} << 20, 8, FusePrepass::kAlways);
  EXPECT_EQ(function_of(fused.get(), {16, 3}, 2048, 7168, KernelKind::kSimple),
            sm90::KernelFunction(KernelKind::kSimple, 8, sm90::TokenSource::kPrepass, true));
  // kAlways: 128-row tiles at any K (shape 3), still not other widths (shape 2); kNever: never.
  o.token_tile_rows = 0;
  o.stream_simple_tiles = StreamTiles::kAlways;
  auto always = HostRunner(o, const_cast<void*>(Addr(kWorkspace)));
  EXPECT_EQ(function_of(always.get(), {128, 384}, 4096, 1536, KernelKind::kAuto), streamed);
  EXPECT_EQ(function_of(always.get(), {192, 320}, 3072, 4096, KernelKind::kAuto), plain_simple);
  o.stream_simple_tiles = StreamTiles::kNever;
  auto never = HostRunner(o, const_cast<void*>(Addr(kWorkspace)));
  EXPECT_EQ(function_of(never.get(), {16, 3}, 2048, 7168, KernelKind::kAuto), plain_simple);
}

// With the device's shared-memory facts the runner pads small pre-passes for PDL
// (RunnerOptions::pad_prepass_for_pdl, the default): their blocks ask for unused shared memory so
// that they spread evenly over the SMs (no more a SM than needed, at least one), Run launches them
// with PDL, and kAuto no longer fuses them.
TEST_F(Sm90PrepassHostTest, SmallPrepassesArePaddedForPdl) {
  EXPECT_TRUE(RunnerOptions{}.pad_prepass_for_pdl);
  auto runner = [](bool pad) {
    RunnerOptions options;
    options.pad_prepass_for_pdl = pad;
    return MakeWithSmemFacts(options);
  };
  const auto padded = runner(true);
  const auto unpadded = runner(false);
  auto plan = std::make_unique<LaunchPlan>();
  // GPU MODE shape 3: a small pre-pass (96 blocks) before 128 CTAs: one block a SM.
  const std::vector<GroupProblem> s3 = Groups({128, 384}, 4096, 1536, 7);
  ENCORE_ASSERT_OK(padded->Prepare(GroupedGemmArguments{absl::MakeConstSpan(s3)}, plan.get()));
  ASSERT_TRUE(plan->has_pre()) << "kAuto does not fuse a padded pre-pass";
  EXPECT_FALSE(plan->fused_pre);
  // (all the SM's shared memory but two reservations and the kernel's own staging)
  EXPECT_EQ(plan->pre.dynamic_smem_bytes, 233472u - 2 * 1024u - sm90::kPrepassStaticSmemBytes);
  EXPECT_EQ(plan->pre.dynamic_smem_bytes, H200PadBytes(1));
  EXPECT_TRUE(plan->prefers_pdl);
  EXPECT_TRUE(plan->reads_after_wait);
  ENCORE_ASSERT_OK(unpadded->Prepare(GroupedGemmArguments{absl::MakeConstSpan(s3)}, plan.get()));
  EXPECT_TRUE(plan->fused_pre) << "without the padding kAuto fuses it, as before";
  // GPU MODE shape 2 (256 blocks: two a SM when padded); without padding the pre-pass launches
  // without PDL.
  const std::vector<GroupProblem> s2 = Groups({192, 320}, 3072, 4096, 7);
  ENCORE_ASSERT_OK(unpadded->Prepare(GroupedGemmArguments{absl::MakeConstSpan(s2)}, plan.get()));
  ASSERT_TRUE(plan->has_pre());
  EXPECT_EQ(plan->pre.dynamic_smem_bytes, 0u);
  EXPECT_FALSE(plan->prefers_pdl);
  ENCORE_ASSERT_OK(padded->Prepare(GroupedGemmArguments{absl::MakeConstSpan(s2)}, plan.get()));
  EXPECT_EQ(plan->pre.dynamic_smem_bytes, H200PadBytes(2));
  EXPECT_TRUE(plan->prefers_pdl);
  // GPU MODE shape 0: a large pre-pass already launches with PDL; padded only to spread its 896
  // blocks evenly (7 a SM, RunnerOptions::pad_large_prepasses), none without the padding.
  const std::vector<GroupProblem> s0 = Groups({80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168, 7);
  ENCORE_ASSERT_OK(padded->Prepare(GroupedGemmArguments{absl::MakeConstSpan(s0)}, plan.get()));
  ASSERT_TRUE(plan->has_pre());
  EXPECT_TRUE(plan->prefers_pdl);
  EXPECT_EQ(plan->pre.dynamic_smem_bytes, H200PadBytes(7));
  ENCORE_ASSERT_OK(unpadded->Prepare(GroupedGemmArguments{absl::MakeConstSpan(s0)}, plan.get()));
  EXPECT_TRUE(plan->prefers_pdl);
  EXPECT_EQ(plan->pre.dynamic_smem_bytes, 0u);
  // The padding is part of the launch (graph nodes compare and carry it).
  LaunchPlan a = *plan, b = *plan;
  b.pre.dynamic_smem_bytes = 4096;
  EXPECT_FALSE(a.SameLaunch(b));
  void* slot = nullptr;
  EXPECT_EQ(b.pre.NodeParams(&slot).sharedMemBytes, 4096u);
}

// Padded pre-passes spread evenly over the SMs, at least RunnerOptions::prepass_pad_blocks_per_sm
// a SM (GPU MODE shape 3's 96 blocks: exactly the minimum); with pad_large_prepasses the
// pre-passes that launch behind an edge anyway are padded too (GPU MODE shape 1: 256 blocks, 2 a
// SM; shape 0: 896 blocks, 7 a SM).
TEST_F(Sm90PrepassHostTest, PaddingBoundsAndLargePrepasses) {
  auto runner = [](int bound, bool large) {
    RunnerOptions options;
    options.prepass_pad_blocks_per_sm = bound;
    options.pad_large_prepasses = large;
    return MakeWithSmemFacts(options);
  };
  EXPECT_TRUE(RunnerOptions{}.pad_large_prepasses);
  EXPECT_EQ(RunnerOptions{}.prepass_pad_blocks_per_sm, 1);
  auto plan = std::make_unique<LaunchPlan>();
  const std::vector<GroupProblem> s3 = Groups({128, 384}, 4096, 1536, 7);
  for (int bound : {1, 2, 3}) {
    ENCORE_ASSERT_OK(
        runner(bound, false)->Prepare(GroupedGemmArguments{absl::MakeConstSpan(s3)}, plan.get()));
    ASSERT_TRUE(plan->has_pre());
    EXPECT_TRUE(plan->prefers_pdl);
    EXPECT_EQ(plan->pre.dynamic_smem_bytes, H200PadBytes(bound)) << bound;
  }
  const std::vector<GroupProblem> s1 =
      Groups({40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048, 7);
  const std::vector<GroupProblem> s0 = Groups({80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168, 7);
  for (bool large : {false, true}) {
    const auto r = runner(2, large);
    ENCORE_ASSERT_OK(r->Prepare(GroupedGemmArguments{absl::MakeConstSpan(s1)}, plan.get()));
    ASSERT_TRUE(plan->has_pre());
    EXPECT_EQ(plan->pre.grid.x, 256u);
    EXPECT_TRUE(plan->prefers_pdl);
    EXPECT_EQ(plan->pre.dynamic_smem_bytes, large ? H200PadBytes(2) : 0u);
    ENCORE_ASSERT_OK(r->Prepare(GroupedGemmArguments{absl::MakeConstSpan(s0)}, plan.get()));
    ASSERT_TRUE(plan->has_pre());
    EXPECT_EQ(plan->pre.grid.x, 896u);
    EXPECT_EQ(plan->pre.dynamic_smem_bytes, large ? H200PadBytes(7) : 0u);
  }
  // Without the padding nothing is padded, large or not.
  RunnerOptions off;
  off.pad_prepass_for_pdl = false;
  off.pad_large_prepasses = true;
  ENCORE_ASSERT_OK(
      MakeWithSmemFacts(off)->Prepare(GroupedGemmArguments{absl::MakeConstSpan(s1)}, plan.get()));
  EXPECT_EQ(plan->pre.dynamic_smem_bytes, 0u);
  // Create rejects bounds outside [1, 8] before it looks for a device.
  for (int bound : {0, 9, -1}) {
    RunnerOptions o;
    o.prepass_pad_blocks_per_sm = bound;
    const auto r = Nvfp4GroupedGemm::Create(o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bound;
    EXPECT_TRUE(absl::StrContains(r.status().message(), "prepass_pad_blocks_per_sm"))
        << r.status();
  }
}

TEST_F(Sm90PrepassHostTest, FewWeightTilesConvertInKernel) {
  auto gemm = Make(TokenPrepass::kAuto);
  // One weight tile (N = 128), (96 + 40) x 4 row-k-blocks: in kernel.
  const std::vector<GroupProblem> groups = Groups({96, 40}, sm90::TileShape::kBlockN, 512, 4);
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->Prepare(GroupedGemmArguments{absl::MakeConstSpan(groups)}, plan.get()));
  EXPECT_FALSE(plan->has_pre());
  EXPECT_EQ(plan->num_kernels(), 1);
  EXPECT_TRUE(plan->reads_after_wait) << "tokens in kernel: every role waits first";
  EXPECT_TRUE(plan->prefers_pdl);
  EXPECT_EQ(plan->dynamic_smem_bytes,
            static_cast<unsigned>(sm90::Pipeline<sm90::TokenSource::kInKernel>::kSmemBytes));
  // kAlways converts them in a pre-pass anyway; kNever never does.
  ENCORE_ASSERT_OK(Make(TokenPrepass::kAlways)
                       ->Prepare(GroupedGemmArguments{absl::MakeConstSpan(groups)}, plan.get()));
  EXPECT_TRUE(plan->has_pre());
  EXPECT_TRUE(plan->reads_after_wait);
  EXPECT_LT(plan->pre.grid.x, 3u * 132);
  EXPECT_LT(plan->grid.x, 132u);
  EXPECT_FALSE(plan->prefers_pdl) << "a small pre-kernel, SMs idle: faster without the edge";
  const std::vector<GroupProblem> big = Groups({256, 256}, 4096, 4096, 5);
  ENCORE_ASSERT_OK(Make(TokenPrepass::kNever)
                       ->Prepare(GroupedGemmArguments{absl::MakeConstSpan(big)}, plan.get()));
  EXPECT_FALSE(plan->has_pre());
}

TEST_F(Sm90PrepassHostTest, WorkspaceTooSmall) {
  const std::vector<GroupProblem> groups = Groups({256, 256}, 4096, 4096, 6);  // 4 MiB of fp16
  const GroupedGemmArguments args{absl::MakeConstSpan(groups)};
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(Make(TokenPrepass::kAuto, size_t{1} << 20)->Prepare(args, plan.get()));
  EXPECT_FALSE(plan->has_pre()) << "kAuto falls back to converting in kernel";
  const absl::Status s = Make(TokenPrepass::kAlways, size_t{1} << 20)->Prepare(args, plan.get());
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "token_workspace_bytes")) << s;
  ENCORE_ASSERT_OK(Make(TokenPrepass::kAlways, size_t{4} << 20)->Prepare(args, plan.get()));
  EXPECT_TRUE(plan->has_pre()) << "exactly the bytes needed is enough";
}

TEST_F(Sm90PrepassHostTest, DynamicMReachesThePrepass) {
  auto gemm = Make(TokenPrepass::kAlways);
  const std::vector<GroupProblem> groups = Groups({256, 64}, 2048, 1024, 7);
  GroupedGemmArguments args{absl::MakeConstSpan(groups)};
  args.device_m = reinterpret_cast<const int32_t*>(Addr(0x5000000000ull));
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->Prepare(args, plan.get()));
  ASSERT_TRUE(plan->has_pre());
  EXPECT_EQ(reinterpret_cast<const sm90::PrepassParams<8>*>(plan->pre.params)->device_m,
            args.device_m);
  EXPECT_EQ(reinterpret_cast<const sm90::Params<8>*>(plan->params)->store_by_tma, 0)
      << "dynamic M: the threads store C, only the rows below device_m";
}

// C's tensor maps (two a group: 32- and 16-row boxes): for pre-pass plans with static M and at
// most 8 groups (Params<64> has no room for 128 more), encoded once per (pointer, M, N) like the
// operands'.
TEST_F(Sm90PrepassHostTest, OutputMapsOnlyWhereTheyFit) {
  auto gemm = Make(TokenPrepass::kAlways);
  const int per_group = sm90::kTmaStoreBuilt ? 4 : 2;
  const std::vector<GroupProblem> eight = Groups({64, 0, 128, 64, 64, 64, 64, 64}, 1024, 512, 11);
  auto plan = std::make_unique<LaunchPlan>();
  encode_calls = 0;
  ENCORE_ASSERT_OK(gemm->Prepare(GroupedGemmArguments{absl::MakeConstSpan(eight)}, plan.get()));
  EXPECT_EQ(encode_calls.load(), 7 * per_group) << "no maps for the M = 0 group";
  EXPECT_EQ(reinterpret_cast<const sm90::Params<8>*>(plan->params)->store_by_tma,
            sm90::kTmaStoreBuilt ? 1 : 0);
  ENCORE_ASSERT_OK(gemm->Prepare(GroupedGemmArguments{absl::MakeConstSpan(eight)}, plan.get()));
  EXPECT_EQ(encode_calls.load(), 7 * per_group) << "second Prepare: every map from the cache";
  auto moved = eight;
  moved[2].c = static_cast<char*>(moved[2].c) + 256;
  ENCORE_ASSERT_OK(gemm->Prepare(GroupedGemmArguments{absl::MakeConstSpan(moved)}, plan.get()));
  EXPECT_EQ(encode_calls.load(), 7 * per_group + (sm90::kTmaStoreBuilt ? 2 : 0))
      << "a new C pointer: its two new maps";

  const std::vector<GroupProblem> nine = Groups(std::vector<int>(9, 64), 1024, 1024, 12);
  encode_calls = 0;
  ENCORE_ASSERT_OK(gemm->Prepare(GroupedGemmArguments{absl::MakeConstSpan(nine)}, plan.get()));
  EXPECT_EQ(plan->params_bytes, sizeof(sm90::Params<64>));
  EXPECT_EQ(encode_calls.load(), 9 * 2) << "Params<64>: operand maps only";
  EXPECT_FALSE(sm90::OutputMaps<64>::kPresent);
  EXPECT_EQ(reinterpret_cast<const sm90::Params<64>*>(plan->params)->store_by_tma, 0);
}

// One token workspace per stream (plans for different streams never share one), up to
// max_token_workspaces streams; then kAuto converts in kernel and kAlways says why not.
TEST_F(Sm90PrepassHostTest, OneWorkspacePerStream) {
  const size_t bytes = size_t{64} << 20;
  auto gemm = Make(TokenPrepass::kAuto, bytes, /*max_workspaces=*/2);
  const std::vector<GroupProblem> groups = Groups({80, 176}, 4096, 7168, 9);
  const GroupedGemmArguments args{absl::MakeConstSpan(groups)};
  auto out_of = [](const LaunchPlan& plan) {
    return reinterpret_cast<uintptr_t>(
        reinterpret_cast<const sm90::PrepassParams<8>*>(plan.pre.params)->g[0].out);
  };
  const auto s1 = reinterpret_cast<cudaStream_t>(0x1000);
  const auto s2 = reinterpret_cast<cudaStream_t>(0x2000);
  const auto s3 = reinterpret_cast<cudaStream_t>(0x3000);
  auto a = std::make_unique<LaunchPlan>(), b = std::make_unique<LaunchPlan>(),
       c = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->Prepare(args, a.get(), KernelKind::kAuto, s1));
  ENCORE_ASSERT_OK(gemm->Prepare(args, b.get(), KernelKind::kAuto, s2));
  ASSERT_TRUE(a->has_pre() && b->has_pre());
  EXPECT_NE(out_of(*a), out_of(*b)) << "two streams, two workspaces";
  EXPECT_GE(std::max(out_of(*a), out_of(*b)) - std::min(out_of(*a), out_of(*b)),
            bytes) << "workspaces overlap";
  ENCORE_ASSERT_OK(gemm->Prepare(args, c.get(), KernelKind::kAuto, s1));
  EXPECT_EQ(out_of(*a), out_of(*c)) << "one stream keeps its workspace";
  EXPECT_TRUE(a->SameLaunch(*c));
  // A third stream: no workspace left.
  ENCORE_ASSERT_OK(gemm->Prepare(args, c.get(), KernelKind::kAuto, s3));
  EXPECT_FALSE(c->has_pre()) << "kAuto converts in kernel";
  auto always = Make(TokenPrepass::kAlways, bytes, /*max_workspaces=*/2);
  ENCORE_ASSERT_OK(always->Prepare(args, c.get(), KernelKind::kAuto, s1));
  ENCORE_ASSERT_OK(always->Prepare(args, c.get(), KernelKind::kAuto, s2));
  const absl::Status st = always->Prepare(args, c.get(), KernelKind::kAuto, s3);
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "max_token_workspaces")) << st;
}

// Asking for a stream's binding ring (WriteBindings, LaunchWithBindings on a stream that never
// had PrepareBound) fails and takes none of the max_token_workspaces slots.
TEST_F(Sm90PrepassHostTest, RingLookupsTakeNoWorkspaceSlot) {
  auto gemm = Make(TokenPrepass::kAuto, size_t{64} << 20, /*max_workspaces=*/2);
  const std::vector<GroupProblem> groups = Groups({80, 176}, 4096, 7168, 9);
  const GroupedGemmArguments args{absl::MakeConstSpan(groups)};
  const auto s1 = reinterpret_cast<cudaStream_t>(0x1000);
  const auto s2 = reinterpret_cast<cudaStream_t>(0x2000);
  const auto s3 = reinterpret_cast<cudaStream_t>(0x3000);
  const auto s4 = reinterpret_cast<cudaStream_t>(0x4000);
  EXPECT_EQ(gemm->WriteBindings(args, s3).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(gemm->LaunchWithBindings(
                args, s4, [] { return absl::OkStatus(); }, /*wait_for_slot=*/true)
                .code(),
            absl::StatusCode::kFailedPrecondition);
  auto plan = std::make_unique<LaunchPlan>();
  for (cudaStream_t s : {s1, s2}) {
    ENCORE_ASSERT_OK(gemm->Prepare(args, plan.get(), KernelKind::kAuto, s));
    EXPECT_TRUE(plan->has_pre()) << "stream " << s << " still gets a workspace";
  }
}

TEST_F(Sm90PrepassHostTest, WarmPrepassPrepareAllocatesNothing) {
  auto gemm = Make(TokenPrepass::kAuto);
  const std::vector<GroupProblem> groups = Groups({80, 176, 128, 72}, 4096, 7168, 8);
  const GroupedGemmArguments args{absl::MakeConstSpan(groups)};
  auto plan = std::make_unique<LaunchPlan>();
  ENCORE_ASSERT_OK(gemm->Prepare(args, plan.get()));
  ASSERT_TRUE(plan->has_pre());
  g_allocations = 0;
  g_count_allocations = true;
  const absl::Status s = gemm->Prepare(args, plan.get());
  g_count_allocations = false;
  ENCORE_ASSERT_OK(s);
  EXPECT_EQ(g_allocations.load(), 0);
}

}  // namespace
}  // namespace encore::gemm
