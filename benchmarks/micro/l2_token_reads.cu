// What the L2 delivers to the SMs when every CTA streams tiles the way the GEMM's token producer
// does (cp.async.bulk into a ring of shared-memory stages on mbarriers, nothing computed), and
// whether the pattern of the GEMM's token reads costs bandwidth: in the GEMM every CTA working on
// one group reads the same fp16 token rows at about the same time (run 78: the 64-token loop
// waits on its token stage 17.7% of the time). Modes (the address a CTA's stage i reads):
//   distinct  every CTA its own stages (no two CTAs read the same bytes);
//   same      every CTA the same stage i at the same time (steady/w64: 132 CTAs, one token tile);
//   same32    CTAs in groups of 32 read the same stages (GPU MODE shape 0: ~32 CTAs per group);
//   stagger   the same stages as `same`, but CTA b starts 13 b stages further on;
// and the same-data modes again with clusters of 2 or 4 CTAs, each CTA loading 1/c of a stage
// with .multicast::cluster into every CTA of its cluster (one L2 read per cluster; the consumer
// releases a stage to every producer of its cluster, one lane per CTA). Reported: TB/s landed in
// shared memory (all CTAs) and TB/s read from L2, best of 5 launches.
//
// Example (on the device; no GPU needed to build):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -o l2_token_reads \
//     benchmarks/micro/l2_token_reads.cu && ./l2_token_reads
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "benchmarks/micro/micro_timing.cuh"
#include "gemm/kernels/internal/ptx.cuh"

namespace {

using namespace encore::gemm::sm90;  // NOLINT: the PTX wrappers

// A stage is 4 boxes of {64 halves, kR rows}: kR = 32 is a 64-token stage of the GEMM (64 rows x
// 128 k x fp16, 16 KB), kR = 64 a 128-token stage (32 KB) in the GEMM's box size.
__host__ __device__ constexpr int StageBytes(int r) { return 4 * r * 128; }
constexpr int kCopyBytes = 2048;

enum Mode : int { kDistinct = 0, kSame = 1, kSame32 = 2, kStagger = 3 };

__device__ __forceinline__ uint32_t ClusterRank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void ClusterSync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}
// Arrive on the mbarrier at the same shared offset in CTA `rank` of this cluster (default
// semantics, release at CTA scope, as CUTLASS's ClusterBarrier::arrive: with .release.cluster each
// arrival blocked the consumer ~0.5 us and capped a cluster of 2 at ~30 GB/s per SM).
__device__ __forceinline__ void MbarArriveCluster(uint32_t bar, uint32_t rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}" ::"r"(bar),
      "r"(rank)
      : "memory");
}
__device__ __forceinline__ void BulkLoadMulticast(uint32_t dst, const void* src, uint32_t bytes,
                                                  uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1], %2, [%3], %4;" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar), "h"(mask)
      : "memory");
}

__device__ __forceinline__ void TmaLoad2DMulticast(uint32_t dst, const CUtensorMap* map,
                                                   uint32_t bar, int c0, int c1, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "h"(mask)
      : "memory");
}

// The tensor-map variant reads a 2D fp16 buffer of kCols halves per row like the GEMM's token
// producer: a stage is kBoxes boxes of {64 halves, kR rows} (128-byte swizzle), stage st
// at column (st % (kCols / 128)) * 128 (two boxes of 64 k side by side per 32 rows) and rows from
// (st / (kCols / 128)) * 64.
constexpr int kCols = 4096;
constexpr int kBoxes = 4;

