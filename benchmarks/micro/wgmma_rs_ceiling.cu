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
//   whole_drain    the consumer without its pipe (ENCORE_SM90_CONSUMER_PIPE = 0): a k-block's 8
//                  steps built, then issued as one commit group, then wait 0
//   whole_ping     whole_drain with the two warpgroups taking turns (ping-pong): warpgroup w
//                  issues its k-block only after the other issued its previous one (named
//                  barriers 8 + w), so one builds while the other's wgmmas run
//   whole_ping2    whole_ping with two fragment buffers: the next k-block is built while this
//                  warpgroup's own wgmmas run too (wait 1 before a buffer is rebuilt)
// parts_drain and const_stream run once more with one warpgroup (is one enough to fill the pipe?).
// Every variant runs K_BLOCKS k-blocks of 8 k16-steps per warpgroup on every SM; the result is
// tensor FLOP/s and FLOP per SM clock (clock64 of CTA 0), against 4096 dense fp16 FLOP/clk/SM.
//
// `ceiling table` instead prints one row per width (32..256) of the loop forms a kernel could
// choose per width: 4, 2 or 1 parts with the drain, 4 or 2 parts streamed, whole_ping2.
//
// Example (on the device; not a Bazel target: nvcc only):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//     -diag-suppress=1160 -I. -o /tmp/ceiling benchmarks/micro/wgmma_rs_ceiling.cu && /tmp/ceiling
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "benchmarks/micro/micro_timing.cuh"
#include "gemm/kernels/internal/consumer.cuh"

namespace sm90 = encore::gemm::sm90;

enum Mode {
  kConstDrain,
  kConstStream,
  kPartsDrain,
  kPartsStream,
  kRawDrain,
  kWholeDrain,
  kWholePing,
  kWholePing2,
  kModes
};
static const char* kModeNames[kModes] = {"const_drain", "const_stream", "parts_drain",
                                         "parts_stream", "raw_drain",    "whole_drain",
                                         "whole_ping",  "whole_ping2"};

// Ping-pong turns: warpgroup w waits on barrier 8 + w, the other arrives on it after its issue.
__device__ __forceinline__ void TurnWait(int w) { sm90::NamedBarrierSync(8 + w, 256); }
__device__ __forceinline__ void TurnPass(int w) { sm90::NamedBarrierArrive(8 + (1 - w), 256); }

// The raw words of this thread's two rows (one 16-byte load each).
__device__ __forceinline__ void LoadRaw(uint32_t (&a)[1][2][4], uint32_t raw, int rbase, int c) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint4 w = sm90::LdShared128(raw + (rbase + 8 * h) * 64 + c * 16);
    a[0][h][0] = w.x;
    a[0][h][1] = w.y;
    a[0][h][2] = w.z;
    a[0][h][3] = w.w;
  }
}

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

