// Shared harness of the nvcc-only micro-benchmarks (wgmma_rs_ceiling.cu, decode_ceiling.cu, ...): a
// checked CUDA call, the best of `reps` timed launches of a kernel that reports CTA 0's clock64
// span, the host clock and median the host-side micros (node_patch.cu, kernel_boundary.cu,
// graph_launch_batch.cu) time with, and cuTensorMapEncodeTiled through the runtime's driver entry
// point for the TMA micros (l2_token_reads.cu, weight_hbm_reads.cu).
//
// Example:
//   float ms = 0.f;
//   long long cycles = 0;
//   if (!micro::BestOfLaunches(kernel, sms, 256, smem, 5, cycles_dev, &ms, &cycles, k_blocks, sink,
//                              cycles_dev)) return false;
#pragma once

#include <cuda.h>  // the tensor-map types only (no libcuda link)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#define MICRO_CHECK(x)                                           \
  do {                                                           \
    cudaError_t e = (x);                                         \
    if (e != cudaSuccess) {                                      \
      std::printf("%s failed: %s\n", #x, cudaGetErrorString(e)); \
      return false;                                              \
    }                                                            \
  } while (0)

namespace micro {

// Host time in microseconds (steady clock).
inline double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The upper median (0 for no values).
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A kernel's end: keeps its accumulators live (a store that never happens for real data) and
// reports CTA 0's clock64 span.
__device__ __forceinline__ void KeepLiveAndReport(const float (&acc)[128], float* sink_slot,
                                                  long long* cycles, long long t0, long long t1) {
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < 128; ++i) sum += acc[i];
  if (sum == 1234.5f) *sink_slot = sum;
  if (blockIdx.x == 0 && threadIdx.x == 0) *cycles = t1 - t0;
}

// The device (0) both benchmarks run on, printed; false without one ("no CUDA device").
inline bool DeviceInfo(cudaDeviceProp* prop) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device\n");
    return false;
  }
  MICRO_CHECK(cudaGetDeviceProperties(prop, 0));
  std::printf("%s, %d SMs, cc %d.%d\n", prop->name, prop->multiProcessorCount, prop->major,
              prop->minor);
  return true;
}

// Launches kernel<<<grid, threads, smem_bytes>>>(args...) `reps` times (after allowing the
// dynamic shared memory), each between two events; *best_ms = the fastest, *cycles = the value
// the kernel left at cycles_dev in that launch.
template <typename... KArgs, typename... Args>
bool BestOfLaunches(void (*kernel)(KArgs...), int grid, int threads, int smem_bytes, int reps,
                    const long long* cycles_dev, float* best_ms, long long* cycles,
                    Args... args) {
  MICRO_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   smem_bytes));
  cudaEvent_t e0, e1;
  MICRO_CHECK(cudaEventCreate(&e0));
  MICRO_CHECK(cudaEventCreate(&e1));
  *best_ms = 1e30f;
  for (int rep = 0; rep < reps; ++rep) {
    MICRO_CHECK(cudaEventRecord(e0));
    kernel<<<grid, threads, smem_bytes>>>(args...);
    MICRO_CHECK(cudaGetLastError());
    MICRO_CHECK(cudaEventRecord(e1));
    MICRO_CHECK(cudaEventSynchronize(e1));
    float ms = 0.f;
    MICRO_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (ms < *best_ms) {
      *best_ms = ms;
      MICRO_CHECK(cudaMemcpy(cycles, cycles_dev, sizeof(*cycles), cudaMemcpyDeviceToHost));
    }
  }
  MICRO_CHECK(cudaEventDestroy(e0));
  MICRO_CHECK(cudaEventDestroy(e1));
  return true;
}

// cuTensorMapEncodeTiled, reached through the runtime's driver entry point (the micros link no
// libcuda); false (and a line saying so) where the driver has none.
using TensorMapEncodeFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                       const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                       const cuuint32_t*, CUtensorMapInterleave,
                                       CUtensorMapSwizzle, CUtensorMapL2promotion,
                                       CUtensorMapFloatOOBfill);
inline bool TensorMapEncoder(TensorMapEncodeFn* encode) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  MICRO_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                               cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::printf("cuTensorMapEncodeTiled not found\n");
    return false;
  }
  *encode = reinterpret_cast<TensorMapEncodeFn>(fn);
  return true;
}

}  // namespace micro
