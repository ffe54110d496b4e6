// The launch modes //benchmarks:replay compares, each issuing the same grouped-GEMM calls:
//   cold_eager     gemm::GroupedGemm(): a new runner, tensor maps encoded, parameters uploaded
//                  on every call (the origin design's first-call path)
//   direct         Nvfp4GroupedGemm::Run(): parameters by value, tensor maps from the cache
//   graph_per_call the graph cache, one replayed graph per call (same buffers every batch)
//   graph_prebuilt not Encore: per-call graphs captured by hand up front and launched with
//                  cudaGraphLaunch (graph_per_call's floor with the real graphs)
//   graph_rebind   the graph cache with buffers rotating every call (kernel-node patching)
//   graph_rebind_bound  the same with RebindMode::kBound: one bound exec per structure, the
//                  call's pointers written into the stream's binding ring (no patches)
//   graph_batch    the 15 calls as one multi-kernel graph (explicit batch; small independent
//                  calls merged into grouped-GEMM launches, ExecutorOptions::merge_calls)
//   graph_batch_prebuilt  not Encore: the 15 calls captured by hand into one graph up front and
//                  launched with cudaGraphLaunch (graph_batch's floor with the real graph)
//   graph_batch_fused  the same through a runner with the token pre-pass always fused into the
//                  GEMM (FusePrepass::kAlways; every node after the first behind a PDL
//                  edge, where the unfused batch keeps the pre-kernels' edges off)
//   sequence_step  the recurring-sequence recorder, step-bounded
//   dynamic_m      the graph cache keyed by M capacity, with M changing on the device each step
//
// Example:
//   ENCORE_ASSIGN_OR_RETURN(auto modes, encore::bench::MakeModes(device_info));
#ifndef ENCORE_BENCHMARKS_INTERNAL_MODES_H_
#define ENCORE_BENCHMARKS_INTERNAL_MODES_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "benchmarks/internal/harness.h"
#include "gemm/grouped_gemm.h"

namespace encore::bench {

// Every mode, in the order above, sharing `runner` (each mode holds a reference), but
// graph_batch_fused, which uses `fused` (skipped when null). `ab_query` adds, after
// graph_prebuilt, graph_prebuilt_driver (the same graphs launched with cuGraphLaunch) and
// graph_prebuilt_query (cuCtxGetCurrent and cuStreamIsCapturing first, as an Encore hit does):
// the driver's share of a hit, measured in the same process.
[[nodiscard]] absl::StatusOr<std::vector<std::unique_ptr<Mode>>> MakeModes(
    std::shared_ptr<gemm::Nvfp4GroupedGemm> runner,
    std::shared_ptr<gemm::Nvfp4GroupedGemm> fused = nullptr, bool ab_query = false);

}  // namespace encore::bench

#endif  // ENCORE_BENCHMARKS_INTERNAL_MODES_H_
