// An experiment of the main job (replay --encore_ab_arena=1, session 29): while a HugeArenaScope
// is alive on a thread, that thread's operator new allocates from one arena of transparent huge
// pages, so the graph cache's per-variant objects made inside the scope (variants, their bindings,
// entries, key words, graph objects) sit on a few 2 MB pages instead of ~10 scattered 4 KB ones
// per hit. Blocks of the arena are never reused (its deletes are ignored): for a benchmark whose
// captures happen once. The binary that links this replaces the global operator new / delete.
//
// Example:
//   { encore::bench::HugeArenaScope scope; exec->Run(args, stream); }  // captures land in the arena
#ifndef ENCORE_BENCHMARKS_INTERNAL_HUGE_ARENA_H_
#define ENCORE_BENCHMARKS_INTERNAL_HUGE_ARENA_H_

#include <cstddef>

namespace encore::bench {

class HugeArenaScope {
 public:
  HugeArenaScope();
  ~HugeArenaScope();
  HugeArenaScope(const HugeArenaScope&) = delete;
  HugeArenaScope& operator=(const HugeArenaScope&) = delete;

 private:
  bool outer_;
};

// Bytes the arena has handed out (0 when the arena could not be mapped: then nothing moves).
size_t HugeArenaBytesUsed();

}  // namespace encore::bench

#endif  // ENCORE_BENCHMARKS_INTERNAL_HUGE_ARENA_H_
