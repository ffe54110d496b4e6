#include "gemm/problem.h"

#include <cstdint>
#include <limits>
#include <string>

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

// Whether ValidateGroup would pass `p`, in a few predictable branches (the per-call path: the
// detailed checks run only to name what failed).
bool GroupPasses(const GroupProblem& p) {
  const auto extent_ok = [](int v, int multiple) {
    return v > 0 && v % multiple == 0 && v <= kMaxExtent;
  };
  const auto bits = [](const void* q) { return reinterpret_cast<uintptr_t>(q); };
  const bool has_rows = p.m > 0;
  const uintptr_t misaligned =
      (bits(p.a) | bits(p.b) | bits(p.sfa) | bits(p.sfb) | bits(p.c)) % kPointerAlignment;
  return p.m >= 0 && p.m <= kMaxExtent && extent_ok(p.n, kNMultiple) &&
         extent_ok(p.k, kKMultiple) && misaligned == 0 && p.b != nullptr && p.sfb != nullptr &&
         (!has_rows || (p.a != nullptr && p.sfa != nullptr && p.c != nullptr));
}

// A byte range [begin, end) of one operand, and whose it is (for the error message).
struct Range {
  uintptr_t begin;
  uintptr_t end;
  int group;  // -1: device_m
  const char* name;
};

Range RangeOf(const void* p, size_t bytes, int group, const char* name) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  // A range past the end of the address space (a bogus pointer) reaches to its end.
  const uintptr_t end = bytes > std::numeric_limits<uintptr_t>::max() - begin
                            ? std::numeric_limits<uintptr_t>::max()
                            : begin + bytes;
  return Range{begin, end, group, name};
}

std::string Whose(const Range& r) {
  return r.group < 0 ? std::string("device_m") : absl::StrCat(r.name, " of group ", r.group);
}

// NOTES: no two outputs (C at capacity M) may share a byte, and no output may share one with
// any input (A, SFA, B, SFB of any group, device_m): the kernels write C while other tiles still
// read. Inputs may share bytes with each other (groups with the same weights are fine). The
// outputs are insertion-sorted on the stack (no allocation on the call path; linear when they
// come in address order, as slabs and successive allocations do); an input outside their hull
// is done in two compares, one inside it meets some output iff it meets the last output that
// begins before the input ends (the outputs being disjoint by then), found near the previous
// input's or by a binary search.
absl::Status CheckOverlaps(const GroupedGemmArguments& args) {
  Range out[kMaxGroups];  // the first n are set
  int n = 0;
  for (size_t g = 0; g < args.groups.size(); ++g) {
    const GroupProblem& p = args.groups[g];
    if (p.m == 0 || p.c == nullptr) continue;
    const Range r = RangeOf(p.c, OperandBytesOf(p).c, static_cast<int>(g), "c");
    int i = n++;
    for (; i > 0 && out[i - 1].begin > r.begin; --i) out[i] = out[i - 1];
    out[i] = r;
  }
  if (n == 0) return absl::OkStatus();
  uintptr_t hull_end = out[0].end;
  for (int i = 1; i < n; ++i) {
    if (out[i].begin < out[i - 1].end) {
      const Range& lo = out[i - 1].group < out[i].group ? out[i - 1] : out[i];
      const Range& hi = out[i - 1].group < out[i].group ? out[i] : out[i - 1];
      return GroupError(static_cast<size_t>(hi.group), absl::StrCat("c overlaps the ", Whose(lo)));
    }
    hull_end = out[i].end;
  }
  const uintptr_t hull_begin = out[0].begin;
  // The index of the last output that begins before `end` (-1: none), tried first at the
  // previous answer and the one after it: consecutive inputs mostly lie between the same two
  // outputs, or between the next two (a group's buffers allocated one after another).
  int hint = 0;
  const auto last_before = [&](uintptr_t end) {
    const auto is_answer = [&](int j) {
      return (j < 0 || out[j].begin < end) && (j + 1 == n || out[j + 1].begin >= end);
    };
    if (is_answer(hint)) return hint;
    if (hint + 1 < n && is_answer(hint + 1)) return hint + 1;
    int lo = 0, len = n;  // lo: the first output that begins at or after `end`
    while (len > 0) {
      const int half = len / 2;
      const bool before = out[lo + half].begin < end;
      lo = before ? lo + half + 1 : lo;
      len = before ? len - half - 1 : half;
    }
    return lo - 1;
  };
  const auto meets = [&](const Range& in) -> const Range* {
    if (in.begin == in.end || in.end <= hull_begin || in.begin >= hull_end) return nullptr;
    hint = last_before(in.end);
    return hint >= 0 && out[hint].end > in.begin ? &out[hint] : nullptr;
  };
  for (size_t g = 0; g < args.groups.size(); ++g) {
    const GroupProblem& p = args.groups[g];
    const OperandBytes bytes = OperandBytesOf(p);
    const int gi = static_cast<int>(g);
    // (A null A or SFA only in a group without rows: its inputs are empty ranges then.)
    const Range inputs[] = {
        RangeOf(p.a, bytes.a, gi, "a"),
        RangeOf(p.b, bytes.b, gi, "b"),
        RangeOf(p.sfa, bytes.sfa, gi, "sfa"),
        RangeOf(p.sfb, bytes.sfb, gi, "sfb"),
    };
    for (const Range& in : inputs) {
      if (const Range* o = meets(in)) {
        return GroupError(static_cast<size_t>(o->group), absl::StrCat("c overlaps the ", Whose(in)));
      }
    }
  }
  if (args.device_m != nullptr) {
    const Range dm = RangeOf(args.device_m, args.groups.size() * sizeof(int32_t), -1, "");
    if (const Range* o = meets(dm)) {
      return GroupError(static_cast<size_t>(o->group), "c overlaps device_m");
    }
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
    if (GroupPasses(args.groups[g])) continue;
    // (The detailed checks decide; the fast one only spares them on the common path.)
    if (absl::Status s = ValidateGroup(g, args.groups[g]); !s.ok()) return s;
  }
  return CheckOverlaps(args);
}

}  // namespace encore::gemm