// kP: the parts modes' parts per k-block (4: the persistent and stream-K kernels' default, 2: the
// simple kernel's).
template <int N, int kMode, int kP = sm90::kParts>
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
  const int w = tid >> 7;  // warpgroup
  const int rbase = w * 64 + (ct >> 5) * 16 + g;
  // The decoding modes' raw words of this thread's rows and unit scales (1.0 in both halves).
  [[maybe_unused]] uint32_t a[1][2][4];
  [[maybe_unused]] const uint32_t sl[1][2][2] = {{{0x3C003C00u, 0x3C003C00u},
                                                   {0x3C003C00u, 0x3C003C00u}}};
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
  } else if constexpr (kMode == kWholeDrain || kMode == kWholePing) {
    sm90::FragOf<8> frag;
    if (kMode == kWholePing && w == 1) TurnPass(w);  // warpgroup 0 goes first
    for (int kb = 0; kb < k_blocks; ++kb) {
      const uint64_t desc = tok_desc + static_cast<uint64_t>(kb & 1) * (kTokStage >> 4);
      LoadRaw(a, raw, rbase, c);
      sm90::BuildSteps<8>(frag, a, sl, 0);
      if (kMode == kWholePing) TurnWait(w);
      sm90::IssueSteps<N, 8>(acc, frag, desc, 0);
      if (kMode == kWholePing && (w == 0 || kb + 1 < k_blocks)) TurnPass(w);
      sm90::WgmmaWait<0>();
      sm90::FenceAcc<N>(acc);
    }
  } else if constexpr (kMode == kWholePing2) {
    sm90::FragOf<8> f0, f1;
    if (w == 1) TurnPass(w);
    LoadRaw(a, raw, rbase, c);
    sm90::BuildSteps<8>(f0, a, sl, 0);
    for (int kb = 0; kb < k_blocks; kb += 2) {  // k_blocks even
      const uint64_t d0 = tok_desc;
      const uint64_t d1 = tok_desc + static_cast<uint64_t>(kTokStage >> 4);
      TurnWait(w);
      sm90::IssueSteps<N, 8>(acc, f0, d0, 0);
      TurnPass(w);
      LoadRaw(a, raw, rbase, c);
      sm90::BuildSteps<8>(f1, a, sl, 0);  // f0's wgmmas may run: other registers
      TurnWait(w);
      sm90::IssueSteps<N, 8>(acc, f1, d1, 0);
      if (w == 0 || kb + 2 < k_blocks) TurnPass(w);
      sm90::WgmmaWait<1>();  // f0's group done
      if (kb + 2 < k_blocks) {
        LoadRaw(a, raw, rbase, c);
        sm90::BuildSteps<8>(f0, a, sl, 0);
      }
    }
    sm90::WgmmaWait<0>();
    sm90::FenceAcc<N>(acc);
  } else {
    constexpr int kParts = kP;
    constexpr int kPs = 8 / kP;
    using Frag = sm90::FragOf<kPs>;
    Frag frag[2];
    for (int kb = 0; kb < k_blocks; ++kb) {
      const uint64_t desc = tok_desc + static_cast<uint64_t>(kb & 1) * (kTokStage >> 4);
      LoadRaw(a, raw, rbase, c);
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

// One mode at one width; prints a line unless `percent` is given (then it gets the share of the
// 4096 FLOP/clk/SM peak).
template <int N, int kMode, int kP = sm90::kParts>
bool Run(int sms, int k_blocks, float* sink, long long* cycles_dev, int warpgroups = 2,
         double* percent = nullptr) {
  float best_ms = 0.f;
  long long cycles = 0;
  if (!micro::BestOfLaunches(Ceiling<N, kMode, kP>, sms, 128 * warpgroups, kSmemBytes, 5,
                             cycles_dev, &best_ms, &cycles, k_blocks, sink, cycles_dev)) {
    return false;
  }
  const double flop_per_sm = warpgroups * 8.0 * k_blocks * 2.0 * 64 * N * 16;
  const double tflops = flop_per_sm * sms / (best_ms * 1e-3) / 1e12;
  if (percent != nullptr) {
    *percent = 100.0 * flop_per_sm / cycles / 4096;
    return true;
  }
  std::printf("N=%3d %-13s %d WG %8.3f ms %7.1f TFLOP/s %6.0f FLOP/clk/SM (%4.1f%% of 4096)\n", N,
              kModeNames[kMode], warpgroups, best_ms, tflops, flop_per_sm / cycles,
              100.0 * flop_per_sm / cycles / 4096);
  return true;
}

// `ceiling table`: one line per width, the loop forms the kernel could choose per width (share of
// the tensor peak, 2 warpgroups): 4 / 2 / 1 parts with the drain, 4 / 2 parts streamed, whole
// k-blocks in turns with two fragment buffers.
template <int N>
bool TableRow(int sms, int k_blocks, float* sink, long long* cycles) {
  double v[6] = {};
  const bool ok = Run<N, kPartsDrain, 4>(sms, k_blocks, sink, cycles, 2, &v[0]) &&
                  Run<N, kPartsDrain, 2>(sms, k_blocks, sink, cycles, 2, &v[1]) &&
                  Run<N, kWholeDrain>(sms, k_blocks, sink, cycles, 2, &v[2]) &&
                  Run<N, kPartsStream, 4>(sms, k_blocks, sink, cycles, 2, &v[3]) &&
                  Run<N, kPartsStream, 2>(sms, k_blocks, sink, cycles, 2, &v[4]) &&
                  Run<N, kWholePing2>(sms, k_blocks, sink, cycles, 2, &v[5]);
  if (ok) {
    std::printf("%5d %8.1f %8.1f %8.1f %9.1f %9.1f %8.1f\n", N, v[0], v[1], v[2], v[3], v[4],
                v[5]);
  }
  return ok;
}

template <int N>
bool RunAll(int sms, int k_blocks, float* sink, long long* cycles) {
  return Run<N, kConstDrain>(sms, k_blocks, sink, cycles) &&
         Run<N, kConstStream>(sms, k_blocks, sink, cycles) &&
         Run<N, kPartsDrain>(sms, k_blocks, sink, cycles) &&
         Run<N, kPartsStream>(sms, k_blocks, sink, cycles) &&
         Run<N, kRawDrain>(sms, k_blocks, sink, cycles) &&
         Run<N, kWholeDrain>(sms, k_blocks, sink, cycles) &&
         Run<N, kWholePing>(sms, k_blocks, sink, cycles) &&
         Run<N, kWholePing2>(sms, k_blocks, sink, cycles) &&
         Run<N, kPartsDrain>(sms, k_blocks, sink, cycles, /*warpgroups=*/1) &&
         Run<N, kConstStream>(sms, k_blocks, sink, cycles, /*warpgroups=*/1);
}

// false on any failure (no device included): main exits 1.
bool Main(bool table) {
  cudaDeviceProp prop;
  if (!micro::DeviceInfo(&prop)) return false;
  float* sink = nullptr;
  long long* cycles = nullptr;
  MICRO_CHECK(cudaMalloc(&sink, sizeof(float) * 256 * prop.multiProcessorCount));
  MICRO_CHECK(cudaMalloc(&cycles, sizeof(long long)));
  const int k_blocks = 2048;
  if (table) {
    std::printf("width p4_drain p2_drain p1_drain p4_stream p2_stream    ping2  (%% of peak)\n");
    const int sms = prop.multiProcessorCount;
    const bool ok =
        TableRow<32>(sms, k_blocks, sink, cycles) && TableRow<48>(sms, k_blocks, sink, cycles) &&
        TableRow<64>(sms, k_blocks, sink, cycles) && TableRow<80>(sms, k_blocks, sink, cycles) &&
        TableRow<96>(sms, k_blocks, sink, cycles) && TableRow<112>(sms, k_blocks, sink, cycles) &&
        TableRow<128>(sms, k_blocks, sink, cycles) &&
        TableRow<144>(sms, k_blocks, sink, cycles) &&
        TableRow<160>(sms, k_blocks, sink, cycles) &&
        TableRow<176>(sms, k_blocks, sink, cycles) &&
        TableRow<192>(sms, k_blocks, sink, cycles) &&
        TableRow<224>(sms, k_blocks, sink, cycles) && TableRow<256>(sms, k_blocks, sink, cycles);
    MICRO_CHECK(cudaFree(sink));
    MICRO_CHECK(cudaFree(cycles));
    return ok;
  }
  const bool ok = RunAll<64>(prop.multiProcessorCount, k_blocks, sink, cycles) &&
                  RunAll<96>(prop.multiProcessorCount, k_blocks, sink, cycles) &&
                  RunAll<128>(prop.multiProcessorCount, k_blocks, sink, cycles) &&
                  RunAll<256>(prop.multiProcessorCount, k_blocks, sink, cycles);
  MICRO_CHECK(cudaFree(sink));
  MICRO_CHECK(cudaFree(cycles));
  return ok;
}

int main(int argc, char** argv) {
  return Main(argc > 1 && std::string(argv[1]) == "table") ? 0 : 1;
}
