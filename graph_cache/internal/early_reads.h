// Which calls of a multi-call graph may sit behind a programmatic (PDL) edge. The sm90 kernels with
// the token pre-pass load weights (B), weight scales (SFB) and the dynamic-M array before
// griddepcontrol.wait, i.e. possibly while the previous call's GEMM still writes its C. A call
// keeps its PDL edge only if none of those early reads overlaps an output (C) of the graph's
// calls. Later calls' outputs are counted too (only earlier ones are a hazard): one sorted pass,
// and weights that alias outputs of the same batch are pathological anyway. The same for the
// tokens (A, SFA) of a call whose pre-pass reads before its wait (TokensOverlap). Pure CPU.
// The executor also uses it to tell whether calls may run as one merged launch (no call reads
// what another writes: Overlaps and TokensOverlap against the launch's outputs; and no two
// outputs meet: OutputsMeet).
//
// Example:
//   internal::EarlyReads reads;           // reused: no allocation once warm
//   reads.Reset();
//   for (const GemmCall& c : calls) reads.AddOutputs(c.args);
//   reads.Finish();
//   const bool pdl_ok = !reads.Overlaps(calls[i].args);
#ifndef ENCORE_GRAPH_CACHE_INTERNAL_EARLY_READS_H_
#define ENCORE_GRAPH_CACHE_INTERNAL_EARLY_READS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "gemm/problem.h"

namespace encore::graph_cache::internal {

class EarlyReads {
 public:
  void Reset() {
    outputs_.clear();
    outputs_meet_ = false;
  }

  // Every group's C (capacity m x n fp16) of `args`.
  void AddOutputs(const gemm::GroupedGemmArguments& args) {
    for (const gemm::GroupProblem& g : args.groups) {
      Add(g.c, gemm::OperandBytesOf(g).c);
    }
  }

  // Sorts and merges the outputs (call before Overlaps).
  void Finish() {
    std::sort(outputs_.begin(), outputs_.end());
    size_t w = 0;
    for (size_t r = 0; r < outputs_.size(); ++r) {
      if (w > 0 && outputs_[r].first < outputs_[w - 1].second) outputs_meet_ = true;
      if (w > 0 && outputs_[r].first <= outputs_[w - 1].second) {
        outputs_[w - 1].second = std::max(outputs_[w - 1].second, outputs_[r].second);
      } else {
        outputs_[w++] = outputs_[r];
      }
    }
    outputs_.resize(w);
  }

  // Whether two of the outputs added since Reset share a byte (after Finish; adjacent ones do not).
  bool OutputsMeet() const { return outputs_meet_; }

  // Whether `args`' early reads (every group's B and SFB, and device_m) overlap an output.
  bool Overlaps(const gemm::GroupedGemmArguments& args) const {
    if (outputs_.empty()) return false;
    for (const gemm::GroupProblem& g : args.groups) {
      const gemm::OperandBytes bytes = gemm::OperandBytesOf(g);
      if (Hits(g.b, bytes.b) || Hits(g.sfb, bytes.sfb)) {
        return true;
      }
    }
    return args.device_m != nullptr && Hits(args.device_m, args.groups.size() * sizeof(int32_t));
  }

  // Whether what an early token pre-pass reads (every group's A and SFA, and device_m) overlaps
  // an output (gemm::PlanOptions::prepass_reads_early).
  bool TokensOverlap(const gemm::GroupedGemmArguments& args) const {
    if (outputs_.empty()) return false;
    for (const gemm::GroupProblem& g : args.groups) {
      const gemm::OperandBytes bytes = gemm::OperandBytesOf(g);
      if (Hits(g.a, bytes.a) || Hits(g.sfa, bytes.sfa)) {
        return true;
      }
    }
    return args.device_m != nullptr && Hits(args.device_m, args.groups.size() * sizeof(int32_t));
  }

 private:
  void Add(const void* p, size_t bytes) {
    if (p == nullptr || bytes == 0) return;
    const uintptr_t b = reinterpret_cast<uintptr_t>(p);
    outputs_.emplace_back(b, b + bytes);
  }
  // Whether [p, p + bytes) meets a merged output range.
  bool Hits(const void* p, size_t bytes) const {
    if (p == nullptr || bytes == 0) return false;
    const uintptr_t b = reinterpret_cast<uintptr_t>(p), e = b + bytes;
    // The first range starting at or after e; the one before it is the only candidate.
    auto it = std::lower_bound(outputs_.begin(), outputs_.end(), std::make_pair(e, uintptr_t{0}));
    return it != outputs_.begin() && std::prev(it)->second > b;
  }

  std::vector<std::pair<uintptr_t, uintptr_t>> outputs_;  // [begin, end), sorted, disjoint
  bool outputs_meet_ = false;
};

}  // namespace encore::graph_cache::internal

#endif  // ENCORE_GRAPH_CACHE_INTERNAL_EARLY_READS_H_
