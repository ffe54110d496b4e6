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

// Fake addresses (Validate never dereferences them): field f of group i at (8 i + f + 1) << 50,
// so no two buffers meet even at the largest extents (a C of 2^24 x 2^24 halves is 2^49 bytes).
const void* Addr(int group, int field, uintptr_t offset = 0) {
  return reinterpret_cast<const void*>(
      ((static_cast<uintptr_t>(group) * 8 + static_cast<uintptr_t>(field) + 1) << 50) + offset);
}

GroupProblem ValidGroup(int i = 0) {
  GroupProblem g;
  g.a = Addr(i, 0);
  g.b = Addr(i, 1);
  g.sfa = Addr(i, 2);
  g.sfb = Addr(i, 3);
  g.c = const_cast<void*>(Addr(i, 4));
  g.m = 96;
  g.n = 128;
  g.k = 256;
  return g;
}

// `n` valid groups with disjoint buffers.
std::vector<GroupProblem> ValidGroups(int n) {
  std::vector<GroupProblem> groups;
  for (int i = 0; i < n; ++i) groups.push_back(ValidGroup(i));
  return groups;
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
  EXPECT_TRUE(ValidateGroups(ValidGroups(3)).ok());
}

TEST(Validate, RejectsEmptyGroups) {
  ExpectInvalid(ValidateGroups({}), "groups is empty");
  ExpectInvalid(Validate(GroupedGemmArguments{}), "groups is empty");
}

TEST(Validate, GroupCountLimit) {
  EXPECT_TRUE(ValidateGroups(ValidGroups(kMaxGroups)).ok());
  ExpectInvalid(ValidateGroups(ValidGroups(kMaxGroups + 1)),
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
    std::vector<GroupProblem> groups = ValidGroups(5);
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
      {[](GroupProblem& g) { g.a = Addr(2, 0, 8); }, "a"},
      {[](GroupProblem& g) { g.b = Addr(2, 1, 8); }, "b"},
      {[](GroupProblem& g) { g.sfa = Addr(2, 2, 1); }, "sfa"},
      {[](GroupProblem& g) { g.sfb = Addr(2, 3, 4); }, "sfb"},
      {[](GroupProblem& g) { g.c = const_cast<void*>(Addr(2, 4, 6)); }, "c"},
  };
  for (const Case& c : cases) {
    std::vector<GroupProblem> groups = ValidGroups(3);
    c.mutate(groups[2]);
    ExpectInvalid(ValidateGroups(groups),
                  std::string("group 2: ") + c.field + " is not 16-byte aligned");
  }
}

TEST(Validate, ShapeErrorsNameGroupAndField) {
  std::vector<GroupProblem> groups = ValidGroups(2);
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
  groups[1] = ValidGroup(1);
  groups[0].m = -1;
  ExpectInvalid(ValidateGroups(groups), "group 0: m = -1 is negative");
}

