#include "gemm/problem.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"

namespace encore::gemm {
namespace {

// Fake, suitably aligned addresses: Validate never dereferences them.
alignas(256) unsigned char g_storage[4096];

const void* Addr(size_t offset) { return g_storage + offset; }

GroupProblem ValidGroup() {
  GroupProblem g;
  g.a = Addr(0);
  g.b = Addr(256);
  g.sfa = Addr(512);
  g.sfb = Addr(768);
  g.c = const_cast<void*>(Addr(1024));
  g.m = 96;
  g.n = 128;
  g.k = 256;
  return g;
}

absl::Status ValidateGroups(const std::vector<GroupProblem>& groups,
                            const int32_t* device_m = nullptr) {
  return Validate(GroupedGemmArguments{absl::MakeConstSpan(groups), device_m});
}

void ExpectInvalid(const absl::Status& s, const std::string& message) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(), message);
}

TEST(Validate, AcceptsAValidProblem) {
  EXPECT_TRUE(ValidateGroups({ValidGroup()}).ok());
  EXPECT_TRUE(ValidateGroups({ValidGroup(), ValidGroup(), ValidGroup()}).ok());
}

TEST(Validate, RejectsEmptyGroups) {
  ExpectInvalid(ValidateGroups({}), "groups is empty");
  ExpectInvalid(Validate(GroupedGemmArguments{}), "groups is empty");
}

TEST(Validate, GroupCountLimit) {
  EXPECT_TRUE(ValidateGroups(std::vector<GroupProblem>(kMaxGroups, ValidGroup())).ok());
  ExpectInvalid(ValidateGroups(std::vector<GroupProblem>(kMaxGroups + 1, ValidGroup())),
                "65 groups exceed the supported maximum of 64");
}

TEST(Validate, NullPointersNameGroupAndField) {
  struct Case {
    std::function<void(GroupProblem&)> mutate;
    const char* field;
  };
  const Case cases[] = {
      {[](GroupProblem& g) { g.a = nullptr; }, "a"},
      {[](GroupProblem& g) { g.b = nullptr; }, "b"},
      {[](GroupProblem& g) { g.sfa = nullptr; }, "sfa"},
      {[](GroupProblem& g) { g.sfb = nullptr; }, "sfb"},
      {[](GroupProblem& g) { g.c = nullptr; }, "c"},
  };
  for (const Case& c : cases) {
    std::vector<GroupProblem> groups(5, ValidGroup());
    c.mutate(groups[3]);
    ExpectInvalid(ValidateGroups(groups), std::string("group 3: ") + c.field + " is null");
  }
}

TEST(Validate, MisalignedPointersNameGroupAndField) {
  struct Case {
    std::function<void(GroupProblem&)> mutate;
    const char* field;
  };
  const Case cases[] = {
      {[](GroupProblem& g) { g.a = Addr(8); }, "a"},
      {[](GroupProblem& g) { g.b = Addr(264); }, "b"},
      {[](GroupProblem& g) { g.sfa = Addr(513); }, "sfa"},
      {[](GroupProblem& g) { g.sfb = Addr(772); }, "sfb"},
      {[](GroupProblem& g) { g.c = const_cast<void*>(Addr(1030)); }, "c"},
  };
  for (const Case& c : cases) {
    std::vector<GroupProblem> groups(3, ValidGroup());
    c.mutate(groups[2]);
    ExpectInvalid(ValidateGroups(groups),
                  std::string("group 2: ") + c.field + " is not 16-byte aligned");
  }
}

TEST(Validate, ShapeErrorsNameGroupAndField) {
  std::vector<GroupProblem> groups(2, ValidGroup());
  groups[0].k = 96;
  ExpectInvalid(ValidateGroups(groups), "group 0: k = 96 is not a multiple of 64");
  groups[0].k = 0;
  ExpectInvalid(ValidateGroups(groups), "group 0: k = 0 is not positive");
  groups[0].k = -64;
  ExpectInvalid(ValidateGroups(groups), "group 0: k = -64 is not positive");
  groups[0] = ValidGroup();
  groups[1].n = 12;
  ExpectInvalid(ValidateGroups(groups), "group 1: n = 12 is not a multiple of 8");
  groups[1].n = 0;
  ExpectInvalid(ValidateGroups(groups), "group 1: n = 0 is not positive");
  groups[1] = ValidGroup();
  groups[0].m = -1;
  ExpectInvalid(ValidateGroups(groups), "group 0: m = -1 is negative");
}

