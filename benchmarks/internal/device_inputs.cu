#include "benchmarks/internal/device_inputs.h"

#include <cuda_runtime.h>

#include "absl/strings/str_cat.h"
#include "cuda_utils/device.h"
#include "cuda_utils/status.h"

namespace encore::bench {
namespace {

__device__ __forceinline__ uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// GPU MODE values: random bytes & 0xBB (each nibble in {0..3, 8..11}: e2m1 ±{0, 0.5, 1, 1.5}).
__global__ void FillValues(uint64_t* out, size_t words, uint64_t seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    out[i] = Mix(seed ^ (i * 0x2545f4914f6cdd1dull)) & 0xBBBBBBBBBBBBBBBBull;
  }
}

// GPU MODE scales: e4m3 1.0 (0x38) or 2.0 (0x40), chosen at random per byte.
__global__ void FillScales(uint64_t* out, size_t words, uint64_t seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = Mix(seed ^ (i * 0x9e3779b97f4a7c15ull));
    uint64_t v = 0;
    for (int b = 0; b < 8; ++b) v |= static_cast<uint64_t>((r >> b) & 1 ? 0x40 : 0x38) << (8 * b);
    out[i] = v;
  }
}

__global__ void Touch(uint4* p, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    p[i] = make_uint4(static_cast<unsigned>(i), 0, 0, 0);
  }
}

__global__ void Empty() {}

__global__ void Hold(uint64_t ns) {
  uint64_t t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

size_t RoundUp16(size_t b) { return (b + 15) / 16 * 16; }

absl::Status Fill(void* p, size_t bytes, bool scales, uint64_t seed, cudaStream_t stream) {
  if (bytes == 0) return absl::OkStatus();
  const size_t words = RoundUp16(bytes) / 8;
  if (scales) {
    FillScales<<<1024, 256, 0, stream>>>(static_cast<uint64_t*>(p), words, seed);
  } else {
    FillValues<<<1024, 256, 0, stream>>>(static_cast<uint64_t*>(p), words, seed);
  }
  return ToStatus(cudaGetLastError(), "fill kernel launch");
}

}  // namespace

absl::StatusOr<InputSets> InputSets::Create(const std::vector<GroupShape>& shapes, int count,
                                            cudaStream_t stream, uint64_t seed) {
  InputSets s;
  s.sets_.resize(count);
  for (int i = 0; i < count; ++i) {
    for (size_t g = 0; g < shapes.size(); ++g) {
      const GroupShape& sh = shapes[g];
      const size_t a_bytes = RoundUp16(static_cast<size_t>(sh.m) * sh.k / 2);
      const size_t b_bytes = RoundUp16(static_cast<size_t>(sh.n) * sh.k / 2);
      const size_t sfa_bytes = gemm::BlockedScaleBytes(sh.m, sh.k);
      const size_t sfb_bytes = gemm::BlockedScaleBytes(sh.n, sh.k);
      const size_t c_bytes = RoundUp16(static_cast<size_t>(sh.m) * sh.n * 2);
      const size_t total = a_bytes + b_bytes + sfa_bytes + sfb_bytes + c_bytes;
      ENCORE_ASSIGN_OR_RETURN(DeviceBuffer buf, DeviceBuffer::Create(total));
      char* base = buf.as<char>();
      gemm::GroupProblem p;
      p.a = base;
      p.b = base + a_bytes;
      p.sfa = base + a_bytes + b_bytes;
      p.sfb = base + a_bytes + b_bytes + sfa_bytes;
      p.c = base + a_bytes + b_bytes + sfa_bytes + sfb_bytes;
      p.m = sh.m;
      p.n = sh.n;
      p.k = sh.k;
      const uint64_t sd = seed * 1000003ull + static_cast<uint64_t>(i) * 131ull + g;
      ENCORE_RETURN_IF_ERROR(Fill(base, a_bytes + b_bytes, false, sd, stream));
      ENCORE_RETURN_IF_ERROR(
          Fill(base + a_bytes + b_bytes, sfa_bytes + sfb_bytes, true, sd ^ 0x5555, stream));
      ENCORE_RETURN_IF_CUDA_ERROR(cudaMemsetAsync(p.c, 0xFF, c_bytes, stream), "poison C");
      if (i == 0) {
        s.bytes_per_set_ += a_bytes + b_bytes + sfa_bytes + sfb_bytes + c_bytes;
        s.flops_per_set_ += 2.0 * sh.m * sh.n * sh.k;
      }
      s.sets_[i].push_back(p);
      s.buffers_.push_back(std::move(buf));
    }
  }
  ENCORE_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream), "sync after filling inputs");
  return s;
}

absl::StatusOr<L2Flusher> L2Flusher::Create() {
  ENCORE_ASSIGN_OR_RETURN(DeviceInfo info, QueryDevice());
  L2Flusher f;
  ENCORE_ASSIGN_OR_RETURN(f.buffer_, DeviceBuffer::Create(2 * static_cast<size_t>(info.l2_bytes)));
  return f;
}

absl::Status L2Flusher::Flush(cudaStream_t stream) const {
  Touch<<<264, 512, 0, stream>>>(buffer_.as<uint4>(), buffer_.size() / sizeof(uint4));
  return ToStatus(cudaGetLastError(), "L2 flush kernel launch");
}

const void* EmptyKernel() { return reinterpret_cast<const void*>(&Empty); }

absl::Status LaunchHold(double us, cudaStream_t stream) {
  Hold<<<1, 1, 0, stream>>>(static_cast<uint64_t>(us * 1000.0));
  return ToStatus(cudaGetLastError(), "hold kernel launch");
}

}  // namespace encore::bench
