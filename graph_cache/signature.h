// Call signatures: everything that determines the work one grouped-GEMM call launches, split in
// two parts.
//
//   StructuralKey: kernel variant (the KernelKind asked for), group count, whether M is dynamic,
//                  and per group (M key, N, K). Everything a captured graph's topology and kernel
//                  choice may depend on. Two calls with equal keys can share one graph.
//   Binding:       per group the pointers A, B, SFA, SFB, C and the exact M, plus the device_m
//                  pointer and the stream the call runs on (plans use that stream's workspace).
//                  What a kernel-node patch (cudaGraphExecKernelNodeSetParams with a freshly
//                  prepared LaunchPlan) changes without re-capture.
//
// Both use fixed-capacity inline storage (gemm::kMaxGroups groups), so building a signature never
// allocates. Hashing uses absl::Hash over the used prefix only; equality compares the used prefix
// exactly, so a cache hit is confirmed byte for byte (no false hits, ever).
//
// Dynamic M (args.device_m != nullptr): GroupProblem::m is the group's CAPACITY, the number of
// rows its buffers (A, SFA, C) really hold; the kernel computes device_m[g] ≤ m rows. Encore
// always plans the launch for exactly that m (never for more rows than the caller's buffers
// hold). The key stores MBucketPolicy::Bucket(m) ≥ m instead of m, so capacities in one bucket
// share one graph: switching between them is a node patch (the exact m lives in the Binding),
// never a re-capture or re-instantiation. Token counts that change every step change only the
// device array's contents: same key, same binding, a plain replay. With static M the key holds
// the exact m (a different M is a different structure).
//
// Example:
//   encore::graph_cache::CallSignature sig;
//   ENCORE_RETURN_IF_ERROR(encore::graph_cache::BuildSignature(
//       args, encore::gemm::KernelKind::kAuto, encore::graph_cache::MBucketPolicy{}, &sig));
//   auto it = map.find(sig.key);          // absl::Hash + exact ==
//   bool same_pointers = it->second.binding == sig.binding;
#ifndef ENCORE_GRAPH_CACHE_SIGNATURE_H_
#define ENCORE_GRAPH_CACHE_SIGNATURE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "gemm/launch.h"
#include "gemm/problem.h"

namespace encore::graph_cache {

struct CallSignature;

enum class MBucketMode : uint8_t {
  kExact = 0,       // key = m
  kPowerOfTwo = 1,  // key = smallest power of two ≥ m (0 stays 0)
  kMultiple = 2,    // key = m rounded up to a multiple of `multiple`
};

// How dynamic-M capacities are grouped into cache keys. Only the key is bucketed: the launch is
// always planned for the caller's exact capacity m.
struct MBucketPolicy {
  MBucketMode mode = MBucketMode::kPowerOfTwo;
  int multiple = 128;  // kMultiple only; must be > 0

  // The key value for capacity m ≥ 0. Always ≥ m; fits in 32 bits for every int m.
  uint32_t Bucket(int m) const;
};

// The structure of one call as a short run of 32-bit words:
//   [num_groups, kind | dynamic_m << 8, (m_key, n, k) per group].
class StructuralKey {
 public:
  static constexpr int kHeaderWords = 2;
  static constexpr int kWordsPerGroup = 3;
  static constexpr int kMaxWords = kHeaderWords + kWordsPerGroup * gemm::kMaxGroups;

  absl::Span<const uint32_t> words() const { return absl::MakeConstSpan(words_, size_); }
  int num_groups() const { return size_ == 0 ? 0 : static_cast<int>(words_[0]); }
  gemm::KernelKind kind() const { return static_cast<gemm::KernelKind>(words_[1] & 0xff); }
  bool dynamic_m() const { return (words_[1] >> 8) != 0; }
  uint32_t m_key(int g) const { return words_[kHeaderWords + kWordsPerGroup * g]; }
  uint32_t n(int g) const { return words_[kHeaderWords + kWordsPerGroup * g + 1]; }
  uint32_t k(int g) const { return words_[kHeaderWords + kWordsPerGroup * g + 2]; }

