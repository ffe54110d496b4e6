// CPU micro-benchmarks of the graph cache's hot path (no GPU needed).
//
//   BM_SignatureLookup/G: build StructuralKey + Binding from G-group arguments, hash the key,
//     find it in a populated cache map (the executor's map type: 512 entries) and compare the
//     binding exactly — everything a replayed call costs before cudaGraphLaunch.
//   BM_ExecutorHit/G: GraphExecutor::Run on a hit end to end (capture check, hit-memo probe and
//     exact compare, mutex, LRU touch, counters) with a backend whose launch does nothing.
//   BM_ExecutorRotation/B: 15 input sets in rotation with max_bindings_per_structure = B.
//   BM_ExecutorRotationCold/G: the main job's 75 per-call variants in rotation, caches evicted
//     between calls (only the Run timed).
//   BM_ExecutorHarnessCold/G: the main job's per-call batch (15 calls of one of 5 structures,
//     caches evicted before it, a driver stand-in per launch).
//   BM_BatchFlushCold/G: a batch of 15 calls of G groups (one of 5 batches), caches evicted
//     before it.
//   BM_BatchFlush/C/G: C calls of G groups added to a GemmBatch and flushed as one graph.
//   BM_SequenceStep/C/G: C calls of G groups made through a step-bounded SequenceRecorder.
//   BM_RunnerPrepare/G: the sm90 runner's Prepare (warm tensor-map cache): the host work of a
//     direct launch and of a graph-node patch.
//   BM_Validate/G/L: gemm::Validate of G groups (rotating over 15 input sets), buffers laid out
//     L = 0: each in its own allocation (interleaved in memory), 1: one slab per operand kind
//     (every group's C in one output slab, as an MoE layer's).
//
// Run: bazel run -c opt //benchmarks:signature
#include "graph_cache/signature.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "benchmark/benchmark.h"
#include "cuda_utils/device.h"
#include "cuda_utils/driver.h"
#include "gemm/grouped_gemm.h"
#include "gemm/internal/sm90_runner.h"
#include "gemm/problem.h"
#include "graph_cache/batch.h"
#include "graph_cache/executor.h"
#include "graph_cache/internal/key_words.h"
#include "graph_cache/sequence.h"

