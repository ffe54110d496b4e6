// Ceiling of the sm90 kernel's consumer structure: how fast two consumer warpgroups issue
// register-A wgmma (m64nNk16, fp16 in, fp32 accumulate) against a shared-memory token stage, with
// nothing else in the CTA (no TMA, no mbarriers, no producer). Each variant keeps one piece of the
// real consumer loop (gemm/kernels/internal/consumer.cuh) and drops the rest, so the gaps between
// them say what each piece costs:
//   const_drain    constant fragments; per k-block: fence, 8 steps, commit, wait 0 (the drain)
//   const_stream   constant fragments; 8 steps per commit group, wait 1 (no drain)
//   parts_drain    the real consumer: raw words loaded (ld.shared) per k-block, 4 parts of 2
//                  steps with fragments built by BuildSteps (3-op unpack + scale), wait 1 between
//                  parts, wait 0 at the k-block's end
//   parts_stream   the same parts without the per-k-block drain (wait 1 across k-blocks)
//   raw_drain      parts_drain with the raw words as fragments (no unpacking): the skeleton
// parts_drain and const_stream run once more with one warpgroup (is one enough to fill the pipe?).
// Every variant runs K_BLOCKS k-blocks of 8 k16-steps per warpgroup on every SM; the result is
// tensor FLOP/s and FLOP per SM clock (clock64 of CTA 0), against 4096 dense fp16 FLOP/clk/SM.
//
// Example (on the device; not a Bazel target: nvcc only):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//     -diag-suppress=1160 -I. -o /tmp/ceiling benchmarks/micro/wgmma_rs_ceiling.cu && /tmp/ceiling
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "benchmarks/micro/micro_timing.cuh"
#include "gemm/kernels/internal/consumer.cuh"

namespace sm90 = encore::gemm::sm90;

enum Mode { kConstDrain, kConstStream, kPartsDrain, kPartsStream, kRawDrain, kModes };
static const char* kModeNames[kModes] = {"const_drain", "const_stream", "parts_drain",
                                         "parts_stream", "raw_drain"};

constexpr int kTokStage = sm90::TileShape::kTokStageBytes;  // 2 atoms of 256 rows x 128 bytes
constexpr int kSmemBytes = 1024 + 2 * kTokStage + 8192;      // 2 token stages + one raw stage

template <int N>
__device__ __forceinline__ void Issue8(float (&acc)[128], const uint32_t (&f)[4], uint64_t desc) {
#pragma unroll
  for (int s = 0; s < 8; ++s) {
    const int offset = (s / 4) * sm90::TileShape::kTokAtomBytes + (s % 4) * 32;
    sm90::WgmmaRS<N>(acc, f, desc + static_cast<uint64_t>(offset >> 4));
  }
}

