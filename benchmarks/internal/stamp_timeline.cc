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

// The launch of every record of one kernel (pre-pass or GEMM events; -1: its entry record was
// dropped, log full); *launches = how many launches the entries show.
std::vector<int> LaunchIndex(const std::vector<StampRecord>& recs, int entry_event,
                             size_t* launches) {
  // Entries per blockIdx in time order: the k-th is launch k.
  std::map<uint32_t, std::vector<std::pair<uint64_t, uint32_t>>> entries;  // block -> (t, sm)
  for (const StampRecord& r : recs) {
    if (EventOf(r) == entry_event) entries[r.block].push_back({r.t, SmOf(r)});
  }
  *launches = 0;
  for (auto& [block, v] : entries) {
    std::sort(v.begin(), v.end());
    *launches = std::max(*launches, v.size());
  }
  std::vector<int> index(recs.size(), -1);
  for (size_t i = 0; i < recs.size(); ++i) {
    const StampRecord& r = recs[i];
    const auto it = entries.find(r.block);
    if (it == entries.end()) continue;
    for (size_t k = 0; k < it->second.size(); ++k) {
      if (it->second[k].first <= r.t && it->second[k].second == SmOf(r)) {
        index[i] = static_cast<int>(k);
      }
    }
  }
  return index;
}

// Assigns every record of one kernel to its launch.
void Assign(const std::vector<StampRecord>& recs, int entry_event, uint64_t t0,
            std::vector<LaunchLine>* lines) {
  size_t launches = 0;
  const std::vector<int> index = LaunchIndex(recs, entry_event, &launches);
  lines->assign(launches, LaunchLine{});
  for (size_t i = 0; i < recs.size(); ++i) {
    if (index[i] >= 0) Add((*lines)[index[i]].ev[EventOf(recs[i])], (recs[i].t - t0) * 1e-3);
  }
}

