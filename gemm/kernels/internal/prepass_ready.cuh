// The GEMM side of ENCORE_SM90_PREPASS_READY (manual build _ready): a GEMM launched right after a
// separate token pre-pass waits for the pre-pass blocks' done count instead of the pre-pass grid's
// completion (griddepcontrol.wait), so its first token loads need not wait for the grid to retire.
//
// Example (the token producer lane, Params::prepass_blocks > 0):
//   PrepassReadyWait(p.grid_sync, p.prepass_blocks);   // before the first token load
//   ... every tile's token loads ...
//   PrepassReadyPass(p.grid_sync, p.prepass_blocks);   // after the last one
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/fused_prepass.cuh"  // FusedPrepassDone: the same words
#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/sm90_nvfp4_grouped_gemm_params.h"

namespace encore::gemm::sm90 {

// NOTES: the words are the fused pre-pass's (Params::grid_sync, zero between launches):
//   - kFusedSyncDone counts pre-pass blocks done (each: its threads' stores, proxy fence, block
//     barrier, red.release by thread 0; sm90_nvfp4_token_prepass.cuh);
//   - the token producer of every CTA acquires done == blocks before its first token load, then
//     the async-proxy fence (the rows are read by TMA);
//   - kFusedSyncPassed counts CTAs whose token producer is past its last load; the last one waits
//     for the done count itself (a CTA with no tiles never waited) and resets both words. The next
//     pre-pass adds only after its griddepcontrol.wait, i.e. after this grid completed.
// Nothing else in the GEMM needs the pre-pass: the kernels before it completed before it triggered
// (it waits first), and the weight producer still waits for it before this grid's trigger.
__device__ __forceinline__ void PrepassReadyWait(unsigned int* sync, int blocks) {
  while (!FusedPrepassDone(sync, blocks)) {
  }
  FenceProxyAsyncGlobal();
}

__device__ __forceinline__ void PrepassReadyPass(unsigned int* sync, int blocks) {
  if (AtomAddAcqRelGpu(sync + kFusedSyncPassed, 1u) == gridDim.x - 1) {
    while (!FusedPrepassDone(sync, blocks)) {
    }
    sync[kFusedSyncDone] = 0;
    sync[kFusedSyncPassed] = 0;
  }
}

}  // namespace encore::gemm::sm90
