// What HBM delivers to the GEMM's weight producer, and whether a wider box would deliver more: every
// CTA streams its own 128-row weight tiles k-block by k-block from packed e2m1 rows of K/2 bytes
// (the GEMM's row stride) in a buffer far larger than the L2, through a ring of raw stages on
// mbarriers (thread 0 produces, as the kernel's weight producer), with the 1 KB weight-scale block
// of each k-block beside it. A consumer warp holds each k-block a fixed number of cycles (the k
// loop's cost at some width: ~960 at 64 tokens, ~1280 at 128 at 1.98 GHz) and releases it.
// Forms (the same ring bytes):
//   kb1  one box {64 bytes, 128 rows} + 1 KB of scales a stage, 6 stages (the kernel today);
//   kb2  one box {128 bytes, 128 rows} + 2 KB of scales a stage (two k-blocks), 3 stages;
//   kb2t one 3D box {64 bytes, 128 rows, 2 k-blocks} (shared memory [k-block][row][64 bytes], the
//        consumers' addressing of today) + 2 KB of scales, 3 stages;
//   kb2p two boxes {64 bytes, 128 rows} (kb1's map) + 2 KB of scales a stage, 3 stages: kb2's
//        barriers a k-block with kb1's row pieces (session 36: is kb2's gain the box or the
//        stage?);
//   and each with twice the stages.
// Reported per form, K and hold: TB/s landed (all CTAs), us per k-block per CTA, and the share of
// the consumer's time spent waiting for a full stage (the kernel's `w_raw` counter, run 227).
// The question (session 34's next step 1): do the GEMM's 64-byte row pieces, 128 rows 3.5 KB apart
// per k-block, cap what HBM delivers where 132 CTAs stream distinct weights (the steady and decode
// families, ~2.4 TB/s at width 64), and would 128-byte pieces lift it?
// Runs 233-234: no. Unheld, every form lands 3.7-3.9 TB/s; held, stages of two k-blocks wait less
// a k-block whatever their boxes (kb2 = kb2p = kb2t): one handshake per two k-blocks, not the
// row pieces. (The kernel with such fills, _wpair, was slower: run 234.)
//
// Example (on the device; no GPU needed to build):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -o weight_hbm_reads \
//     benchmarks/micro/weight_hbm_reads.cu && ./weight_hbm_reads
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "benchmarks/micro/micro_timing.cuh"
#include "gemm/kernels/internal/ptx.cuh"

namespace {

using namespace encore::gemm::sm90;  // NOLINT: the PTX wrappers

constexpr int kRows = 128;             // weight rows a tile (TileShape::kBlockN)
constexpr int kKbBytes = kRows * 64;   // packed weights of one 128-k block
constexpr int kSfBytes = 1024;         // its scale block
constexpr int kThreads = 64;           // warp 0: producer (lane 0), warp 1: consumer

__device__ __forceinline__ void TmaLoad3D(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                          int c0, int c1, int c2, uint64_t cache_hint) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%3, %4, %5}], [%2], %6;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "l"(cache_hint)
      : "memory");
}

// How a stage's weights are loaded: one 2D box kKb k-blocks wide (kb1, kb2), one 3D box (kb2t:
// `map` is the 3D {64 bytes, rows, k-blocks} map) or kKb 2D boxes of one k-block (kb2p).
enum class Load { kBox, kRank3, kPieces };

