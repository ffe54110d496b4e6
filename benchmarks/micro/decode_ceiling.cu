// Where the narrow widths lose: the consumer loop of benchmarks/micro/wgmma_rs_ceiling.cu
// (parts_drain: raw words from shared memory, 4 parts of 2 steps, register-A wgmma m64nNk16
// against a token stage, wait 0 per k-block) with the weight decode varied and 2, 3 or 4 consumer
// warpgroups per CTA (one CTA per SM, no TMA, no mbarriers). Run 44's ceiling: at N = 64 the
// real decode reaches 61% of the tensor peak with 2 warpgroups and 52% with 1, the same loop
// with undecoded words 90%. If more warpgroups close the gap, it is latency (a narrow-tile kernel
// with more consumers would pay); if not, it is the decode's instruction throughput (fewer
// instructions per fragment would pay).
//   cur         the kernel's decode (E2m1PairToHalf2Shifted: 2 shifts + 2 LOP3 per half2) + HMUL2
//   cur_nomul   the same without the scale multiply
//   byte        per word, the fp16 high bytes of all 8 codes in two words (hi nibbles: 1 shift,
//               lo nibbles: 2 shifts, 2 LOP3 each), then one PRMT per half2 ({0, hb, 0, hb'}),
//               + HMUL2 (a different k pairing: the token permutation would change with it)
//   byte_nomul  the same without the scale multiply
// Results are not checked (the values are arbitrary); the accumulators are kept live.
//
// Example (on the device; not a Bazel target: nvcc only):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//     -diag-suppress=1160 -I. -o /tmp/decode benchmarks/micro/decode_ceiling.cu && /tmp/decode
//   /tmp/decode strips   # one-strip vs two-strip warpgroups, byte decode, widths 48-128
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "benchmarks/micro/micro_timing.cuh"
#include "gemm/kernels/internal/consumer.cuh"

namespace sm90 = encore::gemm::sm90;

enum Dec { kCur, kCurNoMul, kByte, kByteNoMul, kDecs };
static const char* kDecNames[kDecs] = {"cur", "cur_nomul", "byte", "byte_nomul"};

constexpr int kTokStage = sm90::TileShape::kTokStageBytes;
constexpr int kRawBytes = 16384;  // 256 rows x 64 bytes
constexpr int kSmemBytes = 1024 + 2 * kTokStage + kRawBytes;

__device__ __forceinline__ uint32_t Prmt(uint32_t a, uint32_t sel) {
  uint32_t d;
  asm("prmt.b32 %0, %1, 0, %2;" : "=r"(d) : "r"(a), "r"(sel));
  return d;
}

// fp16 high bytes (sign bit 7, e1 e0 m at bits 3..1) of the hi nibbles (kHi) or lo nibbles.
template <bool kHi>
__device__ __forceinline__ uint32_t HighBytes(uint32_t w) {
  if (kHi) return (w & 0x80808080u) | ((w >> 3) & 0x0E0E0E0Eu);
  return ((w << 4) & 0x80808080u) | ((w << 1) & 0x0E0E0E0Eu);
}

