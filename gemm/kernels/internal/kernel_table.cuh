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
    if (bound) {
      if constexpr (kSrc == TokenSource::kPrepass) {
        if (fused || streamed) return nullptr;
        switch (kind) {
          case KernelKind::kSimple:
            return reinterpret_cast<const void*>(
                &Sm90Nvfp4GroupedGemmKernel<G, Schedule::kSimple, kSrc, false, false, true>);
          case KernelKind::kPersistent:
            return reinterpret_cast<const void*>(
                &Sm90Nvfp4GroupedGemmKernel<G, Schedule::kPersistent, kSrc, false, false, true>);
          case KernelKind::kStreamK:
            if constexpr (kWithStreamK) {
              return reinterpret_cast<const void*>(
                  &Sm90Nvfp4GroupedGemmKernel<G, Schedule::kStreamK, kSrc, false, false, true>);
            } else {
              return nullptr;
            }
          default:
            return nullptr;
        }
      } else {
        return nullptr;
      }
    }
    // A whole-tile schedule's entry point, fused or not (fused: pre-pass tokens only).
    auto whole_tile = [fused, streamed](auto schedule) -> const void* {
      constexpr Schedule S = decltype(schedule)::value;
      if constexpr (kSrc == TokenSource::kPrepass) {
        if (fused) {
          return streamed ? nullptr
                          : reinterpret_cast<const void*>(
                                &Sm90Nvfp4GroupedGemmKernel<G, S, kSrc, true>);
        }
        if constexpr (S == Schedule::kSimple && kStreamedBuilt) {
          if (streamed) {
            return reinterpret_cast<const void*>(
                &Sm90Nvfp4GroupedGemmKernel<G, S, kSrc, false, true>);
          }
        }
      }
      return fused || streamed
                 ? nullptr
                 : reinterpret_cast<const void*>(&Sm90Nvfp4GroupedGemmKernel<G, S, kSrc>);
    };
    switch (kind) {
      case KernelKind::kSimple:
        return whole_tile(std::integral_constant<Schedule, Schedule::kSimple>{});
      case KernelKind::kPersistent:
        return whole_tile(std::integral_constant<Schedule, Schedule::kPersistent>{});
      case KernelKind::kStreamK:
        if (fused || streamed) return nullptr;
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
