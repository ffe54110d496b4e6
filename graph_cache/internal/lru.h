// Least-recently-used order plus the two bounds of the graph cache (entry count and estimated
// device bytes), as an intrusive list: cache entries derive from LruNode, so touching an entry on
// a hit is four pointer writes and never allocates. Pure CPU; not thread-safe (the executor calls
// it under its mutex).
//
// Example:
//   encore::graph_cache::internal::LruBudget lru(/*max_entries=*/64, /*max_bytes=*/1 << 20);
//   if (!lru.Admissible(bytes)) return;                       // larger than the whole budget
//   while (LruNode* victim = lru.NextVictim(bytes)) Evict(victim);  // Evict calls lru.Remove
//   lru.Insert(&entry, bytes);
//   lru.Touch(&entry);                                        // on every hit
#ifndef ENCORE_GRAPH_CACHE_INTERNAL_LRU_H_
#define ENCORE_GRAPH_CACHE_INTERNAL_LRU_H_

#include <cstddef>

namespace encore::graph_cache::internal {

struct LruNode {
  LruNode* lru_prev = nullptr;  // towards the most recently used end
  LruNode* lru_next = nullptr;  // towards the least recently used end
  size_t lru_bytes = 0;
  bool lru_linked = false;
};

class LruBudget {
 public:
  LruBudget(size_t max_entries, size_t max_bytes)
      : max_entries_(max_entries), max_bytes_(max_bytes) {}
  LruBudget(const LruBudget&) = delete;
  LruBudget& operator=(const LruBudget&) = delete;

  // Whether an entry of `bytes` could ever fit (in an empty cache).
  bool Admissible(size_t bytes) const { return max_entries_ > 0 && bytes <= max_bytes_; }

  // The entry to evict before one more entry of `incoming_bytes` fits both bounds; nullptr when
  // it already fits (or nothing is left to evict).
  LruNode* NextVictim(size_t incoming_bytes) const {
    if (tail_ == nullptr) return nullptr;
    const bool over_count = entries_ + 1 > max_entries_;
    const bool over_bytes = bytes_ + incoming_bytes > max_bytes_;
    return (over_count || over_bytes) ? tail_ : nullptr;
  }

  // Calls visit(node) for each entry that NextVictim would return in turn, were each removed,
  // until one more entry of `incoming_bytes` fits; stops early when visit returns false. Removes
  // nothing.
  template <typename Visit>
  void ForEachVictim(size_t incoming_bytes, Visit visit) const {
    size_t entries = entries_;
    size_t bytes = bytes_;
    for (LruNode* n = tail_; n != nullptr; n = n->lru_prev) {
      if (entries + 1 <= max_entries_ && bytes + incoming_bytes <= max_bytes_) return;
      if (!visit(n)) return;
      --entries;
      bytes -= n->lru_bytes;
    }
  }

  // Links `n` as the most recently used entry.
  void Insert(LruNode* n, size_t bytes) {
    n->lru_bytes = bytes;
    n->lru_prev = nullptr;
    n->lru_next = head_;
    if (head_ != nullptr) head_->lru_prev = n;
    head_ = n;
    if (tail_ == nullptr) tail_ = n;
    n->lru_linked = true;
    ++entries_;
    bytes_ += bytes;
  }

  void Touch(LruNode* n) {
    if (!n->lru_linked || head_ == n) return;
    Unlink(n);
    n->lru_prev = nullptr;
    n->lru_next = head_;
    head_->lru_prev = n;
    head_ = n;
    if (tail_ == nullptr) tail_ = n;
  }

  void Remove(LruNode* n) {
    if (!n->lru_linked) return;
    Unlink(n);
    n->lru_prev = n->lru_next = nullptr;
    n->lru_linked = false;
    --entries_;
    bytes_ -= n->lru_bytes;
  }

  LruNode* lru() const { return tail_; }
  LruNode* mru() const { return head_; }
  size_t entries() const { return entries_; }
  size_t bytes() const { return bytes_; }
  size_t max_entries() const { return max_entries_; }
  size_t max_bytes() const { return max_bytes_; }

 private:
  void Unlink(LruNode* n) {
    if (n->lru_prev != nullptr)
      n->lru_prev->lru_next = n->lru_next;
    else
      head_ = n->lru_next;
    if (n->lru_next != nullptr)
      n->lru_next->lru_prev = n->lru_prev;
    else
      tail_ = n->lru_prev;
  }

  size_t max_entries_;
  size_t max_bytes_;
  LruNode* head_ = nullptr;
  LruNode* tail_ = nullptr;
  size_t entries_ = 0;
  size_t bytes_ = 0;
};

}  // namespace encore::graph_cache::internal

#endif  // ENCORE_GRAPH_CACHE_INTERNAL_LRU_H_