// Fragments of steps [first, first + 2) (one strip) from the row words a[h][q].
template <int kDecode>
__device__ __forceinline__ void Build2(uint32_t (&frag)[1][2][4], const uint32_t (&a)[2][4],
                                       const uint32_t (&sl)[2][2], int first) {
#pragma unroll
  for (int ls = 0; ls < 2; ++ls) {
    const int st = first + ls;
    const int q = st >> 1;
    uint32_t x[4];
    if constexpr (kDecode == kCur || kDecode == kCurNoMul) {
      if (st & 1) {
        x[0] = sm90::E2m1PairToHalf2Shifted<2>(a[0][q]);
        x[1] = sm90::E2m1PairToHalf2Shifted<2>(a[1][q]);
        x[2] = sm90::E2m1PairToHalf2Shifted<3>(a[0][q]);
        x[3] = sm90::E2m1PairToHalf2Shifted<3>(a[1][q]);
      } else {
        x[0] = sm90::E2m1PairToHalf2Shifted<0>(a[0][q]);
        x[1] = sm90::E2m1PairToHalf2Shifted<0>(a[1][q]);
        x[2] = sm90::E2m1PairToHalf2Shifted<1>(a[0][q]);
        x[3] = sm90::E2m1PairToHalf2Shifted<1>(a[1][q]);
      }
    } else {
      // Even steps: the hi nibbles of the word's 4 bytes; odd steps: the lo nibbles.
      const uint32_t h0 = (st & 1) ? HighBytes<false>(a[0][q]) : HighBytes<true>(a[0][q]);
      const uint32_t h1 = (st & 1) ? HighBytes<false>(a[1][q]) : HighBytes<true>(a[1][q]);
      x[0] = Prmt(h0, 0x1404u);
      x[1] = Prmt(h1, 0x1404u);
      x[2] = Prmt(h0, 0x3424u);
      x[3] = Prmt(h1, 0x3424u);
    }
    if constexpr (kDecode == kCur || kDecode == kByte) {
      frag[0][ls][0] = sm90::HMul2(x[0], sl[0][st >> 2]);
      frag[0][ls][1] = sm90::HMul2(x[1], sl[1][st >> 2]);
      frag[0][ls][2] = sm90::HMul2(x[2], sl[0][st >> 2]);
      frag[0][ls][3] = sm90::HMul2(x[3], sl[1][st >> 2]);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) frag[0][ls][i] = x[i];
    }
  }
}

// Both kernels' start: two token stages and the raw weight rows filled with arbitrary values
// (1024-byte aligned dynamic shared memory), this thread's addressing.
struct Setup {
  uint32_t raw;       // raw weight rows (shared window)
  uint64_t tok_desc;  // descriptor of token stage 0
  int rbase, c;       // the thread's first weight row and its 16-byte column
};
__device__ __forceinline__ Setup FillStages(uint8_t* smem_raw) {
  uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) &
                                             ~static_cast<uintptr_t>(1023));
  const int tid = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);
  uint32_t* words = reinterpret_cast<uint32_t*>(base);
  for (int i = tid; i < (2 * kTokStage) / 4; i += threads) words[i] = 0x3C003800u + (i & 0x3F);
  for (int i = tid; i < kRawBytes / 4; i += threads) {
    words[(2 * kTokStage) / 4 + i] = 0x9ABC1234u * (i + 1);
  }
  __syncthreads();
  const uint32_t s = sm90::SmemAddr(base);
  const int ct = tid & 127;
  const int lane = ct & 31;
  return Setup{s + 2 * kTokStage, sm90::SmemDescSw128(s),
               ((tid >> 7) & 1) * 64 + (ct >> 5) * 16 + (lane >> 2), lane & 3};
}

// Wider than 128 tokens the accumulators need more than 512 threads' registers: at most 3
// warpgroups.
template <int N>
inline constexpr int kDecodeThreads = N > 128 ? 384 : 512;

template <int N, int kDecode>
__global__ void __launch_bounds__(kDecodeThreads<N>, 1)
    Decode(int k_blocks, float* sink, long long* cycles) {
  extern __shared__ uint8_t smem_raw[];
  const Setup st = FillStages(smem_raw);
  const uint32_t raw = st.raw;
  const uint64_t tok_desc = st.tok_desc;
  const int rbase = st.rbase, c = st.c;
  const int tid = static_cast<int>(threadIdx.x);
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;
  uint32_t a[2][4];
  uint32_t sl[2][2] = {{0x3C003C00u ^ static_cast<uint32_t>(k_blocks), 0x3C003C00u},
                       {0x3C003C00u, 0x3C003C00u}};
  uint32_t frag[2][1][2][4];
  const long long t0 = clock64();
  for (int kb = 0; kb < k_blocks; ++kb) {
    const uint64_t desc = tok_desc + static_cast<uint64_t>(kb & 1) * (kTokStage >> 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint4 w = sm90::LdShared128(raw + (rbase + 8 * h) * 64 + c * 16);
      a[h][0] = w.x;
      a[h][1] = w.y;
      a[h][2] = w.z;
      a[h][3] = w.w;
    }
#pragma unroll
    for (int part = 0; part < 4; ++part) {
      Build2<kDecode>(frag[part & 1], a, sl, 2 * part);
      sm90::IssueSteps<N, 2>(acc, frag[part & 1], desc, 2 * part);
      sm90::WgmmaWait<1>();
    }
    sm90::WgmmaWait<0>();
    sm90::FenceAcc<N>(acc);
  }
  micro::KeepLiveAndReport(acc, sink + blockIdx.x * 512 + tid, cycles, t0, clock64());
}

