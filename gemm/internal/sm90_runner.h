// The sm90 runner without its device checks, for host-only tests and benchmarks of Prepare (the
// per-call host work of direct launches and of graph-node patching). Not part of the public API:
// production code uses Nvfp4GroupedGemm::Create(), which reads the device and configures kernels.
//
// Example (tests/gemm/sm90_runner_host_test.cc):
//   DeviceInfo info; info.sm_count = 132;
//   DriverApi api; api.tensor_map_encode_tiled = &FakeEncode;
//   auto gemm = encore::gemm::internal::CreateSm90RunnerWithoutDevice(info, api, 64);
//   ENCORE_RETURN_IF_ERROR(gemm->Prepare(args, &plan));  // no GPU needed; Launch would need one
#ifndef ENCORE_GEMM_INTERNAL_SM90_RUNNER_H_
#define ENCORE_GEMM_INTERNAL_SM90_RUNNER_H_

#include <cstddef>
#include <memory>

#include "cuda_utils/device.h"
#include "cuda_utils/driver.h"
#include "gemm/grouped_gemm.h"

namespace encore::gemm::internal {

// `info` needs sm_count; `api` needs tensor_map_encode_tiled. Launch needs a real device.
// Without `fake_token_workspace` the runner never plans a token pre-pass (TokenPrepass::kNever);
// with it, plans use that address as the pre-pass workspace (kAuto; never dereferenced).
std::unique_ptr<Nvfp4GroupedGemm> CreateSm90RunnerWithoutDevice(
    DeviceInfo info, DriverApi api, size_t tensor_map_cache_capacity,
    void* fake_token_workspace = nullptr);
// The same with every option (stream_k must be false: its workspace would need a device).
std::unique_ptr<Nvfp4GroupedGemm> CreateSm90RunnerWithoutDevice(DeviceInfo info, DriverApi api,
                                                                const RunnerOptions& options,
                                                                void* fake_token_workspace);

}  // namespace encore::gemm::internal

#endif  // ENCORE_GEMM_INTERNAL_SM90_RUNNER_H_
