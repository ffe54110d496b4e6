// What the driver's host work for a kernel costs as a function of the kernel's parameter-block
// size: cudaLaunchKernel, cudaGraphExecKernelNodeSetParams on an idle exec, and a patch followed
// by a launch of that exec (the graph cache's pointer-rebind path), each per call, for
// parameter blocks of 64 B .. 16 KB (the sm90 GEMM's Params<8> is ~6.6 KB). The replay
// benchmark's floors measured an idle patch of the GEMM node at 2.2 us (run 76) where session 5
// measured 0.7 us with a ~3 KB block: if the cost follows the size, the rebind path is bounded by
// the parameter block, not by the driver's per-node cost.
// Also: a patch with the same values as the exec holds, and patches of blocks whose only changed
// bytes are their first 64, their last 64, or one word per 512 bytes (whether the driver diffs,
// and what a partial change costs: the graph cache's rebind changes pointers, not the tables).
//
// Example (on the device; no GPU needed to build):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -o node_patch \
//     benchmarks/micro/node_patch.cu && ./node_patch
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include "benchmarks/micro/micro_timing.cuh"

namespace {

template <int kBytes>
struct Block {
  int* out;
  int pad[(kBytes - 8) / 4];
};

template <int kBytes>
__global__ void Touch(const __grid_constant__ Block<kBytes> b) {
  if (threadIdx.x == 0 && b.pad[0] == 12345) *b.out = b.pad[(kBytes - 8) / 4 - 1];
}

// Best of 7 rounds of `n` calls of op (us per call); the stream drained between rounds.
template <typename F>
bool PerCall(cudaStream_t s, int n, F op, double* best) {
  *best = 1e30;
  for (int r = 0; r < 7; ++r) {
    MICRO_CHECK(cudaStreamSynchronize(s));
    const double t0 = micro::NowUs();
    for (int i = 0; i < n; ++i) {
      if (!op(i)) return false;
    }
    const double us = (micro::NowUs() - t0) / n;
    if (us < *best) *best = us;
  }
  return true;
}

template <int kBytes>
bool Sweep(cudaStream_t s, int* out) {
  static Block<kBytes> a, b, c, d, e;
  std::memset(&a, 0, sizeof(a));
  a.out = out;
  for (int i = 0; i < (kBytes - 8) / 4; ++i) a.pad[i] = i;
  b = a;
  for (int i = 0; i < (kBytes - 8) / 4; ++i) b.pad[i] = 7 * i + 1;  // every word differs
  c = a;
  for (int i = 0; i < 14 && i < (kBytes - 8) / 4; ++i) c.pad[i] = i + 1000;  // first 64 bytes
  constexpr int kWords = (kBytes - 8) / 4;
  d = a;
  for (int i = kWords - 14 > 0 ? kWords - 14 : 0; i < kWords; ++i)
    d.pad[i] = i + 2000;  // last 64 B
  e = a;
  for (int i = 0; i < kWords; i += 128) e.pad[i] = i + 3000;  // one word per 512 bytes
  void* args_d[] = {&d};
  void* args_e[] = {&e};
  void* args_a[] = {&a};
  void* args_b[] = {&b};
  void* args_c[] = {&c};
  auto fn = reinterpret_cast<void*>(Touch<kBytes>);
  cudaKernelNodeParams pa = {};
  pa.func = fn;
  pa.gridDim = dim3(1);
  pa.blockDim = dim3(32);
  pa.kernelParams = args_a;
  cudaKernelNodeParams pb = pa, pc = pa, pd = pa, pe = pa;
  pb.kernelParams = args_b;
  pc.kernelParams = args_c;
  pd.kernelParams = args_d;
  pe.kernelParams = args_e;
  cudaGraph_t g;
  MICRO_CHECK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t node;
  MICRO_CHECK(cudaGraphAddKernelNode(&node, g, nullptr, 0, &pa));
  cudaGraphExec_t x;
  MICRO_CHECK(cudaGraphInstantiate(&x, g, 0));
  MICRO_CHECK(cudaGraphUpload(x, s));
  const int n = 256;  // calls per round: below the launch queue's depth
  double launch = 0, graph = 0, patch = 0, patch_launch = 0, same_launch = 0, head_launch = 0;
  double tail_launch = 0, sparse_launch = 0, head_idle = 0;
  // Patches the node with `p` on even calls and `q` on odd ones (launching the exec after each
  // when `launch`).
  auto patches = [&](const cudaKernelNodeParams* p, const cudaKernelNodeParams* q, bool launch,
                     double* out) {
    return PerCall(
        s, n,
        [&](int i) {
          return cudaGraphExecKernelNodeSetParams(x, node, (i & 1) ? q : p) == cudaSuccess &&
                 (!launch || cudaGraphLaunch(x, s) == cudaSuccess);
        },
        out);
  };
  bool ok = PerCall(
      s, n,
      [&](int i) {
        return cudaLaunchKernel(fn, dim3(1), dim3(32), (i & 1) ? args_b : args_a, 0, s) ==
               cudaSuccess;
      },
      &launch);
  ok = ok && PerCall(
                 s, n, [&](int) { return cudaGraphLaunch(x, s) == cudaSuccess; }, &graph);
  ok = ok && patches(&pa, &pb, false, &patch) && patches(&pa, &pb, true, &patch_launch) &&
       patches(&pa, &pa, true, &same_launch) && patches(&pa, &pc, true, &head_launch) &&
       patches(&pa, &pd, true, &tail_launch) && patches(&pa, &pe, true, &sparse_launch) &&
       patches(&pa, &pc, false, &head_idle);
  if (!ok) {
    std::printf("a call failed at %d bytes: %s\n", kBytes, cudaGetErrorString(cudaGetLastError()));
    return false;
  }
  MICRO_CHECK(cudaStreamSynchronize(s));
  MICRO_CHECK(cudaGraphExecDestroy(x));
  MICRO_CHECK(cudaGraphDestroy(g));
  std::printf(
      "%6d B: launch %5.2f | graph launch %5.2f | idle patch %5.2f | patch+launch %5.2f |"
      " same-values patch+launch %5.2f | first-64-B patch+launch %5.2f (idle patch %5.2f) |"
      " last-64-B patch+launch %5.2f | a word per 512 B patch+launch %5.2f us\n",
      kBytes, launch, graph, patch, patch_launch, same_launch, head_launch, head_idle, tail_launch,
      sparse_launch);
  return true;
}

bool Main() {
  cudaDeviceProp prop;
  if (!micro::DeviceInfo(&prop)) return false;
  cudaStream_t s;
  MICRO_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* out = nullptr;
  MICRO_CHECK(cudaMalloc(&out, 4));
  for (int pass = 0; pass < 2; ++pass) {  // the second pass shows the order does not matter
    std::printf("pass %d\n", pass);
    if (!(Sweep<64>(s, out) && Sweep<512>(s, out) && Sweep<1024>(s, out) && Sweep<2048>(s, out) &&
          Sweep<3072>(s, out) && Sweep<4096>(s, out) && Sweep<6656>(s, out) &&
          Sweep<8192>(s, out) && Sweep<16384>(s, out))) {
      return false;
    }
  }
  MICRO_CHECK(cudaFree(out));
  MICRO_CHECK(cudaStreamDestroy(s));
  return true;
}

}  // namespace

int main() { return Main() ? 0 : 1; }