// Thread 0 produces, thread 32 consumes; kCluster CTAs share each stage (1: no cluster).
// map == nullptr: 1D bulk copies of kCopyBytes; otherwise the 2D boxes above.
// kProducers = 2 (no cluster): threads 0 and 64 (warps 0 and 2) each issue half of a stage's boxes,
// as the GEMM's weight and token producers issue from two warps.
template <int kCluster, int kStages, int kR, int kProducers>
__global__ void __launch_bounds__(96, 1)
    StreamStages(const uint8_t* buf, size_t buf_stages, int mode, int iters,
                 const __grid_constant__ CUtensorMap map, int use_map) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = SmemAddr(smem);
  constexpr int kStage = StageBytes(kR);
  constexpr int kCopies = kStage / kCopyBytes;
  const uint32_t full = base + kStages * kStage;
  const uint32_t empty = full + 8 * kStages;
  const uint32_t rank = kCluster > 1 ? ClusterRank() : 0;
  const int unit = static_cast<int>(blockIdx.x) / kCluster;  // CTAs of a cluster read alike
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      MbarInit(full + 8 * s, kProducers);
      MbarInit(empty + 8 * s, kCluster);
    }
    FenceBarrierInit();
  }
  if (kCluster > 1) {
    ClusterSync();
  } else {
    __syncthreads();
  }
  static_assert(kProducers == 1 || kCluster == 1, "two producers without a cluster only");
  if (threadIdx.x == 0 || (kProducers == 2 && threadIdx.x == 64)) {
    const int prod = threadIdx.x == 0 ? 0 : 1;
    for (int i = 0; i < iters; ++i) {
      const int s = i % kStages;
      MbarWait(empty + 8 * s, ((i / kStages) & 1) ^ 1);
      MbarArriveExpectTx(full + 8 * s, kStage / kProducers);
      size_t stage;
      if (mode == kDistinct) {
        stage = static_cast<size_t>(unit) * iters + i;
      } else if (mode == kSame) {
        stage = i;
      } else if (mode == kSame32) {
        stage = static_cast<size_t>(unit * kCluster / 32) * iters + i;
      } else {
        stage = static_cast<size_t>(i) + 13 * unit;
      }
      const uint8_t* src = buf + (stage % buf_stages) * kStage;
      const uint32_t dst = base + s * kStage;
      if (use_map) {
        const size_t st = stage % buf_stages;
        const int col = static_cast<int>(st % (kCols / 128)) * 128;
        const int row = static_cast<int>(st / (kCols / 128)) * 2 * kR;
        for (int j = static_cast<int>(rank) + prod; j < kBoxes; j += kCluster * kProducers) {
          const int c0 = col + 64 * (j & 1), c1 = row + kR * (j >> 1);
          const uint32_t d = dst + j * (64 * 2 * kR);
          if (kCluster > 1) {
            TmaLoad2DMulticast(d, &map, full + 8 * s, c0, c1,
                               static_cast<uint16_t>((1u << kCluster) - 1));
          } else {
            TmaLoad2D(d, &map, full + 8 * s, c0, c1, PolicyEvictLast());
          }
        }
        continue;
      }
      for (int c = static_cast<int>(rank) + prod; c < kCopies; c += kCluster * kProducers) {
        if (kCluster > 1) {
          BulkLoadMulticast(dst + c * kCopyBytes, src + c * kCopyBytes, kCopyBytes, full + 8 * s,
                            static_cast<uint16_t>((1u << kCluster) - 1));
        } else {
          BulkLoad(dst + c * kCopyBytes, src + c * kCopyBytes, kCopyBytes, full + 8 * s,
                   PolicyEvictLast());
        }
      }
    }
  } else if (threadIdx.x >= 32 && threadIdx.x < 64) {
    // The consumer warp: every lane waits; lane r < kCluster releases the stage to CTA r's
    // producer (the arrivals of one stage in parallel, as CUTLASS's multicast consumers do).
    const uint32_t lane = threadIdx.x - 32;
    for (int i = 0; i < iters; ++i) {
      const int s = i % kStages;
      MbarWait(full + 8 * s, (i / kStages) & 1);
      if (kCluster > 1) {
        if (lane < kCluster) MbarArriveCluster(empty + 8 * s, lane);
      } else if (lane == 0) {
        MbarArrive(empty + 8 * s);
      }
      __syncwarp();
    }
  }
  __syncwarp();
  if (kCluster > 1) ClusterSync();  // no CTA leaves while a peer may still signal it
}