Spread SpreadOf(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min_us = v.front();
  s.median_us = v[v.size() / 2];
  s.max_us = v.back();
  return s;
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
    absl::StrAppend(
        &out, absl::StrFormat("%4d  ", k), Span(ev(p, StampEvent::kPrepassEntry)), " ",
        Span(ev(p, StampEvent::kPrepassWaited)), " ", Span(ev(p, StampEvent::kPrepassDone)), " | ",
        Span(ev(g, StampEvent::kGemmEntry)), " ", Span(ev(g, StampEvent::kGemmWaited)), " ",
        Span(ev(g, StampEvent::kTileStart)), " ", Span(ev(g, StampEvent::kTileLoopEnd)), " ",
        Span(ev(g, StampEvent::kTileEnd)), " ", Span(ev(g, StampEvent::kTrigger)), "\n");
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

void DropUnusedSlots(std::vector<StampRecord>* records) {
  records->erase(std::remove_if(records->begin(), records->end(),
                                [](const StampRecord& r) { return EventOf(r) >= kEvents; }),
                 records->end());
}

std::vector<CtaProfile> BuildCtaProfile(const std::vector<StampRecord>& records) {
  std::vector<StampRecord> gemm;
  for (const StampRecord& r : records) {
    const int e = EventOf(r);
    if (e < kEvents && !IsPrepass(e)) gemm.push_back(r);
  }
  size_t launches = 0;
  const std::vector<int> index =
      LaunchIndex(gemm, static_cast<int>(StampEvent::kGemmEntry), &launches);
  // (launch, block) -> that CTA's records in time order.
  struct Event {
    uint64_t t;
    int e;
    const StampRecord* r;
    bool operator<(const Event& o) const { return t < o.t || (t == o.t && e < o.e); }
  };
  std::map<std::pair<int, uint32_t>, std::vector<Event>> ctas;
  std::vector<uint64_t> origin(launches, UINT64_MAX), entry(launches, UINT64_MAX);
  for (size_t i = 0; i < gemm.size(); ++i) {
    const int k = index[i];
    if (k < 0) continue;
    const int e = EventOf(gemm[i]);
    ctas[{k, gemm[i].block}].push_back({gemm[i].t, e, &gemm[i]});
    if (e == static_cast<int>(StampEvent::kGemmWaited)) origin[k] = std::min(origin[k], gemm[i].t);
    if (e == static_cast<int>(StampEvent::kGemmEntry)) entry[k] = std::min(entry[k], gemm[i].t);
  }
  std::vector<std::vector<double>> start(launches), end(launches), loop(launches), tail(launches);
  std::vector<std::vector<double>> converted(launches), share_done(launches), passed(launches);
  std::vector<std::vector<CtaRecord>> records_of(launches);
  for (auto& [key, v] : ctas) {
    const int k = key.first;
    const uint64_t t0 = origin[k] != UINT64_MAX ? origin[k] : entry[k];
    std::sort(v.begin(), v.end());
    bool started = false;
    uint64_t tile_start = 0, loop_end = 0, last = 0;
    double first_start = -1;
    double fused[3] = {-1, -1, -1};  // kFusedConverted, kFusedShareDone, kFusedPassed
    CtaRecord rec;
    rec.block = key.second;
    PieceRecord piece;
    for (const auto& [t, e, r] : v) {
      const int f = e - static_cast<int>(StampEvent::kFusedConverted);
      if (f >= 0 && f < 3 && fused[f] < 0) fused[f] = (static_cast<double>(t) - t0) * 1e-3;
      if (e == static_cast<int>(StampEvent::kTileStart)) {
        tile_start = t;
        piece = PieceRecord{r->tile, r->kb0, r->kb1, (static_cast<double>(t) - t0) * 1e-3};
        started = true;
        if (first_start < 0) first_start = piece.start_us;
      } else if (e == static_cast<int>(StampEvent::kTileLoopEnd) && started) {
        piece.loop_us = (t - tile_start) * 1e-3;
        rec.pieces.push_back(piece);
        loop_end = t;
        last = std::max(last, t);
      } else if (e == static_cast<int>(StampEvent::kTileEnd) && loop_end != 0) {
        rec.pieces.back().tail_us = (t - loop_end) * 1e-3;
        last = std::max(last, t);
      }
    }
    if (first_start < 0) continue;  // a CTA without tiles
    if (fused[0] >= 0 && fused[1] >= 0 && fused[2] >= 0) {
      converted[k].push_back(fused[0]);
      share_done[k].push_back(fused[1]);
      passed[k].push_back(fused[2]);
    }
    start[k].push_back(first_start);
    end[k].push_back((static_cast<double>(last) - t0) * 1e-3);
    rec.end_us = end[k].back();
    double loops = 0, tails = 0;
    for (const PieceRecord& p : rec.pieces) {
      loops += p.loop_us;
      tails += p.tail_us;
    }
    loop[k].push_back(loops);
    tail[k].push_back(tails);
    records_of[k].push_back(std::move(rec));
  }
  std::vector<CtaProfile> out(launches);
  for (size_t k = 0; k < launches; ++k) {
    out[k].ctas = static_cast<int>(start[k].size());
    out[k].start = SpreadOf(start[k]);
    out[k].end = SpreadOf(end[k]);
    out[k].loop = SpreadOf(loop[k]);
    out[k].tail = SpreadOf(tail[k]);
    out[k].fused_ctas = static_cast<int>(converted[k].size());
    out[k].converted = SpreadOf(converted[k]);
    out[k].share_done = SpreadOf(share_done[k]);
    out[k].passed = SpreadOf(passed[k]);
    out[k].by_end = std::move(records_of[k]);
    std::sort(out[k].by_end.begin(), out[k].by_end.end(),
              [](const CtaRecord& a, const CtaRecord& b) { return a.end_us < b.end_us; });
  }
  return out;
}

std::string FormatCtaProfile(const std::vector<CtaProfile>& launches, int extremes) {
  if (launches.size() < 2) return "CTA profile: fewer than two launches\n";
  // Each statistic's median over launches 1.. (launch 0 follows the L2 flush).
  auto med = [&](auto field) {
    std::vector<double> v;
    for (size_t k = 1; k < launches.size(); ++k) v.push_back(field(launches[k]));
    return Median(std::move(v));
  };
  std::string out;
  absl::StrAppend(
      &out,
      absl::StrFormat("CTA profile, medians over launches 1..%d (us from the launch's first "
                      "GEMM-waited stamp; min / median / max over its %.0f CTAs with tiles):\n",
                      static_cast<int>(launches.size()) - 1,
                      med([](const CtaProfile& p) { return static_cast<double>(p.ctas); })));
  auto line = [&](const char* name, Spread CtaProfile::*f) {
    absl::StrAppend(&out,
                    absl::StrFormat("  %-44s %8.2f %8.2f %8.2f\n", name,
                                    med([&](const CtaProfile& p) { return (p.*f).min_us; }),
                                    med([&](const CtaProfile& p) { return (p.*f).median_us; }),
                                    med([&](const CtaProfile& p) { return (p.*f).max_us; })));
  };
  if (launches.back().fused_ctas > 0) {
    line("fused pre-pass: jobs converted (thread 128)", &CtaProfile::converted);
    line("fused pre-pass: the CTA's share fenced", &CtaProfile::share_done);
    line("fused pre-pass: past the grid barrier", &CtaProfile::passed);
  }
  line("first tile start", &CtaProfile::start);
  line("last tile end", &CtaProfile::end);
  line("sum of main loops (tile start -> loop end)", &CtaProfile::loop);
  line("sum of loop end -> tile end (epilogue, reduce)", &CtaProfile::tail);
  const std::vector<CtaRecord>& ctas = launches.back().by_end;
  const int n = static_cast<int>(ctas.size());
  absl::StrAppend(&out, "  last launch, the earliest and latest ending CTAs (end: main loops):\n");
  for (int i = 0; i < n; ++i) {
    if (i >= extremes && i < n - extremes) continue;
    absl::StrAppend(&out,
                    absl::StrFormat("    block %3u ends %7.2f:", ctas[i].block, ctas[i].end_us));
    for (const PieceRecord& p : ctas[i].pieces) {
      absl::StrAppend(&out, absl::StrFormat(" %.2f", p.loop_us));
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

std::string FormatPieces(const CtaProfile& launch) {
  std::vector<const CtaRecord*> by_block;
  for (const CtaRecord& c : launch.by_end) by_block.push_back(&c);
  std::sort(by_block.begin(), by_block.end(),
            [](const CtaRecord* a, const CtaRecord* b) { return a->block < b->block; });
  std::string out =
      "pieces: block tile kb0 kb1 loop_us us_per_kblock start_us tail_us; cta: block end_us\n";
  for (const CtaRecord* c : by_block) {
    for (const PieceRecord& p : c->pieces) {
      const int kb = p.kb1 - p.kb0;
      absl::StrAppend(&out, absl::StrFormat("piece %u %u %d %d %.3f %.4f %.3f %.3f\n", c->block,
                                            p.tile, p.kb0, p.kb1, p.loop_us,
                                            kb > 0 ? p.loop_us / kb : 0.0, p.start_us, p.tail_us));
    }
    absl::StrAppend(&out, absl::StrFormat("cta %u %.3f\n", c->block, c->end_us));
  }
  return out;
}

}  // namespace encore::benchmarks
