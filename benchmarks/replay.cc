// //benchmarks:replay — Encore's main job: every launch mode side by side on the same grouped
// GEMMs, with the launch floors measured in the same process.
//
//   tools/bazel run //benchmarks:replay                      # summary table at the end
//   tools/bazel run //benchmarks:replay -- --benchmark_format=json
//   ... -- --encore_json=benchmarks/results/replay.json --encore_commit=$(git rev-parse HEAD)
//   ... -- --encore_ab_query=1   # adds graph_prebuilt_driver and graph_prebuilt_query
//
// Workloads: the four GPU MODE benchmark shapes (15 distinct input sets each, L2 flushed before
// every batch) and a tiny problem (one group, M=8 N=128 K=256) where launch overhead dominates.
// Per mode and workload: host µs per call (CPU time inside the API calls), device µs per call
// (events, GPU work alone) and end-to-end µs per call (wall clock of the whole batch), and the
// 1-node graph launch floor measured again right before each batch, twice: 100 launches of one
// exec ("graph floor (adjacent)") and 15 launches of 15 distinct execs through the modes' own
// harness ("graph floor (harness)", EmptyGraphsMode): the GPU machine's host changes speed between
// processes and within one (run 35).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "benchmark/benchmark.h"
#include "benchmarks/internal/device_inputs.h"
#include "benchmarks/internal/harness.h"
#include "benchmarks/internal/modes.h"
#include "cuda_utils/device.h"
#include "cuda_utils/driver.h"
#include "cuda_utils/raii.h"
#include "cuda_utils/status.h"
#include "gemm/grouped_gemm.h"
#include "gemm/launch.h"

