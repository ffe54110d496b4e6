// What reading a call's bindings from memory costs a kernel, for a rebind path without kernel-node
// patches (NOTES, session 23: the kernels would read their per-call pointers from a block at a
// fixed address instead of from their parameter blocks). Each CTA's thread 0 loads 8 words (one
// group's pointers) of a 2 KB binding block at its kernel's start, from
//   param   the kernel's parameter block (today's path, the baseline),
//   device  device memory, rewritten before every launch in stream order by a 2 KB
//           cudaMemcpyAsync from pinned memory (the copy's own cost is on the stream too),
//   device, pageable  the same from pageable memory (the driver stages it before returning, so
//           the host may rewrite its block at once: no ring of staging blocks),
//   mapped  pinned host memory read over the bus (zero-copy; the host writes it directly),
// and reports the load's latency (%globaltimer around it, median over CTAs and launches), the
// stream time per launch of 132 CTAs back to back, and the host time per enqueued launch (copy
// included).
//
// Example (here: no GPU needed to build; on the device):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -o binding_reads \
//     benchmarks/micro/binding_reads.cu && ./binding_reads
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "benchmarks/micro/micro_timing.cuh"

namespace {

constexpr int kWords = 256;  // 2 KB: 64 groups x 4 words, or 8 groups' full bindings and maps
constexpr int kLaunches = 200;

struct ParamBlock {
  unsigned long long w[kWords];
};

__device__ __forceinline__ unsigned long long GlobalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// source: 0 = params, 1 = memory at `block` (device or mapped host).
__global__ void ReadBindings(const __grid_constant__ ParamBlock params,
                             const volatile unsigned long long* block, int source,
                             unsigned long long* sink, unsigned long long* latency_ns) {
  if (threadIdx.x != 0) return;
  const int base = (blockIdx.x * 8) % kWords;
  const unsigned long long t0 = GlobalTimer();
  unsigned long long sum = 0;
  // Two loops, not one select: a select of the two addresses made nvcc load the parameter block
  // through a generic volatile pointer (an illegal address on the first device run).
  if (source == 0) {
#pragma unroll
    for (int i = 0; i < 8; ++i) sum += params.w[base + i];
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i) sum += block[base + i];
  }
  const unsigned long long t1 = GlobalTimer();
  sink[blockIdx.x] = sum;
  latency_ns[blockIdx.x] = t1 - t0;
}

bool Run() {
  cudaDeviceProp prop{};
  if (!micro::DeviceInfo(&prop)) return false;
  const int ctas = prop.multiProcessorCount;
  cudaStream_t s;
  MICRO_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned long long *device_block, *host_block, *mapped_block, *staging, *sink, *lat;
  MICRO_CHECK(cudaMalloc(&device_block, kWords * 8));
  MICRO_CHECK(cudaHostAlloc(&host_block, kWords * 8, cudaHostAllocMapped));
  MICRO_CHECK(cudaHostGetDevicePointer(&mapped_block, host_block, 0));
  MICRO_CHECK(cudaMallocHost(&staging, kWords * 8));
  MICRO_CHECK(cudaMalloc(&sink, ctas * 8));
  MICRO_CHECK(cudaMalloc(&lat, ctas * 8 * kLaunches));
  ParamBlock params{};
  for (int i = 0; i < kWords; ++i) host_block[i] = staging[i] = params.w[i] = i;
  cudaEvent_t a, b;
  MICRO_CHECK(cudaEventCreate(&a));
  MICRO_CHECK(cudaEventCreate(&b));
  std::vector<unsigned long long> pageable(kWords, 1);
  const char* names[] = {"param", "device (pinned copy before each)",
                         "device (pageable copy before each)", "mapped host"};
  double host_us = 0;
  for (int source = 0; source < 4; ++source) {
    for (int rep = 0; rep < 2; ++rep) {  // the first repetition warms up
      MICRO_CHECK(cudaEventRecord(a, s));
      const double t0 = micro::NowUs();
      for (int l = 0; l < kLaunches; ++l) {
        if (source == 1 || source == 2) {
          MICRO_CHECK(cudaMemcpyAsync(device_block, source == 1 ? staging : pageable.data(),
                                      kWords * 8, cudaMemcpyHostToDevice, s));
        }
        ReadBindings<<<ctas, 32, 0, s>>>(params, source == 3 ? mapped_block : device_block,
                                         source == 0 ? 0 : 1, sink, lat + l * ctas);
        MICRO_CHECK(cudaGetLastError());
      }
      host_us = (micro::NowUs() - t0) / kLaunches;
      MICRO_CHECK(cudaEventRecord(b, s));
      MICRO_CHECK(cudaEventSynchronize(b));
    }
    float ms = 0.f;
    MICRO_CHECK(cudaEventElapsedTime(&ms, a, b));
    std::vector<unsigned long long> host_lat(static_cast<size_t>(ctas) * kLaunches);
    MICRO_CHECK(cudaMemcpy(host_lat.data(), lat, host_lat.size() * 8, cudaMemcpyDeviceToHost));
    std::vector<double> v(host_lat.begin(), host_lat.end());
    std::printf(
        "%-36s load latency median %6.0f ns (max %6.0f) | stream time per launch %6.2f us | "
        "host per launch %5.2f us\n",
        names[source], micro::Median(v), *std::max_element(v.begin(), v.end()),
        1000.0 * ms / kLaunches, host_us);
  }
  return true;
}

}  // namespace

int main() { return Run() ? 0 : 1; }