template <int N, int kMode>
__global__ void __launch_bounds__(256, 1) Ceiling(int k_blocks, float* sink, long long* cycles) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) &
                                             ~static_cast<uintptr_t>(1023));
  const int tid = static_cast<int>(threadIdx.x);
  // Token stages: small fp16 values (0.5 .. 1.5); raw stage: e2m1 codes of every value.
  uint32_t* words = reinterpret_cast<uint32_t*>(base);
  for (int i = tid; i < (2 * kTokStage) / 4; i += 256) words[i] = 0x3C003800u + (i & 0x3F);
  for (int i = tid; i < 8192 / 4; i += 256) words[(2 * kTokStage) / 4 + i] = 0x9ABC1234u * (i + 1);
  __syncthreads();
  const uint32_t s = sm90::SmemAddr(base);
  const uint32_t raw = s + 2 * kTokStage;
  const uint64_t tok_desc = sm90::SmemDescSw128(s);
  const int ct = tid & 127;
  const int lane = ct & 31, g = lane >> 2, c = lane & 3;
  const int rbase = (tid >> 7) * 64 + (ct >> 5) * 16 + g;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;
  const long long t0 = clock64();
  if constexpr (kMode == kConstDrain || kMode == kConstStream) {
    const uint32_t f[4] = {0x3C003C00u + tid, 0x38003800u, 0x3C003800u, 0x38003C00u};
    for (int kb = 0; kb < k_blocks; ++kb) {
      const uint64_t desc = tok_desc + static_cast<uint64_t>(kb & 1) * (kTokStage >> 4);
      sm90::FenceAcc<N>(acc);
      sm90::WgmmaFence();
      Issue8<N>(acc, f, desc);
      sm90::WgmmaCommit();
      if constexpr (kMode == kConstDrain) {
        sm90::WgmmaWait<0>();
      } else {
        sm90::WgmmaWait<1>();
      }
      sm90::FenceAcc<N>(acc);
    }
    sm90::WgmmaWait<0>();
  } else {
    using Frag = sm90::Frag;  // parts of 2 steps (the default consumer pipe)
    constexpr int kParts = sm90::kParts;
    constexpr int kPs = sm90::kPartSteps;
    uint32_t a[1][2][4];
    uint32_t sl[1][2][2] = {{{0x3C003C00u, 0x3C003C00u}, {0x3C003C00u, 0x3C003C00u}}};
    Frag frag[2];
    for (int kb = 0; kb < k_blocks; ++kb) {
      const uint64_t desc = tok_desc + static_cast<uint64_t>(kb & 1) * (kTokStage >> 4);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint4 w = sm90::LdShared128(raw + (rbase + 8 * h) * 64 + c * 16);
        a[0][h][0] = w.x;
        a[0][h][1] = w.y;
        a[0][h][2] = w.z;
        a[0][h][3] = w.w;
      }
#pragma unroll
      for (int part = 0; part < kParts; ++part) {
        if constexpr (kMode == kRawDrain) {
#pragma unroll
          for (int ls = 0; ls < kPs; ++ls) {
            const int q = (part * kPs + ls) >> 1;
            frag[part & 1][0][ls][0] = a[0][0][q];
            frag[part & 1][0][ls][1] = a[0][1][q];
            frag[part & 1][0][ls][2] = a[0][0][q] ^ 1u;
            frag[part & 1][0][ls][3] = a[0][1][q] ^ 1u;
          }
        } else {
          sm90::BuildSteps<kPs>(frag[part & 1], a, sl, part * kPs);
        }
        sm90::IssueSteps<N, kPs>(acc, frag[part & 1], desc, part * kPs);
        sm90::WgmmaWait<1>();
      }
      if constexpr (kMode != kPartsStream) {
        sm90::WgmmaWait<0>();
        sm90::FenceAcc<N>(acc);
      }
    }
    sm90::WgmmaWait<0>();
    sm90::FenceAcc<N>(acc);
  }
  micro::KeepLiveAndReport(acc, sink + blockIdx.x * 256 + tid, cycles, t0, clock64());
}

template <int N, int kMode>
bool Run(int sms, int k_blocks, float* sink, long long* cycles_dev, int warpgroups = 2) {
  float best_ms = 0.f;
  long long cycles = 0;
  if (!micro::BestOfLaunches(Ceiling<N, kMode>, sms, 128 * warpgroups, kSmemBytes, 5, cycles_dev,
                             &best_ms, &cycles, k_blocks, sink, cycles_dev)) {
    return false;
  }
  const double flop_per_sm = warpgroups * 8.0 * k_blocks * 2.0 * 64 * N * 16;
  const double tflops = flop_per_sm * sms / (best_ms * 1e-3) / 1e12;
  std::printf("N=%3d %-13s %d WG %8.3f ms %7.1f TFLOP/s %6.0f FLOP/clk/SM (%4.1f%% of 4096)\n", N,
              kModeNames[kMode], warpgroups, best_ms, tflops, flop_per_sm / cycles,
              100.0 * flop_per_sm / cycles / 4096);
  return true;
}

template <int N>
bool RunAll(int sms, int k_blocks, float* sink, long long* cycles) {
  return Run<N, kConstDrain>(sms, k_blocks, sink, cycles) &&
         Run<N, kConstStream>(sms, k_blocks, sink, cycles) &&
         Run<N, kPartsDrain>(sms, k_blocks, sink, cycles) &&
         Run<N, kPartsStream>(sms, k_blocks, sink, cycles) &&
         Run<N, kRawDrain>(sms, k_blocks, sink, cycles) &&
         Run<N, kPartsDrain>(sms, k_blocks, sink, cycles, /*warpgroups=*/1) &&
         Run<N, kConstStream>(sms, k_blocks, sink, cycles, /*warpgroups=*/1);
}

// false on any failure (no device included): main exits 1.
bool Main() {
  cudaDeviceProp prop;
  if (!micro::DeviceInfo(&prop)) return false;
  float* sink = nullptr;
  long long* cycles = nullptr;
  MICRO_CHECK(cudaMalloc(&sink, sizeof(float) * 256 * prop.multiProcessorCount));
  MICRO_CHECK(cudaMalloc(&cycles, sizeof(long long)));
  const int k_blocks = 2048;
  const bool ok = RunAll<64>(prop.multiProcessorCount, k_blocks, sink, cycles) &&
                  RunAll<128>(prop.multiProcessorCount, k_blocks, sink, cycles) &&
                  RunAll<256>(prop.multiProcessorCount, k_blocks, sink, cycles);
  MICRO_CHECK(cudaFree(sink));
  MICRO_CHECK(cudaFree(cycles));
  return ok;
}

int main() { return Main() ? 0 : 1; }
