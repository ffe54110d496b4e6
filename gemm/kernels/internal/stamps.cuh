// Measurement only (the manual build _exp_stamps, ENCORE_SM90_EXP_STAMPS=1): kernel events
// stamped with %globaltimer and appended to a device log, so a batch of calls can be laid out on
// one time line (when each CTA entered, stopped waiting for the previous grid, started and ended
// its main loop and epilogue, triggered its dependents). Compiles to nothing otherwise.
//
// Example (host, a benchmark built with -DENCORE_SM90_EXP_STAMPS=1):
//   // records filled with 0xff first (the GEMM CTAs' unused slots stay so; skip them)
//   sm90::SetStampLog(device_log);  // both kernel translation units (stamp_log.h: the data)
//   ... launch ...; copy the log back; each (event, block) pair's k-th record is launch k.
#pragma once

#include <cstdint>

#include "gemm/kernels/internal/ptx.cuh"
#include "gemm/kernels/internal/stamp_log.h"

namespace encore::gemm::sm90 {

#if ENCORE_SM90_EXP_STAMPS
// NOTES: one log pointer per translation unit (static): SetStampLog sets both .cu files' copies.
static __device__ StampLog* g_stamp_log = nullptr;

__device__ __forceinline__ void WriteStamp(StampLog* log, uint32_t i, StampEvent e, uint32_t tile,
                                           int kb0, int kb1) {
  const uint64_t t = GlobalTimerNs();
  uint32_t sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (i < log->capacity) {
    log->records[i] =
        StampRecord{t,    static_cast<uint32_t>(e) | (sm << 8), blockIdx.x,
                    tile, static_cast<uint16_t>(kb0),           static_cast<uint16_t>(kb1)};
  }
}

// A stamp that takes its slot from the log's counter (the pre-pass kernel's few stamps a block).
__device__ __forceinline__ void Stamp(StampEvent e) {
  StampLog* log = g_stamp_log;
  if (log == nullptr) return;
  WriteStamp(log, atomicAdd(&log->count, 1u), e, kNoTile, 0, 0);
}

// The GEMM CTA's stamps: StampCtaBegin (thread 0, before the CTA's first barrier) reserves
// kCtaStampSlots slots of the log with one global atomic; StampCta then takes the next one with a
// shared-memory atomic. NOTES: with a global atomic per stamp, each stamp cost its thread a round
// trip to L2 before the record's store could go out (~0.45 us inside the measured intervals,
// session 12). Slots a CTA leaves unused keep the host's fill (event byte 0xff: skipped); stamps
// past kCtaStampSlots are dropped.
inline constexpr uint32_t kCtaStampSlots = 128;
__device__ __forceinline__ uint32_t* CtaStampState() {
  __shared__ uint32_t state[2];  // first reserved slot, slots taken
  return state;
}
__device__ __forceinline__ void StampCtaBegin(StampEvent e) {
  StampLog* log = g_stamp_log;
  if (log == nullptr) return;
  uint32_t* st = CtaStampState();
  st[0] = atomicAdd(&log->count, kCtaStampSlots);
  st[1] = 1;
  WriteStamp(log, st[0], e, kNoTile, 0, 0);
}
__device__ __forceinline__ void StampCta(StampEvent e, uint32_t tile = kNoTile, int kb0 = 0,
                                         int kb1 = 0) {
  StampLog* log = g_stamp_log;
  if (log == nullptr) return;
  uint32_t* st = CtaStampState();
  const uint32_t k = atomicAdd(&st[1], 1u);
  if (k < kCtaStampSlots) WriteStamp(log, st[0] + k, e, tile, kb0, kb1);
}
#else
__device__ __forceinline__ void Stamp(StampEvent) {}
__device__ __forceinline__ void StampCtaBegin(StampEvent) {}
__device__ __forceinline__ void StampCta(StampEvent, uint32_t = kNoTile, int = 0, int = 0) {}
#endif

}  // namespace encore::gemm::sm90
