#include "gemm/problem.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace encore::gemm {
namespace {

bool Aligned(const void* p, uintptr_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

absl::Status GroupError(size_t g, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("group ", g, ": ", what));
}

// At most kMaxExtent, e.g. "m = 16777217 exceeds the maximum of 16777216".
absl::Status CheckAtMostMaxExtent(size_t g, absl::string_view name, int value) {
  if (value > kMaxExtent) {
    return GroupError(g, absl::StrCat(name, " = ", value, " exceeds the maximum of ", kMaxExtent));
  }
  return absl::OkStatus();
}

// A positive multiple of `multiple` (and at most kMaxExtent), e.g. "k = 96 is not a multiple of
// 64".
absl::Status CheckExtent(size_t g, absl::string_view name, int value, int multiple) {
  if (value <= 0) {
    return GroupError(g, absl::StrCat(name, " = ", value, " is not positive"));
  }
  if (value % multiple != 0) {
    return GroupError(g, absl::StrCat(name, " = ", value, " is not a multiple of ", multiple));
  }
  return CheckAtMostMaxExtent(g, name, value);
}

// `required`: null is an error. Non-null pointers must be kPointerAlignment-aligned either way.
absl::Status CheckPointer(size_t g, absl::string_view name, const void* p, bool required) {
  if (p == nullptr) {
    return required ? GroupError(g, absl::StrCat(name, " is null")) : absl::OkStatus();
  }
  if (!Aligned(p, kPointerAlignment)) {
    return GroupError(g, absl::StrCat(name, " is not ", kPointerAlignment, "-byte aligned"));
  }
  return absl::OkStatus();
}

absl::Status ValidateGroup(size_t g, const GroupProblem& p) {
  if (p.m < 0) return GroupError(g, absl::StrCat("m = ", p.m, " is negative"));
  if (absl::Status s = CheckAtMostMaxExtent(g, "m", p.m); !s.ok()) return s;
  if (absl::Status s = CheckExtent(g, "n", p.n, kNMultiple); !s.ok()) return s;
  if (absl::Status s = CheckExtent(g, "k", p.k, kKMultiple); !s.ok()) return s;
  // With m == 0 nothing of A, SFA or C is touched, so they may be null. B and SFB are still
  // required: every listed group names its weights, whatever its row count.
  const bool has_rows = p.m > 0;
  const struct {
    absl::string_view name;
    const void* ptr;
    bool required;
  } pointers[] = {
      {"a", p.a, has_rows}, {"b", p.b, true},     {"sfa", p.sfa, has_rows},
      {"sfb", p.sfb, true}, {"c", p.c, has_rows},
  };
  for (const auto& ptr : pointers) {
    if (absl::Status s = CheckPointer(g, ptr.name, ptr.ptr, ptr.required); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Validate(const GroupedGemmArguments& args) {
  if (args.groups.empty()) return absl::InvalidArgumentError("groups is empty");
  if (args.groups.size() > static_cast<size_t>(kMaxGroups)) {
    return absl::InvalidArgumentError(
        absl::StrCat(args.groups.size(), " groups exceed the supported maximum of ", kMaxGroups));
  }
  if (args.device_m != nullptr && !Aligned(args.device_m, alignof(int32_t))) {
    return absl::InvalidArgumentError(
        absl::StrCat("device_m is not ", alignof(int32_t), "-byte aligned"));
  }
  for (size_t g = 0; g < args.groups.size(); ++g) {
    if (absl::Status s = ValidateGroup(g, args.groups[g]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace encore::gemm