namespace encore::graph_cache {
namespace {

std::vector<gemm::GroupProblem> Groups(int ng, uintptr_t salt, int m_base) {
  std::vector<gemm::GroupProblem> g(static_cast<size_t>(ng));
  for (int i = 0; i < ng; ++i) {
    // Buffers 32 MiB apart (B is 14 MiB, C at most 8.4 MiB): Validate rejects buffers that meet.
    const uintptr_t base = (salt << 36) + (static_cast<uintptr_t>(i + 1) << 28);
    g[i] = gemm::GroupProblem{reinterpret_cast<const void*>(base + (uintptr_t{0} << 25)),
                              reinterpret_cast<const void*>(base + (uintptr_t{1} << 25)),
                              reinterpret_cast<const void*>(base + (uintptr_t{2} << 25)),
                              reinterpret_cast<const void*>(base + (uintptr_t{3} << 25)),
                              reinterpret_cast<void*>(base + (uintptr_t{4} << 25)),
                              m_base + 16 * i,
                              4096,
                              7168};
  }
  return g;
}

void BM_SignatureLookup(benchmark::State& state) {
  const int ng = static_cast<int>(state.range(0));
  using Map = absl::flat_hash_map<std::vector<uint32_t>, std::unique_ptr<Binding>,
                                  internal::WordsHash, internal::WordsEq>;
  Map map;
  CallSignature sig;
  for (int e = 0; e < 512; ++e) {  // populated with other structures
    const auto g = Groups(ng, static_cast<uintptr_t>(e), 128 + 8 * e);
    if (!BuildSignature(gemm::GroupedGemmArguments{absl::MakeConstSpan(g)}, gemm::KernelKind::kAuto,
                        {}, &sig)
             .ok()) {
      state.SkipWithError("BuildSignature failed");
      return;
    }
    const auto w = sig.key.words();
    map.emplace(std::vector<uint32_t>(w.begin(), w.end()), std::make_unique<Binding>(sig.binding));
  }
  const auto hit = Groups(ng, 77, 128 + 8 * 77);  // same as entry 77
  const gemm::GroupedGemmArguments args{absl::MakeConstSpan(hit)};
  int64_t found = 0;
  for (auto _ : state) {
    CallSignature s;  // stack, like GraphExecutor::Run
    (void)BuildSignature(args, gemm::KernelKind::kAuto, {}, &s);
    const auto words = s.key.words();
    const size_t h = internal::WordsHash()(words);
    auto it = map.find(words, h);
    found += (it != map.end() && *it->second == s.binding);
    benchmark::DoNotOptimize(found);
  }
  if (found != state.iterations()) state.SkipWithError("lookup missed");
}
BENCHMARK(BM_SignatureLookup)->Arg(8)->Arg(64);

class NullGemm final : public gemm::Nvfp4GroupedGemm {
 public:
  absl::Status CanImplement(const gemm::GroupedGemmArguments&) const override {
    return absl::OkStatus();
  }
  absl::Status Prepare(const gemm::GroupedGemmArguments& args, gemm::LaunchPlan* plan,
                       gemm::KernelKind, cudaStream_t) override {
    plan->function = this;
    plan->params_bytes = 64 * args.groups.size();
    return absl::OkStatus();
  }
  absl::Status Launch(const gemm::LaunchPlan&, cudaStream_t, bool) const override {
    return absl::OkStatus();
  }
  absl::Status Run(const gemm::GroupedGemmArguments&, cudaStream_t, gemm::KernelKind) override {
    return absl::OkStatus();
  }
  int sm_count() const override { return 132; }
};

class NullGraph final : public ExecutableGraph {
 public:
  size_t num_launches() const override { return 1; }
  absl::Status Patch(size_t, const gemm::LaunchPlan&) override { return absl::OkStatus(); }
  absl::Status Launch(cudaStream_t) override { return absl::OkStatus(); }
};

// A backend without CUDA whose every build succeeds with a `Graph`.
template <typename Graph>
class StubBackend final : public GraphBackend {
 public:
  absl::StatusOr<bool> IsCapturing(cudaStream_t) override { return false; }
  absl::StatusOr<std::unique_ptr<ExecutableGraph>> Build(gemm::Nvfp4GroupedGemm&,
                                                         absl::Span<const gemm::LaunchPlan* const>,
                                                         absl::Span<const bool>,
                                                         BuildReport* report) override {
    report->capture_begun = report->captured = report->instantiated = true;
    return std::unique_ptr<ExecutableGraph>(new Graph());
  }
};
using NullBackend = StubBackend<NullGraph>;

// An executor over `gemm` and the null backend; nullptr (and the benchmark skipped) if Create
// fails.
std::unique_ptr<GraphExecutor> NullExecutor(NullGemm* gemm, benchmark::State& state,
                                            ExecutorOptions options = {}) {
  auto exec = GraphExecutor::CreateWithBackend(gemm, std::make_unique<NullBackend>(), options);
  if (!exec.ok()) {
    state.SkipWithError("create failed");
    return nullptr;
  }
  return *std::move(exec);
}

// "ns_per_call" of a benchmark whose every iteration makes `calls` calls.
void CountNsPerCall(benchmark::State& state, int calls) {
  state.counters["ns_per_call"] =
      benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

void BM_ExecutorHit(benchmark::State& state) {
  const int ng = static_cast<int>(state.range(0));
  NullGemm gemm;
  std::unique_ptr<GraphExecutor> exec = NullExecutor(&gemm, state);
  if (exec == nullptr) return;
  std::vector<std::vector<gemm::GroupProblem>> others;
  ExecutorOptions o;
  for (int e = 0; e < 200; ++e) {  // populate: 200 structures, captured
    others.push_back(Groups(ng, static_cast<uintptr_t>(e), 128 + 8 * e));
    for (int r = 0; r < o.min_repeats; ++r) {
      (void)exec->Run(gemm::GroupedGemmArguments{absl::MakeConstSpan(others.back())}, nullptr);
    }
  }
  const gemm::GroupedGemmArguments args{absl::MakeConstSpan(others[77])};
  for (auto _ : state) {
    benchmark::DoNotOptimize(exec->Run(args, nullptr));
  }
  const ExecutorCounters c = exec->counters();
  state.counters["hits"] = static_cast<double>(c.hits);
  if (c.live_execs != 200) state.SkipWithError("expected 200 live graphs");
}
BENCHMARK(BM_ExecutorHit)->Arg(8)->Arg(64);

// A harness-style rotation: 15 input sets of one 8-group structure, called in turn, with
// max_bindings_per_structure = range(0). 16: every call is a variant hit (fingerprint scan over
// 15 variants + exact compare); 1: every call patches the one exec (here a no-op Prepare and
// Patch, so this shows only the lookup side; a real patch costs ≥ 1 µs per node).
void BM_ExecutorRotation(benchmark::State& state) {
  constexpr int kSets = 15;
  NullGemm gemm;
  ExecutorOptions o;
  o.max_bindings_per_structure = static_cast<int>(state.range(0));
  std::unique_ptr<GraphExecutor> exec = NullExecutor(&gemm, state, o);
  if (exec == nullptr) return;
  std::vector<std::vector<gemm::GroupProblem>> sets;
  for (int i = 0; i < kSets; ++i) sets.push_back(Groups(8, static_cast<uintptr_t>(i + 1), 256));
  for (int round = 0; round < 4; ++round) {  // warm-up: every set gets its variant (if room)
    for (auto& g : sets) {
      (void)exec->Run(gemm::GroupedGemmArguments{absl::MakeConstSpan(g)}, nullptr);
    }
  }
  const ExecutorCounters warm = exec->counters();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        exec->Run(gemm::GroupedGemmArguments{absl::MakeConstSpan(sets[i])}, nullptr));
    i = i + 1 == kSets ? 0 : i + 1;
  }
  const ExecutorCounters c = exec->counters();
  state.counters["patches/call"] =
      static_cast<double>(c.patches - warm.patches) / static_cast<double>(state.iterations());
  state.counters["execs"] = static_cast<double>(c.live_execs);
}
BENCHMARK(BM_ExecutorRotation)->Arg(16)->Arg(1);

// Reads 8 MiB of its own data (more than an L2 per core, here and on the GPU host), evicting
// what a benchmark touched before: as on a host whose caches are shared with a busy neighbour
// (NOTES session 25, the slow state).
class Evictor {
 public:
  void Evict() {
    for (size_t j = 0; j < other_.size(); j += 8) sink_ += other_[j];
    benchmark::DoNotOptimize(sink_);
  }

