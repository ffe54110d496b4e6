// The NVFP4 grouped-GEMM problem (what to compute), kept apart from how it is computed.
//
// Per group g: C[M×N] (fp16, row-major) = A[M×K] · B[N×K]ᵀ, where A and B are NVFP4:
//   - values e2m1, packed two per byte (low nibble = lower k), K contiguous (row stride K/2 bytes);
//   - one e4m3 scale per 16 consecutive k of every row, stored in the 128×4 blocked layout
//     (see BlockedScaleOffset in gemm/nvfp4.h): ceil(rows/128)·(K/64)·512 bytes per operand.
// Supported: M ≥ 0 (0 = the group is skipped), N % 8 == 0, K % 64 == 0, each of M, N, K at most
// kMaxExtent, 1..kMaxGroups groups, every pointer 16-byte aligned (the bulk tensor copy engine
// needs it), no output sharing a byte with another output or with any input.
//
// Example:
//   encore::gemm::GroupProblem g{.a = a, .b = b, .sfa = sfa, .sfb = sfb, .c = c,
//                                .m = 96, .n = 128, .k = 256};
//   encore::gemm::GroupedGemmArguments args{.groups = absl::MakeConstSpan(&g, 1)};
//   if (absl::Status s = encore::gemm::Validate(args); !s.ok()) return s;  // names group+field
#ifndef ENCORE_GEMM_PROBLEM_H_
#define ENCORE_GEMM_PROBLEM_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace encore::gemm {

inline constexpr int kMaxGroups = 64;
inline constexpr int kKMultiple = 64;
inline constexpr int kNMultiple = 8;
inline constexpr int kPointerAlignment = 16;
// The largest M, N or K of a group (2^24): tile, k-block and row counts then stay far inside the
// kernels' and the planner's 32-bit arithmetic (a 2^31-column N used to wrap the tile count
// negative and launch nothing, with an OK status).
inline constexpr int kMaxExtent = 1 << 24;
inline constexpr int kScaleVectorSize = 16;  // k elements sharing one e4m3 scale

struct GroupProblem {
  const void* a = nullptr;    // M × K/2 bytes
  const void* b = nullptr;    // N × K/2 bytes
  const void* sfa = nullptr;  // BlockedScaleBytes(M, K) bytes
  const void* sfb = nullptr;  // BlockedScaleBytes(N, K) bytes
  void* c = nullptr;          // M × N fp16
  int m = 0;
  int n = 0;
  int k = 0;
};

struct GroupedGemmArguments {
  absl::Span<const GroupProblem> groups;
  // Dynamic M (optional): a device array of groups.size() int32 values read by the kernel at run
  // time. Each group's `m` is then its capacity: buffers are sized for it, tiles are planned for
  // it, and the kernel computes only the first device_m[g] (≤ m) rows. nullptr: static M.
  const int32_t* device_m = nullptr;
};

// Bytes of one operand's blocked scale factors: ceil(rows/128) · ceil(K/64) · 512.
// (In 64 bits from the start: rows + 127 or k + 63 in int would overflow near INT_MAX.)
inline constexpr size_t BlockedScaleBytes(int rows, int k) {
  return (static_cast<size_t>(rows) + 127) / 128 * ((static_cast<size_t>(k) + 63) / 64) * 512;
}

// The bytes each operand of group `p` spans from its pointer (C at capacity M; all of a group
// without rows but B and SFB are 0): what Validate's overlap check and the graph cache's
// early-read checks compare.
struct OperandBytes {
  size_t a, b, sfa, sfb, c;
};
inline constexpr OperandBytes OperandBytesOf(const GroupProblem& p) {
  const size_t m = static_cast<size_t>(p.m), n = static_cast<size_t>(p.n);
  const size_t half_k = static_cast<size_t>(p.k) / 2;
  return OperandBytes{m * half_k, n * half_k, BlockedScaleBytes(p.m, p.k),
                      BlockedScaleBytes(p.n, p.k), m * n * 2};
}

// OK when `args` is within the supported set; otherwise InvalidArgument naming the group and
// the field, e.g. "group 3: b is null" or "group 0: k = 96 is not a multiple of 64". M = 0 is
// valid (and then A, SFA and C may be null; B and SFB are still required). N and K must be
// positive; none of M, N, K may exceed kMaxExtent. Every non-null pointer must be 16-byte
// aligned, and device_m (if set) 4-byte aligned. Empty groups span -> "groups is empty"; more
// than kMaxGroups -> "65 groups exceed the supported maximum of 64". No group's C (its M x N
// halves) may share a byte with another group's C or with any input (A, SFA, B, SFB of any
// group, device_m): "group 2: c overlaps the b of group 0". Inputs may share bytes (groups with
// the same weights are fine). Cost: ~30-50 ns a group (benchmarks/signature.cc BM_Validate).
[[nodiscard]] absl::Status Validate(const GroupedGemmArguments& args);

}  // namespace encore::gemm

#endif  // ENCORE_GEMM_PROBLEM_H_
