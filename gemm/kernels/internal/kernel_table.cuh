// The entry points of the sm90 GEMM kernels of one token source, by (kernel kind, group
// capacity): one table for both .cu files (each instantiates its own source).
//
// Example (gemm/sm90_nvfp4_grouped_gemm.cu):
//   return KernelTable<TokenSource::kInKernel, kStreamKBuilt>(kind, group_capacity);
#pragma once

#include <type_traits>

#include "gemm/kernels/sm90_nvfp4_grouped_gemm.cuh"
#include "gemm/launch.h"

namespace encore::gemm::sm90 {

// nullptr for an unsupported (kind, capacity, fused, streamed); stream-K only when kWithStreamK (a
// discarded `if constexpr` branch of a template: the stream-K kernels are then never
// instantiated); `fused` (the pre-pass inside the kernel) only for pre-pass tokens and the simple
// and persistent kinds; `streamed` (the kernel's kStreamed) only for the unfused simple kind with
// pre-pass tokens, where kStreamedBuilt; `bound` (the kernel's kBound: a bound plan's GEMM) only
// for pre-pass tokens, neither fused nor streamed.
template <TokenSource kSrc, bool kWithStreamK>
const void* KernelTable(KernelKind kind, int group_capacity, bool fused = false,
                        bool streamed = false, bool bound = false) {
  auto pick = [kind, fused, streamed, bound](auto groups) -> const void* {
    constexpr int G = decltype(groups)::value;
    // One schedule's entry point: the plain kernel, or at most one of its variants (fused:
    // pre-pass tokens, whole tiles; streamed: pre-pass tokens, simple, where kStreamedBuilt;
    // bound: pre-pass tokens).
    auto entry = [fused, streamed, bound](auto schedule) -> const void* {
      constexpr Schedule S = decltype(schedule)::value;
      if (int{fused} + int{streamed} + int{bound} > 1) return nullptr;
      if constexpr (kSrc == TokenSource::kPrepass) {
        if (bound) {
          return reinterpret_cast<const void*>(
              &Sm90Nvfp4GroupedGemmKernel<G, S, kSrc, false, false, true>);
        }
        if constexpr (S != Schedule::kStreamK) {
          if (fused) {
            return reinterpret_cast<const void*>(&Sm90Nvfp4GroupedGemmKernel<G, S, kSrc, true>);
          }
        }
        if constexpr (S == Schedule::kSimple && kStreamedBuilt) {
          if (streamed) {
            return reinterpret_cast<const void*>(
                &Sm90Nvfp4GroupedGemmKernel<G, S, kSrc, false, true>);
          }
        }
      }
      return fused || streamed || bound
                 ? nullptr
                 : reinterpret_cast<const void*>(&Sm90Nvfp4GroupedGemmKernel<G, S, kSrc>);
    };
    switch (kind) {
      case KernelKind::kSimple:
        return entry(std::integral_constant<Schedule, Schedule::kSimple>{});
      case KernelKind::kPersistent:
        return entry(std::integral_constant<Schedule, Schedule::kPersistent>{});
      case KernelKind::kStreamK:
        if constexpr (kWithStreamK) {
          return entry(std::integral_constant<Schedule, Schedule::kStreamK>{});
        } else {
          return nullptr;
        }
      default:
        return nullptr;
    }
  };
  switch (group_capacity) {
    case 8:
      return pick(std::integral_constant<int, 8>{});
    case 64:
      return pick(std::integral_constant<int, 64>{});
    default:
      return nullptr;
  }
}

}  // namespace encore::gemm::sm90