 private:
  std::vector<uint64_t> other_ = std::vector<uint64_t>((8u << 20) / sizeof(uint64_t), 1);
  uint64_t sink_ = 0;
};

// The main job's per-call variants (5 structures x 15 input sets of `groups` groups: the 75
// variants //benchmarks:replay's graph_per_call holds), captured and warmed up on an executor over
// `backend` (max_bindings_per_structure 16: a variant per input set), and an Evictor.
class ColdRotation {
 public:
  static constexpr size_t kStructures = 5;
  static constexpr size_t kSets = 15;
  // nullptr (and the benchmark skipped) if the executor cannot be created.
  static std::unique_ptr<ColdRotation> Create(benchmark::State& state,
                                              std::unique_ptr<GraphBackend> backend) {
    auto rot = std::unique_ptr<ColdRotation>(new ColdRotation());
    ExecutorOptions o;
    o.max_bindings_per_structure = 16;
    auto exec = GraphExecutor::CreateWithBackend(&rot->gemm_, std::move(backend), o);
    if (!exec.ok()) {
      state.SkipWithError("create failed");
      return nullptr;
    }
    rot->exec_ = *std::move(exec);
    const int groups = static_cast<int>(state.range(0));
    for (size_t s = 0; s < kStructures; ++s) {
      for (size_t i = 0; i < kSets; ++i) {
        rot->sets_.push_back(Groups(groups, s * kSets + i + 1, 64 + 32 * static_cast<int>(s)));
      }
    }
    for (int round = 0; round < 4; ++round) {
      for (size_t i = 0; i < rot->sets_.size(); ++i) (void)rot->Run(i);
    }
    rot->warm_ = rot->exec_->counters();
    return rot;
  }
  // Call i, structure-major (structure i / kSets, input set i % kSets).
  absl::Status Run(size_t i) {
    return exec_->Run(gemm::GroupedGemmArguments{absl::MakeConstSpan(sets_[i])}, nullptr);
  }
  void Evict() { evictor_.Evict(); }
  size_t calls() const { return sets_.size(); }
  // Fast hits per call since the warm-up, over `calls` timed calls.
  double FastHitsPerCall(double calls) const {
    return static_cast<double>(exec_->counters().fast_hits - warm_.fast_hits) / calls;
  }
  uint64_t live_execs() const { return exec_->counters().live_execs; }

