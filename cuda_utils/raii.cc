#include "cuda_utils/raii.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "cuda_utils/status.h"

namespace encore {
namespace internal {
void StreamDeleter::Destroy(cudaStream_t s) { (void)cudaStreamDestroy(s); }
void EventDeleter::Destroy(cudaEvent_t e) { (void)cudaEventDestroy(e); }
void GraphDeleter::Destroy(cudaGraph_t g) { (void)cudaGraphDestroy(g); }
void GraphExecDeleter::Destroy(cudaGraphExec_t e) { (void)cudaGraphExecDestroy(e); }
}  // namespace internal

absl::StatusOr<Stream> Stream::Create(int priority) {
  cudaStream_t s = nullptr;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority),
                              "cudaStreamCreateWithPriority");
  return Stream(s);
}

absl::StatusOr<Event> Event::Create(bool timing) {
  cudaEvent_t e = nullptr;
  ENCORE_RETURN_IF_CUDA_ERROR(
      cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming),
      "cudaEventCreateWithFlags");
  return Event(e);
}

absl::StatusOr<Graph> Graph::Create() {
  cudaGraph_t g = nullptr;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphCreate(&g, 0), "cudaGraphCreate");
  return Graph(g);
}

absl::StatusOr<GraphExec> GraphExec::Instantiate(cudaGraph_t graph) {
  cudaGraphExec_t e = nullptr;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaGraphInstantiate(&e, graph, 0), "cudaGraphInstantiate");
  return GraphExec(e);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) (void)cudaFree(ptr_);
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Create(size_t bytes) {
  DeviceBuffer b;
  if (bytes == 0) return b;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaMalloc(&b.ptr_, bytes),
                              absl::StrCat("cudaMalloc(", bytes, " bytes)"));
  b.size_ = bytes;
  return b;
}

PinnedHostBuffer& PinnedHostBuffer::operator=(PinnedHostBuffer&& o) noexcept {
  if (this != &o) {
    if (host_ != nullptr) (void)cudaFreeHost(host_);
    host_ = std::exchange(o.host_, nullptr);
    device_ = std::exchange(o.device_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

PinnedHostBuffer::~PinnedHostBuffer() {
  if (host_ != nullptr) (void)cudaFreeHost(host_);
}

absl::StatusOr<PinnedHostBuffer> PinnedHostBuffer::Create(size_t bytes) {
  PinnedHostBuffer b;
  if (bytes == 0) return b;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaHostAlloc(&b.host_, bytes, cudaHostAllocMapped),
                              absl::StrCat("cudaHostAlloc(", bytes, " bytes, mapped)"));
  b.size_ = bytes;
  std::memset(b.host_, 0, bytes);
  ENCORE_RETURN_IF_CUDA_ERROR(cudaHostGetDevicePointer(&b.device_, b.host_, 0),
                              "cudaHostGetDevicePointer");
  return b;
}

absl::Status WithRelaxedCaptureMode(absl::FunctionRef<absl::Status()> allocate) {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  ENCORE_RETURN_IF_CUDA_ERROR(cudaThreadExchangeStreamCaptureMode(&mode),
                              "cudaThreadExchangeStreamCaptureMode (to relaxed)");
  const absl::Status status = allocate();
  ENCORE_RETURN_IF_CUDA_ERROR(cudaThreadExchangeStreamCaptureMode(&mode),
                              "cudaThreadExchangeStreamCaptureMode (back)");
  return status;
}

}  // namespace encore