// The fastest of launches 1..5 of `launch` (launch 0 warms the L2), in ms between two events.
template <typename Launch>
bool BestOfFive(Launch launch, float* best) {
  cudaEvent_t e0, e1;
  MICRO_CHECK(cudaEventCreate(&e0));
  MICRO_CHECK(cudaEventCreate(&e1));
  *best = 1e30f;
  for (int rep = 0; rep < 6; ++rep) {
    MICRO_CHECK(cudaEventRecord(e0));
    MICRO_CHECK(launch());
    MICRO_CHECK(cudaEventRecord(e1));
    MICRO_CHECK(cudaEventSynchronize(e1));
    float ms = 0.f;
    MICRO_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (rep > 0 && ms < *best) *best = ms;
  }
  MICRO_CHECK(cudaEventDestroy(e0));
  MICRO_CHECK(cudaEventDestroy(e1));
  return true;
}

template <int kCluster, int kStages, int kR = 32, int kProducers = 1>
bool Run(const uint8_t* buf, size_t buf_bytes, int mode, int sms, const char* name,
         const CUtensorMap* map, bool map_used) {
  const int grid = sms / kCluster * kCluster;
  const int iters = 4000;
  const int smem = kStages * StageBytes(kR) + 16 * kStages;
  auto kernel = StreamStages<kCluster, kStages, kR, kProducers>;
  MICRO_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(96);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kCluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  const size_t buf_stages = buf_bytes / StageBytes(kR);
  float best = 0.f;
  if (!BestOfFive(
          [&] {
            return cudaLaunchKernelEx(&cfg, kernel, buf, buf_stages, mode, iters, *map,
                                      map_used ? 1 : 0);
          },
          &best)) {
    return false;
  }
  const double landed = static_cast<double>(grid) * iters * StageBytes(kR);
  std::printf(
      "%-6s box rows %d producers %d %-8s cluster %d stages %d buffer %5.1f MB: %8.3f ms  landed "
      "%6.2f TB/s  from L2 %6.2f TB/s  per SM %5.1f GB/s\n",
      map_used ? "tensor" : "bulk", kR, kProducers, name, kCluster, kStages, buf_bytes / 1048576.0,
      best, landed / best / 1e9, landed / kCluster / best / 1e9, landed / grid / best / 1e6);
  return true;
}

