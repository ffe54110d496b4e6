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

// nullptr for an unsupported (kind, capacity, fused); stream-K only when kWithStreamK (a discarded
// `if constexpr` branch of a template: the stream-K kernels are then never instantiated); `fused`
// (the pre-pass inside the kernel) only for pre-pass tokens and the simple and persistent kinds.
template <TokenSource kSrc, bool kWithStreamK>
const void* KernelTable(KernelKind kind, int group_capacity, bool fused = false) {
  auto pick = [kind, fused](auto groups) -> const void* {
    constexpr int G = decltype(groups)::value;
    constexpr bool kCanFuse = kSrc == TokenSource::kPrepass;
    switch (kind) {
      case KernelKind::kSimple:
        if constexpr (kCanFuse) {
          if (fused) {
            return reinterpret_cast<const void*>(
                &Sm90Nvfp4GroupedGemmKernel<G, Schedule::kSimple, kSrc, true>);
          }
        }
        return fused ? nullptr
                     : reinterpret_cast<const void*>(
                           &Sm90Nvfp4GroupedGemmKernel<G, Schedule::kSimple, kSrc>);
      case KernelKind::kPersistent:
        if constexpr (kCanFuse) {
          if (fused) {
            return reinterpret_cast<const void*>(
                &Sm90Nvfp4GroupedGemmKernel<G, Schedule::kPersistent, kSrc, true>);
          }
        }
        return fused ? nullptr
                     : reinterpret_cast<const void*>(
                           &Sm90Nvfp4GroupedGemmKernel<G, Schedule::kPersistent, kSrc>);
      case KernelKind::kStreamK:
        if (fused) return nullptr;
        if constexpr (kWithStreamK) {
          return reinterpret_cast<const void*>(
              &Sm90Nvfp4GroupedGemmKernel<G, Schedule::kStreamK, kSrc>);
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
