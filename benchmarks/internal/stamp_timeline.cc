#include "benchmarks/internal/stamp_timeline.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace encore::benchmarks {
namespace {

using gemm::sm90::StampEvent;
using gemm::sm90::StampRecord;

constexpr int kEvents = static_cast<int>(StampEvent::kNumEvents);

int EventOf(const StampRecord& r) { return static_cast<int>(r.event & 0xff); }
uint32_t SmOf(const StampRecord& r) { return r.event >> 8; }
bool IsPrepass(int e) { return e <= static_cast<int>(StampEvent::kPrepassDone); }

void Add(EventSpan& s, double us) {
  if (s.n == 0) {
    s.first_us = s.last_us = us;
  } else {
    s.first_us = std::min(s.first_us, us);
    s.last_us = std::max(s.last_us, us);
  }
  ++s.n;
}

// Assigns every record of one kernel (pre-pass or GEMM events) to its launch.
void Assign(const std::vector<StampRecord>& recs, int entry_event, uint64_t t0,
            std::vector<LaunchLine>* lines) {
  // Entries per blockIdx in time order: the k-th is launch k.
  std::map<uint32_t, std::vector<std::pair<uint64_t, uint32_t>>> entries;  // block -> (t, sm)
  for (const StampRecord& r : recs) {
    if (EventOf(r) == entry_event) entries[r.block].push_back({r.t, SmOf(r)});
  }
  size_t launches = 0;
  for (auto& [block, v] : entries) {
    std::sort(v.begin(), v.end());
    launches = std::max(launches, v.size());
  }
  lines->assign(launches, LaunchLine{});
  for (const StampRecord& r : recs) {
    const auto it = entries.find(r.block);
    if (it == entries.end()) continue;
    int launch = -1;
    for (size_t k = 0; k < it->second.size(); ++k) {
      if (it->second[k].first <= r.t && it->second[k].second == SmOf(r)) {
        launch = static_cast<int>(k);
      }
    }
    if (launch < 0) continue;  // its entry record was dropped (log full)
    Add((*lines)[launch].ev[EventOf(r)], (r.t - t0) * 1e-3);
  }
}

std::string Span(const EventSpan& s) {
  if (s.n == 0) return "        -        ";
  return absl::StrFormat("%7.2f..%-7.2f", s.first_us, s.last_us);
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

Timeline BuildTimeline(const std::vector<StampRecord>& records) {
  Timeline tl;
  if (records.empty()) return tl;
  uint64_t t0 = records[0].t;
  for (const StampRecord& r : records) t0 = std::min(t0, r.t);
  std::vector<StampRecord> pre, gemm;
  for (const StampRecord& r : records) {
    if (EventOf(r) >= kEvents) continue;
    (IsPrepass(EventOf(r)) ? pre : gemm).push_back(r);
  }
  Assign(pre, static_cast<int>(StampEvent::kPrepassEntry), t0, &tl.pre);
  Assign(gemm, static_cast<int>(StampEvent::kGemmEntry), t0, &tl.gemm);
  return tl;
}

std::string FormatTimeline(const Timeline& tl) {
  auto ev = [](const LaunchLine& l, StampEvent e) -> const EventSpan& {
    return l.ev[static_cast<int>(e)];
  };
  std::string out = absl::StrCat(
      "call  pre entry          pre waited         pre done           | gemm entry         ",
      "gemm waited        tile start         loop end           tile end           trigger\n");
  const size_t calls = std::max(tl.pre.size(), tl.gemm.size());
  const LaunchLine none;
  for (size_t k = 0; k < calls; ++k) {
    const LaunchLine& p = k < tl.pre.size() ? tl.pre[k] : none;
    const LaunchLine& g = k < tl.gemm.size() ? tl.gemm[k] : none;
    absl::StrAppend(&out, absl::StrFormat("%4d  ", k), Span(ev(p, StampEvent::kPrepassEntry)), " ",
                    Span(ev(p, StampEvent::kPrepassWaited)), " ",
                    Span(ev(p, StampEvent::kPrepassDone)), " | ",
                    Span(ev(g, StampEvent::kGemmEntry)), " ", Span(ev(g, StampEvent::kGemmWaited)),
                    " ", Span(ev(g, StampEvent::kTileStart)), " ",
                    Span(ev(g, StampEvent::kTileLoopEnd)), " ", Span(ev(g, StampEvent::kTileEnd)),
                    " ", Span(ev(g, StampEvent::kTrigger)), "\n");
  }
  // Gaps, medians over calls 1.. (call 0 follows the L2 flush).
  std::vector<double> prev_end_to_pre, pre_span, pre_done_to_waited, prev_end_to_gemm_entry,
      waited_to_start, loop, epilogue_last, call;
  for (size_t k = 1; k < tl.gemm.size(); ++k) {
    const LaunchLine& g = tl.gemm[k];
    const LaunchLine& prev = tl.gemm[k - 1];
    const double prev_end = ev(prev, StampEvent::kTileEnd).last_us;
    if (k < tl.pre.size() && ev(tl.pre[k], StampEvent::kPrepassEntry).n > 0) {
      const LaunchLine& p = tl.pre[k];
      prev_end_to_pre.push_back(ev(p, StampEvent::kPrepassEntry).first_us - prev_end);
      pre_span.push_back(ev(p, StampEvent::kPrepassDone).last_us -
                         ev(p, StampEvent::kPrepassWaited).first_us);
      pre_done_to_waited.push_back(ev(g, StampEvent::kGemmWaited).first_us -
                                   ev(p, StampEvent::kPrepassDone).last_us);
    }
    prev_end_to_gemm_entry.push_back(ev(g, StampEvent::kGemmEntry).first_us - prev_end);
    waited_to_start.push_back(ev(g, StampEvent::kTileStart).first_us -
                              ev(g, StampEvent::kGemmWaited).first_us);
    loop.push_back(ev(g, StampEvent::kTileLoopEnd).last_us -
                   ev(g, StampEvent::kTileStart).first_us);
    epilogue_last.push_back(ev(g, StampEvent::kTileEnd).last_us -
                            ev(g, StampEvent::kTileLoopEnd).last_us);
    call.push_back(ev(g, StampEvent::kTileEnd).last_us - prev_end);
  }
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "medians over calls 1..%d (us): previous GEMM's last tile end -> pre-pass entry %.2f; "
          "pre-pass waited -> done %.2f; pre-pass done -> GEMM waited %.2f; previous GEMM end -> "
          "GEMM entry %.2f; GEMM waited -> first tile start %.2f; first tile start -> last loop "
          "end %.2f; last loop end -> last tile end %.2f; call (previous end -> end) %.2f\n",
          static_cast<int>(call.size()), Median(prev_end_to_pre), Median(pre_span),
          Median(pre_done_to_waited), Median(prev_end_to_gemm_entry), Median(waited_to_start),
          Median(loop), Median(epilogue_last), Median(call)));
  return out;
}

}  // namespace encore::benchmarks
