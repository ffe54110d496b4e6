#include "tests/graph_cache/host_backend.h"

#include <utility>

namespace encore::graph_cache::testing {
namespace {

bool Consume(std::atomic<int>& n) {
  int v = n.load();
  while (v > 0) {
    if (n.compare_exchange_weak(v, v - 1)) return true;
  }
  return false;
}

class HostGraph final : public ExecutableGraph {
 public:
  HostGraph(HostGraphBackend* backend, gemm::Nvfp4GroupedGemm* runner,
            absl::Span<const gemm::LaunchPlan* const> plans, absl::Span<const bool> pdl)
      : backend_(backend), runner_(runner) {
    for (size_t i = 0; i < plans.size(); ++i) {
      plans_.push_back(std::make_unique<gemm::LaunchPlan>(*plans[i]));
      pdl_.push_back(i > 0 && pdl[i]);
    }
    backend_->live_graphs_.fetch_add(1);
  }
  ~HostGraph() override { backend_->live_graphs_.fetch_sub(1); }

  size_t num_launches() const override { return plans_.size(); }

  absl::Status Patch(size_t node, const gemm::LaunchPlan& plan) override {
    if (node >= plans_.size()) return absl::OutOfRangeError("no such node");
    if (Consume(backend_->fail_patches_)) return absl::InternalError("injected patch failure");
    *plans_[node] = plan;
    backend_->patches_.fetch_add(1);
    return absl::OkStatus();
  }

  absl::Status Launch(cudaStream_t stream) override {
    backend_->launches_.fetch_add(1);
    for (size_t i = 0; i < plans_.size(); ++i) {
      if (absl::Status s = runner_->Launch(*plans_[i], stream, pdl_[i]); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  HostGraphBackend* backend_;
  gemm::Nvfp4GroupedGemm* runner_;
  std::vector<std::unique_ptr<gemm::LaunchPlan>> plans_;
  std::vector<bool> pdl_;
};

}  // namespace

absl::StatusOr<bool> HostGraphBackend::IsCapturing(cudaStream_t stream) {
  absl::MutexLock lock(&mu_);
  return capturing_.contains(stream);
}

void HostGraphBackend::SetCapturing(cudaStream_t stream, bool capturing) {
  absl::MutexLock lock(&mu_);
  if (capturing) {
    capturing_.insert(stream);
  } else {
    capturing_.erase(stream);
  }
}

std::vector<bool> HostGraphBackend::last_pdl() const {
  absl::MutexLock lock(&mu_);
  return last_pdl_;
}

std::vector<unsigned> HostGraphBackend::last_grid_y() const {
  absl::MutexLock lock(&mu_);
  return last_grid_y_;
}

absl::StatusOr<std::unique_ptr<ExecutableGraph>> HostGraphBackend::Build(
    gemm::Nvfp4GroupedGemm& runner, absl::Span<const gemm::LaunchPlan* const> plans,
    absl::Span<const bool> pdl, BuildReport* report) {
  builds_.fetch_add(1);
  if (plans.empty()) return absl::InvalidArgumentError("nothing to capture");
  report->capture_begun = true;
  if (Consume(fail_captures_)) return absl::InternalError("injected capture failure");
  report->captured = true;
  for (int attempt = 0; attempt < 2; ++attempt) {
    ++report->instantiate_attempts;
    if (!Consume(fail_instantiations_)) {
      report->instantiated = true;
      break;
    }
    if (attempt == 0) {
      report->trimmed = true;
      trims_.fetch_add(1);
    }
  }
  if (!report->instantiated) {
    return absl::ResourceExhaustedError("injected cudaGraphInstantiate: out of memory");
  }
  {
    absl::MutexLock lock(&mu_);
    last_pdl_.assign(pdl.begin(), pdl.end());
    last_grid_y_.clear();
    for (const gemm::LaunchPlan* p : plans) last_grid_y_.push_back(p->grid.y);
  }
  return std::unique_ptr<ExecutableGraph>(new HostGraph(this, &runner, plans, pdl));
}

}  // namespace encore::graph_cache::testing
