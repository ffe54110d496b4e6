// NVFP4 grouped GEMM timings on the GPU MODE benchmark shapes, timed like that harness: 15
// distinct input sets (more bytes than L2 in total) run back to back, L2 flushed before each
// batch by writing a buffer of 2x the L2 size read from the device, CUDA events around the
// batch, per-call mean; Google Benchmark repetitions give the median. Also a crossover sweep
// (simple vs persistent kernel over the tile count).
//
// Run: ./sm90_nvfp4_grouped_gemm --benchmark_out=bench.json --benchmark_out_format=json
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cuda_utils/device.h"
#include "cuda_utils/raii.h"
#include "gemm/grouped_gemm.h"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"
#include "gemm/launch.h"
#include "gemm/problem.h"
#if ENCORE_SM90_EXP_STAMPS
#include "benchmarks/internal/stamp_timeline.h"
#endif
#if ENCORE_SM90_EXP_STAMPS || ENCORE_SM90_EXP_WAITS
#include "gemm/sm90_nvfp4_grouped_gemm.h"
#endif

namespace encore::gemm {
namespace {

constexpr int kInputSets = 15;

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void Check(const absl::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    std::exit(1);
  }
}

// Candidate stream-K cost constants (RunnerOptions::stream_k_costs, PackCost units of ~4.5 ns:
// piece_fixed, io_fixed, io_per_row), compared on the stream-K shapes by
// "<prefix>/<shape>/stream_k/costs<i>". 0: the defaults (since run 92: {150, 230, 2}); 1: run 75's
// ({150, 0, 4}); the others from session 12's stamps (run 88): a piece's loop start, gap and
// epilogue ~1.3-2.2 us (300-450 units), a split's store or read ~1.0 us + ~0.01 us per token row.
// (Run 92 measured this list in another order: its costs<i> are listed in its README.)
// 6-8: the defaults with decode_rows 176 / 192 / 208 (run 129's stamps inside shape 0: narrow
// tiles' k-blocks cost relative to 256-row ones what (rows + 192) / 2 says, not (rows + 160) / 2;
// run 134: shape 0 99.3 / 102 / 106 us vs 95.6, so the stamps build misleads here); 9-11: 144 /
// 128 / 96 (run 135: 99.2 / 101.5 / 110); 12: 64 (for the build without the weight decode,
// _exp_nowgt, whose narrow tiles cost less: the re-balanced measurement of run 140's caveat).
// 13-14: the defaults with half / a quarter of the split's io cost ({115, 1}, {60, 1}; run 144:
// shape 0 96.2 / 96.6 us vs 95.6, one_tile 16.9 / 16.9 vs 17.2; also worse for run 147's
// split-pieces-first walk, reverted).
constexpr StreamKCosts kSkCosts[] = {
    StreamKCosts{},     {150, 0, 4},        {300, 230, 2},      {450, 230, 2},
    {300, 0, 4},        {450, 0, 4},        {150, 230, 2, 176}, {150, 230, 2, 192},
    {150, 230, 2, 208}, {150, 230, 2, 144}, {150, 230, 2, 128}, {150, 230, 2, 96},
    {150, 230, 2, 64},  {150, 115, 1},      {150, 60, 1},
};
constexpr int kNumSkCosts = static_cast<int>(std::size(kSkCosts));

// GPU-MODE-like bytes: e2m1 codes & 0xBB, scales 1.0 or 2.0 (e4m3 0x38 / 0x40).
std::vector<uint8_t> RandomBytes(size_t n, uint64_t seed, bool scales) {
  std::vector<uint8_t> v(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    for (size_t j = 0; j < 8 && i + j < n; ++j) {
      const uint8_t b = static_cast<uint8_t>(x >> (8 * j));
      v[i + j] = scales ? ((b & 1) ? 0x40 : 0x38) : (b & 0xBB);
    }
  }
  return v;
}

struct InputSet {
  std::vector<DeviceBuffer> buffers;
  std::vector<GroupProblem> groups;
};

// One device copy per set of the same host bytes: distinct addresses defeat the L2 just as
// distinct contents would. `shared_weights`: every set's groups read set 0's weights and weight
// scales (CallMode::shared_weights).
std::vector<InputSet> MakeSets(const std::vector<int>& ms, int n, int k, int sets,
                               bool shared_weights = false) {
  size_t max_a = 0, max_sfa = 0;
  for (int m : ms) {
    max_a = std::max(max_a, static_cast<size_t>(m) * k / 2);
    max_sfa = std::max(max_sfa, BlockedScaleBytes(m, k));
  }
  const size_t b_bytes = static_cast<size_t>(n) * k / 2, sfb_bytes = BlockedScaleBytes(n, k);
  const std::vector<uint8_t> ha = RandomBytes(max_a, 1, false), hb = RandomBytes(b_bytes, 2, false);
  const std::vector<uint8_t> hsa = RandomBytes(max_sfa, 3, true),
                             hsb = RandomBytes(sfb_bytes, 4, true);
  auto upload = [](const std::vector<uint8_t>& h, size_t bytes) {
    auto buf = DeviceBuffer::Create(std::max<size_t>(bytes, 16));
    Check(buf.status());
    if (bytes) Check(cudaMemcpy(buf->get(), h.data(), bytes, cudaMemcpyHostToDevice), "upload");
    return std::move(*buf);
  };
  std::vector<InputSet> out(sets);
  for (InputSet& s : out) {
    for (size_t g = 0; g < ms.size(); ++g) {
      const int m = ms[g];
      GroupProblem p;
      s.buffers.push_back(upload(ha, static_cast<size_t>(m) * k / 2));
      p.a = s.buffers.back().get();
      s.buffers.push_back(upload(hsa, BlockedScaleBytes(m, k)));
      p.sfa = s.buffers.back().get();
      if (shared_weights && &s != &out[0]) {
        p.b = out[0].groups[g].b;
        p.sfb = out[0].groups[g].sfb;
      } else {
        s.buffers.push_back(upload(hb, b_bytes));
        p.b = s.buffers.back().get();
        s.buffers.push_back(upload(hsb, sfb_bytes));
        p.sfb = s.buffers.back().get();
      }
      auto c = DeviceBuffer::Create(static_cast<size_t>(m) * n * 2);
      Check(c.status());
      s.buffers.push_back(std::move(*c));
      p.c = s.buffers.back().get();
      p.m = m;
      p.n = n;
      p.k = k;
      s.groups.push_back(p);
    }
  }
  return out;
}

DeviceBuffer& FlushBuffer() {
  static DeviceBuffer buf = [] {
    auto info = QueryDevice();
    Check(info.status());
    auto b = DeviceBuffer::Create(2 * static_cast<size_t>(info->l2_bytes));
    Check(b.status());
    return std::move(*b);
  }();
  return buf;
}

// Which kernels of a call the timed batches launch: both (the call), or, to split a call's time,
// only its GEMM (the tokens the warm-up's pre-passes left in the workspace: wrong results, the
// same work) or only its token pre-pass.
enum class Part { kCall, kGemmOnly, kPrepassOnly };

// How a timed batch prepares and launches its calls (the defaults: the runner's default options,
// whole calls, launched as Nvfp4GroupedGemm::Run launches them: PDL where plan.prefers_pdl).
struct CallMode {
  TokenPrepass prepass = TokenPrepass::kAuto;
  FusePrepass fuse = FusePrepass::kAuto;  // RunnerOptions::fuse_token_prepass (prepass kAuto)
  Part part = Part::kCall;
  bool pdl = false;  // Launch(plan, stream, pdl || plan.prefers_pdl)
  int tile_rows = 0;      // RunnerOptions::token_tile_rows
  bool unpacked = false;  // RunnerOptions::pack_tiles = false
  int sk_costs = 0;       // RunnerOptions::stream_k_costs = kSkCosts[sk_costs]
  int pad_bound = 0;      // RunnerOptions::prepass_pad_blocks_per_sm (0: default; -1: no padding)
  bool pad_large = true;  // RunnerOptions::pad_large_prepasses
  int instance = 0;       // > 0: another runner with the same options
  int input_shift_mb = 0;  // > 0: this many MB of device memory allocated before the input sets
  StreamTiles stream = StreamTiles::kAuto;  // RunnerOptions::stream_simple_tiles
  // Bound plans (PrepareBound for the benchmark's stream; WriteBindings before every launch).
  bool bound = false;
  // PlanOptions as a multi-call graph of these independent calls gets them: call i's pre-pass on
  // workspace half i % 2, reading before its wait (PlanOptions::prepass_reads_early).
  bool early = false;
  // > 0: consecutive independent calls merged into one grouped GEMM of their groups together, at
  // most this many calls (and kMaxGroups groups) a launch, each launch prepared as `early` (its
  // pre-pass on workspace half j % 2); the runner's token workspace is 256 MB so a merged launch's
  // tokens fit one half. Per-call time is still the batch's time over its 15 calls.
  int merge = 0;
  // Every call reads the same weights (MakeSets' shared_weights): after the batch's first call
  // they come from the L2 where they fit, which bounds what a prefetch of a call's weights into
  // the L2 ahead of its GEMM could save.
  bool shared_weights = false;
};

// One runner per distinct option set of a CallMode (the fields that configure RunnerOptions, and
// `instance`: another runner with the same options, its own workspaces).
Nvfp4GroupedGemm* Runner(const CallMode& how) {
  static std::map<std::tuple<int, int, int, bool, int, int, bool, int, int, bool>,
                  std::unique_ptr<Nvfp4GroupedGemm>>
      runners;
  std::unique_ptr<Nvfp4GroupedGemm>& runner = runners[std::make_tuple(
      static_cast<int>(how.prepass), static_cast<int>(how.fuse), how.tile_rows, how.unpacked,
      how.sk_costs, how.pad_bound, how.pad_large, how.instance, static_cast<int>(how.stream),
      how.merge > 0)];
  if (runner == nullptr) {
    RunnerOptions options;
    if (how.pad_bound < 0) options.pad_prepass_for_pdl = false;
    if (how.pad_bound > 0) options.prepass_pad_blocks_per_sm = how.pad_bound;
    options.pad_large_prepasses = how.pad_large;
    options.token_prepass = how.prepass;
    options.fuse_token_prepass = how.fuse;
    options.token_tile_rows = how.tile_rows;
    options.stream_simple_tiles = how.stream;
    options.pack_tiles = !how.unpacked;
    options.stream_k_costs = kSkCosts[how.sk_costs];
    if (how.merge > 0) options.token_workspace_bytes = size_t{256} << 20;
    auto r = Nvfp4GroupedGemm::Create(options);
    Check(r.status());
    runner = std::move(*r);
  }
  return runner.get();
}

CallMode Prepass(TokenPrepass prepass) {
  CallMode m;
  m.prepass = prepass;
  return m;
}
// The pre-pass fused wherever the grid fits (FusePrepass::kAlways).
CallMode Fused(bool pdl = false) {
  CallMode m;
  m.fuse = FusePrepass::kAlways;
  m.pdl = pdl;
  return m;
}
// The pre-pass always its own kernel (FusePrepass::kNever), launched as Run launches it.
CallMode Unfused() {
  CallMode m;
  m.fuse = FusePrepass::kNever;
  return m;
}
CallMode Pdl() {
  CallMode m;
  m.pdl = true;
  return m;
}
CallMode TileRows(int rows) {
  CallMode m;
  m.tile_rows = rows;
  return m;
}
CallMode Stream(StreamTiles s) {
  CallMode m;
  m.stream = s;
  return m;
}
CallMode Unpacked() {
  CallMode m;
  m.unpacked = true;
  return m;
}
CallMode Padding(int bound, bool large) {
  CallMode m;
  m.pad_bound = bound;
  m.pad_large = large;
  return m;
}
CallMode SharedWeights() {
  CallMode m;
  m.shared_weights = true;
  return m;
}
CallMode Only(Part part) {  // (unfused: the parts of a call with a pre-kernel)
  CallMode m;
  m.part = part;
  m.fuse = FusePrepass::kNever;
  return m;
}

// `plan` reduced to one of its kernels (`part` != kCall; plans with a pre-kernel only): the
// pre-kernel launched without a PDL edge (unpadded: the pre-pass's padding only bounds its blocks
// beside a GEMM), or the GEMM.
void KeepOnly(Part part, LaunchPlan* plan) {
  if (part == Part::kGemmOnly) {
    plan->pre.function = nullptr;
    return;
  }
  const PreLaunch pre = plan->pre;
  plan->function = pre.function;
  plan->grid = pre.grid;
  plan->block = pre.block;
  plan->dynamic_smem_bytes = 0;
  plan->supports_pdl = false;
  plan->params_bytes = pre.params_bytes;
  std::memcpy(plan->params, pre.params, pre.params_bytes);
  plan->pre.function = nullptr;
}

#if ENCORE_SM90_EXP_STAMPS
// The stamps/ family (the measurement build _exp_stamps only): one more flushed batch with the
// kernels' stamp log on, printed as a time line per call (benchmarks/internal/stamp_timeline.h),
// launched as the timed batches are (`pdl`: run 112's time lines launched without PDL and showed
// boundaries the timed calls do not have).
void PrintTimeline(const std::string& name, Nvfp4GroupedGemm* gemm,
                   const std::vector<std::unique_ptr<LaunchPlan>>& plans, cudaStream_t stream,
                   bool pdl) {
  constexpr uint32_t kCapacity = 1u << 20;
  auto records = DeviceBuffer::Create(kCapacity * sizeof(sm90::StampRecord));
  auto log = DeviceBuffer::Create(sizeof(sm90::StampLog));
  Check(records.status());
  Check(log.status());
  // The GEMM CTAs reserve slots in blocks (stamps.cuh StampCtaBegin): unused ones keep this fill.
  Check(cudaMemset(records->get(), 0xff, kCapacity * sizeof(sm90::StampRecord)), "log fill");
  const sm90::StampLog host_log{0, kCapacity, static_cast<sm90::StampRecord*>(records->get())};
  Check(cudaMemcpy(log->get(), &host_log, sizeof(host_log), cudaMemcpyHostToDevice), "log");
  DeviceBuffer& flush = FlushBuffer();
  Check(cudaMemsetAsync(flush.get(), 0, flush.size(), stream), "L2 flush");
  Check(cudaStreamSynchronize(stream), "flush");
  Check(sm90::SetStampLog(static_cast<sm90::StampLog*>(log->get())), "stamp log on");
  for (auto& p : plans) Check(gemm->Launch(*p, stream, pdl));
  Check(cudaStreamSynchronize(stream), "stamped batch");
  Check(sm90::SetStampLog(nullptr), "stamp log off");
  sm90::StampLog back;
  Check(cudaMemcpy(&back, log->get(), sizeof(back), cudaMemcpyDeviceToHost), "log back");
  std::vector<sm90::StampRecord> recs(std::min(back.count, kCapacity));
  Check(cudaMemcpy(recs.data(), records->get(), recs.size() * sizeof(recs[0]),
                   cudaMemcpyDeviceToHost),
        "records back");
  benchmarks::DropUnusedSlots(&recs);
  std::printf("== %s: %zu stamps in %u slots%s\n%s", name.c_str(), recs.size(), back.count,
              back.count > kCapacity ? " (log full: some dropped)" : "",
              benchmarks::FormatTimeline(benchmarks::BuildTimeline(recs)).c_str());
  const std::vector<benchmarks::CtaProfile> profile = benchmarks::BuildCtaProfile(recs);
  std::printf("%s", benchmarks::FormatCtaProfile(profile).c_str());
  if (!profile.empty()) std::printf("%s", benchmarks::FormatPieces(profile.back()).c_str());
}
#endif

void TimeBatches(benchmark::State& state, const std::string& name, const std::vector<int>& ms,
                 int n, int k, KernelKind kind, const CallMode& how) {
  const Part part = how.part;
  bool pdl = how.pdl;
  // (CallMode::input_shift_mb: moves where the input sets land, held until the batches are timed)
  DeviceBuffer shift;
  if (how.input_shift_mb > 0) {
    auto b = DeviceBuffer::Create(static_cast<size_t>(how.input_shift_mb) << 20);
    Check(b.status());
    shift = std::move(*b);
  }
  std::vector<InputSet> sets = MakeSets(ms, n, k, kInputSets, how.shared_weights);
  Nvfp4GroupedGemm* gemm = Runner(how);
  // NOTES: plans are prepared for the default stream's token workspace and launched on this
  // benchmark's own stream only (ordered: never two benchmarks at once), so no per-benchmark
  // stream takes one of the runner's max_token_workspaces slots.
  // (Bound plans are prepared for the stream they run on, its binding ring and workspace: one
  // stream for every bound benchmark, so that they take one of the runner's
  // max_token_workspaces slots.)
  const bool bound = how.bound;
  static absl::StatusOr<encore::Stream>* bound_stream =
      new absl::StatusOr<encore::Stream>(encore::Stream::Create());
  absl::StatusOr<encore::Stream> own_stream =
      bound ? absl::StatusOr<encore::Stream>(encore::Stream())
            : absl::StatusOr<encore::Stream>(encore::Stream::Create());
  absl::StatusOr<encore::Stream>& stream = bound ? *bound_stream : own_stream;
  Check(stream.status());
  std::vector<std::unique_ptr<LaunchPlan>> plans;
  // Merged launches (CallMode::merge): sets [first, first + calls) as one call's groups.
  std::vector<std::vector<GroupProblem>> merged;
  for (size_t first = 0; how.merge > 0 && first < sets.size();) {
    merged.emplace_back();
    const size_t end = first + static_cast<size_t>(how.merge);
    for (; first < sets.size() && first < end &&
           merged.back().size() + sets[first].groups.size() <= kMaxGroups;
         ++first) {
      merged.back().insert(merged.back().end(), sets[first].groups.begin(),
                           sets[first].groups.end());
    }
  }
  // Launch j as a multi-call graph prepares it: workspace half j % 2, its pre-pass reading early.
  const auto early_options = [&plans] {
    PlanOptions o;
    o.token_workspace_half = static_cast<int>(plans.size() - 1) % 2;
    o.prepass_reads_early = true;
    return o;
  };
  for (const std::vector<GroupProblem>& groups : merged) {
    plans.push_back(std::make_unique<LaunchPlan>());
    Check(gemm->PrepareWith(GroupedGemmArguments{groups, nullptr}, plans.back().get(), kind,
                            nullptr, early_options()));
  }
  for (InputSet& s : sets) {
    if (how.merge > 0) break;
    plans.push_back(std::make_unique<LaunchPlan>());
    const GroupedGemmArguments args{s.groups, nullptr};
    if (bound) {
      Check(gemm->PrepareBound(args, plans.back().get(), kind, stream->get()));
    } else if (how.early) {
      Check(gemm->PrepareWith(args, plans.back().get(), kind, nullptr, early_options()));
    } else {
      Check(gemm->Prepare(args, plans.back().get(), kind));
    }
  }
  // Every launch of a bound plan writes its set's bindings first.
  auto launch = [&](size_t i) {
    if (bound) {
      Check(gemm->WriteBindings(GroupedGemmArguments{sets[i].groups, nullptr}, stream->get()));
    }
    Check(gemm->Launch(*plans[i], stream->get(), pdl));
  };
  auto start = Event::Create(), stop = Event::Create();
  Check(start.status());
  Check(stop.status());
  DeviceBuffer& flush = FlushBuffer();
  // Split calls (part != kCall) keep the caller's flag; whole calls launch as Run does.
  if (part == Part::kCall) pdl = pdl || plans[0]->prefers_pdl;
  for (size_t i = 0; i < plans.size(); ++i) launch(i);  // warm-up
  Check(cudaStreamSynchronize(stream->get()), "warm-up");
  const bool had_pre = plans[0]->has_pre();
  if (part != Part::kCall) {
    if (!had_pre) {
      state.SkipWithError("the plan has no pre-kernel to split off");
      return;
    }
    for (auto& p : plans) KeepOnly(part, p.get());
  }
#if ENCORE_SM90_EXP_WAITS
  uint64_t waits[sm90::kWaitCounters] = {};
  Check(sm90::ReadWaitCounters(waits), "wait counters reset");
#endif
  for (auto _ : state) {
    Check(cudaMemsetAsync(flush.get(), 0, flush.size(), stream->get()), "L2 flush");
    Check(cudaEventRecord(start->get(), stream->get()), "record");
    for (size_t i = 0; i < plans.size(); ++i) launch(i);
    Check(cudaEventRecord(stop->get(), stream->get()), "record");
    Check(cudaEventSynchronize(stop->get()), "sync");
    float ms_elapsed = 0;
    Check(cudaEventElapsedTime(&ms_elapsed, start->get(), stop->get()), "elapsed");
    state.SetIterationTime(ms_elapsed * 1e-3 / kInputSets);
  }
  double flops = 0;
  for (int m : ms) flops += 2.0 * m * n * k;
  state.counters["tflops"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tiles"] = plans[0]->num_tiles;
  state.counters["persistent"] = plans[0]->kind == KernelKind::kPersistent;
  state.counters["stream_k"] = plans[0]->kind == KernelKind::kStreamK;
  state.counters["prepass"] = had_pre;
#if ENCORE_SM90_EXP_WAITS
  // The consumers' cycles (_exp_waits): waits, drain and epilogue as shares of the summed loops
  // plus epilogues; loop cycles per k-block (both summed over every consumer warp alike).
  Check(sm90::ReadWaitCounters(waits), "wait counters");
  using W = sm90::WaitCounter;
  const auto at = [&waits](W w) { return static_cast<double>(waits[static_cast<int>(w)]); };
  const double busy = at(W::kLoop) + at(W::kEpilogue);
  if (busy > 0 && at(W::kKBlocks) > 0) {
    state.counters["w_raw"] = at(W::kRawWait) / busy;
    state.counters["w_tok"] = at(W::kTokWait) / busy;
    state.counters["w_drain"] = at(W::kDrain) / busy;
    state.counters["w_epi"] = at(W::kEpilogue) / busy;
    state.counters["w_idle"] = (at(W::kCta) - busy) / at(W::kCta);
    state.counters["clk_kb"] = at(W::kLoop) / at(W::kKBlocks);
  }
#endif
#if ENCORE_SM90_EXP_STAMPS
  static std::set<std::string> printed;  // once per benchmark, not per repetition
  if (printed.insert(name).second) PrintTimeline(name, gemm, plans, stream->get(), pdl);
#endif
  state.SetLabel(absl::StrCat(KernelKindName(plans[0]->kind), bound ? " bound" : "",
                              had_pre ? "+prepass" : "",
                              plans[0]->fused_pre ? "+fused_prepass" : "",
                              plans[0]->prepass_reads_early ? " early" : "", pdl ? " pdl" : "",
                              how.merge > 0 ? absl::StrCat(" merged x", plans.size()) : "",
                              part == Part::kGemmOnly      ? " (GEMM only)"
                              : part == Part::kPrepassOnly ? " (pre-pass only)"
                                                           : ""));
}

struct BenchShape {
  const char* name;
  std::vector<int> m;
  int n, k;
};
const BenchShape kShapes[] = {
    {"s0", {80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168},
    {"s1", {40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048},
    {"s2", {192, 320}, 3072, 4096},
    {"s3", {128, 384}, 4096, 1536},
};

// Few tiles with long K (an MoE decode step touching one or a few experts), where stream-K paid in
// the wide build, and a tiny problem where launch overhead dominates.
const BenchShape kFewTileShapes[] = {
    {"one_tile", {128}, 256, 7168},
    {"decode8", {16, 16, 16, 16, 16, 16, 16, 16}, 2048, 7168},
    {"tiny", {8}, 128, 256},
};

const char* ModeSuffix(TokenPrepass mode) {
  switch (mode) {
    case TokenPrepass::kAlways:
      return "/prepass";
    case TokenPrepass::kNever:
      return "/in_kernel";
    default:
      return "";
  }
}

// One timed batch benchmark (TimeBatches), median of `repetitions`.
void RegisterTimed(const std::string& name, const std::vector<int>& ms, int n, int k,
                   KernelKind kind, int repetitions, const CallMode& how = CallMode()) {
  benchmark::RegisterBenchmark(
      name.c_str(),
      [name, ms, n, k, kind, how](benchmark::State& st) {
        TimeBatches(st, name, ms, n, k, kind, how);
      })
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond)
      ->Iterations(1)
      ->Repetitions(repetitions)
      ->ReportAggregatesOnly(true);
}

// "<prefix>/<shape>/<kind>[/prepass|/in_kernel]" (no suffix: the runner's default, kAuto).
void RegisterShape(const char* prefix, const BenchShape& s, KernelKind kind, int repetitions,
                   TokenPrepass mode = TokenPrepass::kAuto) {
  RegisterTimed(absl::StrCat(prefix, "/", s.name, "/", KernelKindName(kind), ModeSuffix(mode)),
                s.m, s.n, s.k, kind, repetitions, Prepass(mode));
}

void Register(int sm_count) {
  // The pre-pass always fused where the grid fits (FusePrepass::kAlways): "<prefix>/<shape>/auto/
  // fused"; never fused: ".../auto/unfused" (the default, kAuto: ".../auto/it"); a call split into
  // its two kernels (unfused): ".../auto/gemm_only", ".../auto/prepass_only".
  // Launched with PDL (Launch(plan, stream, /*pdl=*/true): each call may start while the one
  // before it finishes): "<prefix>/<shape>/auto/pdl" and ".../auto/fused/pdl".
  for (const BenchShape& s : kShapes) {
    for (bool fused : {false, true}) {
      RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto", fused ? "/fused" : "", "/pdl"), s.m,
                    s.n, s.k, KernelKind::kAuto, 30, fused ? Fused(/*pdl=*/true) : Pdl());
    }
  }
  for (const BenchShape& s : kFewTileShapes) {
    for (bool fused : {false, true}) {
      RegisterTimed(absl::StrCat("fewtiles/", s.name, "/auto", fused ? "/fused" : "", "/pdl"),
                    s.m, s.n, s.k, KernelKind::kAuto, 15, fused ? Fused(/*pdl=*/true) : Pdl());
    }
  }
  // The calls as a multi-call graph of independent calls prepares them (CallMode::early):
  // "<prefix>/<shape>/auto/early".
  CallMode early;
  early.early = true;
  for (const BenchShape& s : kShapes) {
    RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/early"), s.m, s.n, s.k,
                  KernelKind::kAuto, 30, early);
  }
  for (const BenchShape& s : kFewTileShapes) {
    RegisterTimed(absl::StrCat("fewtiles/", s.name, "/auto/early"), s.m, s.n, s.k,
                  KernelKind::kAuto, 15, early);
  }
  // The 15 independent calls merged into grouped GEMMs of up to <c> calls (CallMode::merge):
  // "<prefix>/<shape>/auto/merge<c>".
  for (int calls : {2, 4, 5, 8, 15}) {
    CallMode merge;
    merge.merge = calls;
    for (const BenchShape& s : kShapes) {
      RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/merge", calls), s.m, s.n, s.k,
                    KernelKind::kAuto, 15, merge);
      // The merged launches persistent (as graph_cache plans a kAuto launch that would split K).
      RegisterTimed(absl::StrCat("gpumode/", s.name, "/persistent/merge", calls), s.m, s.n, s.k,
                    KernelKind::kPersistent, 15, merge);
    }
    for (const BenchShape& s : kFewTileShapes) {
      RegisterTimed(absl::StrCat("fewtiles/", s.name, "/auto/merge", calls), s.m, s.n, s.k,
                    KernelKind::kAuto, 15, merge);
    }
  }
  // A forced token-tile row cap instead of the model's choice: "gpumode/<shape>/auto/rows<R>";
  // no packed persistent schedule: "gpumode/<shape>/auto/unpacked".
  for (const BenchShape& s : kShapes) {
    RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/unpacked"), s.m, s.n, s.k,
                  KernelKind::kAuto, 30, Unpacked());
    for (int rows : {32, 48, 64, 80, 96, 128, 160, 192, 256}) {
      if (rows > sm90::TileShape::kMaxBlockM) continue;
      RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/rows", rows), s.m, s.n, s.k,
                    KernelKind::kAuto, 15, TileRows(rows));
    }
  }
  // Pre-pass padding for PDL (RunnerOptions::pad_prepass_for_pdl and its bounds): "<prefix>/
  // <shape>/auto/nopad" (none), ".../pad<B>" (at least B blocks a SM; the default: 1),
  // ".../smallpad" (only the small pre-passes padded: pad_large_prepasses off, as before run 119).
  auto register_padding = [](const char* prefix, const BenchShape& s, int repetitions) {
    const std::string base = absl::StrCat(prefix, "/", s.name, "/auto/");
    RegisterTimed(base + "nopad", s.m, s.n, s.k, KernelKind::kAuto, repetitions,
                  Padding(-1, false));
    for (int b : {2, 3}) {
      RegisterTimed(absl::StrCat(base, "pad", b), s.m, s.n, s.k, KernelKind::kAuto, repetitions,
                    Padding(b, true));
    }
    RegisterTimed(base + "smallpad", s.m, s.n, s.k, KernelKind::kAuto, repetitions,
                  Padding(0, false));
  };
  for (const BenchShape& s : kShapes) register_padding("gpumode", s, 30);
  // The default options on other runner instances (their own workspaces): "gpumode/<shape>/auto/
  // inst<I>" (run 126: what runner-instance placement alone moves); the default runner with the
  // input sets allocated after <MB> MB of other device memory: ".../inshift<MB>" (whether that
  // spread is the inputs' placement; the runner's workspaces stay where its first plan put them).
  for (const BenchShape& s : kShapes) {
    for (int i = 1; i <= 4; ++i) {
      CallMode how;
      how.instance = i;
      RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/inst", i), s.m, s.n, s.k,
                    KernelKind::kAuto, 30, how);
    }
    for (int mb : {2, 6, 18, 54}) {
      CallMode how;
      how.input_shift_mb = mb;
      RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/inshift", mb), s.m, s.n, s.k,
                    KernelKind::kAuto, 30, how);
    }
  }
  for (const BenchShape& s : kFewTileShapes) register_padding("fewtiles", s, 15);
  for (const BenchShape& s : kShapes) {
    RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/fused"), s.m, s.n, s.k,
                  KernelKind::kAuto, 30, Fused());
    RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/unfused"), s.m, s.n, s.k,
                  KernelKind::kAuto, 30, Unfused());
    for (Part part : {Part::kGemmOnly, Part::kPrepassOnly}) {
      RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/",
                                 part == Part::kGemmOnly ? "gemm_only" : "prepass_only"),
                    s.m, s.n, s.k, KernelKind::kAuto, 15, Only(part));
    }
    // The GEMMs alone launched with PDL ("<prefix>/<shape>/auto/gemm_only/pdl"): the GEMM-to-GEMM
    // launch gap a call would have if its tokens needed no conversion (run 240).
    CallMode gemm_pdl = Only(Part::kGemmOnly);
    gemm_pdl.pdl = true;
    RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/gemm_only/pdl"), s.m, s.n, s.k,
                  KernelKind::kAuto, 15, gemm_pdl);
    // The same with every call reading the same weights (CallMode::shared_weights):
    // ".../auto/warm_weights" and ".../auto/gemm_only/pdl/warm_weights".
    RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/warm_weights"), s.m, s.n, s.k,
                  KernelKind::kAuto, 30, SharedWeights());
    gemm_pdl.shared_weights = true;
    RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/gemm_only/pdl/warm_weights"), s.m, s.n,
                  s.k, KernelKind::kAuto, 15, gemm_pdl);
  }
  for (const BenchShape& s : kFewTileShapes) {
    RegisterTimed(absl::StrCat("fewtiles/", s.name, "/auto/fused"), s.m, s.n, s.k,
                  KernelKind::kAuto, 15, Fused());
    RegisterTimed(absl::StrCat("fewtiles/", s.name, "/auto/warm_weights"), s.m, s.n, s.k,
                  KernelKind::kAuto, 15, SharedWeights());
    RegisterTimed(absl::StrCat("fewtiles/", s.name, "/auto/unfused"), s.m, s.n, s.k,
                  KernelKind::kAuto, 15, Unfused());
  }
  // Stream-K partitions from other cost constants: "<prefix>/<shape>/stream_k/costs<i>" (kSkCosts).
  if (sm90::kStreamKBuilt) {
    for (int i = 0; i < kNumSkCosts; ++i) {
      CallMode how;
      how.sk_costs = i;
      RegisterTimed(absl::StrCat("gpumode/s0/stream_k/costs", i), kShapes[0].m, kShapes[0].n,
                    kShapes[0].k, KernelKind::kStreamK, 30, how);
      RegisterTimed(absl::StrCat("fewtiles/one_tile/stream_k/costs", i), kFewTileShapes[0].m,
                    kFewTileShapes[0].n, kFewTileShapes[0].k, KernelKind::kStreamK, 15, how);
    }
  }
  for (const BenchShape& s : kFewTileShapes) {
    for (KernelKind kind : {KernelKind::kAuto, KernelKind::kSimple, KernelKind::kStreamK}) {
      if (kind == KernelKind::kStreamK && !sm90::kStreamKBuilt) continue;
      RegisterShape("fewtiles", s, kind, 15);
    }
    for (TokenPrepass mode : {TokenPrepass::kNever, TokenPrepass::kAlways}) {
      RegisterShape("fewtiles", s, KernelKind::kSimple, 15, mode);
    }
  }
  // Bound plans (rebind without node patches) beside auto/pdl.
  for (const BenchShape* s : {&kShapes[0], &kShapes[1], &kShapes[2], &kShapes[3],
                              &kFewTileShapes[2]}) {
    CallMode how;
    how.bound = true;
    RegisterTimed(absl::StrCat(s == &kFewTileShapes[2] ? "fewtiles/" : "gpumode/", s->name,
                               "/auto/bound"),
                  s->m, s->n, s->k, KernelKind::kAuto, 10, how);
  }
  for (const BenchShape& s : kShapes) {
    for (KernelKind kind :
         {KernelKind::kAuto, KernelKind::kSimple, KernelKind::kPersistent, KernelKind::kStreamK}) {
      if (kind == KernelKind::kStreamK && !sm90::kStreamKBuilt) continue;
      RegisterShape("gpumode", s, kind, kind == KernelKind::kAuto ? 30 : 15);
    }
    for (KernelKind kind : {KernelKind::kSimple, KernelKind::kPersistent}) {
      for (TokenPrepass mode : {TokenPrepass::kNever, TokenPrepass::kAlways}) {
        RegisterShape("gpumode", s, kind, 15, mode);
      }
    }
  }
  // Token pre-pass break-even: 8 groups of M = 128, weight tiles per token tile 1 .. 16.
  for (int k : {2048, 7168}) {
    for (int nt : {1, 2, 4, 8, 16}) {
      for (TokenPrepass mode : {TokenPrepass::kNever, TokenPrepass::kAlways}) {
        RegisterTimed(absl::StrCat("prepass_even/k", k, "/nt", nt, ModeSuffix(mode)),
                      std::vector<int>(8, 128), sm90::TileShape::kBlockN * nt, k, KernelKind::kAuto,
                      7, Prepass(mode));
      }
    }
  }
  // Steady state: one group of width W tokens and one weight tile per SM (the device's count),
  // K = 4096 and 8192: the difference over the 32 extra k-blocks is the main loop's time per
  // k-block, free of the pre-pass, prologue, epilogue and tail (compare with
  // benchmarks/micro/wgmma_rs_ceiling.cu at the same width).
  for (int w : {64, 96, 128, 160, 192, 256}) {
    for (int k : {4096, 8192}) {
      const int n = sm90::TileShape::kBlockN * sm_count;
      const std::string name = absl::StrCat("steady/w", w, "/k", k);
      RegisterTimed(name, {w}, n, k, KernelKind::kAuto, 5);
      RegisterTimed(name + "/fused", {w}, n, k, KernelKind::kAuto, 5, Fused());
      RegisterTimed(name + "/gemm_only", {w}, n, k, KernelKind::kAuto, 5, Only(Part::kGemmOnly));
    }
  }
  // Decode steps: 8 groups of M tokens each, "decode/n<N>_k<K>/m<M>", at the few-tile decode8
  // shape's N = 2048 with K = 7168 (simple kernel, one wave) and 2048, and at GPU MODE shape 1's
  // N = 7168, K = 2048 (persistent); the streamed simple kernel for no plan (".../nostream":
  // RunnerOptions::stream_simple_tiles = kNever) or every plan of 16- and 128-row tiles
  // (".../stream": kAlways). Runs 152-155: where streaming pays, by token-tile rows. M = 8, 40, 72:
  // widths that only the _n8 build (TileShape::kMGranule 8) runs unpadded (run 205).
  for (const auto& [n, k] : {std::pair{2048, 7168}, std::pair{2048, 2048}, std::pair{7168, 2048}}) {
    for (int m : {8, 16, 32, 40, 48, 64, 72, 96, 128}) {
      const std::string name = absl::StrCat("decode/n", n, "_k", k, "/m", m);
      RegisterTimed(name, std::vector<int>(8, m), n, k, KernelKind::kAuto, 15);
      RegisterTimed(name + "/nostream", std::vector<int>(8, m), n, k, KernelKind::kAuto, 15,
                    Stream(StreamTiles::kNever));
      RegisterTimed(name + "/stream", std::vector<int>(8, m), n, k, KernelKind::kAuto, 15,
                    Stream(StreamTiles::kAlways));
    }
  }
  // A MoE layer's expert GEMMs: 4096 token slots (512 tokens, top-8) routed uniformly at random
  // (fixed seed) to 64 experts, so each expert's M is ragged around 64 (binomial, sd ~8), at
  // DeepSeek-V3's gate/up (N = 4096, K = 7168) and down (N = 7168, K = 2048) shapes:
  // "moe/e64_s4096/n<N>_k<K>". Every set holds 64 experts' weights (0.9 / 0.5 GB).
  {
    std::mt19937 rng(20261202);
    std::uniform_int_distribution<int> expert(0, 63);
    std::vector<int> counts(64, 0);
    for (int slot = 0; slot < 4096; ++slot) ++counts[static_cast<size_t>(expert(rng))];
    for (const auto& [n, k] : {std::pair{4096, 7168}, std::pair{7168, 2048}}) {
      RegisterTimed(absl::StrCat("moe/e64_s4096/n", n, "_k", k), counts, n, k, KernelKind::kAuto,
                    5);
    }
  }
  for (const BenchShape& s : kShapes) {
    RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/nostream"), s.m, s.n, s.k,
                  KernelKind::kAuto, 15, Stream(StreamTiles::kNever));
    RegisterTimed(absl::StrCat("gpumode/", s.name, "/auto/stream"), s.m, s.n, s.k,
                  KernelKind::kAuto, 15, Stream(StreamTiles::kAlways));
  }
  for (const BenchShape& s : kFewTileShapes) {
    RegisterTimed(absl::StrCat("fewtiles/", s.name, "/auto/nostream"), s.m, s.n, s.k,
                  KernelKind::kAuto, 15, Stream(StreamTiles::kNever));
  }
  // Crossover: 8 groups of M = 64 or 256, K = 2048, N growing: 32 .. 2048 tiles.
  for (int m : {64, 256}) {
    for (int n : {512, 1024, 2048, 4096, 8192, 16384, 32768}) {
      for (KernelKind kind : {KernelKind::kSimple, KernelKind::kPersistent}) {
        RegisterTimed(absl::StrCat("crossover/m", m, "/n", n, "/", KernelKindName(kind)),
                      std::vector<int>(8, m), n, 2048, kind, 7);
      }
    }
  }
}

}  // namespace
}  // namespace encore::gemm

int main(int argc, char** argv) {
  if (absl::Status s = encore::CudaDeviceAvailable(); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 0;
  }
  auto info = encore::QueryDevice();
  encore::gemm::Check(info.status());
  encore::gemm::Register(info->sm_count);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
