#include "tests/graph_cache/fake_gemm.h"

#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "cuda_utils/status.h"
#include "gemm/problem.h"
#include "tests/graph_cache/fake_kernel.h"

namespace encore::graph_cache::testing {
namespace {
const char kHostVariant0 = 0;
const char kHostVariant1 = 0;
const char kHostVariant2 = 0;
}  // namespace

const void* FakeGemm::Function(int variant) const {
  if (device_ == Device::kGpu) return FakeKernel(variant);
  return variant == 0   ? static_cast<const void*>(&kHostVariant0)
         : variant == 1 ? static_cast<const void*>(&kHostVariant1)
                        : static_cast<const void*>(&kHostVariant2);
}

// As the real runner's: gemm::Validate (names the group and field; rejects outputs that meet
// another output or an input), without the kernels' tile limit.
absl::Status FakeGemm::CanImplement(const gemm::GroupedGemmArguments& args) const {
  return gemm::Validate(args);
}

absl::Status FakeGemm::Prepare(const gemm::GroupedGemmArguments& args, gemm::LaunchPlan* plan,
                               gemm::KernelKind kind, cudaStream_t stream) {
  prepares_.fetch_add(1);
  last_prepare_stream_.store(stream);
  ENCORE_RETURN_IF_ERROR(CanImplement(args));
  plan->token_workspace_half = -1;
  plan->prepass_reads_early = false;
  int64_t work = 0;
  int max_rows = 0;
  for (const gemm::GroupProblem& p : args.groups) {
    work += static_cast<int64_t>(p.m) * p.n;
    max_rows = p.m > max_rows ? p.m : max_rows;
  }
  int variant = 0;
  if (kind == gemm::KernelKind::kPersistent) variant = 1;
  if (kind == gemm::KernelKind::kStreamK) variant = 2;
  if (kind == gemm::KernelKind::kAuto) {
    variant = work >= auto_stream_k_from_.load() ? 2 : work >= auto_threshold_ ? 1 : 0;
  }

  FakeParams params{};
  params.num_groups = static_cast<int>(args.groups.size());
  params.variant = variant;
  params.device_m = args.device_m;
  for (size_t g = 0; g < args.groups.size(); ++g) {
    params.groups[g] = FakeGroupOf(args.groups[g]);
  }
  static_assert(sizeof(FakeParams) <= gemm::kMaxParamBytes);
  plan->function = Function(variant);
  int64_t per_group = 0;
  for (const gemm::GroupProblem& p : args.groups) {
    const int64_t e = static_cast<int64_t>(p.m) * p.n;
    per_group = e > per_group ? e : per_group;
  }
  const int64_t blocks = (per_group + 255) / 256;
  plan->grid = dim3(static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 64 ? 64 : blocks)),
                    static_cast<unsigned>(args.groups.size()), 1);
  plan->block = dim3(256, 1, 1);
  plan->dynamic_smem_bytes = 0;
  plan->supports_pdl = true;
  plan->kind = variant == 0   ? gemm::KernelKind::kSimple
               : variant == 1 ? gemm::KernelKind::kPersistent
                              : gemm::KernelKind::kStreamK;
  plan->num_tiles = static_cast<int>(plan->grid.x * plan->grid.y);
  plan->params_bytes = sizeof(FakeParams);
  std::memcpy(plan->params, &params, sizeof(FakeParams));
  plan->pre.function = pre_kernel_.load();
  plan->prefers_pdl = plan->pre.function == nullptr || pre_prefers_pdl_.load();
  plan->binds_from_ring = false;  // (as the real runner: a reused plan was maybe a bound one)
  return absl::OkStatus();
}

absl::Status FakeGemm::PrepareWith(const gemm::GroupedGemmArguments& args,
                                   gemm::LaunchPlan* plan, gemm::KernelKind kind,
                                   cudaStream_t stream, const gemm::PlanOptions& options) {
  ENCORE_RETURN_IF_ERROR(Prepare(args, plan, kind, stream));
  if (plan->has_pre()) {
    int64_t tokens = 0;
    for (const gemm::GroupProblem& p : args.groups) tokens += static_cast<int64_t>(p.m) * p.k;
    const bool fits = tokens <= token_half_limit_.load();
    plan->token_workspace_half = fits ? options.token_workspace_half : -1;
    plan->prepass_reads_early =
        options.prepass_reads_early && plan->token_workspace_half >= 0;
    if (plan->prepass_reads_early) early_prepares_.fetch_add(1);
  }
  return absl::OkStatus();
}

void ExecuteOnHost(const FakeParams& p) {
  for (int g = 0; g < p.num_groups; ++g) {
    const FakeGroup& grp = p.groups[g];
    const int rows = FakeRows(p, g);
    for (int r = 0; r < rows; ++r) {
      for (int j = 0; j < grp.n; ++j) {
        grp.c[static_cast<int64_t>(r) * grp.n + j] = FakeValue(grp, p.variant, r, j);
      }
    }
  }
}