 private:
  ColdRotation() = default;
  NullGemm gemm_;  // declared before exec_: outlives it
  std::unique_ptr<GraphExecutor> exec_;
  std::vector<std::vector<gemm::GroupProblem>> sets_;
  Evictor evictor_;
  ExecutorCounters warm_;
};

// The main job's per-call replay with cold caches: its 75 variants called in rotation, and
// between two calls the caches evicted (ColdRotation), so the executor's own lines come from the
// last-level cache or memory. Only the Run is timed (manual time: one clock pair around it).
void BM_ExecutorRotationCold(benchmark::State& state) {
  std::unique_ptr<ColdRotation> rot = ColdRotation::Create(state, std::make_unique<NullBackend>());
  if (rot == nullptr) return;
  size_t i = 0;
  for (auto _ : state) {
    rot->Evict();
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(rot->Run(i));
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    // Structure-major rotation: one call of each structure, then the next input set.
    i += ColdRotation::kSets;
    if (i >= rot->calls()) i = (i + 1) % ColdRotation::kSets;
  }
  state.counters["fast_hits/call"] = rot->FastHitsPerCall(static_cast<double>(state.iterations()));
  state.counters["execs"] = static_cast<double>(rot->live_execs());
}
BENCHMARK(BM_ExecutorRotationCold)
    ->Arg(2)
    ->Arg(8)
    ->UseManualTime()
    ->Iterations(4000)
    ->Repetitions(5)
    ->Unit(benchmark::kNanosecond);

// How the cold batch benchmarks run: manual time, 2000 batches x 5; ColdBatchRuns: 2 and 8
// groups a call.
void ColdRuns(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Iterations(2000)->Repetitions(5)->ReportAggregatesOnly(true);
  b->Unit(benchmark::kNanosecond);
}
void ColdBatchRuns(benchmark::internal::Benchmark* b) { ColdRuns(b->Arg(2)->Arg(8)); }

// A graph whose launch stands in for the driver's (~1.5 us, reading 32 KB of its own data).
class DriverLikeGraph final : public ExecutableGraph {
 public:
  size_t num_launches() const override { return 1; }
  absl::Status Patch(size_t, const gemm::LaunchPlan&) override { return absl::OkStatus(); }
  absl::Status Launch(cudaStream_t) override {
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t sink = 0;
    for (size_t j = 0; j < kDriverWords; j += 8) sink += driver_data_[j];
    benchmark::DoNotOptimize(sink);
    auto t1 = std::chrono::steady_clock::now();
    while (t1 - t0 < std::chrono::nanoseconds(1500)) t1 = std::chrono::steady_clock::now();
    spent_ += t1 - t0;
    return absl::OkStatus();
  }
  // Time spent in Launch since the last call (the benchmark subtracts it).
  static std::chrono::steady_clock::duration TakeSpent() {
    const auto s = spent_;
    spent_ = {};
    return s;
  }

 private:
  static constexpr size_t kDriverWords = (32u << 10) / sizeof(uint64_t);
  static inline uint64_t driver_data_[kDriverWords] = {};
  static inline std::chrono::steady_clock::duration spent_{};
};

using DriverLikeBackend = StubBackend<DriverLikeGraph>;

// The main job's per-call batch as its harness times it: per iteration one structure's 15 calls
// (ColdRotation) timed together after the caches were evicted (the sync between batches), each
// graph launch standing in for the driver's (DriverLikeGraph). The time is per call, the
// stand-in's excluded.
void BM_ExecutorHarnessCold(benchmark::State& state) {
  std::unique_ptr<ColdRotation> rot =
      ColdRotation::Create(state, std::make_unique<DriverLikeBackend>());
  if (rot == nullptr) return;
  size_t structure = 0;
  for (auto _ : state) {
    rot->Evict();
    (void)DriverLikeGraph::TakeSpent();
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < ColdRotation::kSets; ++i) {
      benchmark::DoNotOptimize(rot->Run(structure * ColdRotation::kSets + i));
    }
    const auto t1 = std::chrono::steady_clock::now();
    const auto own = t1 - t0 - DriverLikeGraph::TakeSpent();
    state.SetIterationTime(std::chrono::duration<double>(own).count() / ColdRotation::kSets);
    structure = (structure + 1) % ColdRotation::kStructures;
  }
  state.counters["fast_hits/call"] =
      rot->FastHitsPerCall(static_cast<double>(ColdRotation::kSets * state.iterations()));
}
BENCHMARK(BM_ExecutorHarnessCold)->Apply(ColdBatchRuns);