// Extents past kMaxExtent (2^24) are rejected by name; 2^31 - 8 columns used to wrap the
// runner's tile count negative (an OK status, nothing computed).
TEST(Validate, ExtentsAboveTheMaximumNameGroupAndField) {
  std::vector<GroupProblem> groups(2, ValidGroup());
  groups[1].n = kMaxExtent;
  groups[1].k = kMaxExtent;
  groups[1].m = kMaxExtent;
  EXPECT_TRUE(ValidateGroups(groups).ok());
  groups[1].n = 2147483640;
  ExpectInvalid(ValidateGroups(groups), "group 1: n = 2147483640 exceeds the maximum of 16777216");
  groups[1].n = kMaxExtent + 8;
  ExpectInvalid(ValidateGroups(groups), "group 1: n = 16777224 exceeds the maximum of 16777216");
  groups[1].n = 128;
  groups[1].k = kMaxExtent + 64;
  ExpectInvalid(ValidateGroups(groups), "group 1: k = 16777280 exceeds the maximum of 16777216");
  groups[1].k = 256;
  groups[1].m = 2147483647;
  ExpectInvalid(ValidateGroups(groups), "group 1: m = 2147483647 exceeds the maximum of 16777216");
}

TEST(Validate, FirstBadGroupIsReported) {
  std::vector<GroupProblem> groups(4, ValidGroup());
  groups[1].n = 12;
  groups[2].b = nullptr;
  ExpectInvalid(ValidateGroups(groups), "group 1: n = 12 is not a multiple of 8");
}

TEST(Validate, ZeroRowsAllowsNullAAndSfaAndC) {
  GroupProblem g = ValidGroup();
  g.m = 0;
  g.a = nullptr;
  g.sfa = nullptr;
  g.c = nullptr;
  EXPECT_TRUE(ValidateGroups({ValidGroup(), g}).ok());
  // ... but B and SFB are still required, and N and K still checked.
  GroupProblem no_b = g;
  no_b.b = nullptr;
  ExpectInvalid(ValidateGroups({ValidGroup(), no_b}), "group 1: b is null");
  GroupProblem no_sfb = g;
  no_sfb.sfb = nullptr;
  ExpectInvalid(ValidateGroups({ValidGroup(), no_sfb}), "group 1: sfb is null");
  GroupProblem bad_k = g;
  bad_k.k = 32;
  ExpectInvalid(ValidateGroups({ValidGroup(), bad_k}), "group 1: k = 32 is not a multiple of 64");
  // Non-null pointers of an empty group must still be aligned.
  GroupProblem misaligned_a = g;
  misaligned_a.a = Addr(4);
  ExpectInvalid(ValidateGroups({misaligned_a}), "group 0: a is not 16-byte aligned");
}

TEST(Validate, DeviceMAlignment) {
  alignas(16) int32_t device_m[4] = {1, 2, 3, 4};
  EXPECT_TRUE(ValidateGroups({ValidGroup()}, device_m).ok());
  EXPECT_TRUE(ValidateGroups({ValidGroup()}, device_m + 1).ok());  // 4-byte aligned is enough
  const int32_t* misaligned =
      reinterpret_cast<const int32_t*>(reinterpret_cast<const unsigned char*>(device_m) + 2);
  ExpectInvalid(ValidateGroups({ValidGroup()}, misaligned), "device_m is not 4-byte aligned");
}

TEST(BlockedScaleBytes, MatchesTheFormula) {
  EXPECT_EQ(BlockedScaleBytes(0, 64), 0u);
  EXPECT_EQ(BlockedScaleBytes(1, 64), 512u);
  // Near INT_MAX (rows + 127 and k + 63 used to overflow in int).
  EXPECT_EQ(BlockedScaleBytes(2147483647, 64), size_t{16777216} * 512);
  EXPECT_EQ(BlockedScaleBytes(1, 2147483632), size_t{33554432} * 512);
  EXPECT_EQ(BlockedScaleBytes(128, 64), 512u);
  EXPECT_EQ(BlockedScaleBytes(129, 64), 1024u);
  EXPECT_EQ(BlockedScaleBytes(128, 7168), 112u * 512u);
  EXPECT_EQ(BlockedScaleBytes(4096, 7168), 32u * 112u * 512u);
}

}  // namespace
}  // namespace encore::gemm