absl::Status FakeGemm::CheckBoundPlans() const {
  if (device_ != Device::kHost || !bound_plans_.load()) {
    return absl::UnimplementedError("fake gemm: no bound plans");
  }
  return absl::OkStatus();
}

absl::Status FakeGemm::PrepareBound(const gemm::GroupedGemmArguments& args,
                                    gemm::LaunchPlan* plan, gemm::KernelKind kind,
                                    cudaStream_t stream) {
  ENCORE_RETURN_IF_ERROR(CheckBoundPlans());
  ENCORE_RETURN_IF_ERROR(Prepare(args, plan, kind, stream));
  plan->binds_from_ring = true;
  return absl::OkStatus();
}

absl::Status FakeGemm::WriteBindings(const gemm::GroupedGemmArguments& args,
                                     cudaStream_t stream) {
  ENCORE_RETURN_IF_ERROR(CanImplement(args));
  std::vector<FakeGroup> groups;
  for (const gemm::GroupProblem& p : args.groups) groups.push_back(FakeGroupOf(p));
  absl::MutexLock lock(&bind_mu_);
  bindings_[stream].push_back(std::move(groups));
  return absl::OkStatus();
}

absl::Status FakeGemm::LaunchWithBindings(const gemm::GroupedGemmArguments& args,
                                          cudaStream_t stream,
                                          absl::FunctionRef<absl::Status()> launch,
                                          bool wait_for_slot) {
  ENCORE_RETURN_IF_ERROR(CheckBoundPlans());
  absl::MutexLock pair(&pair_mu_);
  if (ring_full_.load()) {
    if (!wait_for_slot) return absl::ResourceExhaustedError("fake gemm: binding ring full");
    full_ring_waits_.fetch_add(1);
    return absl::InternalError("fake gemm: a full ring would wait forever");
  }
  ENCORE_RETURN_IF_ERROR(WriteBindings(args, stream));
  absl::Status launched = launch();
  if (!launched.ok()) {  // take the write back
    absl::MutexLock lock(&bind_mu_);
    auto it = bindings_.find(stream);
    if (it != bindings_.end() && !it->second.empty()) it->second.pop_back();
  }
  return launched;
}

size_t FakeGemm::queued_bindings(cudaStream_t stream) const {
  absl::MutexLock lock(&bind_mu_);
  auto it = bindings_.find(stream);
  return it == bindings_.end() ? 0 : it->second.size();
}

absl::Status FakeGemm::Launch(const gemm::LaunchPlan& plan, cudaStream_t stream, bool pdl) const {
  if (skip_launches_.load() > 0 && skip_launches_.fetch_sub(1) > 0) {
    // (one of the launches before the injected failures)
  } else if (fail_launches_.load() > 0 && fail_launches_.fetch_sub(1) > 0) {
    return absl::InternalError("fake gemm: injected launch failure");
  }
  launches_.fetch_add(1);
  if (device_ == Device::kHost) {
    FakeParams params;
    std::memcpy(&params, plan.params, sizeof(FakeParams));
    if (plan.bound()) {  // the oldest queued bindings replace the plan's pointers
      absl::MutexLock lock(&bind_mu_);
      auto it = bindings_.find(stream);
      if (it == bindings_.end() || it->second.empty()) {
        return absl::FailedPreconditionError("fake gemm: bound launch without WriteBindings");
      }
      const std::vector<FakeGroup>& bound = it->second.front();
      if (static_cast<int>(bound.size()) != params.num_groups) {
        return absl::FailedPreconditionError("fake gemm: bindings of another group count");
      }
      for (int g = 0; g < params.num_groups; ++g) {
        FakeGroup& to = params.groups[g];
        to.a = bound[g].a;
        to.b = bound[g].b;
        to.sfa = bound[g].sfa;
        to.sfb = bound[g].sfb;
        to.c = bound[g].c;
      }
      it->second.pop_front();
      bound_launches_.fetch_add(1);
    }
    ExecuteOnHost(params);
    return absl::OkStatus();
  }
  ENCORE_RETURN_IF_CUDA_ERROR(gemm::LaunchOnStream(plan, stream, pdl),
                              "cudaLaunchKernelExC(fake gemm)");
  return absl::OkStatus();
}

absl::Status FakeGemm::Run(const gemm::GroupedGemmArguments& args, cudaStream_t stream,
                           gemm::KernelKind kind) {
  runs_.fetch_add(1);
  auto plan = std::make_unique<gemm::LaunchPlan>();
  ENCORE_RETURN_IF_ERROR(Prepare(args, plan.get(), kind, stream));
  return Launch(*plan, stream, /*pdl=*/false);
}

}  // namespace encore::graph_cache::testing