// Extents past kMaxExtent (2^24) are rejected by name; 2^31 - 8 columns used to wrap the
// runner's tile count negative (an OK status, nothing computed).
TEST(Validate, ExtentsAboveTheMaximumNameGroupAndField) {
  std::vector<GroupProblem> groups = ValidGroups(2);
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
  std::vector<GroupProblem> groups = ValidGroups(4);
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
  EXPECT_TRUE(ValidateGroups({ValidGroup(0), g}).ok());
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
  misaligned_a.a = Addr(0, 0, 4);
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

// The kernels write C while other tiles still read: two groups' outputs sharing a byte, or an
// output sharing one with any input, is a race. Named by the writing group.
TEST(Validate, OverlappingOutputsNameBothGroups) {
  std::vector<GroupProblem> groups = ValidGroups(4);
  groups[2].c = groups[1].c;
  ExpectInvalid(ValidateGroups(groups), "group 2: c overlaps the c of group 1");
  // One byte in common (C of 96 x 128 halves = 24576 bytes), from either side.
  groups[2].c = static_cast<char*>(groups[1].c) + 24576 - 16;
  ExpectInvalid(ValidateGroups(groups), "group 2: c overlaps the c of group 1");
  groups[2].c = static_cast<char*>(groups[3].c) - 24576 + 16;
  ExpectInvalid(ValidateGroups(groups), "group 3: c overlaps the c of group 2");
  // Adjacent outputs do not meet.
  groups[2].c = static_cast<char*>(groups[1].c) + 24576;
  EXPECT_TRUE(ValidateGroups(groups).ok());
  groups[2].c = static_cast<char*>(groups[3].c) - 24576;
  EXPECT_TRUE(ValidateGroups(groups).ok());
}

TEST(Validate, OutputOverlappingAnInputNamesBoth) {
  struct Case {
    std::function<const void*(const GroupProblem&)> field;
    const char* name;
    size_t bytes;  // of that input in ValidGroup (M 96, N 128, K 256)
  };
  const Case cases[] = {
      {[](const GroupProblem& g) { return g.a; }, "a", 96 * 128},
      {[](const GroupProblem& g) { return g.b; }, "b", 128 * 128},
      {[](const GroupProblem& g) { return g.sfa; }, "sfa", 2048},
      {[](const GroupProblem& g) { return g.sfb; }, "sfb", 2048},
  };
  for (const Case& c : cases) {
    for (int reader : {1, 3}) {  // another group's input, then the writer's own
      std::vector<GroupProblem> groups = ValidGroups(5);
      // Group 3's C ends 16 bytes into the input, then begins at its last 16 bytes.
      const char* in = static_cast<const char*>(c.field(groups[reader]));
      groups[3].c = const_cast<char*>(in) - 24576 + 16;
      ExpectInvalid(ValidateGroups(groups), std::string("group 3: c overlaps the ") + c.name +
                                                " of group " + std::to_string(reader));
      groups[3].c = const_cast<char*>(in) + c.bytes - 16;
      ExpectInvalid(ValidateGroups(groups), std::string("group 3: c overlaps the ") + c.name +
                                                " of group " + std::to_string(reader));
      groups[3].c = const_cast<char*>(in) + c.bytes;  // right after it
      EXPECT_TRUE(ValidateGroups(groups).ok()) << c.name;
    }
  }
}

TEST(Validate, OutputOverlappingDeviceM) {
  std::vector<GroupProblem> groups = ValidGroups(3);
  const int32_t* device_m = static_cast<const int32_t*>(groups[1].c) + 100;
  ExpectInvalid(ValidateGroups(groups, device_m), "group 1: c overlaps device_m");
  // device_m's 3 values end right where group 1's C begins.
  EXPECT_TRUE(ValidateGroups(groups, static_cast<const int32_t*>(groups[1].c) - 3).ok());
  ExpectInvalid(ValidateGroups(groups, static_cast<const int32_t*>(groups[1].c) - 2),
                "group 1: c overlaps device_m");
}

TEST(Validate, SharedInputsAndEmptyGroupsAreFine) {
  std::vector<GroupProblem> groups = ValidGroups(4);
  // Every group reading the same tokens and weights (and scales) is a valid problem.
  for (GroupProblem& g : groups) {
    g.a = groups[0].a;
    g.b = groups[0].b;
    g.sfa = groups[0].sfa;
    g.sfb = groups[0].sfb;
  }
  EXPECT_TRUE(ValidateGroups(groups).ok());
  // A group with no rows writes nothing: its C may be anywhere, even on another group's C or on
  // an input.
  groups[2].m = 0;
  groups[2].c = groups[1].c;
  EXPECT_TRUE(ValidateGroups(groups).ok());
  groups[2].c = const_cast<void*>(groups[0].b);
  EXPECT_TRUE(ValidateGroups(groups).ok());
  // ... and its A and SFA are not read.
  groups[2].a = groups[1].c;
  groups[2].sfa = groups[3].c;
  EXPECT_TRUE(ValidateGroups(groups).ok());
}

// The outputs' order in memory does not matter (they are sorted), also at 64 groups.
TEST(Validate, OverlapsFoundInAnyAddressOrder) {
  std::vector<GroupProblem> groups = ValidGroups(kMaxGroups);
  std::vector<GroupProblem> reversed(groups.rbegin(), groups.rend());
  EXPECT_TRUE(ValidateGroups(reversed).ok());
  reversed[40].c = static_cast<char*>(reversed[7].c) + 4096;
  ExpectInvalid(ValidateGroups(reversed), "group 40: c overlaps the c of group 7");
  reversed[40].c = static_cast<char*>(groups[0].c) + 24576;  // free space after the last C
  EXPECT_TRUE(ValidateGroups(reversed).ok());
  reversed[12].b = static_cast<char*>(reversed[40].c) + 1024;
  ExpectInvalid(ValidateGroups(reversed), "group 40: c overlaps the b of group 12");
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