namespace encore::bench {
namespace {

constexpr int kSetsPerBatch = 15;
constexpr int kRepeats = 15;

struct Workload {
  std::string name;
  std::vector<GroupShape> shapes;
  bool gpumode = true;  // counts toward the GPU MODE geomean
  std::unique_ptr<InputSets> sets;
};

std::vector<Workload> MakeWorkloads() {
  auto same_nk = [](std::vector<int> ms, int n, int k) {
    std::vector<GroupShape> s;
    for (int m : ms) s.push_back({m, n, k});
    return s;
  };
  std::vector<Workload> w;
  w.push_back({"g8_n4096_k7168", same_nk({80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168)});
  w.push_back({"g8_n7168_k2048", same_nk({40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048)});
  w.push_back({"g2_n3072_k4096", same_nk({192, 320}, 3072, 4096)});
  w.push_back({"g2_n4096_k1536", same_nk({128, 384}, 4096, 1536)});
  w.push_back({"tiny_m8_n128_k256", same_nk({8}, 128, 256), false});
  return w;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

double Geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / v.size());
}

struct Result {
  std::string mode;
  std::string workload;
  bool gpumode = true;
  Sample median;
  // The 1-node empty-graph launch floor measured right before each of this result's batches
  // (median): the host's speed changes between processes and within one (run 35), so a mode's
  // overhead is read against the floor of the same moment.
  double graph_floor_us = 0;
  // The same floor under this result's own conditions (median): 15 one-node empty graphs, one per
  // input set, launched through RunBatch like the mode's calls, right before each measured batch
  // (EmptyGraphsMode).
  double harness_floor_us = 0;
};

struct Floors {
  double kernel_launch = 0;
  double graph_launch_1 = 0;
  double graph_launch_15 = 0;
  // The 1-node floor measured like a mode's calls (EmptyGraphsMode through RunBatch on the tiny
  // workload: L2 flush and sync, then one clock pair around 15 launches of 15 distinct execs).
  // graph_launch_1 repeats one exec 100 times between clock reads; a mode's batch launches 15
  // distinct execs after a sync, which costs the driver more whatever launches them (run 188:
  // the hand-captured graph_prebuilt sat +0.05-0.11 us over graph_launch_1 in the fast state).
  double graph_launch_1_harness = 0;
  // Not a floor of the definition but its decomposition: cudaGraphLaunch of a 1-node graph
  // holding the real GEMM kernel node of the tiny problem (its parameter block included).
  double graph_launch_1_gemm = 0;
  // cudaGraphExecKernelNodeSetParams of that node, alternating between two input sets: the
  // driver's share of a pointer-rebind replay.
  double patch_gemm_node = 0;
  // A patch of that node, then a launch of its graph, per iteration: the rebind path's driver work.
  // Against patch_gemm_node + graph_launch_1_gemm it shows what patching an exec that is still
  // queued or running costs beyond patching an idle one.
  double patch_and_launch_gemm_node = 0;
  // The same with 2 (4) execs of that graph used in turn, each patched right before its launch:
  // whether the cost above is the patch of the exec launched last or of any exec still queued.
  double patch_and_launch_ring2 = 0;
  double patch_and_launch_ring4 = 0;
  // cudaStreamIsCapturing on the benchmark stream: the executor asks it on every call (a caller's
  // capture makes the call run direct).
  double stream_is_capturing = 0;
  // The same two calls through the driver's entry points (cuGraphLaunch of the 1-node empty
  // graph, cuStreamIsCapturing), as the graph cache's backend makes them: the runtime's share.
  double graph_launch_1_driver = 0;
  double stream_is_capturing_driver = 0;
  // What a rebind without node patches would pay on the host (NOTES, session 23): 40 pointer
  // writes into device memory in stream order as one cuStreamBatchMemOp (8 groups x 5 pointers),
  // alone and followed by cuGraphLaunch of the 1-node graph; and a 2 KB cudaMemcpyAsync from
  // pinned host memory followed by the same launch. -1 where the driver refuses the operation.
  double mem_op_write_40 = 0;
  double mem_op_write_40_and_launch = 0;
  double copy_2k_and_launch = 0;
};

// A graph of `nodes` empty kernels in a chain, instantiated and uploaded to `s`, appended to
// `graphs` and `execs` (a graph before its exec: the vectors are declared in that order).
absl::Status AddEmptyChain(int nodes, cudaStream_t s, std::vector<Graph>* graphs,
                           std::vector<GraphExec>* execs) {
  ENCORE_ASSIGN_OR_RETURN(Graph g, Graph::Create());
  cudaGraphNode_t prev = nullptr;
  for (int i = 0; i < nodes; ++i) {
    cudaKernelNodeParams p{};
    p.func = const_cast<void*>(EmptyKernel());
    p.gridDim = dim3(1);
    p.blockDim = dim3(32);
    cudaGraphNode_t node;
    ENCORE_RETURN_IF_CUDA_ERROR(
        cudaGraphAddKernelNode(&node, g.get(), prev ? &prev : nullptr, prev ? 1 : 0, &p),
        "add empty kernel node");
    prev = node;
  }
  ENCORE_ASSIGN_OR_RETURN(GraphExec x, GraphExec::Instantiate(g.get()));
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphUpload(x.get(), s), "graph upload");
  graphs->push_back(std::move(g));
  execs->push_back(std::move(x));
  return absl::OkStatus();
}

// Not a mode of the report but the floor of its per-call modes under their own conditions: one
// 1-node empty graph per input set, launched with cudaGraphLaunch through RunBatch exactly as a
// mode's calls are (after the L2 flush and a sync, one clock pair around the batch, 15 distinct
// execs in turn).
class EmptyGraphsMode : public Mode {
 public:
  static absl::StatusOr<std::unique_ptr<EmptyGraphsMode>> Create(int count, cudaStream_t s) {
    auto mode = std::unique_ptr<EmptyGraphsMode>(new EmptyGraphsMode());
    for (int i = 0; i < count; ++i) {
      ENCORE_RETURN_IF_ERROR(AddEmptyChain(1, s, &mode->graphs_, &mode->execs_));
    }
    return mode;
  }
  const char* name() const override { return "empty_graphs"; }
  absl::Status Call(const InputSets&, int i, cudaStream_t stream) override {
    if (i < 0 || static_cast<size_t>(i) >= execs_.size()) {
      return absl::OutOfRangeError(absl::StrCat("empty_graphs: no graph for input set ", i));
    }
    return ToStatus(cudaGraphLaunch(execs_[static_cast<size_t>(i)].get(), stream),
                    "empty graph launch");
  }

