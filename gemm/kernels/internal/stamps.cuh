// Measurement only (the manual builds _exp_stamps, ENCORE_SM90_EXP_STAMPS=1, and _exp_waits,
// ENCORE_SM90_EXP_WAITS=1, at the end): kernel events
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

__device__ __forceinline__ void WriteStampAt(StampLog* log, uint32_t i, uint64_t t, StampEvent e,
                                             uint32_t tile, int kb0, int kb1) {
  uint32_t sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (i < log->capacity) {
    log->records[i] =
        StampRecord{t,    static_cast<uint32_t>(e) | (sm << 8), blockIdx.x,
                    tile, static_cast<uint16_t>(kb0),           static_cast<uint16_t>(kb1)};
  }
}
__device__ __forceinline__ void WriteStamp(StampLog* log, uint32_t i, StampEvent e, uint32_t tile,
                                           int kb0, int kb1) {
  WriteStampAt(log, i, GlobalTimerNs(), e, tile, kb0, kb1);
}

// The pre-pass kernel's stamps: thread 0 keeps each event's time in shared memory
// (StampTimeAt) and records them all after the block's work with one atomic on the log's counter
// (StampDeferred). NOTES: with an atomic per stamp taken before the timer (run 125), shape 0's 896
// blocks x 3 stamps queued at the L2: block entries appeared spread over 14 us and each stamp
// delayed its thread's unit; keeping the times in registers cost the kernel spills at the 32
// registers that 8 blocks an SM allow.
__device__ __forceinline__ uint64_t* BlockStampTimes() {
  __shared__ uint64_t times[4];
  return times;
}
__device__ __forceinline__ void StampTimeAt(int k) { BlockStampTimes()[k] = GlobalTimerNs(); }
template <int kN>
__device__ __forceinline__ void StampDeferred(const StampEvent (&e)[kN]) {
  static_assert(kN <= 4, "four times a block");
  StampLog* log = g_stamp_log;
  if (log == nullptr) return;
  const uint32_t i = atomicAdd(&log->count, static_cast<uint32_t>(kN));
#pragma unroll
  for (int k = 0; k < kN; ++k) WriteStampAt(log, i + k, BlockStampTimes()[k], e[k], kNoTile, 0, 0);
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
__device__ __forceinline__ void StampTimeAt(int) {}
template <int kN>
__device__ __forceinline__ void StampDeferred(const StampEvent (&)[kN]) {}
__device__ __forceinline__ void StampCtaBegin(StampEvent) {}
__device__ __forceinline__ void StampCta(StampEvent, uint32_t = kNoTile, int = 0, int = 0) {}
#endif

// The _exp_waits build's cycle counters (stamp_log.h WaitCounter): each consumer warp adds each
// interval to its slot of the CTA's shared counters; after the last tile, consumer thread 0
// flushes their sums into this translation unit's g_wait_counters. Compiles to nothing otherwise.
#if ENCORE_SM90_EXP_WAITS
// NOTES: run 227's first form (lane 0 of each warp adding with a shared-memory atomic, behind a
// lane branch) ran the k loop at half speed; every lane now adds the same value to its warp's own
// slot (no branch, no atomic: the lanes of a warp read the same clock).
inline constexpr int kWaitWarps = 16;  // up to 512 threads (the default CTA: 384)
static __device__ unsigned long long g_wait_counters[kWaitCounters];
__device__ __forceinline__ unsigned long long (&CtaWaitCounters())[kWaitWarps][kWaitCounters] {
  __shared__ unsigned long long counters[kWaitWarps][kWaitCounters];
  return counters;
}
__device__ __forceinline__ long long WaitClock() { return clock64(); }
__device__ __forceinline__ void WaitCount(WaitCounter i, unsigned long long n) {
  CtaWaitCounters()[threadIdx.x / 32][static_cast<int>(i)] += n;
}
__device__ __forceinline__ void WaitAdd(WaitCounter i, long long since) {
  WaitCount(i, static_cast<unsigned long long>(clock64() - since));
}
// Thread 0, before the CTA's first __syncthreads.
__device__ __forceinline__ void WaitCountersInit() {
  for (int w = 0; w < kWaitWarps; ++w) {
    for (int i = 0; i < kWaitCounters; ++i) CtaWaitCounters()[w][i] = 0;
  }
}
// Every consumer thread (ct: its index among the `threads` consumers), after its last tile.
__device__ __forceinline__ void WaitCountersFlush(int ct, uint32_t barrier, uint32_t threads) {
  NamedBarrierSync(barrier, threads);
  if (ct == 0) {
    for (int i = 0; i < kWaitCounters; ++i) {
      unsigned long long sum = 0;
      for (int w = 0; w < kWaitWarps; ++w) sum += CtaWaitCounters()[w][i];
      atomicAdd(&g_wait_counters[i], sum);
    }
  }
}
// Host: this translation unit's counters, then zeroed (ReadWaitCounters sums both units').
inline cudaError_t TakeUnitWaitCounters(uint64_t (&counters)[kWaitCounters]) {
  unsigned long long mine[kWaitCounters] = {};
  cudaError_t err = cudaMemcpyFromSymbol(mine, g_wait_counters, sizeof(mine));
  if (err != cudaSuccess) return err;
  for (int i = 0; i < kWaitCounters; ++i) counters[i] = mine[i];
  const unsigned long long zero[kWaitCounters] = {};
  return cudaMemcpyToSymbol(g_wait_counters, zero, sizeof(zero));
}
#else
__device__ __forceinline__ long long WaitClock() { return 0; }
__device__ __forceinline__ void WaitCount(WaitCounter, unsigned long long) {}
__device__ __forceinline__ void WaitAdd(WaitCounter, long long) {}
__device__ __forceinline__ void WaitCountersInit() {}
__device__ __forceinline__ void WaitCountersFlush(int, uint32_t, uint32_t) {}
#endif

}  // namespace encore::gemm::sm90