  friend bool operator==(const StructuralKey& x, const StructuralKey& y) {
    return x.size_ == y.size_ && std::memcmp(x.words_, y.words_, x.size_ * sizeof(uint32_t)) == 0;
  }
  friend bool operator!=(const StructuralKey& x, const StructuralKey& y) { return !(x == y); }
  // Same value as absl::HashOf(key.words()): the cache hashes runs of keys as word spans.
  template <typename H>
  friend H AbslHashValue(H h, const StructuralKey& key) {
    return H::combine(std::move(h), key.words());
  }

 private:
  friend absl::Status BuildSignature(const gemm::GroupedGemmArguments&, gemm::KernelKind,
                                     const MBucketPolicy&, CallSignature*, const void*);
  uint32_t size_ = 0;
  uint32_t words_[kMaxWords];  // only [0, size_) is meaningful
};

// One group's operands as the launch sees them. 48 bytes, no padding, so it compares and hashes
// as raw bytes.
struct GroupBinding {
  const void* a;
  const void* b;
  const void* sfa;
  const void* sfb;
  void* c;
  int64_t m;  // exact M (the capacity when M is dynamic)
};
static_assert(sizeof(GroupBinding) == 48 && std::has_unique_object_representations_v<GroupBinding>,
              "GroupBinding is compared with memcmp");

class Binding {
 public:
  int num_groups() const { return num_groups_; }
  const int32_t* device_m() const { return device_m_; }
  const void* stream() const { return stream_; }
  absl::Span<const GroupBinding> groups() const {
    return absl::MakeConstSpan(groups_, static_cast<size_t>(num_groups_));
  }

  friend bool operator==(const Binding& x, const Binding& y) {
    return x.num_groups_ == y.num_groups_ && x.device_m_ == y.device_m_ &&
           x.stream_ == y.stream_ &&
           std::memcmp(x.groups_, y.groups_, sizeof(GroupBinding) * x.num_groups_) == 0;
  }
  friend bool operator!=(const Binding& x, const Binding& y) { return !(x == y); }
  template <typename H>
  friend H AbslHashValue(H h, const Binding& b) {
    h = H::combine_contiguous(std::move(h), reinterpret_cast<const unsigned char*>(b.groups_),
                              sizeof(GroupBinding) * b.num_groups_);
    return H::combine(std::move(h), b.num_groups_, reinterpret_cast<uintptr_t>(b.device_m_),
                      reinterpret_cast<uintptr_t>(b.stream_));
  }

 private:
  friend absl::Status BuildSignature(const gemm::GroupedGemmArguments&, gemm::KernelKind,
                                     const MBucketPolicy&, CallSignature*, const void*);
  int num_groups_ = 0;
  const int32_t* device_m_ = nullptr;
  const void* stream_ = nullptr;  // the cudaStream_t the call runs on
  GroupBinding groups_[gemm::kMaxGroups];  // only [0, num_groups_) is meaningful
};

struct CallSignature {
  StructuralKey key;
  Binding binding;

  // A hash of the whole signature (key and binding): what the sequence recorder compares.
  size_t FullHash() const;
};

// Fills `out` from `args` and the stream (a cudaStream_t) the call runs on. InvalidArgument when
// the group count is outside 1..kMaxGroups or an M, N or K is negative; everything else is the
// runner's to judge (CanImplement). Never allocates.
[[nodiscard]] absl::Status BuildSignature(const gemm::GroupedGemmArguments& args,
                                          gemm::KernelKind kind, const MBucketPolicy& policy,
                                          CallSignature* out, const void* stream = nullptr);

// True when two argument sets launch identical work (same groups field by field, same device_m
// pointer). `a_kind`/`b_kind` are the kinds asked for.
bool SameCall(const gemm::GroupedGemmArguments& a, gemm::KernelKind a_kind,
              const gemm::GroupedGemmArguments& b, gemm::KernelKind b_kind);

}  // namespace encore::graph_cache

#endif  // ENCORE_GRAPH_CACHE_SIGNATURE_H_