 private:
  EmptyGraphsMode() = default;
  std::vector<Graph> graphs_;  // declared before execs_: destroyed after them
  std::vector<GraphExec> execs_;
};

// The shared state of one run: stream, events, flusher, workloads and results. Owned by main.
struct Context {
  DeviceInfo device;
  Stream stream;
  Event start;
  Event stop;
  std::unique_ptr<L2Flusher> flusher;
  std::vector<Workload> workloads;
  std::vector<Result> results;
  Floors floors;
  Graph floor_graph;  // the 1-node empty graph of the floors (declared before its exec)
  GraphExec floor_exec;
  std::unique_ptr<EmptyGraphsMode> empty_graphs;  // the harness floor's graphs, one per input set
};

// Host µs per operation: one clock pair around 100 back-to-back calls of `op`, then a sync of `s`.
absl::StatusOr<double> HostUsPerOp(const std::function<absl::Status()>& op, cudaStream_t s) {
  const double t0 = NowUs();
  for (int i = 0; i < 100; ++i) ENCORE_RETURN_IF_ERROR(op());
  const double t = NowUs() - t0;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(s), "floor sync");
  return t / 100;
}

// The 1-node empty-graph launch floor now (the graph_launch_1 floor's operation).
absl::StatusOr<double> GraphFloorNow(Context* ctx) {
  cudaStream_t s = ctx->stream.get();
  return HostUsPerOp(
      [&] { return ToStatus(cudaGraphLaunch(ctx->floor_exec.get(), s), "floor graph launch"); }, s);
}

// The harness floor now: host µs per launch of one batch of the empty graphs through RunBatch.
absl::StatusOr<double> HarnessFloorNow(Context* ctx, const InputSets& sets) {
  Sample x;
  ENCORE_RETURN_IF_ERROR(RunBatch(*ctx->empty_graphs, sets, ctx->flusher.get(), 0.0,
                                  ctx->stream.get(), ctx->start.get(), ctx->stop.get(), &x));
  return x.host_us;
}

void RunMode(benchmark::State& state, Context* ctx, Mode* mode, Workload* w) {
  cudaStream_t s = ctx->stream.get();
  const uint64_t merged_before = mode->merged_calls();
  absl::Status st = mode->Begin(*w->sets, s);
  Sample warm;
  for (int i = 0; st.ok() && i < 3; ++i) {
    st = RunBatch(*mode, *w->sets, nullptr, 0, s, ctx->start.get(), ctx->stop.get(), &warm);
  }
  // Calls the warm-up's captures merged (graph_cache merged launches), per batch of 15.
  state.counters["merged_calls"] = static_cast<double>(mode->merged_calls() - merged_before);
  std::vector<double> host, device, e2e, adjacent_floor, harness_floor;
  for (auto _ : state) {
    Sample x;
    absl::StatusOr<double> f = GraphFloorNow(ctx);
    if (!f.ok()) st = f.status();
    absl::StatusOr<double> hf = st.ok() ? HarnessFloorNow(ctx, *w->sets) : 0.0;
    if (st.ok() && !hf.ok()) st = hf.status();
    if (st.ok()) {
      adjacent_floor.push_back(*f);
      harness_floor.push_back(*hf);
      st = Measure(*mode, *w->sets, ctx->flusher.get(), s, ctx->start.get(), ctx->stop.get(), &x);
    }
    if (!st.ok()) {
      state.SkipWithError(std::string(st.message()).c_str());
      break;
    }
    host.push_back(x.host_us);
    device.push_back(x.device_us);
    e2e.push_back(x.e2e_us);
    state.SetIterationTime(x.e2e_us * 1e-6);
  }
  if (!st.ok()) return;
  Result r{mode->name(),
           w->name,
           w->gpumode,
           {Median(host), Median(device), Median(e2e)},
           Median(adjacent_floor),
           Median(harness_floor)};
  state.counters["host_us"] = r.median.host_us;
  state.counters["graph_floor_us"] = r.graph_floor_us;
  state.counters["harness_floor_us"] = r.harness_floor_us;
  state.counters["device_us"] = r.median.device_us;
  state.counters["e2e_us"] = r.median.e2e_us;
  state.counters["TFLOPs"] = w->sets->flops_per_set() / (r.median.device_us * 1e-6) / 1e12;
  ctx->results.push_back(r);
}

// Host µs per launch of: an empty kernel, a 1-node and a 15-node graph of empty kernels, and a
// 1-node graph of the GEMM kernel itself (prepared for `tiny`).
absl::Status MeasureFloors(Context* ctx, gemm::Nvfp4GroupedGemm* runner, const InputSets& tiny) {
  cudaStream_t s = ctx->stream.get();
  const void* fn = EmptyKernel();
  // Graphs of 1 and 15 empty kernels.
  std::vector<Graph> graphs;
  std::vector<GraphExec> execs;
  for (int nodes : {1, 15}) {
    ENCORE_RETURN_IF_ERROR(AddEmptyChain(nodes, s, &graphs, &execs));
  }
  // A 1-node graph of the GEMM kernel (tiny problem), and two plans to patch it with.
  auto plan = std::make_unique<gemm::LaunchPlan>();
  auto other = std::make_unique<gemm::LaunchPlan>();
  ENCORE_RETURN_IF_ERROR(runner->Prepare(tiny.args(0), plan.get()));
  ENCORE_RETURN_IF_ERROR(runner->Prepare(tiny.args(1), other.get()));
  if (plan->has_pre() || other->has_pre()) {
    return absl::InternalError("the floors' GEMM node needs a one-kernel plan (no token pre-pass)");
  }
  void* slot = nullptr;
  void* other_slot = nullptr;
  const cudaKernelNodeParams p = plan->NodeParams(&slot);
  const cudaKernelNodeParams q = other->NodeParams(&other_slot);
  ENCORE_ASSIGN_OR_RETURN(Graph gemm_graph, Graph::Create());
  cudaGraphNode_t node;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphAddKernelNode(&node, gemm_graph.get(), nullptr, 0, &p),
                              "add GEMM kernel node");
  ENCORE_ASSIGN_OR_RETURN(GraphExec gemm_exec, GraphExec::Instantiate(gemm_graph.get()));
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphUpload(gemm_exec.get(), s), "graph upload");
  int flip = 0;
  std::vector<GraphExec> ring;  // 4 more execs of the same graph
  for (int i = 0; i < 4; ++i) {
    ENCORE_ASSIGN_OR_RETURN(GraphExec x, GraphExec::Instantiate(gemm_graph.get()));
    ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphUpload(x.get(), s), "graph upload");
    ring.push_back(std::move(x));
  }
  int turn = 0;
  // Patch exec `turn % size` (with the other input set than its last) and launch it.
  auto patch_ring = [&](int size) -> absl::Status {
    const int i = turn++ % size;
    const cudaKernelNodeParams* next = ((turn / size) & 1) ? &q : &p;
    ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphExecKernelNodeSetParams(ring[i].get(), node, next),
                                "ring node patch");
    return ToStatus(cudaGraphLaunch(ring[i].get(), s), "ring graph launch");
  };

  struct Floor {
    double* out;
    std::function<absl::Status()> op;
    std::vector<double> rounds;
  };
  std::vector<Floor> floors;
  floors.push_back({&ctx->floors.kernel_launch, [&] {
                      return ToStatus(cudaLaunchKernel(fn, dim3(1), dim3(32), nullptr, 0, s),
                                      "empty kernel");
                    }});
  floors.push_back({&ctx->floors.graph_launch_1,
                    [&] { return ToStatus(cudaGraphLaunch(execs[0].get(), s), "graph launch"); }});
  floors.push_back({&ctx->floors.graph_launch_15,
                    [&] { return ToStatus(cudaGraphLaunch(execs[1].get(), s), "graph launch"); }});
  floors.push_back({&ctx->floors.graph_launch_1_gemm, [&] {
                      return ToStatus(cudaGraphLaunch(gemm_exec.get(), s), "GEMM graph launch");
                    }});
  floors.push_back({&ctx->floors.patch_gemm_node, [&] {
                      const cudaKernelNodeParams* next = (flip ^= 1) ? &q : &p;
                      return ToStatus(cudaGraphExecKernelNodeSetParams(gemm_exec.get(), node, next),
                                      "node patch");
                    }});
  floors.push_back({&ctx->floors.patch_and_launch_gemm_node, [&] {
                      const cudaKernelNodeParams* next = (flip ^= 1) ? &q : &p;
                      ENCORE_RETURN_IF_CUDA_ERROR(
                          cudaGraphExecKernelNodeSetParams(gemm_exec.get(), node, next),
                          "node patch");
                      return ToStatus(cudaGraphLaunch(gemm_exec.get(), s), "GEMM graph launch");
                    }});
  floors.push_back({&ctx->floors.patch_and_launch_ring2, [&] { return patch_ring(2); }});
  floors.push_back({&ctx->floors.patch_and_launch_ring4, [&] { return patch_ring(4); }});
  floors.push_back({&ctx->floors.stream_is_capturing, [&] {
                      cudaStreamCaptureStatus status;
                      return ToStatus(cudaStreamIsCapturing(s, &status), "stream capture status");
                    }});
  ENCORE_ASSIGN_OR_RETURN(const DriverApi driver, DriverApi::Load());
  floors.push_back({&ctx->floors.graph_launch_1_driver, [&] {
                      return driver.graph_launch(execs[0].get(), s) == CUDA_SUCCESS
                                 ? absl::OkStatus()
                                 : absl::InternalError("cuGraphLaunch failed");
                    }});
  // The rebind-without-patches candidates (see Floors).
  using BatchMemOpFn =
      CUresult (*)(CUstream, unsigned int, CUstreamBatchMemOpParams*, unsigned int);
  const absl::StatusOr<void*> batch_fn = DriverSymbol("cuStreamBatchMemOp");
  const bool have_batch = batch_fn.ok();
  const auto batch_mem_op = reinterpret_cast<BatchMemOpFn>(have_batch ? *batch_fn : nullptr);
  constexpr int kWrites = 40;
  ENCORE_ASSIGN_OR_RETURN(DeviceBuffer words, DeviceBuffer::Create(kWrites * sizeof(uint64_t)));
  ENCORE_ASSIGN_OR_RETURN(DeviceBuffer block, DeviceBuffer::Create(2048));
  void* pinned_raw = nullptr;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaMallocHost(&pinned_raw, 2048), "pinned staging block");
  const std::unique_ptr<void, void (*)(void*)> pinned(pinned_raw,
                                                      [](void* q) { (void)cudaFreeHost(q); });
  std::vector<CUstreamBatchMemOpParams> writes(kWrites);
  uint64_t serial = 0;
  auto write_pointers = [&]() -> absl::Status {
    if (!have_batch) return absl::UnavailableError("cuStreamBatchMemOp not provided");
    ++serial;
    for (int i = 0; i < kWrites; ++i) {
      CUstreamBatchMemOpParams& w = writes[static_cast<size_t>(i)];
      w = CUstreamBatchMemOpParams{};
      w.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
      w.writeValue.address = reinterpret_cast<CUdeviceptr>(words.as<uint64_t>() + i);
      w.writeValue.value64 = serial * 64 + static_cast<uint64_t>(i);
    }
    const CUresult r = batch_mem_op(s, kWrites, writes.data(), 0);
    return r == CUDA_SUCCESS
               ? absl::OkStatus()
               : absl::InternalError(absl::StrCat("cuStreamBatchMemOp: ", static_cast<int>(r)));
  };
  if (write_pointers().ok()) {
    floors.push_back({&ctx->floors.mem_op_write_40, write_pointers});
    floors.push_back({&ctx->floors.mem_op_write_40_and_launch, [&] {
                        ENCORE_RETURN_IF_ERROR(write_pointers());
                        return ToStatus(cudaGraphLaunch(execs[0].get(), s), "graph launch");
                      }});
  } else {
    (void)cudaGetLastError();
    ctx->floors.mem_op_write_40 = ctx->floors.mem_op_write_40_and_launch = -1;
  }
  floors.push_back({&ctx->floors.copy_2k_and_launch, [&] {
                      ENCORE_RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(block.get(), pinned.get(), 2048,
                                                                  cudaMemcpyHostToDevice, s),
                                                  "2 KB binding block copy");
                      return ToStatus(cudaGraphLaunch(execs[0].get(), s), "graph launch");
                    }});
  floors.push_back({&ctx->floors.stream_is_capturing_driver, [&] {
                      CUstreamCaptureStatus status;
                      return driver.stream_is_capturing(s, &status) == CUDA_SUCCESS
                                 ? absl::OkStatus()
                                 : absl::InternalError("cuStreamIsCapturing failed");
                    }});
  // NOTES: the floors' rounds are interleaved (round r of every floor before round r + 1 of any),
  // so drift of the machine during the measurement affects them alike; measured one after the
  // other they came out in opposite orders on two machines (runs 10 and 11).
  ENCORE_ASSIGN_OR_RETURN(ctx->empty_graphs, EmptyGraphsMode::Create(tiny.count(), s));
  std::vector<double> harness_rounds;
  for (int round = 0; round < 30; ++round) {
    for (Floor& f : floors) {
      ENCORE_ASSIGN_OR_RETURN(const double t, HostUsPerOp(f.op, s));
      if (round >= 3) f.rounds.push_back(t);
    }
    ENCORE_ASSIGN_OR_RETURN(const double t, HarnessFloorNow(ctx, tiny));
    if (round >= 3) harness_rounds.push_back(t);
  }
  for (Floor& f : floors) *f.out = Median(f.rounds);
  ctx->floors.graph_launch_1_harness = Median(harness_rounds);
  ctx->floor_graph = std::move(graphs[0]);
  ctx->floor_exec = std::move(execs[0]);
  return absl::OkStatus();
}

