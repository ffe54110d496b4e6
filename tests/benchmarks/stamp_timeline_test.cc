#include "benchmarks/internal/stamp_timeline.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace encore::benchmarks {
namespace {

using gemm::sm90::StampEvent;
using gemm::sm90::StampRecord;

StampRecord R(uint64_t t_ns, StampEvent e, uint32_t sm, uint32_t block) {
  return StampRecord{t_ns, static_cast<uint32_t>(e) | (sm << 8), block, gemm::sm90::kNoTile, 0, 0};
}

const EventSpan& Ev(const LaunchLine& l, StampEvent e) { return l.ev[static_cast<int>(e)]; }

// Two calls of (pre-pass, GEMM), two CTAs each; call 1's GEMM CTA 0 lands on another SM and
// enters before call 0's CTA 1 has ended; the log is out of time order.
TEST(StampTimelineTest, AssignsEveryStampToItsLaunch) {
  std::vector<StampRecord> recs = {
      // call 1 (listed first: the log's order is the atomics', not time)
      R(20000, StampEvent::kPrepassEntry, 0, 0),
      R(20500, StampEvent::kPrepassDone, 0, 0),
      R(20100, StampEvent::kPrepassEntry, 3, 1),
      R(20600, StampEvent::kPrepassDone, 3, 1),
      R(19000, StampEvent::kGemmEntry, 2, 0),
      R(21000, StampEvent::kGemmWaited, 2, 0),
      R(21100, StampEvent::kTileStart, 2, 0),
      R(29000, StampEvent::kTileLoopEnd, 2, 0),
      R(30000, StampEvent::kTileEnd, 2, 0),
      R(22000, StampEvent::kGemmEntry, 1, 1),
      R(22100, StampEvent::kTileStart, 1, 1),
      R(29500, StampEvent::kTileLoopEnd, 1, 1),
      R(31000, StampEvent::kTileEnd, 1, 1),
      // call 0
      R(1000, StampEvent::kPrepassEntry, 0, 0),
      R(1500, StampEvent::kPrepassDone, 0, 0),
      R(1000, StampEvent::kPrepassEntry, 1, 1),
      R(1700, StampEvent::kPrepassDone, 1, 1),
      R(1200, StampEvent::kGemmEntry, 0, 0),
      R(2000, StampEvent::kGemmWaited, 0, 0),
      R(2100, StampEvent::kTileStart, 0, 0),
      R(10000, StampEvent::kTileLoopEnd, 0, 0),
      R(11000, StampEvent::kTileEnd, 0, 0),
      R(1300, StampEvent::kGemmEntry, 1, 1),
      R(2200, StampEvent::kTileStart, 1, 1),
      R(18000, StampEvent::kTileLoopEnd, 1, 1),
      R(21500, StampEvent::kTileEnd, 1, 1),
      R(17000, StampEvent::kTrigger, 1, 1),
  };
  const Timeline tl = BuildTimeline(recs);
  ASSERT_EQ(tl.pre.size(), 2u);
  ASSERT_EQ(tl.gemm.size(), 2u);
  EXPECT_EQ(Ev(tl.pre[0], StampEvent::kPrepassEntry).n, 2);
  EXPECT_DOUBLE_EQ(Ev(tl.pre[0], StampEvent::kPrepassDone).last_us, 0.7);
  EXPECT_DOUBLE_EQ(Ev(tl.pre[1], StampEvent::kPrepassDone).first_us, 19.5);
  // Call 1's CTA 0 (SM 2, entered at 19 us) is not call 0's CTA 0 (SM 0).
  EXPECT_DOUBLE_EQ(Ev(tl.gemm[0], StampEvent::kTileEnd).first_us, 10.0);
  EXPECT_DOUBLE_EQ(Ev(tl.gemm[0], StampEvent::kTileEnd).last_us, 20.5);
  EXPECT_EQ(Ev(tl.gemm[0], StampEvent::kTrigger).n, 1);
  EXPECT_DOUBLE_EQ(Ev(tl.gemm[1], StampEvent::kGemmEntry).first_us, 18.0);
  EXPECT_DOUBLE_EQ(Ev(tl.gemm[1], StampEvent::kTileEnd).last_us, 30.0);
  EXPECT_EQ(Ev(tl.gemm[1], StampEvent::kGemmWaited).n, 1);
  EXPECT_EQ(Ev(tl.gemm[1], StampEvent::kTrigger).n, 0);

  const std::string text = FormatTimeline(tl);
  // Call 1 ends 9.5 us after call 0's last tile end (20.5 -> 30.0).
  EXPECT_NE(text.find("call (previous end -> end) 9.50"), std::string::npos) << text;
  EXPECT_NE(text.find("pre-pass done -> GEMM waited 0.40"), std::string::npos) << text;
}

// Two launches of a GEMM with two CTAs: CTA 0 runs two tiles, CTA 1 one tile and then a stream-K
// piece it does not finish (a loop end without a tile end).
TEST(StampTimelineTest, CtaProfileSumsEachCtasLoopsAndTails) {
  std::vector<StampRecord> recs;
  for (uint64_t base : {0ull, 100000ull}) {  // launch 0, then launch 1 100 us later
    auto at = [&](uint64_t us) { return base + us * 1000; };
    recs.push_back(R(at(0), StampEvent::kGemmEntry, 0, 0));
    recs.push_back(R(at(1), StampEvent::kGemmWaited, 0, 0));
    recs.push_back(R(at(2), StampEvent::kTileStart, 0, 0));
    recs.push_back(R(at(12), StampEvent::kTileLoopEnd, 0, 0));
    recs.push_back(R(at(13), StampEvent::kTileEnd, 0, 0));
    recs.push_back(R(at(13), StampEvent::kTileStart, 0, 0));
    recs.push_back(R(at(33), StampEvent::kTileLoopEnd, 0, 0));
    recs.push_back(R(at(35), StampEvent::kTileEnd, 0, 0));
    recs.push_back(R(at(0), StampEvent::kGemmEntry, 1, 1));
    recs.push_back(R(at(3), StampEvent::kTileStart, 1, 1));
    recs.push_back(R(at(23), StampEvent::kTileLoopEnd, 1, 1));
    recs.push_back(R(at(24), StampEvent::kTileEnd, 1, 1));
    recs.push_back(R(at(24), StampEvent::kTileStart, 1, 1));
    recs.push_back(R(at(30), StampEvent::kTileLoopEnd, 1, 1));
  }
  const std::vector<CtaProfile> p = BuildCtaProfile(recs);
  ASSERT_EQ(p.size(), 2u);
  for (const CtaProfile& l : p) {
    EXPECT_EQ(l.ctas, 2);
    EXPECT_DOUBLE_EQ(l.start.min_us, 1.0);  // from the first GEMM-waited stamp (1 us)
    EXPECT_DOUBLE_EQ(l.start.max_us, 2.0);
    EXPECT_DOUBLE_EQ(l.end.min_us, 29.0);  // CTA 1's last stamp: its piece's loop end
    EXPECT_DOUBLE_EQ(l.end.max_us, 34.0);
    EXPECT_DOUBLE_EQ(l.loop.min_us, 26.0);  // CTA 1: 20 + 6
    EXPECT_DOUBLE_EQ(l.loop.max_us, 30.0);  // CTA 0: 10 + 20
    EXPECT_DOUBLE_EQ(l.tail.min_us, 1.0);
    EXPECT_DOUBLE_EQ(l.tail.max_us, 3.0);
  }
  ASSERT_EQ(p[1].by_end.size(), 2u);
  EXPECT_EQ(p[1].by_end[0].block, 1u);  // CTA 1 ends first
  auto loops = [](const CtaRecord& c) {
    std::vector<double> v;
    for (const PieceRecord& piece : c.pieces) v.push_back(piece.loop_us);
    return v;
  };
  EXPECT_EQ(loops(p[1].by_end[0]), (std::vector<double>{20.0, 6.0}));
  EXPECT_EQ(loops(p[1].by_end[1]), (std::vector<double>{10.0, 20.0}));
  const std::string text = FormatCtaProfile(p);
  EXPECT_NE(text.find("over its 2 CTAs"), std::string::npos) << text;
  EXPECT_NE(text.find("block   0 ends   34.00: 10.00 20.00"), std::string::npos) << text;
  EXPECT_NE(text.find("sum of main loops"), std::string::npos) << text;
}

// A fused launch's pre-pass stamps: per CTA its first of each, from the launch's origin; printed
// only when the last launch has them.
TEST(StampTimelineTest, CtaProfileSpreadsTheFusedPrepassStamps) {
  std::vector<StampRecord> recs;
  for (uint64_t base : {0ull, 100000ull}) {
    auto at = [&](uint64_t ns) { return base + ns; };
    for (uint32_t b : {0u, 1u}) {
      const uint64_t late = 1000 * b;  // CTA 1 converts 1 us later
      recs.push_back(R(at(0), StampEvent::kGemmEntry, b, b));
      recs.push_back(R(at(1000), StampEvent::kGemmWaited, b, b));
      recs.push_back(R(at(2000 + late), StampEvent::kFusedConverted, b, b));
      recs.push_back(R(at(2500 + late), StampEvent::kFusedShareDone, b, b));
      recs.push_back(R(at(5000), StampEvent::kFusedPassed, b, b));
      recs.push_back(R(at(3000 + late), StampEvent::kTileStart, b, b));
      recs.push_back(R(at(9000), StampEvent::kTileLoopEnd, b, b));
      recs.push_back(R(at(10000), StampEvent::kTileEnd, b, b));
    }
  }
  const std::vector<CtaProfile> p = BuildCtaProfile(recs);
  ASSERT_EQ(p.size(), 2u);
  for (const CtaProfile& l : p) {
    EXPECT_EQ(l.fused_ctas, 2);
    EXPECT_DOUBLE_EQ(l.converted.min_us, 1.0);
    EXPECT_DOUBLE_EQ(l.converted.max_us, 2.0);
    EXPECT_DOUBLE_EQ(l.share_done.max_us, 2.5);
    EXPECT_DOUBLE_EQ(l.passed.min_us, 4.0);
    EXPECT_DOUBLE_EQ(l.passed.max_us, 4.0);
  }
  const std::string text = FormatCtaProfile(p);
  EXPECT_NE(text.find("fused pre-pass: past the grid barrier"), std::string::npos) << text;
  // An unfused launch prints no fused lines.
  recs.erase(std::remove_if(recs.begin(), recs.end(),
                            [](const StampRecord& r) {
                              const uint32_t e = r.event & 0xff;
                              return e >= static_cast<uint32_t>(StampEvent::kFusedConverted);
                            }),
             recs.end());
  EXPECT_EQ(FormatCtaProfile(BuildCtaProfile(recs)).find("fused pre-pass"), std::string::npos);
}

// The pieces of one launch carry their work items (tile, k-blocks) from the tile-start stamps.
TEST(StampTimelineTest, PiecesCarryTheirWorkItems) {
  auto start = [](uint64_t t_ns, uint32_t tile, uint16_t kb0, uint16_t kb1) {
    return StampRecord{t_ns, static_cast<uint32_t>(StampEvent::kTileStart), 0, tile, kb0, kb1};
  };
  const std::vector<StampRecord> recs = {
      R(0, StampEvent::kGemmEntry, 0, 0),
      R(1000, StampEvent::kGemmWaited, 0, 0),
      start(2000, 7, 21, 56),
      R(30000, StampEvent::kTileLoopEnd, 0, 0),
      start(31000, 8, 0, 56),
      R(87000, StampEvent::kTileLoopEnd, 0, 0),
      R(88000, StampEvent::kTileEnd, 0, 0),
  };
  const std::vector<CtaProfile> p = BuildCtaProfile(recs);
  ASSERT_EQ(p.size(), 1u);
  ASSERT_EQ(p[0].by_end.size(), 1u);
  const std::vector<PieceRecord>& pieces = p[0].by_end[0].pieces;
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].tile, 7u);
  EXPECT_EQ(pieces[0].kb0, 21);
  EXPECT_EQ(pieces[0].kb1, 56);
  EXPECT_DOUBLE_EQ(pieces[0].loop_us, 28.0);
  EXPECT_EQ(pieces[1].tile, 8u);
  EXPECT_DOUBLE_EQ(pieces[1].loop_us, 56.0);
  // Starts from the GEMM-waited stamp (1 us); the first piece ends without a tile end.
  EXPECT_DOUBLE_EQ(pieces[0].start_us, 1.0);
  EXPECT_DOUBLE_EQ(pieces[0].tail_us, 0.0);
  EXPECT_DOUBLE_EQ(pieces[1].start_us, 30.0);
  EXPECT_DOUBLE_EQ(pieces[1].tail_us, 1.0);
  const std::string text = FormatPieces(p[0]);
  EXPECT_NE(text.find("piece 0 7 21 56 28.000 0.8000 1.000 0.000"), std::string::npos) << text;
  EXPECT_NE(text.find("piece 0 8 0 56 56.000 1.0000 30.000 1.000"), std::string::npos) << text;
  EXPECT_NE(text.find("cta 0 87.000"), std::string::npos) << text;
}

// A GEMM CTA's unused slots (the host's 0xff fill) are dropped; every stamp is kept, in order.
TEST(StampTimelineTest, UnusedSlotsAreDropped) {
  StampRecord unused;
  std::memset(&unused, 0xff, sizeof(unused));
  std::vector<StampRecord> recs = {R(0, StampEvent::kGemmEntry, 0, 0), unused,
                                   R(1000, StampEvent::kGemmWaited, 0, 0), unused, unused,
                                   R(2000, StampEvent::kTileStart, 0, 0)};
  DropUnusedSlots(&recs);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].t, 0u);
  EXPECT_EQ(recs[1].t, 1000u);
  EXPECT_EQ(recs[2].t, 2000u);
  EXPECT_EQ(BuildCtaProfile(recs).size(), 1u);
}

TEST(StampTimelineTest, EmptyLogGivesNoLaunches) {
  const Timeline tl = BuildTimeline({});
  EXPECT_TRUE(tl.pre.empty());
  EXPECT_TRUE(tl.gemm.empty());
  EXPECT_TRUE(BuildCtaProfile({}).empty());
}

}  // namespace
}  // namespace encore::benchmarks
