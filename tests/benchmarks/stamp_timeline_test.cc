#include "benchmarks/internal/stamp_timeline.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace encore::benchmarks {
namespace {

using gemm::sm90::StampEvent;
using gemm::sm90::StampRecord;

StampRecord R(uint64_t t_ns, StampEvent e, uint32_t sm, uint32_t block) {
  return StampRecord{t_ns, static_cast<uint32_t>(e) | (sm << 8), block};
}

const EventSpan& Ev(const LaunchLine& l, StampEvent e) { return l.ev[static_cast<int>(e)]; }

// Two calls of (pre-pass, GEMM), two CTAs each; call 1's GEMM CTA 0 lands on another SM and
// enters before call 0's CTA 1 has ended; the log is out of time order.
TEST(StampTimelineTest, AssignsEveryStampToItsLaunch) {
  std::vector<StampRecord> recs = {
      // call 1 (listed first: the log's order is the atomics', not time)
      R(20000, StampEvent::kPrepassEntry, 0, 0), R(20500, StampEvent::kPrepassDone, 0, 0),
      R(20100, StampEvent::kPrepassEntry, 3, 1), R(20600, StampEvent::kPrepassDone, 3, 1),
      R(19000, StampEvent::kGemmEntry, 2, 0), R(21000, StampEvent::kGemmWaited, 2, 0),
      R(21100, StampEvent::kTileStart, 2, 0), R(29000, StampEvent::kTileLoopEnd, 2, 0),
      R(30000, StampEvent::kTileEnd, 2, 0), R(22000, StampEvent::kGemmEntry, 1, 1),
      R(22100, StampEvent::kTileStart, 1, 1), R(29500, StampEvent::kTileLoopEnd, 1, 1),
      R(31000, StampEvent::kTileEnd, 1, 1),
      // call 0
      R(1000, StampEvent::kPrepassEntry, 0, 0), R(1500, StampEvent::kPrepassDone, 0, 0),
      R(1000, StampEvent::kPrepassEntry, 1, 1), R(1700, StampEvent::kPrepassDone, 1, 1),
      R(1200, StampEvent::kGemmEntry, 0, 0), R(2000, StampEvent::kGemmWaited, 0, 0),
      R(2100, StampEvent::kTileStart, 0, 0), R(10000, StampEvent::kTileLoopEnd, 0, 0),
      R(11000, StampEvent::kTileEnd, 0, 0), R(1300, StampEvent::kGemmEntry, 1, 1),
      R(2200, StampEvent::kTileStart, 1, 1), R(18000, StampEvent::kTileLoopEnd, 1, 1),
      R(21500, StampEvent::kTileEnd, 1, 1), R(17000, StampEvent::kTrigger, 1, 1),
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

TEST(StampTimelineTest, EmptyLogGivesNoLaunches) {
  const Timeline tl = BuildTimeline({});
  EXPECT_TRUE(tl.pre.empty());
  EXPECT_TRUE(tl.gemm.empty());
}

}  // namespace
}  // namespace encore::benchmarks