struct ModeSummary {
  std::string mode;
  double host_us = 0;    // geomean over the GPU MODE shapes (the tiny problem: tiny_host_us)
  double device_us = 0;  // geomean over the GPU MODE shapes
  double e2e_us = 0;     // geomean over the GPU MODE shapes
  double tiny_host_us = 0;
  double tiny_e2e_us = 0;
  double graph_floor_us = 0;       // geomean of the adjacent 1-node graph floors, GPU MODE shapes
  double tiny_graph_floor_us = 0;  // the tiny problem's adjacent floor
  double harness_floor_us = 0;     // geomean of the harness floors (Result), GPU MODE shapes
  double tiny_harness_floor_us = 0;
};

std::vector<ModeSummary> Summarize(const Context& ctx) {
  std::vector<ModeSummary> out;
  for (const Result& r : ctx.results) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const ModeSummary& m) { return m.mode == r.mode; });
    if (it == out.end()) {
      out.push_back({r.mode});
      it = out.end() - 1;
    }
  }
  for (ModeSummary& m : out) {
    std::vector<double> host, device, e2e, adjacent_floor, harness_floor;
    for (const Result& r : ctx.results) {
      if (r.mode != m.mode) continue;
      // NOTES (session 31): host and floors over the GPU MODE shapes, as device and e2e; before,
      // the tiny problem was in the host geomean too, though it has columns of its own.
      if (r.gpumode) {
        host.push_back(r.median.host_us);
        adjacent_floor.push_back(r.graph_floor_us);
        harness_floor.push_back(r.harness_floor_us);
        device.push_back(r.median.device_us);
        e2e.push_back(r.median.e2e_us);
      } else {
        m.tiny_host_us = r.median.host_us;
        m.tiny_e2e_us = r.median.e2e_us;
        m.tiny_graph_floor_us = r.graph_floor_us;
        m.tiny_harness_floor_us = r.harness_floor_us;
      }
    }
    m.graph_floor_us = Geomean(adjacent_floor);
    m.harness_floor_us = Geomean(harness_floor);
    m.host_us = Geomean(host);
    m.device_us = Geomean(device);
    m.e2e_us = Geomean(e2e);
  }
  return out;
}