// The GEMM's TMA operations per 128-k block without its math (TokenSource::kPrepass): the weight
// producer (warp 0) loads the packed weight box {64 bytes, 128 rows} and the 1 KB weight-scale
// block into a raw stage, the token producer (warp 2) the two fp16 token boxes {64 halves, kRows
// rows} into a token stage; one consumer warp waits for both and releases them (kRawStages 6 and 2
// token stages, as the kernel). Reported: us per k-block per SM, the floor the TMA traffic alone
// puts under the kernel's k loop (steady: ~0.49 us at width 64, ~0.65 at 128).
template <int kRows>
__global__ void __launch_bounds__(96, 1)
    GemmMix(const uint8_t* buf, size_t buf_bytes, int iters,
            const __grid_constant__ CUtensorMap tok, const __grid_constant__ CUtensorMap wgt) {
  constexpr int kRaw = 6, kTok = 2, kRawBytes = 8192 + 1024, kTokBytes = 2 * kRows * 128;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = SmemAddr(smem);
  const uint32_t tok_base = base + kRaw * kRawBytes;  // 1024-aligned: kRawBytes * 6 = 55296
  const uint32_t bars = tok_base + kTok * kTokBytes;
  auto raw_full = [&](int s) { return bars + 8 * s; };
  auto raw_empty = [&](int s) { return bars + 8 * (kRaw + s); };
  auto tok_full = [&](int s) { return bars + 8 * (2 * kRaw + s); };
  auto tok_empty = [&](int s) { return bars + 8 * (2 * kRaw + kTok + s); };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kRaw; ++s) MbarInit(raw_full(s), 1), MbarInit(raw_empty(s), 1);
    for (int s = 0; s < kTok; ++s) MbarInit(tok_full(s), 1), MbarInit(tok_empty(s), 1);
    FenceBarrierInit();
  }
  __syncthreads();
  const int b = static_cast<int>(blockIdx.x);
  const size_t sf_blocks = buf_bytes / 1024;
  if (threadIdx.x == 0) {  // weights: each CTA its own rows, k advancing
    for (int i = 0; i < iters; ++i) {
      const int s = i % kRaw;
      MbarWait(raw_empty(s), ((i / kRaw) & 1) ^ 1);
      MbarArriveExpectTx(raw_full(s), kRawBytes);
      TmaLoad2D(base + s * kRawBytes, &wgt, raw_full(s), (i % 128) * 64, (b * 128) % 1920,
                PolicyEvictFirst());
      BulkLoad(base + s * kRawBytes + 8192,
               buf + ((static_cast<size_t>(b) * iters + i) % sf_blocks) * 1024, 1024, raw_full(s),
               PolicyEvictFirst());
    }
  } else if (threadIdx.x == 64) {  // tokens: every CTA the same rows (one group), k advancing
    for (int i = 0; i < iters; ++i) {
      const int s = i % kTok;
      MbarWait(tok_empty(s), ((i / kTok) & 1) ^ 1);
      MbarArriveExpectTx(tok_full(s), kTokBytes);
      const int col = (i % (kCols / 128)) * 128;
      TmaLoad2D(tok_base + s * kTokBytes, &tok, tok_full(s), col, 0, PolicyEvictLast());
      TmaLoad2D(tok_base + s * kTokBytes + kRows * 128, &tok, tok_full(s), col + 64, 0,
                PolicyEvictLast());
    }
  } else if (threadIdx.x >= 32 && threadIdx.x < 64) {
    for (int i = 0; i < iters; ++i) {
      MbarWait(raw_full(i % kRaw), (i / kRaw) & 1);
      MbarWait(tok_full(i % kTok), (i / kTok) & 1);
      if (threadIdx.x == 32) {
        MbarArrive(raw_empty(i % kRaw));
        MbarArrive(tok_empty(i % kTok));
      }
      __syncwarp();
    }
  }
}

template <int kRows>
bool RunGemmMix(const uint8_t* buf, size_t bytes, int sms, const CUtensorMap* tok,
                const CUtensorMap* wgt) {
  const int iters = 4000;
  const int smem = 6 * (8192 + 1024) + 2 * 2 * kRows * 128 + 8 * 16;
  auto kernel = GemmMix<kRows>;
  MICRO_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  float best = 0.f;
  if (!BestOfFive(
          [&] {
            kernel<<<sms, 96, smem>>>(buf, bytes, iters, *tok, *wgt);
            return cudaGetLastError();
          },
          &best)) {
    return false;
  }
  const double per_kb_bytes = 8192 + 1024 + 2.0 * kRows * 128;
  std::printf("gemm mix, token tile %3d rows: %.3f us per k-block per SM (%.1f GB/s per SM)\n",
              kRows, best * 1e3 / iters, per_kb_bytes * iters / (best * 1e-3) / 1e9);
  return true;
}