// range(0) calls' groups (range(1) groups each, distinct buffers) for the batch and sequence
// benchmarks.
std::vector<std::vector<gemm::GroupProblem>> CallSets(const benchmark::State& state) {
  std::vector<std::vector<gemm::GroupProblem>> sets;
  for (int i = 0; i < static_cast<int>(state.range(0)); ++i) {
    sets.push_back(Groups(static_cast<int>(state.range(1)), static_cast<uintptr_t>(i + 1), 64));
  }
  return sets;
}

// The replay benchmark's batch mode on the host: range(0) calls of G = range(1) groups added to
// a GemmBatch and flushed as one (null) graph. Time per iteration / calls = the host cost per call
// a batch adds on top of the graph launch.
// Adds `calls` to `batch` and flushes it (one graph); false if any step fails.
bool AddAndFlush(GemmBatch& batch, absl::Span<const std::vector<gemm::GroupProblem>> calls) {
  for (const auto& g : calls) {
    if (!batch.Add(gemm::GroupedGemmArguments{absl::MakeConstSpan(g)}).ok()) return false;
  }
  return batch.Flush(nullptr).ok();
}

void BM_BatchFlush(benchmark::State& state) {
  const int calls = static_cast<int>(state.range(0));
  NullGemm gemm;
  std::unique_ptr<GraphExecutor> exec = NullExecutor(&gemm, state);
  if (exec == nullptr) return;
  std::vector<std::vector<gemm::GroupProblem>> sets = CallSets(state);
  GemmBatch batch(exec.get());
  for (int round = 0; round < 4; ++round) AddAndFlush(batch, sets);  // captured by now
  for (auto _ : state) benchmark::DoNotOptimize(AddAndFlush(batch, sets));
  CountNsPerCall(state, calls);
}
BENCHMARK(BM_BatchFlush)->Args({15, 2})->Args({15, 8});

// GemmBatch::Flush of 15 calls of range(0) groups with cold caches: range(1) batches (distinct
// buffers) in rotation, 8 MiB of other data read before each (untimed), the batch's Add and Flush
// timed. The time is per call. With one batch every flush equals the last one (the replay
// benchmark's batch modes: GemmBatch's ticket); with 5 none does (the executor's memo).
void BM_BatchFlushCold(benchmark::State& state) {
  const int kBatches = static_cast<int>(state.range(1));
  constexpr int kCalls = 15;
  NullGemm gemm;
  std::unique_ptr<GraphExecutor> exec = NullExecutor(&gemm, state);
  if (exec == nullptr) return;
  const int ng = static_cast<int>(state.range(0));
  std::vector<std::vector<gemm::GroupProblem>> sets;
  for (int b = 0; b < kBatches; ++b) {
    for (int i = 0; i < kCalls; ++i) {
      sets.push_back(Groups(ng, static_cast<uintptr_t>(b * kCalls + i + 1), 64 + 8 * i));
    }
  }
  GemmBatch batch(exec.get());
  // Batch b: calls [b * kCalls, (b + 1) * kCalls) of `sets`.
  const auto flush = [&](int b) {
    return AddAndFlush(batch, absl::MakeConstSpan(sets).subspan(b * kCalls, kCalls));
  };
  for (int round = 0; round < 4; ++round) {
    for (int b = 0; b < kBatches; ++b) flush(b);  // captured by now
  }
  Evictor evictor;
  const ExecutorCounters warm = exec->counters();
  int b = 0;
  for (auto _ : state) {
    evictor.Evict();
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(flush(b));
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / kCalls);
    b = (b + 1) % kBatches;
  }
  const ExecutorCounters c = exec->counters();
  state.counters["fast_hits/call"] = static_cast<double>(c.fast_hits - warm.fast_hits) /
                                     static_cast<double>(kCalls * state.iterations());
}
BENCHMARK(BM_BatchFlushCold)->Apply([](benchmark::internal::Benchmark* b) {
  ColdRuns(b->ArgsProduct({{2, 8}, {1, 5}}));
});

