#include "graph_cache/signature.h"

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace encore::graph_cache {

uint32_t MBucketPolicy::Bucket(int m) const {
  if (m <= 0) return 0;
  const uint64_t v = static_cast<uint64_t>(m);
  switch (mode) {
    case MBucketMode::kExact:
      return static_cast<uint32_t>(v);
    case MBucketMode::kPowerOfTwo: {
      uint64_t p = 1;
      while (p < v) p <<= 1;
      return static_cast<uint32_t>(p);  // ≤ 2^31
    }
    case MBucketMode::kMultiple: {
      const uint64_t q = multiple > 0 ? static_cast<uint64_t>(multiple) : 1;
      const uint64_t r = (v + q - 1) / q * q;
      return r > 0xffffffffull ? 0xffffffffu : static_cast<uint32_t>(r);
    }
  }
  return static_cast<uint32_t>(v);
}

size_t CallSignature::FullHash() const { return absl::HashOf(key, binding); }

absl::Status BuildSignature(const gemm::GroupedGemmArguments& args, gemm::KernelKind kind,
                            const MBucketPolicy& policy, CallSignature* out, const void* stream) {
  const size_t ng = args.groups.size();
  if (ng == 0 || ng > static_cast<size_t>(gemm::kMaxGroups)) {
    return absl::InvalidArgumentError(
        absl::StrCat("group count ", ng, " is outside 1..", gemm::kMaxGroups));
  }
  const bool dynamic = args.device_m != nullptr;
  StructuralKey& key = out->key;
  Binding& binding = out->binding;
  key.size_ =
      static_cast<uint32_t>(StructuralKey::kHeaderWords + StructuralKey::kWordsPerGroup * ng);
  key.words_[0] = static_cast<uint32_t>(ng);
  key.words_[1] = static_cast<uint32_t>(static_cast<uint8_t>(kind)) | (dynamic ? 1u << 8 : 0u);
  binding.num_groups_ = static_cast<int>(ng);
  binding.device_m_ = args.device_m;
  binding.stream_ = stream;
  uint32_t* w = key.words_ + StructuralKey::kHeaderWords;
  GroupBinding* gb = binding.groups_;
  for (size_t g = 0; g < ng; ++g) {
    const gemm::GroupProblem& p = args.groups[g];
    if (p.m < 0 || p.n < 0 || p.k < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", g, ": negative size (m=", p.m, ", n=", p.n, ", k=", p.k, ")"));
    }
    w[0] = dynamic ? policy.Bucket(p.m) : static_cast<uint32_t>(p.m);
    w[1] = static_cast<uint32_t>(p.n);
    w[2] = static_cast<uint32_t>(p.k);
    w += StructuralKey::kWordsPerGroup;
    gb->a = p.a;
    gb->b = p.b;
    gb->sfa = p.sfa;
    gb->sfb = p.sfb;
    gb->c = p.c;
    gb->m = p.m;
    ++gb;
  }
  return absl::OkStatus();
}

bool SameCall(const gemm::GroupedGemmArguments& a, gemm::KernelKind a_kind,
              const gemm::GroupedGemmArguments& b, gemm::KernelKind b_kind) {
  if (a_kind != b_kind || a.device_m != b.device_m || a.groups.size() != b.groups.size()) {
    return false;
  }
  for (size_t g = 0; g < a.groups.size(); ++g) {
    const gemm::GroupProblem& x = a.groups[g];
    const gemm::GroupProblem& y = b.groups[g];
    if (x.a != y.a || x.b != y.b || x.sfa != y.sfa || x.sfb != y.sfb || x.c != y.c || x.m != y.m ||
        x.n != y.n || x.k != y.k) {
      return false;
    }
  }
  return true;
}

}  // namespace encore::graph_cache
