// What one kernel boundary costs on the GPU, and what programmatic dependent launch (PDL) can hide
// of it, for kernels shaped like the sm90 grouped GEMM (one CTA per SM: 384 threads, ~168
// registers each, ~200 KB of dynamic shared memory, a 3 KB parameter block) and its token
// pre-pass (many small CTAs: 256 threads, no shared memory). Session 6's stamps put ~2.5 us between
// one kernel's last CTA and the next kernel's first, with or without PDL; this separates the
// candidates: the shared-memory carveout change between a big-smem and a no-smem kernel, the
// parameter block size, the register file, the tail of the previous grid.
//
// Every kernel spins on %globaltimer for a fixed time per CTA (optionally staggered by block, a
// tail) and records, per launch, its first CTA entry, its first CTA past griddepcontrol.wait and
// its last CTA exit (atomicMin / atomicMax on one slot per launch). A sequence is 2 x kPairs
// launches (A, B, A, B, ...) run from a stream or from one captured graph; it reports the event
// time per launch over the spin time and the median boundary gaps:
//   entry gap = next kernel's first entry - previous kernel's last exit (negative: overlapped)
//   wait  gap = next kernel's first CTA past griddepcontrol.wait - previous kernel's last exit
// With PDL every launch after the first carries programmatic stream serialization and every
// kernel triggers launch_dependents at entry.
//
// Example (here: no GPU needed to build; on the device):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -o kernel_boundary \
//     benchmarks/micro/kernel_boundary.cu && ./kernel_boundary
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "benchmarks/micro/micro_timing.cuh"

#define CHECK(x)                                                                           \
  do {                                                                                     \
    cudaError_t err_ = (x);                                                                \
    if (err_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

struct Slot {
  unsigned long long first_entry, first_waited, last_exit, pad;
};

// The parameter block: what every launch carries, padded to kPad bytes like the GEMM's Params.
template <int kPad>
struct Args {
  Slot* slots;
  int idx;
  unsigned spin_ns;
  unsigned stagger_ns;  // CTA b spins spin_ns + (b % 8) * stagger_ns
  float* sink;
  unsigned char pad[kPad];
};

__device__ __forceinline__ unsigned long long GlobalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

// kRegs live floats keep the register count near the GEMM's 168 (check with -Xptxas -v), so no
// other kernel's CTA fits beside one of these on an SM.
template <int kPad, int kRegs>
__global__ void __launch_bounds__(384, 1) Spin(const __grid_constant__ Args<kPad> a) {
  const unsigned long long t0 = GlobalTimer();
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (threadIdx.x == 0) atomicMin(&a.slots[a.idx].first_entry, t0);
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (threadIdx.x == 0) atomicMin(&a.slots[a.idx].first_waited, GlobalTimer());
  const unsigned long long until = t0 + a.spin_ns + (blockIdx.x % 8) * a.stagger_ns;
  float v[kRegs];
#pragma unroll
  for (int i = 0; i < kRegs; ++i) v[i] = static_cast<float>(threadIdx.x + i);
  while (GlobalTimer() < until) {
#pragma unroll
    for (int i = 0; i < kRegs; ++i) v[i] = v[i] * 0.999f + v[(i + 1) % kRegs];
  }
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < kRegs; ++i) s += v[i];
  if (s == 1234.5f) a.sink[threadIdx.x] = s + a.pad[threadIdx.x % kPad];
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(&a.slots[a.idx].last_exit, GlobalTimer());
}

struct KernelShape {
  const char* name;
  const void* fn;
  int grid, block, smem;
  unsigned spin_ns, stagger_ns;
  int carveout;  // -1: leave the driver's choice
  int pad;       // parameter block bytes (selects the instantiation)
};

template <int kPad, int kRegs>
const void* SpinFn() {
  return reinterpret_cast<const void*>(&Spin<kPad, kRegs>);
}

template <int kPad>
cudaError_t LaunchAs(const KernelShape& k, const Args<kPad>& a, cudaStream_t s, bool pdl) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(k.grid);
  cfg.blockDim = dim3(k.block);
  cfg.dynamicSmemBytes = k.smem;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  void* args[] = {const_cast<Args<kPad>*>(&a)};
  return cudaLaunchKernelExC(&cfg, k.fn, args);
}

cudaError_t Launch(const KernelShape& k, Slot* slots, int idx, float* sink, cudaStream_t s,
                   bool pdl) {
  switch (k.pad) {
    case 64: {
      Args<64> a{slots, idx, k.spin_ns, k.stagger_ns, sink, {}};
      return LaunchAs(k, a, s, pdl);
    }
    case 3200: {
      Args<3200> a{slots, idx, k.spin_ns, k.stagger_ns, sink, {}};
      return LaunchAs(k, a, s, pdl);
    }
    default: {
      Args<23808> a{slots, idx, k.spin_ns, k.stagger_ns, sink, {}};
      return LaunchAs(k, a, s, pdl);
    }
  }
}

constexpr int kPairs = 100;
constexpr int kLaunches = 2 * kPairs;