// The replay benchmark's sequence_step mode on the host: range(0) calls of G = range(1) groups
// made through a step-bounded SequenceRecorder, then EndStep; once the period is learned, each
// step is deferred call by call and launched as one (null) graph at its last call.
void BM_SequenceStep(benchmark::State& state) {
  const int calls = static_cast<int>(state.range(0));
  NullGemm gemm;
  std::unique_ptr<GraphExecutor> exec = NullExecutor(&gemm, state);
  if (exec == nullptr) return;
  SequenceOptions options;
  options.mode = SequenceMode::kStepBounded;
  auto rec = SequenceRecorder::Create(exec.get(), nullptr, options);
  if (!rec.ok()) {
    state.SkipWithError("recorder create failed");
    return;
  }
  std::vector<std::vector<gemm::GroupProblem>> sets = CallSets(state);
  auto step = [&]() {
    for (auto& g : sets) {
      if (!(*rec)->Run(gemm::GroupedGemmArguments{absl::MakeConstSpan(g)}).ok()) return false;
    }
    return (*rec)->EndStep().ok();
  };
  for (int round = 0; round < 8; ++round) step();  // learned and captured by now
  const uint64_t launches = (*rec)->counters().period_launches;
  for (auto _ : state) benchmark::DoNotOptimize(step());
  if ((*rec)->counters().period_launches - launches != static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("not every step was one period launch");
  }
  CountNsPerCall(state, calls);
}
BENCHMARK(BM_SequenceStep)->Args({15, 2})->Args({15, 8});

CUresult NullEncode(CUtensorMap* map, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                    const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                    CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  std::memset(map, 0, sizeof(*map));
  return CUDA_SUCCESS;
}

// The sm90 runner's Prepare on a warm tensor-map cache, rotating over 15 input sets of G groups
// (GPU MODE shape 0 sizes): the host work of a direct launch and of every graph-node patch
// (graph_rebind), without the launch itself.
void BM_RunnerPrepare(benchmark::State& state) {
  const int ng = static_cast<int>(state.range(0));
  DeviceInfo info;
  info.sm_count = 132;
  DriverApi api;
  api.tensor_map_encode_tiled = &NullEncode;
  std::unique_ptr<gemm::Nvfp4GroupedGemm> runner =
      gemm::internal::CreateSm90RunnerWithoutDevice(info, api, 4096);
  std::vector<std::vector<gemm::GroupProblem>> sets;
  for (int i = 0; i < 15; ++i) sets.push_back(Groups(ng, static_cast<uintptr_t>(i + 1), 64));
  auto plan = std::make_unique<gemm::LaunchPlan>();
  for (auto& g : sets) {
    if (absl::Status s = runner->Prepare(gemm::GroupedGemmArguments{g}, plan.get()); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(runner->Prepare(gemm::GroupedGemmArguments{sets[i]}, plan.get()));
    i = i + 1 == sets.size() ? 0 : i + 1;
  }
}
BENCHMARK(BM_RunnerPrepare)->Arg(2)->Arg(8)->Arg(64);

void BM_Validate(benchmark::State& state) {
  const int ng = static_cast<int>(state.range(0));
  const bool slabs = state.range(1) != 0;
  std::vector<std::vector<gemm::GroupProblem>> sets;
  for (int i = 0; i < 15; ++i) {
    std::vector<gemm::GroupProblem> g = Groups(ng, static_cast<uintptr_t>(i + 1), 64);
    if (slabs) {
      // Operand kind f of every group in one slab (f << 32 from the set's base), group after group.
      const uintptr_t base = static_cast<uintptr_t>(i + 1) << 36;
      uintptr_t off[5] = {};
      for (gemm::GroupProblem& p : g) {
        const gemm::OperandBytes ob = gemm::OperandBytesOf(p);
        const size_t bytes[5] = {ob.a, ob.b, ob.sfa, ob.sfb, ob.c};
        const void** in[4] = {&p.a, &p.b, &p.sfa, &p.sfb};
        for (int f = 0; f < 5; ++f) {
          const uintptr_t at = base + (static_cast<uintptr_t>(f) << 32) + off[f];
          if (f < 4) *in[f] = reinterpret_cast<const void*>(at);
          else p.c = reinterpret_cast<void*>(at);
          off[f] += (bytes[f] + 255) / 256 * 256;
        }
      }
    }
    sets.push_back(std::move(g));
  }
  for (auto& g : sets) {
    if (absl::Status s = gemm::Validate(gemm::GroupedGemmArguments{g}); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(gemm::Validate(gemm::GroupedGemmArguments{sets[i]}));
    i = i + 1 == sets.size() ? 0 : i + 1;
  }
}
BENCHMARK(BM_Validate)->ArgsProduct({{1, 8, 64}, {0, 1}});

}  // namespace
}  // namespace encore::graph_cache

BENCHMARK_MAIN();
