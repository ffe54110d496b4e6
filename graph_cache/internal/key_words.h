// Hash and equality for cache keys stored as std::vector<uint32_t> (the concatenated words of
// one or more StructuralKeys) and looked up, without building a vector, as
// absl::Span<const uint32_t> (heterogeneous lookup in absl::flat_hash_map).
//
// Example:
//   absl::flat_hash_map<std::vector<uint32_t>, int, WordsHash, WordsEq> map;
//   auto it = map.find(sig.key.words());   // a Span: no allocation
#ifndef ENCORE_GRAPH_CACHE_INTERNAL_KEY_WORDS_H_
#define ENCORE_GRAPH_CACHE_INTERNAL_KEY_WORDS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/types/span.h"

namespace encore::graph_cache::internal {

inline absl::Span<const uint32_t> AsWords(absl::Span<const uint32_t> s) { return s; }
inline absl::Span<const uint32_t> AsWords(const std::vector<uint32_t>& v) {
  return absl::MakeConstSpan(v);
}

struct WordsHash {
  using is_transparent = void;
  template <typename T>
  size_t operator()(const T& t) const {
    return absl::HashOf(AsWords(t));
  }
};

struct WordsEq {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    const absl::Span<const uint32_t> x = AsWords(a);
    const absl::Span<const uint32_t> y = AsWords(b);
    return x.size() == y.size() &&
           (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(uint32_t)) == 0);
  }
};

}  // namespace encore::graph_cache::internal

#endif  // ENCORE_GRAPH_CACHE_INTERNAL_KEY_WORDS_H_
