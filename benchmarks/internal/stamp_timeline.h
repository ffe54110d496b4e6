// Lays a kernel stamp log (gemm/kernels/internal/stamp_log.h, the measurement build
// _exp_stamps) out as one time line per call: for each launch of the pre-pass and of the GEMM,
// the earliest and latest stamp of each event over its CTAs, in microseconds from the log's first
// stamp. Host code only (unit-tested on the CPU); the benchmark's stamps/ family prints it.
//
// Example:
//   std::vector<sm90::StampRecord> recs = ...;  // copied back from the device log
//   Timeline tl = BuildTimeline(recs);
//   std::printf("%s", FormatTimeline(tl).c_str());
#ifndef ENCORE_BENCHMARKS_INTERNAL_STAMP_TIMELINE_H_
#define ENCORE_BENCHMARKS_INTERNAL_STAMP_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gemm/kernels/internal/stamp_log.h"

namespace encore::benchmarks {

// One event's spread over the CTAs of one launch (us from the log's first stamp); n = 0: absent.
struct EventSpan {
  int n = 0;
  double first_us = 0, last_us = 0;
};

struct LaunchLine {
  EventSpan ev[static_cast<int>(gemm::sm90::StampEvent::kNumEvents)];
};

// Launch k of a kernel = the CTAs whose entry stamp is the k-th of their blockIdx; every other
// stamp of a CTA joins the latest entry of the same blockIdx on the same SM before it (one CTA of
// a kernel per SM at a time: the GEMM's shared memory; the pre-pass blocks of one launch have
// distinct blockIdx). pre[k] and gemm[k] are the k-th launches of each kernel.
struct Timeline {
  std::vector<LaunchLine> pre, gemm;
};

Timeline BuildTimeline(const std::vector<gemm::sm90::StampRecord>& records);

// Removes the log's unused slots (a GEMM CTA reserves its slots in a block, stamps.cuh
// StampCtaBegin; the host fills the log with 0xff first, so an unused slot's event byte is 0xff).
void DropUnusedSlots(std::vector<gemm::sm90::StampRecord>* records);

// One line per call: the pre-pass's entry / waited / done and the GEMM's entry / waited / first
// tile start / last main-loop end / last tile end / trigger, each "first..last" us; then the
// medians over the calls after the first of the gaps between them.
std::string FormatTimeline(const Timeline& timeline);

// Where each GEMM CTA's time goes, per launch: the spread over its CTAs of when the first tile
// started and the last ended (us from the launch's first GEMM-waited stamp, else its first entry),
// of the summed main loops and of the summed loop-end -> tile-end times (epilogue; for stream-K's
// last piece also the reduction). A CTA whose range ends in a split tile it does not finish has a
// loop end without a tile end: its last stamp is that loop end.
struct Spread {
  double min_us = 0, median_us = 0, max_us = 0;
};
// One work item of a CTA: the linear tile, its k-blocks [kb0, kb1) (a stream-K piece or the whole
// tile), when it started (us, the launch's origin as in CtaProfile), the main loop's time and the
// loop end -> tile end time after it (epilogue or reduction; 0 for a piece that ends without a tile
// end).
struct PieceRecord {
  uint32_t tile = gemm::sm90::kNoTile;
  int kb0 = 0, kb1 = 0;
  double start_us = 0;
  double loop_us = 0;
  double tail_us = 0;
};
// One CTA of a launch: its blockIdx, when it ended and its tiles (or stream-K pieces) in order.
struct CtaRecord {
  uint32_t block = 0;
  double end_us = 0;
  std::vector<PieceRecord> pieces;
};
struct CtaProfile {
  int ctas = 0;  // CTAs with at least one tile
  Spread start, end, loop, tail;
  // The fused pre-pass's stamps (fused_ctas > 0 only: kFused kernels): when the CTA's first
  // consumer thread had converted its jobs, when all its converters' stores were fenced, and when
  // its token producer was past the grid barrier.
  int fused_ctas = 0;
  Spread converted, share_done, passed;
  std::vector<CtaRecord> by_end;  // the CTAs, earliest end first
};
std::vector<CtaProfile> BuildCtaProfile(const std::vector<gemm::sm90::StampRecord>& records);
// Each statistic's median over launches 1.. (launch 0 follows the L2 flush), then the last
// launch's `extremes` earliest- and latest-ending CTAs with their tiles' main loops.
std::string FormatCtaProfile(const std::vector<CtaProfile>& launches, int extremes = 4);
// Every piece of one launch, a line each: block, tile, k-blocks, main loop (us), us per k-block,
// start and tail (us), then a line per CTA with its end (the input for fitting the partition's
// costs to a real shape: the tile's width comes from the plan, e.g.
// benchmarks/results/2026-12-01_run85_cta_pieces/plan_s0.cc).
std::string FormatPieces(const CtaProfile& launch);

}  // namespace encore::benchmarks

#endif  // ENCORE_BENCHMARKS_INTERNAL_STAMP_TIMELINE_H_