bool Main() {
  cudaDeviceProp prop;
  if (!micro::DeviceInfo(&prop)) return false;
  const int sms = prop.multiProcessorCount;
  std::printf("L2 %d MB\n", prop.l2CacheSize >> 20);
  micro::TensorMapEncodeFn encode = nullptr;
  if (!micro::TensorMapEncoder(&encode)) return false;
  const char* names[] = {"distinct", "same", "same32", "stagger"};
  const size_t bytes = size_t{16} << 20;
  uint8_t* buf = nullptr;
  MICRO_CHECK(cudaMalloc(&buf, bytes));
  MICRO_CHECK(cudaMemset(buf, 0x3c, bytes));
  CUtensorMap map32 = {}, map64 = {};
  for (int r : {32, 64}) {
    const cuuint64_t dims[2] = {kCols, bytes / (2 * kCols)};
    const cuuint64_t strides[1] = {2 * kCols};
    const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(r)};
    const cuuint32_t elem[2] = {1, 1};
    if (encode(r == 32 ? &map32 : &map64, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, buf, dims, strides,
               box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
      std::printf("tensor map encode failed\n");
      return false;
    }
  }
  // 1D bulk copies, 16 KB stages.
  for (int mode = 0; mode < 2; ++mode) {
    if (!Run<1, 4>(buf, bytes, mode, sms, names[mode], &map32, false)) return false;
  }
  if (!Run<2, 4>(buf, bytes, kSame, sms, names[kSame], &map32, false)) return false;
  // 2D boxes of 32 rows (16 KB stages, the 64-token stage).
  for (int mode = 0; mode < 4; ++mode) {
    if (!Run<1, 4>(buf, bytes, mode, sms, names[mode], &map32, true)) return false;
  }
  for (int mode = 1; mode < 3; ++mode) {
    if (!Run<2, 4>(buf, bytes, mode, sms, names[mode], &map32, true)) return false;
    if (!Run<4, 8>(buf, bytes, mode, sms, names[mode], &map32, true)) return false;
  }
  // The same boxes from two producer threads (two warps).
  for (int mode = 0; mode < 2; ++mode) {
    if (!Run<1, 4, 32, 2>(buf, bytes, mode, sms, names[mode], &map32, true)) return false;
    if (!Run<1, 8, 32, 2>(buf, bytes, mode, sms, names[mode], &map32, true)) return false;
  }
  // 2D boxes of 64 rows (32 KB stages, the 128-token stage).
  for (int mode = 0; mode < 3; ++mode) {
    if (!Run<1, 4, 64>(buf, bytes, mode, sms, names[mode], &map64, true)) return false;
  }
  if (!Run<1, 4, 64, 2>(buf, bytes, kDistinct, sms, names[kDistinct], &map64, true)) return false;
  for (int mode = 1; mode < 3; ++mode) {
    if (!Run<2, 4, 64>(buf, bytes, mode, sms, names[mode], &map64, true)) return false;
    if (!Run<4, 4, 64>(buf, bytes, mode, sms, names[mode], &map64, true)) return false;
  }
  // The GEMM's per-k-block TMA mix (weights uint8 {64 bytes, 128 rows}, no swizzle).
  CUtensorMap wgt = {}, tok128 = {};
  {
    const cuuint64_t dims[2] = {2 * kCols, bytes / (2 * kCols)};
    const cuuint64_t strides[1] = {2 * kCols};
    const cuuint32_t box[2] = {64, 128};
    const cuuint32_t elem[2] = {1, 1};
    const cuuint64_t tdims[2] = {kCols, bytes / (2 * kCols)};
    const cuuint32_t tbox[2] = {64, 128};
    if (encode(&wgt, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, buf, dims, strides, box, elem,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS ||
        encode(&tok128, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, buf, tdims, strides, tbox, elem,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
      std::printf("tensor map encode failed\n");
      return false;
    }
  }
  if (!RunGemmMix<64>(buf, bytes, sms, &map64, &wgt)) return false;
  if (!RunGemmMix<128>(buf, bytes, sms, &tok128, &wgt)) return false;
  MICRO_CHECK(cudaFree(buf));
  return true;
}

}  // namespace

int main() { return Main() ? 0 : 1; }