// `out` is stdout, or stderr when stdout carries machine-readable benchmark output.
void PrintSummary(const Context& ctx, const std::vector<ModeSummary>& modes, std::FILE* out) {
  std::fprintf(out, "\nEncore replay on %s (%d SMs, %d MB L2)\n", ctx.device.name.c_str(),
               ctx.device.sm_count, ctx.device.l2_bytes >> 20);
  std::fprintf(out,
               "floors (host us per launch): empty kernel %.2f | graph, 1 node %.2f | "
               "graph, 1 node, 15 execs in turn as a batch %.2f | "
               "graph, 15 nodes %.2f | graph, 1 GEMM node %.2f | patch of that node %.2f | "
               "patch + launch %.2f (2 execs in turn %.2f, 4 execs %.2f) | "
               "cudaStreamIsCapturing %.2f | through the driver: graph, 1 node %.2f, "
               "cuStreamIsCapturing %.2f | rebind candidates: 40 writes by cuStreamBatchMemOp "
               "%.2f, + graph launch %.2f, 2 KB pinned copy + graph launch %.2f\n",
               ctx.floors.kernel_launch, ctx.floors.graph_launch_1,
               ctx.floors.graph_launch_1_harness, ctx.floors.graph_launch_15,
               ctx.floors.graph_launch_1_gemm, ctx.floors.patch_gemm_node,
               ctx.floors.patch_and_launch_gemm_node, ctx.floors.patch_and_launch_ring2,
               ctx.floors.patch_and_launch_ring4, ctx.floors.stream_is_capturing,
               ctx.floors.graph_launch_1_driver, ctx.floors.stream_is_capturing_driver,
               ctx.floors.mem_op_write_40, ctx.floors.mem_op_write_40_and_launch,
               ctx.floors.copy_2k_and_launch);
  std::fprintf(out, "%-24s %12s %14s %14s %12s %12s %12s %12s\n", "mode", "host us/call",
               "device us/call", "e2e us/call", "tiny host", "tiny e2e", "graph floor",
               "graph floor");
  std::fprintf(out, "%-24s %12s %14s %14s %12s %12s %12s %12s\n", "", "(GPU MODE gm)",
               "(GPU MODE gm)", "(GPU MODE gm)", "us/call", "us/call", "(adjacent)", "(harness)");
  for (const ModeSummary& m : modes) {
    std::fprintf(out, "%-24s %12.2f %14.2f %14.2f %12.2f %12.2f %12.2f %12.2f\n", m.mode.c_str(),
                 m.host_us, m.device_us, m.e2e_us, m.tiny_host_us, m.tiny_e2e_us, m.graph_floor_us,
                 m.harness_floor_us);
  }
}

