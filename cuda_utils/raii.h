// Move-only owners for CUDA handles: stream, event, graph, graph exec and device buffer.
//
// Each owner is created through a static Create() returning absl::StatusOr, releases its handle
// in the destructor (errors there are ignored: destructors never throw or fail), and exposes the
// raw handle with get(). A GraphExec must be destroyed before the Graph it came from; owners that
// hold both declare the exec after the graph so that member destruction order does it.
//
// Example:
//   ENCORE_ASSIGN_OR_RETURN(encore::Stream stream, encore::Stream::Create());
//   ENCORE_ASSIGN_OR_RETURN(encore::DeviceBuffer buf, encore::DeviceBuffer::Create(1 << 20));
//   ENCORE_RETURN_IF_CUDA_ERROR(cudaMemsetAsync(buf.get(), 0, buf.size(), stream.get()), "zero");
#ifndef ENCORE_CUDA_UTILS_RAII_H_
#define ENCORE_CUDA_UTILS_RAII_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace encore {

namespace internal {
// Owns one handle of type H; Deleter::Destroy(H) releases it.
template <typename H, typename Deleter>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(H h) : h_(h) {}
  UniqueHandle(UniqueHandle&& o) noexcept : h_(std::exchange(o.h_, H{})) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, H{});
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  H get() const { return h_; }
  explicit operator bool() const { return h_ != H{}; }
  void reset() {
    if (h_ != H{}) Deleter::Destroy(h_);
    h_ = H{};
  }
  H release() { return std::exchange(h_, H{}); }

 private:
  H h_{};
};

struct StreamDeleter {
  static void Destroy(cudaStream_t s);
};
struct EventDeleter {
  static void Destroy(cudaEvent_t e);
};
struct GraphDeleter {
  static void Destroy(cudaGraph_t g);
};
struct GraphExecDeleter {
  static void Destroy(cudaGraphExec_t e);
};
}  // namespace internal

class Stream : public internal::UniqueHandle<cudaStream_t, internal::StreamDeleter> {
 public:
  using UniqueHandle::UniqueHandle;
  // A non-blocking stream (no implicit sync with the legacy default stream).
  [[nodiscard]] static absl::StatusOr<Stream> Create(int priority = 0);
};

class Event : public internal::UniqueHandle<cudaEvent_t, internal::EventDeleter> {
 public:
  using UniqueHandle::UniqueHandle;
  // timing=false creates a cudaEventDisableTiming event (cheaper, for ordering only).
  [[nodiscard]] static absl::StatusOr<Event> Create(bool timing = true);
};

class Graph : public internal::UniqueHandle<cudaGraph_t, internal::GraphDeleter> {
 public:
  using UniqueHandle::UniqueHandle;
  [[nodiscard]] static absl::StatusOr<Graph> Create();
};

class GraphExec : public internal::UniqueHandle<cudaGraphExec_t, internal::GraphExecDeleter> {
 public:
  using UniqueHandle::UniqueHandle;
  // Instantiates `graph` (which must outlive nothing: the exec is independent once created, but
  // Encore's owners still destroy the exec first).
  [[nodiscard]] static absl::StatusOr<GraphExec> Instantiate(cudaGraph_t graph);
};

// Device memory from cudaMalloc; size() in bytes.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  [[nodiscard]] static absl::StatusOr<DeviceBuffer> Create(size_t bytes);

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
};

// Page-locked host memory mapped into the device's address space (cudaHostAlloc with
// cudaHostAllocMapped): the host writes it with plain stores, kernels read it over the bus at
// device(); size() in bytes.
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  PinnedHostBuffer(PinnedHostBuffer&& o) noexcept
      : host_(std::exchange(o.host_, nullptr)),
        device_(std::exchange(o.device_, nullptr)),
        size_(std::exchange(o.size_, 0)) {}
  PinnedHostBuffer& operator=(PinnedHostBuffer&& o) noexcept;
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;
  ~PinnedHostBuffer();

  // Zero-filled.
  [[nodiscard]] static absl::StatusOr<PinnedHostBuffer> Create(size_t bytes);

  void* host() const { return host_; }
  void* device() const { return device_; }
  size_t size() const { return size_; }

 private:
  void* host_ = nullptr;
  void* device_ = nullptr;
  size_t size_ = 0;
};

// Runs `allocate` with the calling thread's stream-capture mode relaxed, then restores the mode.
// NOTES: in the default (global) mode a cudaMalloc or cudaHostAlloc fails — and invalidates the
// capture — while this thread or ANY other thread captures a stream in global mode (e.g. a
// framework capturing its own graph); relaxed, the allocation goes ahead and no capture is
// touched. Callers still never allocate for a stream that is itself capturing.
[[nodiscard]] absl::Status WithRelaxedCaptureMode(absl::FunctionRef<absl::Status()> allocate);

}  // namespace encore

#endif  // ENCORE_CUDA_UTILS_RAII_H_