void RunSequence(const char* label, const KernelShape& ka, const KernelShape& kb, bool pdl,
                 bool graph, Slot* slots, float* sink, cudaStream_t s) {
  std::vector<Slot> init(kLaunches, Slot{~0ull, ~0ull, 0ull, 0ull});
  auto enqueue = [&]() {
    for (int i = 0; i < kLaunches; ++i) {
      const KernelShape& k = (i % 2 == 0) ? ka : kb;
      CHECK(Launch(k, slots, i, sink, s, pdl && i > 0));
    }
  };
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    enqueue();
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphDestroy(g));
  }
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<double> per_launch, entry_ab, entry_ba, wait_ab, wait_ba;
  for (int rep = 0; rep < 4; ++rep) {
    CHECK(cudaMemcpyAsync(slots, init.data(), kLaunches * sizeof(Slot), cudaMemcpyHostToDevice, s));
    CHECK(cudaEventRecord(e0, s));
    if (graph) {
      CHECK(cudaGraphLaunch(exec, s));
    } else {
      enqueue();
    }
    CHECK(cudaEventRecord(e1, s));
    CHECK(cudaStreamSynchronize(s));
    float ms = 0.f;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (rep == 0) continue;  // warm-up
    per_launch.push_back(1e3 * ms / kLaunches);
    std::vector<Slot> got(kLaunches);
    CHECK(cudaMemcpy(got.data(), slots, kLaunches * sizeof(Slot), cudaMemcpyDeviceToHost));
    for (int i = 10; i < kLaunches; ++i) {
      const double entry = (static_cast<double>(got[i].first_entry) -
                            static_cast<double>(got[i - 1].last_exit)) * 1e-3;
      const double wait = (static_cast<double>(got[i].first_waited) -
                           static_cast<double>(got[i - 1].last_exit)) * 1e-3;
      (i % 2 == 1 ? entry_ab : entry_ba).push_back(entry);
      (i % 2 == 1 ? wait_ab : wait_ba).push_back(wait);
    }
  }
  const double spin = 0.5 * (ka.spin_ns + 7 * ka.stagger_ns + kb.spin_ns + 7 * kb.stagger_ns) * 1e-3;
  std::printf(
      "%-34s %-6s %-3s  per launch %6.2f us (spin ~%5.2f)  A>B entry %6.2f wait %6.2f  "
      "B>A entry %6.2f wait %6.2f\n",
      label, graph ? "graph" : "stream", pdl ? "pdl" : "-", micro::Median(per_launch), spin,
      micro::Median(entry_ab), micro::Median(wait_ab), micro::Median(entry_ba),
      micro::Median(wait_ba));
  if (exec != nullptr) CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
}

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const int big_smem = 200 * 1024;
  std::printf("%s, %d SMs; spin kernels, %d launches per sequence (median over 3 reps)\n",
              prop.name, sms, kLaunches);

  // Big: the GEMM's shape (1 CTA per SM by registers and shared memory). Small: the pre-pass's.
  const KernelShape big{"big", SpinFn<3200, 158>(), sms, 384, big_smem, 8000, 0, -1, 3200};
  const KernelShape big_tail{"big_tail", SpinFn<3200, 158>(), sms - 12, 384, big_smem, 6000, 500,
                             -1, 3200};
  const KernelShape big_p64{"big_p64", SpinFn<64, 158>(), sms, 384, big_smem, 8000, 0, -1, 64};
  const KernelShape big_p24k{"big_p24k", SpinFn<23808, 158>(), sms, 384, big_smem, 8000, 0, -1,
                             23808};
  const KernelShape big_nosmem{"big_nosmem", SpinFn<3200, 158>(), sms, 384, 0, 8000, 0, -1, 3200};
  const KernelShape small{"small", SpinFn<64, 4>(), 2 * sms, 256, 0, 2000, 0, -1, 64};
  KernelShape small_max = small;
  small_max.fn = SpinFn<64, 8>();  // a second instantiation: its own carveout attribute
  small_max.carveout = 100;

  const KernelShape* all[] = {&big, &big_tail, &big_p64, &big_p24k, &big_nosmem, &small, &small_max};
  for (const KernelShape* k : all) {
    CHECK(cudaFuncSetAttribute(k->fn, cudaFuncAttributeMaxDynamicSharedMemorySize, big_smem));
    if (k->carveout >= 0) {
      CHECK(cudaFuncSetAttribute(k->fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 k->carveout));
    }
  }
  // big_nosmem and big share an instantiation: big's max-smem attribute does not set a carveout.
  Slot* slots;
  float* sink;
  CHECK(cudaMalloc(&slots, kLaunches * sizeof(Slot)));
  CHECK(cudaMalloc(&sink, 4096));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  struct Seq {
    const char* label;
    const KernelShape* a;
    const KernelShape* b;
  };
  const Seq seqs[] = {
      {"small>small", &small, &small},
      {"big>big (3.2 KB params)", &big, &big},
      {"big_p64>big_p64 (64 B params)", &big_p64, &big_p64},
      {"big_p24k>big_p24k (24 KB params)", &big_p24k, &big_p24k},
      {"big_nosmem>big_nosmem", &big_nosmem, &big_nosmem},
      {"big>small (carveout default)", &big, &small},
      {"big>small_max (carveout 100)", &big, &small_max},
      {"big_tail>small", &big_tail, &small},
      {"big_tail>small_max", &big_tail, &small_max},
      {"big_tail>big_tail", &big_tail, &big_tail},
  };
  for (bool graph : {false, true}) {
    for (const Seq& q : seqs) {
      for (bool pdl : {false, true}) RunSequence(q.label, *q.a, *q.b, pdl, graph, slots, sink, s);
    }
  }
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(slots));
  CHECK(cudaFree(sink));
  return 0;
}
