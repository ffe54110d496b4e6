// Plain data of the kernels' stamp log (measurement only: the manual build _exp_stamps, see
// stamps.cuh), shared by the kernels and the host code that reads the log back.
//
// Example (host, built with -DENCORE_SM90_EXP_STAMPS=1):
//   StampLog log{0, capacity, device_records};  // copied to device memory
//   sm90::SetStampLog(device_log);               // gemm/sm90_nvfp4_grouped_gemm.h
#ifndef ENCORE_GEMM_KERNELS_INTERNAL_STAMP_LOG_H_
#define ENCORE_GEMM_KERNELS_INTERNAL_STAMP_LOG_H_

#include <cstdint>

#ifndef ENCORE_SM90_EXP_STAMPS
#define ENCORE_SM90_EXP_STAMPS 0
#endif
#ifndef ENCORE_SM90_EXP_WAITS
#define ENCORE_SM90_EXP_WAITS 0
#endif

namespace encore::gemm::sm90 {

enum class StampEvent : uint32_t {
  kPrepassEntry = 0,   // pre-pass block, thread 0, first instruction
  kPrepassWaited = 1,  // ... after griddepcontrol.wait
  kPrepassDone = 2,    // ... after its unit
  kGemmEntry = 3,      // GEMM CTA, thread 0, first instruction
  kGemmWaited = 4,     // first consumer thread, after griddepcontrol.wait
  kTileStart = 5,      // first consumer thread, before a tile's main loop
  kTileLoopEnd = 6,    // ... after it (before the epilogue)
  kTileEnd = 7,        // ... after the epilogue
  kTrigger = 8,        // weight producer, after griddepcontrol.launch_dependents
  // The fused pre-pass (fused_prepass.cuh):
  kFusedConverted = 9,   // first consumer thread, its jobs loaded, converted, stores issued
  kFusedShareDone = 10,  // token producer (warp 1 lane 0), every converter's stores fenced
  kFusedPassed = 11,     // ... past the grid barrier (every share converted)
  kNumEvents = 12,
};

struct StampRecord {
  uint64_t t;      // %globaltimer, ns
  uint32_t event;  // StampEvent | smid << 8
  uint32_t block;  // blockIdx.x
  // kTileStart: the work item (linear tile, k-blocks [kb0, kb1): a stream-K piece or a whole
  // tile); else tile = kNoTile.
  uint32_t tile;
  uint16_t kb0, kb1;
};
inline constexpr uint32_t kNoTile = 0xffffffffu;

struct StampLog {
  uint32_t count;  // records appended (beyond capacity they were dropped)
  uint32_t capacity;
  StampRecord* records;
};

// The measurement build _exp_waits (ENCORE_SM90_EXP_WAITS=1): clock64 cycles the GEMM's consumer
// warps spend in each part of their work, summed over every consumer warp of every CTA
// (stamps.cuh WaitAdd); read back and reset with ReadWaitCounters.
enum class WaitCounter : int {
  kRawWait = 0,   // mbarrier wait for the weight stage (LoadWeights)
  kTokWait = 1,   // mbarrier wait for the fp16 token stage
  kDrain = 2,     // the k-block's final wgmma.wait_group 0
  kLoop = 3,      // ConsumerTile: the tile's (or piece's) whole k loop
  kEpilogue = 4,  // after the loop to the tile's end (stream-K reduction, epilogue)
  kCta = 5,       // the consumer role, from its register allocation to its last tile's end
  kKBlocks = 6,   // k-blocks run (a count, not cycles)
  kNum = 7,
};
inline constexpr int kWaitCounters = static_cast<int>(WaitCounter::kNum);

}  // namespace encore::gemm::sm90

#endif  // ENCORE_GEMM_KERNELS_INTERNAL_STAMP_LOG_H_