// CTA b's tiles are b, b + grid, ... (neighbouring CTAs on neighbouring row blocks, as a group's
// weight tiles spread over the CTAs of a plan), each walked over all its k-blocks.
template <int kKb, int kStages, Load kLoad>
__global__ void __launch_bounds__(kThreads, 1)
    StreamWeights(const __grid_constant__ CUtensorMap map, const uint8_t* sf, int kbt, int tiles,
                  int hold, unsigned long long* wait_total) {
  extern __shared__ __align__(1024) uint8_t smem[];
  constexpr int kStage = kKb * (kKbBytes + kSfBytes);
  const uint32_t base = SmemAddr(smem);
  const uint32_t full = base + kStages * kStage;  // inputs_arrived
  const uint32_t empty = full + 8 * kStages;     // inputs_finished
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      MbarInit(full + 8 * s, 1);
      MbarInit(empty + 8 * s, 1);
    }
    FenceBarrierInit();
  }
  __syncthreads();
  const int b = static_cast<int>(blockIdx.x), grid = static_cast<int>(gridDim.x);
  const int stages_a_tile = kbt / kKb;
  if (threadIdx.x == 0) {
    const uint64_t policy = PolicyEvictFirst();
    uint32_t it = 0;
    for (int t = 0; t < tiles; ++t) {
      const int tile = t * grid + b;
      for (int j = 0; j < stages_a_tile; ++j, ++it) {
        const int s = static_cast<int>(it % kStages);
        MbarWait(empty + 8 * s, ((it / kStages) & 1) ^ 1);
        MbarArriveExpectTx(full + 8 * s, kStage);
        const uint32_t dst = base + s * kStage;
        if (kLoad == Load::kRank3) {
          TmaLoad3D(dst, &map, full + 8 * s, 0, tile * kRows, j * kKb, policy);
        } else if (kLoad == Load::kPieces) {
          for (int i = 0; i < kKb; ++i) {
            TmaLoad2D(dst + i * kKbBytes, &map, full + 8 * s, (j * kKb + i) * 64, tile * kRows,
                      policy);
          }
        } else {
          TmaLoad2D(dst, &map, full + 8 * s, j * kKb * 64, tile * kRows, policy);
        }
        BulkLoad(dst + kKb * kKbBytes,
                 sf + (static_cast<size_t>(tile) * kbt + j * kKb) * kSfBytes, kKb * kSfBytes,
                 full + 8 * s, policy);
      }
    }
  } else if (threadIdx.x >= 32) {
    unsigned long long waited = 0;
    const uint32_t n = static_cast<uint32_t>(tiles * stages_a_tile);
    for (uint32_t it = 0; it < n; ++it) {
      const int s = static_cast<int>(it % kStages);
      const long long t0 = clock64();
      MbarWait(full + 8 * s, (it / kStages) & 1);
      const long long t1 = clock64();
      waited += static_cast<unsigned long long>(t1 - t0);
      while (clock64() - t1 < static_cast<long long>(kKb) * hold) {
      }
      __syncwarp();
      if (threadIdx.x == 32) MbarArrive(empty + 8 * s);
    }
    if (threadIdx.x == 32) atomicAdd(wait_total, waited);
  }
}

template <int kKb, int kStages, Load kLoad = Load::kBox>
bool RunForm(const CUtensorMap& map, const uint8_t* sf, int kbt, int tiles, int hold, int sms,
             unsigned long long* wait_dev, int k) {
  constexpr int kStage = kKb * (kKbBytes + kSfBytes);
  const int smem = kStages * kStage + 16 * kStages;
  auto kernel = StreamWeights<kKb, kStages, kLoad>;
  MICRO_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaEvent_t e0, e1;
  MICRO_CHECK(cudaEventCreate(&e0));
  MICRO_CHECK(cudaEventCreate(&e1));
  std::vector<double> ms_all, wait_all;
  for (int rep = 0; rep < 6; ++rep) {
    MICRO_CHECK(cudaMemset(wait_dev, 0, sizeof(*wait_dev)));
    MICRO_CHECK(cudaEventRecord(e0));
    kernel<<<sms, kThreads, smem>>>(map, sf, kbt, tiles, hold, wait_dev);
    MICRO_CHECK(cudaGetLastError());
    MICRO_CHECK(cudaEventRecord(e1));
    MICRO_CHECK(cudaEventSynchronize(e1));
    float ms = 0.f;
    MICRO_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    unsigned long long waited = 0;
    MICRO_CHECK(cudaMemcpy(&waited, wait_dev, sizeof(waited), cudaMemcpyDeviceToHost));
    if (rep == 0) continue;  // the first launch of a form: its code and maps cold
    ms_all.push_back(ms);
    wait_all.push_back(static_cast<double>(waited));
  }
  MICRO_CHECK(cudaEventDestroy(e0));
  MICRO_CHECK(cudaEventDestroy(e1));
  const double ms = micro::Median(ms_all);
  const double waited = micro::Median(wait_all);
  int clock_khz = 0;
  MICRO_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const double kblocks = static_cast<double>(kbt) * tiles;
  const double bytes = kblocks * sms * (kKbBytes + kSfBytes);
  // The consumer's wait share: its summed wait cycles over all CTAs' elapsed cycles (at the
  // attribute's clock: an estimate; the ratio between forms is what matters).
  const double elapsed_cycles = ms * 1e-3 * clock_khz * 1e3 * sms;
  std::printf(
      "K %5d  kb%d%s stages %2d  hold %4d: %7.3f ms  landed %5.2f TB/s  %6.3f us/k-block  "
      "consumer waits %5.1f%%\n",
      k, kKb, kLoad == Load::kRank3 ? "t" : (kLoad == Load::kPieces ? "p" : " "), kStages, hold,
      ms, bytes / (ms * 1e-3) / 1e12, ms * 1e3 / kblocks, 100.0 * waited / elapsed_cycles);
  return true;
}

