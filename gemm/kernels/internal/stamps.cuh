// Measurement only (the manual build _exp_stamps, ENCORE_SM90_EXP_STAMPS=1): kernel events
// stamped with %globaltimer and appended to a device log, so a batch of calls can be laid out on
// one time line (when each CTA entered, stopped waiting for the previous grid, started and ended
// its main loop and epilogue, triggered its dependents). Compiles to nothing otherwise.
//
// Example (host, a benchmark built with -DENCORE_SM90_EXP_STAMPS=1):
//   sm90::SetStampLog(device_log);  // both kernel translation units (stamp_log.h: the data)
//   ... launch ...; copy the log back; each (event, block) pair's k-th record is launch k.
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/stamp_log.h"

namespace encore::gemm::sm90 {

#if ENCORE_SM90_EXP_STAMPS
// NOTES: one log pointer per translation unit (static): SetStampLog sets both .cu files' copies.
static __device__ StampLog* g_stamp_log = nullptr;

__device__ __forceinline__ void Stamp(StampEvent e, uint32_t tile = kNoTile, int kb0 = 0,
                                      int kb1 = 0) {
  StampLog* log = g_stamp_log;
  if (log == nullptr) return;
  uint64_t t;
  uint32_t sm;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  const uint32_t i = atomicAdd(&log->count, 1u);
  if (i < log->capacity) {
    log->records[i] =
        StampRecord{t,    static_cast<uint32_t>(e) | (sm << 8), blockIdx.x,
                    tile, static_cast<uint16_t>(kb0),           static_cast<uint16_t>(kb1)};
  }
}
#else
__device__ __forceinline__ void Stamp(StampEvent, uint32_t = kNoTile, int = 0, int = 0) {}
#endif

}  // namespace encore::gemm::sm90
