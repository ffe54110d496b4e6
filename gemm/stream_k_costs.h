// The stream-K partition's cost constants (gemm/heuristics.h PlanStreamK), as a runner option so
// that one benchmark process can compare partitions of the same problem (RunnerOptions).
// Units: PackCost's, ~4.5 ns of the H200's main loop.
//
// Example:
//   RunnerOptions options;
//   options.stream_k_costs.piece_fixed = 250;  // a piece's fixed cost
//   auto runner = Nvfp4GroupedGemm::Create(options);
#ifndef ENCORE_GEMM_STREAM_K_COSTS_H_
#define ENCORE_GEMM_STREAM_K_COSTS_H_

namespace encore::gemm {

struct StreamKCosts {
  // Every piece (a whole tile or a part of one): its main loop's start and its tile's end.
  long long piece_fixed = 150;  // heuristics.h kPackTileFixed
  // Storing or reading a split tile's fp32 partial, per side: io_fixed + io_per_row per token row
  // (rows rounded up to 64-column chunks).
  long long io_fixed = 230;  // heuristics.h kStreamKIoFixed (run 92)
  long long io_per_row = 2;  // heuristics.h kStreamKIoPerRow (run 92; 4 and no fixed part before)
  // A k-block of a tile with r token rows costs max(r, (r + decode_rows) / 2) units: narrow
  // tiles pay for the weight decode they cannot hide (heuristics.h PackKBlockCost). Runs 134-135
  // (GPU MODE shape 0 forced to stream-K): 96 / 128 / 144 / 160 / 176 / 192 / 208 -> 110 / 101.5 /
  // 99.2 / 95.6 / 99.3 / 102 / 106 us.
  long long decode_rows = 160;  // heuristics.h kPackDecodeRows
};

}  // namespace encore::gemm

#endif  // ENCORE_GEMM_STREAM_K_COSTS_H_