// Two 64-row strips per consumer warpgroup (rows rbase and rbase + 128 of a 256-row raw tile), the
// byte decode with the scale multiply: per k-step one fragment and one wgmma per strip into
// acc[64 j..] (N <= 128), so each warpgroup keeps twice the tensor work per commit group in flight.
template <int N>
__global__ void __launch_bounds__(256, 1)
    DecodeStrips2(int k_blocks, float* sink, long long* cycles) {
  extern __shared__ uint8_t smem_raw[];
  const Setup st = FillStages(smem_raw);
  const uint32_t raw = st.raw;
  const uint64_t tok_desc = st.tok_desc;
  const int rbase = st.rbase, c = st.c;
  const int tid = static_cast<int>(threadIdx.x);
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;
  uint32_t a[2][2][4];
  uint32_t sl[2][2] = {{0x3C003C00u ^ static_cast<uint32_t>(k_blocks), 0x3C003C00u},
                       {0x3C003C00u, 0x3C003C00u}};
  uint32_t frag[2][2][1][2][4];  // [buffer][strip][...]
  const long long t0 = clock64();
  for (int kb = 0; kb < k_blocks; ++kb) {
    const uint64_t desc = tok_desc + static_cast<uint64_t>(kb & 1) * (kTokStage >> 4);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint4 w = sm90::LdShared128(raw + (rbase + 128 * j + 8 * h) * 64 + c * 16);
        a[j][h][0] = w.x;
        a[j][h][1] = w.y;
        a[j][h][2] = w.z;
        a[j][h][3] = w.w;
      }
    }
#pragma unroll
    for (int part = 0; part < 4; ++part) {
#pragma unroll
      for (int j = 0; j < 2; ++j) Build2<kByte>(frag[part & 1][j], a[j], sl, 2 * part);
      sm90::FenceAcc<N>(acc);
#pragma unroll
      for (int i = 64; i < 64 + N / 2; ++i) sm90::FenceRegister(acc[i]);
      sm90::WgmmaFence();
#pragma unroll
      for (int ls = 0; ls < 2; ++ls) {
        const int st = 2 * part + ls;
        const int offset = (st / 4) * sm90::TileShape::kTokAtomBytes + (st % 4) * 32;
        const uint64_t d = desc + static_cast<uint64_t>(offset >> 4);
#pragma unroll
        for (int j = 0; j < 2; ++j) sm90::WgmmaRS<N>(acc + 64 * j, frag[part & 1][j][0][ls], d);
      }
      sm90::WgmmaCommit();
      sm90::WgmmaWait<1>();
    }
    sm90::WgmmaWait<0>();
    sm90::FenceAcc<N>(acc);
#pragma unroll
    for (int i = 64; i < 64 + N / 2; ++i) sm90::FenceRegister(acc[i]);
  }
  micro::KeepLiveAndReport(acc, sink + blockIdx.x * 512 + tid, cycles, t0, clock64());
}

template <int N>
bool RunStrips2(int sms, int k_blocks, float* sink, long long* cycles_dev) {
  cudaFuncAttributes attr;
  MICRO_CHECK(cudaFuncGetAttributes(&attr, DecodeStrips2<N>));
  float best_ms = 0.f;
  long long cycles = 0;
  if (!micro::BestOfLaunches(DecodeStrips2<N>, sms, 256, kSmemBytes, 5, cycles_dev, &best_ms,
                             &cycles, k_blocks, sink, cycles_dev)) {
    return false;
  }
  const double flop_per_sm = 2 * 2 * 8.0 * k_blocks * 2.0 * 64 * N * 16;
  std::printf("N=%3d %-10s 2 WG x 2 strips %3d regs %8.3f ms %6.0f FLOP/clk/SM (%5.1f%% of 4096)\n",
              N, "byte", attr.numRegs, best_ms, flop_per_sm / cycles,
              100.0 * flop_per_sm / cycles / 4096);
  return true;
}