bool Main() {
  cudaDeviceProp prop;
  if (!micro::DeviceInfo(&prop)) return false;
  const int sms = prop.multiProcessorCount;
  std::printf("L2 %d MB; hold = consumer cycles per k-block\n", prop.l2CacheSize >> 20);
  micro::TensorMapEncodeFn encode = nullptr;
  if (!micro::TensorMapEncoder(&encode)) return false;
  unsigned long long* wait_dev = nullptr;
  MICRO_CHECK(cudaMalloc(&wait_dev, sizeof(*wait_dev)));
  bool map3_ok = true;
  // ~240 MB of weights a K (4x the L2): every launch streams them from HBM.
  for (const int k : {7168, 2048}) {
    const int kbt = k / 128;
    const int tiles = 224 / kbt;  // 224 k-blocks a CTA
    const size_t rows = static_cast<size_t>(sms) * tiles * kRows;
    const size_t bytes = rows * (k / 2);
    const size_t sf_bytes = static_cast<size_t>(sms) * tiles * kbt * kSfBytes;
    uint8_t* w = nullptr;
    uint8_t* sf = nullptr;
    MICRO_CHECK(cudaMalloc(&w, bytes));
    MICRO_CHECK(cudaMalloc(&sf, sf_bytes));
    MICRO_CHECK(cudaMemset(w, 0x5a, bytes));
    MICRO_CHECK(cudaMemset(sf, 0x38, sf_bytes));
    CUtensorMap map1 = {}, map2 = {}, map3 = {};
    {
      const cuuint64_t dims[3] = {64, rows, static_cast<cuuint64_t>(kbt)};
      const cuuint64_t strides[2] = {static_cast<cuuint64_t>(k / 2), 64};
      const cuuint32_t box[3] = {64, kRows, 2};
      const cuuint32_t elem[3] = {1, 1, 1};
      const CUresult r =
          encode(&map3, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, w, dims, strides, box, elem,
                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      if (r != CUDA_SUCCESS) {
        std::printf("3D tensor map encode failed (%d): kb2t skipped\n", static_cast<int>(r));
        map3_ok = false;
      }
    }
    for (int kb = 1; kb <= 2; ++kb) {
      const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k / 2), rows};
      const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k / 2)};
      const cuuint32_t box[2] = {static_cast<cuuint32_t>(64 * kb), kRows};
      const cuuint32_t elem[2] = {1, 1};
      if (encode(kb == 1 ? &map1 : &map2, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, w, dims, strides, box,
                 elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
        std::printf("tensor map encode failed\n");
        return false;
      }
    }
    for (const int hold : {0, 960, 1280}) {
      if (!RunForm<1, 6>(map1, sf, kbt, tiles, hold, sms, wait_dev, k)) return false;
      if (!RunForm<2, 3>(map2, sf, kbt, tiles, hold, sms, wait_dev, k)) return false;
      if (!RunForm<1, 12>(map1, sf, kbt, tiles, hold, sms, wait_dev, k)) return false;
      if (!RunForm<2, 6>(map2, sf, kbt, tiles, hold, sms, wait_dev, k)) return false;
      if (!RunForm<2, 3, Load::kPieces>(map1, sf, kbt, tiles, hold, sms, wait_dev, k)) {
        return false;
      }
      if (map3_ok && !RunForm<2, 3, Load::kRank3>(map3, sf, kbt, tiles, hold, sms, wait_dev, k)) {
        return false;
      }
      if (map3_ok && !RunForm<2, 6, Load::kRank3>(map3, sf, kbt, tiles, hold, sms, wait_dev, k)) {
        return false;
      }
    }
    MICRO_CHECK(cudaFree(w));
    MICRO_CHECK(cudaFree(sf));
  }
  MICRO_CHECK(cudaFree(wait_dev));
  return true;
}

}  // namespace

int main() { return Main() ? 0 : 1; }