absl::Status WriteJson(const Context& ctx, const std::vector<ModeSummary>& modes,
                       const std::string& path, const std::string& commit,
                       const std::string& command) {
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::string j = absl::StrFormat(
      "{\n  \"date\": \"%s\",\n  \"commit\": \"%s\",\n  \"device\": \"%s (%d SMs, %d MB L2, "
      "driver %d)\",\n  \"command\": \"%s\",\n  \"floors_us\": {\"kernel_launch\": %.3f, "
      "\"graph_launch_1\": %.3f, \"graph_launch_1_harness\": %.3f, \"graph_launch_15\": %.3f, "
      "\"graph_launch_1_gemm_node\": "
      "%.3f, \"patch_gemm_node\": %.3f, \"patch_and_launch_gemm_node\": %.3f, "
      "\"patch_and_launch_ring2\": %.3f, \"patch_and_launch_ring4\": %.3f, "
      "\"stream_is_capturing\": %.3f, \"graph_launch_1_driver\": %.3f, "
      "\"stream_is_capturing_driver\": %.3f, \"mem_op_write_40\": %.3f, "
      "\"mem_op_write_40_and_launch\": %.3f, \"copy_2k_and_launch\": %.3f},\n  \"modes\": [\n",
      date, commit, ctx.device.name, ctx.device.sm_count, ctx.device.l2_bytes >> 20,
      ctx.device.driver_version, command, ctx.floors.kernel_launch, ctx.floors.graph_launch_1,
      ctx.floors.graph_launch_1_harness, ctx.floors.graph_launch_15, ctx.floors.graph_launch_1_gemm,
      ctx.floors.patch_gemm_node, ctx.floors.patch_and_launch_gemm_node,
      ctx.floors.patch_and_launch_ring2, ctx.floors.patch_and_launch_ring4,
      ctx.floors.stream_is_capturing, ctx.floors.graph_launch_1_driver,
      ctx.floors.stream_is_capturing_driver, ctx.floors.mem_op_write_40,
      ctx.floors.mem_op_write_40_and_launch, ctx.floors.copy_2k_and_launch);
  std::vector<std::string> rows;
  for (const ModeSummary& m : modes) {
    std::vector<std::string> per;
    for (const Result& r : ctx.results) {
      if (r.mode != m.mode) continue;
      per.push_back(absl::StrFormat(
          "{\"workload\": \"%s\", \"host_us\": %.3f, \"device_us\": %.3f, \"e2e_us\": %.3f, "
          "\"graph_floor_us\": %.3f, \"graph_floor_harness_us\": %.3f}",
          r.workload, r.median.host_us, r.median.device_us, r.median.e2e_us, r.graph_floor_us,
          r.harness_floor_us));
    }
    rows.push_back(absl::StrFormat(
        "    {\"mode\": \"%s\", \"host_us_per_call\": %.3f, \"device_us_per_call\": %.3f, "
        "\"e2e_geomean_us\": %.3f, \"tiny_host_us_per_call\": %.3f, \"tiny_e2e_us_per_call\": "
        "%.3f, \"graph_floor_us\": %.3f, \"tiny_graph_floor_us\": %.3f, "
        "\"graph_floor_harness_us\": %.3f, \"tiny_graph_floor_harness_us\": %.3f,\n"
        "     \"workloads\": [%s]}",
        m.mode, m.host_us, m.device_us, m.e2e_us, m.tiny_host_us, m.tiny_e2e_us, m.graph_floor_us,
        m.tiny_graph_floor_us, m.harness_floor_us, m.tiny_harness_floor_us,
        absl::StrJoin(per, ", ")));
  }
  j += absl::StrJoin(rows, ",\n") + "\n  ]\n}\n";
  std::ofstream f(path);
  if (!f) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  f << j;
  return absl::OkStatus();
}