template <int N, int kDecode>
bool Run(int sms, int k_blocks, float* sink, long long* cycles_dev, int warpgroups) {
  cudaFuncAttributes attr;
  MICRO_CHECK(cudaFuncGetAttributes(&attr, Decode<N, kDecode>));
  float best_ms = 0.f;
  long long cycles = 0;
  if (!micro::BestOfLaunches(Decode<N, kDecode>, sms, 128 * warpgroups, kSmemBytes, 5, cycles_dev,
                             &best_ms, &cycles, k_blocks, sink, cycles_dev)) {
    return false;
  }
  const double flop_per_sm = warpgroups * 8.0 * k_blocks * 2.0 * 64 * N * 16;
  std::printf("N=%3d %-10s %d WG %3d regs %8.3f ms %6.0f FLOP/clk/SM (%5.1f%% of 4096)\n", N,
              kDecNames[kDecode], warpgroups, attr.numRegs, best_ms, flop_per_sm / cycles,
              100.0 * flop_per_sm / cycles / 4096);
  return true;
}

template <int N, int kDecode>
bool RunWarpgroups(int sms, int k_blocks, float* sink, long long* cycles) {
  for (int wg : {2, 3, 4}) {
    if (128 * wg > kDecodeThreads<N>) break;
    if (!Run<N, kDecode>(sms, k_blocks, sink, cycles, wg)) return false;
  }
  return true;
}

template <int N>
bool RunAll(int sms, int k_blocks, float* sink, long long* cycles) {
  return RunWarpgroups<N, kCur>(sms, k_blocks, sink, cycles) &&
         RunWarpgroups<N, kCurNoMul>(sms, k_blocks, sink, cycles) &&
         RunWarpgroups<N, kByte>(sms, k_blocks, sink, cycles) &&
         RunWarpgroups<N, kByteNoMul>(sms, k_blocks, sink, cycles);
}

template <int N>
bool RunStripsCompare(int sms, int k_blocks, float* sink, long long* cycles) {
  return RunWarpgroups<N, kByte>(sms, k_blocks, sink, cycles) &&
         RunStrips2<N>(sms, k_blocks, sink, cycles);
}

// false on any failure (no device included): main exits 1. `strips`: the byte decode with 2, 3 or
// 4 one-strip warpgroups against 2 two-strip warpgroups, widths 48-128, then 2 or 3 one-strip
// warpgroups at widths 160-256.
bool Main(bool strips) {
  cudaDeviceProp prop;
  if (!micro::DeviceInfo(&prop)) return false;
  float* sink = nullptr;
  long long* cycles = nullptr;
  MICRO_CHECK(cudaMalloc(&sink, sizeof(float) * 512 * prop.multiProcessorCount));
  MICRO_CHECK(cudaMalloc(&cycles, sizeof(long long)));
  const int k_blocks = 2048;
  const int sms = prop.multiProcessorCount;
  const bool ok = strips ? RunStripsCompare<48>(sms, k_blocks, sink, cycles) &&
                               RunStripsCompare<64>(sms, k_blocks, sink, cycles) &&
                               RunStripsCompare<80>(sms, k_blocks, sink, cycles) &&
                               RunStripsCompare<96>(sms, k_blocks, sink, cycles) &&
                               RunStripsCompare<128>(sms, k_blocks, sink, cycles) &&
                               RunWarpgroups<160, kByte>(sms, k_blocks, sink, cycles) &&
                               RunWarpgroups<192, kByte>(sms, k_blocks, sink, cycles) &&
                               RunWarpgroups<208, kByte>(sms, k_blocks, sink, cycles) &&
                               RunWarpgroups<256, kByte>(sms, k_blocks, sink, cycles)
                         : RunAll<64>(sms, k_blocks, sink, cycles) &&
                               RunAll<96>(sms, k_blocks, sink, cycles) &&
                               RunAll<128>(sms, k_blocks, sink, cycles);
  MICRO_CHECK(cudaFree(sink));
  MICRO_CHECK(cudaFree(cycles));
  return ok;
}

int main(int argc, char** argv) {
  const bool strips = argc > 1 && std::string(argv[1]) == "strips";
  return Main(strips) ? 0 : 1;
}
