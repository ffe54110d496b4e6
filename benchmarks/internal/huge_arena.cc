#include "benchmarks/internal/huge_arena.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace encore::bench {
namespace {

constexpr size_t kHuge = size_t{2} << 20;
constexpr size_t kArenaBytes = size_t{128} << 20;

thread_local bool t_in_scope = false;

struct Arena {
  char* base = nullptr;
  std::atomic<size_t> used{0};
  Arena() {
    void* p = mmap(nullptr, kArenaBytes + kHuge, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return;
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
    base = reinterpret_cast<char*>(aligned);
    (void)madvise(base, kArenaBytes, MADV_HUGEPAGE);
  }
  void* Allocate(size_t n) {
    if (base == nullptr) return nullptr;
    const size_t size = (n + 15) & ~size_t{15};
    const size_t at = used.fetch_add(size, std::memory_order_relaxed);
    return at + size <= kArenaBytes ? base + at : nullptr;
  }
  bool Owns(const void* p) const {
    return base != nullptr && p >= base && p < base + kArenaBytes;
  }
};

Arena& TheArena() {
  static Arena* arena = new (std::malloc(sizeof(Arena))) Arena();  // never destroyed
  return *arena;
}

}  // namespace

HugeArenaScope::HugeArenaScope() : outer_(!t_in_scope) {
  TheArena();  // mapped before the first allocation inside a scope
  t_in_scope = true;
}
HugeArenaScope::~HugeArenaScope() {
  if (outer_) t_in_scope = false;
}

size_t HugeArenaBytesUsed() {
  return TheArena().base == nullptr ? 0 : TheArena().used.load(std::memory_order_relaxed);
}

}  // namespace encore::bench

void* operator new(size_t n) {
  if (encore::bench::t_in_scope) {
    if (void* p = encore::bench::TheArena().Allocate(n)) return p;
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  if (encore::bench::TheArena().Owns(p)) return;
  std::free(p);
}
void operator delete(void* p, size_t) noexcept { operator delete(p); }