// Takes --encore_FLAG=value out of argv (Google Benchmark rejects flags it does not know).
std::string TakeFlag(int* argc, char** argv, const std::string& name) {
  const std::string prefix = "--" + name + "=";
  std::string value;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) {
      value = argv[i] + prefix.size();
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  return value;
}

int Main(int argc, char** argv) {
  std::string command = absl::StrJoin(argv, argv + argc, " ");
  const std::string json_path = TakeFlag(&argc, argv, "encore_json");
  const std::string commit = TakeFlag(&argc, argv, "encore_commit");
  // --encore_ab_query=1: the prebuilt graphs also through the driver's calls of a hit (MakeModes).
  const bool ab_query = TakeFlag(&argc, argv, "encore_ab_query") == "1";
  // With --benchmark_format=json (or csv) stdout must stay parseable: the summary goes to stderr.
  bool machine_readable = false;
  for (int i = 1; i < argc; ++i) {
    machine_readable |= std::strncmp(argv[i], "--benchmark_format=", 19) == 0 &&
                        std::strcmp(argv[i] + 19, "console") != 0;
  }
  benchmark::Initialize(&argc, argv);

  absl::StatusOr<DeviceInfo> info = QueryDevice();
  if (!info.ok()) {
    std::fprintf(stderr, "replay: %s\nreplay: this benchmark needs an NVIDIA GPU (sm_90a).\n",
                 std::string(info.status().message()).c_str());
    return 2;
  }
  Context ctx;
  ctx.device = *info;
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "replay: %s\n", std::string(s.message()).c_str());
    return 1;
  };
  absl::StatusOr<Stream> stream = Stream::Create();
  if (!stream.ok()) return fail(stream.status());
  ctx.stream = std::move(*stream);
  absl::StatusOr<Event> e0 = Event::Create(), e1 = Event::Create();
  if (!e0.ok()) return fail(e0.status());
  if (!e1.ok()) return fail(e1.status());
  ctx.start = std::move(*e0);
  ctx.stop = std::move(*e1);
  absl::StatusOr<L2Flusher> flusher = L2Flusher::Create();
  if (!flusher.ok()) return fail(flusher.status());
  ctx.flusher = std::make_unique<L2Flusher>(std::move(*flusher));
  ctx.workloads = MakeWorkloads();
  for (Workload& w : ctx.workloads) {
    absl::StatusOr<InputSets> sets = InputSets::Create(w.shapes, kSetsPerBatch, ctx.stream.get());
    if (!sets.ok()) return fail(sets.status());
    w.sets = std::make_unique<InputSets>(std::move(*sets));
  }
  gemm::RunnerOptions options;
  options.device = ctx.device.ordinal;
  absl::StatusOr<std::unique_ptr<gemm::Nvfp4GroupedGemm>> runner =
      gemm::Nvfp4GroupedGemm::Create(options);
  if (!runner.ok()) return fail(runner.status());
  std::shared_ptr<gemm::Nvfp4GroupedGemm> shared = std::move(*runner);
  if (absl::Status s = MeasureFloors(&ctx, shared.get(), *ctx.workloads.back().sets); !s.ok()) {
    return fail(s);
  }

  options.fuse_token_prepass = gemm::FusePrepass::kAlways;
  absl::StatusOr<std::unique_ptr<gemm::Nvfp4GroupedGemm>> fused_runner =
      gemm::Nvfp4GroupedGemm::Create(options);
  if (!fused_runner.ok()) return fail(fused_runner.status());
  absl::StatusOr<std::vector<std::unique_ptr<Mode>>> modes =
      MakeModes(shared, std::shared_ptr<gemm::Nvfp4GroupedGemm>(std::move(*fused_runner)),
                ab_query);
  if (!modes.ok()) return fail(modes.status());
  for (auto& mode : *modes) {
    for (Workload& w : ctx.workloads) {
      benchmark::RegisterBenchmark(absl::StrCat(mode->name(), "/", w.name).c_str(), RunMode, &ctx,
                                   mode.get(), &w)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(kRepeats);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const std::vector<ModeSummary> summary = Summarize(ctx);
  PrintSummary(ctx, summary, machine_readable ? stderr : stdout);
  if (!json_path.empty()) {
    if (absl::Status s = WriteJson(ctx, summary, json_path, commit, command); !s.ok()) {
      return fail(s);
    }
    std::fprintf(machine_readable ? stderr : stdout, "wrote %s\n", json_path.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace encore::bench

int main(int argc, char** argv) { return encore::bench::Main(argc, argv); }
