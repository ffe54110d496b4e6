#include "graph_cache/signature.h"

#include <cstdint>
#include <vector>

#include "absl/hash/hash.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace encore::graph_cache {
namespace {

using gemm::GroupedGemmArguments;
using gemm::GroupProblem;
using gemm::KernelKind;

std::vector<GroupProblem> MakeGroups(int ng) {
  std::vector<GroupProblem> g(static_cast<size_t>(ng));
  for (int i = 0; i < ng; ++i) {
    const uintptr_t base = 0x10000u * static_cast<uintptr_t>(i + 1);
    g[i] = GroupProblem{reinterpret_cast<const void*>(base + 0x100),
                        reinterpret_cast<const void*>(base + 0x200),
                        reinterpret_cast<const void*>(base + 0x300),
                        reinterpret_cast<const void*>(base + 0x400),
                        reinterpret_cast<void*>(base + 0x500),
                        64 + i,
                        128,
                        256};
  }
  return g;
}

CallSignature Sign(const std::vector<GroupProblem>& g, KernelKind kind = KernelKind::kAuto,
                   const int32_t* device_m = nullptr, MBucketPolicy policy = {}) {
  CallSignature s;
  const absl::Status st =
      BuildSignature(GroupedGemmArguments{absl::MakeConstSpan(g), device_m}, kind, policy, &s);
  EXPECT_TRUE(st.ok()) << st;
  return s;
}

TEST(SignatureTest, SameCallsAreEqualAndHashEqual) {
  const auto g1 = MakeGroups(8);
  const auto g2 = MakeGroups(8);
  const CallSignature a = Sign(g1);
  const CallSignature b = Sign(g2);
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.binding, b.binding);
  EXPECT_EQ(absl::HashOf(a.key), absl::HashOf(b.key));
  EXPECT_EQ(absl::HashOf(a.binding), absl::HashOf(b.binding));
  EXPECT_EQ(a.FullHash(), b.FullHash());
  EXPECT_EQ(absl::HashOf(a.key), absl::HashOf(a.key.words()));
}

TEST(SignatureTest, EveryPointerOfEveryGroupMatters) {
  for (int ng : {1, 3, 64}) {
    const auto base = MakeGroups(ng);
    const CallSignature ref = Sign(base);
    for (int g = 0; g < ng; ++g) {
      for (int field = 0; field < 5; ++field) {
        auto changed = base;
        GroupProblem& p = changed[g];
        const void** ptrs[4] = {&p.a, &p.b, &p.sfa, &p.sfb};
        if (field < 4) {
          *ptrs[field] = static_cast<const char*>(*ptrs[field]) + 16;
        } else {
          p.c = static_cast<char*>(p.c) + 16;
        }
        const CallSignature s = Sign(changed);
        EXPECT_EQ(s.key, ref.key) << "pointers are not structural";
        EXPECT_NE(s.binding, ref.binding) << "ng " << ng << " group " << g << " field " << field;
        EXPECT_NE(s.FullHash(), ref.FullHash());
      }
    }
  }
}

// The stream a call runs on is part of its binding (plans use that stream's token workspace).
TEST(SignatureTest, TheStreamIsPartOfTheBinding) {
  const auto g = MakeGroups(3);
  const GroupedGemmArguments args{absl::MakeConstSpan(g)};
  CallSignature s1, s1again, s2;
  ENCORE_ASSERT_OK(BuildSignature(args, KernelKind::kAuto, {}, &s1,
                                  reinterpret_cast<const void*>(uintptr_t{0x1000})));
  ENCORE_ASSERT_OK(BuildSignature(args, KernelKind::kAuto, {}, &s1again,
                                  reinterpret_cast<const void*>(uintptr_t{0x1000})));
  ENCORE_ASSERT_OK(BuildSignature(args, KernelKind::kAuto, {}, &s2,
                                  reinterpret_cast<const void*>(uintptr_t{0x2000})));
  EXPECT_EQ(s1.key, s2.key) << "the stream is not structural";
  EXPECT_EQ(s1.binding, s1again.binding);
  EXPECT_NE(s1.binding, s2.binding);
  EXPECT_NE(s1.FullHash(), s2.FullHash());
  EXPECT_EQ(s1.binding.stream(), reinterpret_cast<const void*>(uintptr_t{0x1000}));
}

TEST(SignatureTest, EverySizeOfEveryGroupMatters) {
  for (int ng : {1, 5, 64}) {
    const auto base = MakeGroups(ng);
    const CallSignature ref = Sign(base);
    for (int g = 0; g < ng; ++g) {
      for (int field = 0; field < 3; ++field) {
        auto changed = base;
        int* sizes[3] = {&changed[g].m, &changed[g].n, &changed[g].k};
        *sizes[field] += (field == 0 ? 1 : 64);
        const CallSignature s = Sign(changed);
        EXPECT_NE(s.key, ref.key) << "ng " << ng << " group " << g << " field " << field;
        EXPECT_NE(absl::HashOf(s.key), absl::HashOf(ref.key));
      }
    }
  }
}

