// What a graph launch costs the host in the replay benchmark's pattern versus the floor's: the
// replay's modes time 15 calls issued right after a stream sync (an L2 flush, a sync, an event),
// the floors time 100 launches of one exec back to back. #5's per-call target compares the two
// (graph_per_call 1.446 us vs graph_launch_1 1.207 in run 76, the GEMM node alone 1.159): this
// measures how much of that gap is the pattern (first launches after a sync, 15 distinct execs,
// a 2-kernel graph with a programmatic edge, a GPU still busy with the previous calls) rather
// than the graph cache's own host work.
//
// Every case is host µs per launch, median of 200 rounds, each round after a cudaStreamSynchronize:
//   back-to-back x100 : the floor's pattern (one exec, 100 launches)
//   batch x15 same    : 15 launches of one exec after the sync (the replay's pattern)
//   batch x15 distinct: 15 execs, one launch each (the replay's 15 input sets)
//   ... 2-node pdl    : the same with a 2-kernel graph, the second behind a programmatic edge
//                       (the per-call graph of a plan with a token pre-pass)
//   is_capturing      : cudaStreamIsCapturing (the executor's first call)
// with kernels that exit at once (busy 0) or spin ~20 us each (the GPU still working on earlier
// calls while the host enqueues, as with the GPU MODE shapes). The parameter block is 6656 bytes
// (the GEMM's Params<8> is ~6.6 KB).
//
// Example (on the device; no GPU needed to build):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -o graph_launch_batch \
//     benchmarks/micro/graph_launch_batch.cu && ./graph_launch_batch
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "benchmarks/micro/micro_timing.cuh"

namespace {

constexpr int kBytes = 6656;
constexpr int kExecs = 15;

struct Block {
  long long spin_ns;
  int* out;
  int pad[(kBytes - 16) / 4];
};

__global__ void Spin(const __grid_constant__ Block b) {
  if (b.spin_ns > 0) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    unsigned long long t = t0;
    while (t - t0 < static_cast<unsigned long long>(b.spin_ns)) {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    }
  }
  if (threadIdx.x == 0 && b.pad[0] == 12345) *b.out = b.pad[1];
}

// One exec per distinct block: `nodes` kernels in a chain, the second behind a programmatic edge.
bool MakeExec(const Block& b, int nodes, cudaStream_t s, cudaGraphExec_t* x) {
  cudaGraph_t g;
  MICRO_CHECK(cudaGraphCreate(&g, 0));
  Block copy = b;
  void* args[] = {&copy};
  cudaKernelNodeParams p = {};
  p.func = reinterpret_cast<void*>(Spin);
  p.gridDim = dim3(1);
  p.blockDim = dim3(32);
  p.kernelParams = args;
  cudaGraphNode_t prev = nullptr;
  for (int i = 0; i < nodes; ++i) {
    cudaGraphNode_t node;
    MICRO_CHECK(cudaGraphAddKernelNode(&node, g, nullptr, 0, &p));
    if (prev != nullptr) {
      cudaGraphEdgeData edge = {};
      edge.from_port = cudaGraphKernelNodePortProgrammatic;
      edge.type = cudaGraphDependencyTypeProgrammatic;
      MICRO_CHECK(cudaGraphAddDependencies(g, &prev, &node, &edge, 1));
    }
    prev = node;
  }
  MICRO_CHECK(cudaGraphInstantiate(x, g, 0));
  MICRO_CHECK(cudaGraphUpload(*x, s));
  MICRO_CHECK(cudaGraphDestroy(g));
  return true;
}

// Host us per launch: `rounds` rounds of `n` launches, each round after a sync; execs[i % size].
bool Rounds(cudaStream_t s, cudaEvent_t ev, const std::vector<cudaGraphExec_t>& execs, int n,
            double* median) {
  std::vector<double> t;
  for (int r = 0; r < 200; ++r) {
    MICRO_CHECK(cudaStreamSynchronize(s));
    MICRO_CHECK(cudaEventRecord(ev, s));  // the replay harness records its start event here
    const double t0 = micro::NowUs();
    for (int i = 0; i < n; ++i) {
      MICRO_CHECK(cudaGraphLaunch(execs[i % execs.size()], s));
    }
    t.push_back((micro::NowUs() - t0) / n);
  }
  MICRO_CHECK(cudaStreamSynchronize(s));
  *median = micro::Median(t);
  return true;
}

bool Case(cudaStream_t s, cudaEvent_t ev, int* out, long long spin_ns, int nodes) {
  std::vector<cudaGraphExec_t> execs(kExecs);
  for (int e = 0; e < kExecs; ++e) {
    Block b;
    std::memset(&b, 0, sizeof(b));
    b.spin_ns = spin_ns;
    b.out = out;
    for (int i = 0; i < (kBytes - 16) / 4; ++i) b.pad[i] = 7 * i + e;
    if (!MakeExec(b, nodes, s, &execs[e])) return false;
  }
  const std::vector<cudaGraphExec_t> one(execs.begin(), execs.begin() + 1);
  double b2b = 0, same = 0, distinct = 0;
  // back to back: the floor's 100 launches (with the spin, the queue fills as in the floors).
  if (!Rounds(s, ev, one, 100, &b2b) || !Rounds(s, ev, one, 15, &same) ||
      !Rounds(s, ev, execs, 15, &distinct)) {
    return false;
  }
  std::printf(
      "busy %5.1f us, %d-node%s: back-to-back x100 %5.3f | batch x15 same %5.3f | "
      "batch x15 distinct %5.3f us per launch\n",
      spin_ns / 1000.0, nodes, nodes > 1 ? " pdl" : "", b2b, same, distinct);
  for (cudaGraphExec_t x : execs) MICRO_CHECK(cudaGraphExecDestroy(x));
  return true;
}

bool Main() {
  cudaDeviceProp prop;
  if (!micro::DeviceInfo(&prop)) return false;
  cudaStream_t s;
  MICRO_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t ev;
  MICRO_CHECK(cudaEventCreate(&ev));
  int* out = nullptr;
  MICRO_CHECK(cudaMalloc(&out, 4));
  for (int pass = 0; pass < 2; ++pass) {  // the second pass shows the order does not matter
    std::printf("pass %d\n", pass);
    for (long long spin : {0LL, 20000LL}) {
      for (int nodes : {1, 2}) {
        if (!Case(s, ev, out, spin, nodes)) return false;
      }
    }
    std::vector<double> t;
    for (int r = 0; r < 200; ++r) {
      cudaStreamCaptureStatus st;
      const double t0 = micro::NowUs();
      for (int i = 0; i < 100; ++i) MICRO_CHECK(cudaStreamIsCapturing(s, &st));
      t.push_back((micro::NowUs() - t0) / 100);
    }
    std::printf("is_capturing %5.3f us\n", micro::Median(t));
  }
  MICRO_CHECK(cudaFree(out));
  MICRO_CHECK(cudaEventDestroy(ev));
  MICRO_CHECK(cudaStreamDestroy(s));
  return true;
}

}  // namespace

int main() { return Main() ? 0 : 1; }