TEST(SignatureTest, GroupCountKindAndDeviceMMatter) {
  const auto g8 = MakeGroups(8);
  const auto g7 = std::vector<GroupProblem>(g8.begin(), g8.end() - 1);
  EXPECT_NE(Sign(g8).key, Sign(g7).key);
  EXPECT_NE(Sign(g8, KernelKind::kSimple).key, Sign(g8, KernelKind::kPersistent).key);
  EXPECT_NE(Sign(g8, KernelKind::kAuto).key, Sign(g8, KernelKind::kSimple).key);
  int32_t dm1[8] = {};
  int32_t dm2[8] = {};
  EXPECT_NE(Sign(g8).key, Sign(g8, KernelKind::kAuto, dm1).key) << "dynamic M is structural";
  const CallSignature d1 = Sign(g8, KernelKind::kAuto, dm1);
  const CallSignature d2 = Sign(g8, KernelKind::kAuto, dm2);
  EXPECT_EQ(d1.key, d2.key);
  EXPECT_NE(d1.binding, d2.binding) << "the device_m pointer is bound";
}

TEST(SignatureTest, OnlyTheUsedPrefixIsCompared) {
  // Garbage beyond num_groups (left from a previous, longer call) must not matter.
  const auto g64 = MakeGroups(64);
  const auto g2 = MakeGroups(2);
  CallSignature reused;
  ENCORE_ASSERT_OK(BuildSignature(GroupedGemmArguments{absl::MakeConstSpan(g64)}, KernelKind::kAuto,
                                  {}, &reused));
  ENCORE_ASSERT_OK(BuildSignature(GroupedGemmArguments{absl::MakeConstSpan(g2)}, KernelKind::kAuto,
                                  {}, &reused));
  const CallSignature fresh = Sign(g2);
  EXPECT_EQ(reused.key, fresh.key);
  EXPECT_EQ(reused.binding, fresh.binding);
  EXPECT_EQ(reused.FullHash(), fresh.FullHash());
}

TEST(SignatureTest, RejectsBadGroupCounts) {
  CallSignature s;
  EXPECT_EQ(BuildSignature(GroupedGemmArguments{}, KernelKind::kAuto, {}, &s).code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<GroupProblem> too_many(gemm::kMaxGroups + 1, MakeGroups(1)[0]);
  EXPECT_EQ(
      BuildSignature(GroupedGemmArguments{absl::MakeConstSpan(too_many)}, KernelKind::kAuto, {}, &s)
          .code(),
      absl::StatusCode::kInvalidArgument);
  auto neg = MakeGroups(2);
  neg[1].m = -1;
  EXPECT_FALSE(
      BuildSignature(GroupedGemmArguments{absl::MakeConstSpan(neg)}, KernelKind::kAuto, {}, &s)
          .ok());
}

TEST(MBucketTest, PowerOfTwo) {
  const MBucketPolicy p{MBucketMode::kPowerOfTwo, 0};
  EXPECT_EQ(p.Bucket(0), 0u);
  EXPECT_EQ(p.Bucket(1), 1u);
  EXPECT_EQ(p.Bucket(2), 2u);
  EXPECT_EQ(p.Bucket(3), 4u);
  EXPECT_EQ(p.Bucket(128), 128u);
  EXPECT_EQ(p.Bucket(129), 256u);
  EXPECT_EQ(p.Bucket(1000), 1024u);
  EXPECT_EQ(p.Bucket(0x7fffffff), 0x80000000u);
}

TEST(MBucketTest, MultipleAndExact) {
  const MBucketPolicy m{MBucketMode::kMultiple, 128};
  EXPECT_EQ(m.Bucket(0), 0u);
  EXPECT_EQ(m.Bucket(1), 128u);
  EXPECT_EQ(m.Bucket(128), 128u);
  EXPECT_EQ(m.Bucket(129), 256u);
  EXPECT_EQ(m.Bucket(0x7fffffff), 0x80000000u);
  const MBucketPolicy e{MBucketMode::kExact, 0};
  for (int v : {0, 1, 77, 128, 4097}) EXPECT_EQ(e.Bucket(v), static_cast<uint32_t>(v));
}

TEST(MBucketTest, BucketingAppliesOnlyToDynamicM) {
  auto a = MakeGroups(4);
  auto b = a;
  for (auto& g : a) g.m = 200;
  for (auto& g : b) g.m = 250;  // same power-of-two bucket (256)
  int32_t dm[4] = {};
  const CallSignature da = Sign(a, KernelKind::kAuto, dm);
  const CallSignature db = Sign(b, KernelKind::kAuto, dm);
  EXPECT_EQ(da.key, db.key) << "same bucket → same structure";
  EXPECT_NE(da.binding, db.binding) << "exact capacity is bound (patched, never over-planned)";
  EXPECT_EQ(da.key.m_key(0), 256u);
  EXPECT_EQ(da.binding.groups()[0].m, 200);
  EXPECT_NE(Sign(a).key, Sign(b).key) << "static M keys the exact m";
  auto c = a;
  for (auto& g : c) g.m = 300;
  EXPECT_NE(Sign(c, KernelKind::kAuto, dm).key, da.key) << "next bucket → new structure";
}

TEST(SameCallTest, ComparesEveryField) {
  const auto g = MakeGroups(3);
  const GroupedGemmArguments a{absl::MakeConstSpan(g)};
  EXPECT_TRUE(SameCall(a, KernelKind::kAuto, a, KernelKind::kAuto));
  EXPECT_FALSE(SameCall(a, KernelKind::kAuto, a, KernelKind::kSimple));
  auto h = g;
  h[2].k += 64;
  EXPECT_FALSE(SameCall(a, KernelKind::kAuto, GroupedGemmArguments{absl::MakeConstSpan(h)},
                        KernelKind::kAuto));
  int32_t dm[3];
  EXPECT_FALSE(SameCall(a, KernelKind::kAuto, GroupedGemmArguments{absl::MakeConstSpan(g), dm},
                        KernelKind::kAuto));
}

}  // namespace
}  // namespace encore::graph_cache
