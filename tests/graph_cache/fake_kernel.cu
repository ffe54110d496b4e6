#include "tests/graph_cache/fake_kernel.h"
#include "tests/graph_cache/fake_params.h"

namespace encore::graph_cache::testing {
namespace {

template <int kVariant>
__global__ void FakeGemmKernel(const FakeParams p) {
  // PDL: nothing is read or written before the previous grid's memory is visible.
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int g = blockIdx.y;
  if (g < p.num_groups) {
    const FakeGroup& grp = p.groups[g];
    const int rows = FakeRows(p, g);
    const int64_t total = static_cast<int64_t>(rows) * grp.n;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      const int r = static_cast<int>(i / grp.n);
      const int j = static_cast<int>(i % grp.n);
      grp.c[i] = FakeValue(grp, kVariant, r, j);
    }
  }
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

}  // namespace

const void* FakeKernel(int variant) {
  switch (variant) {
    case 0:
      return reinterpret_cast<const void*>(&FakeGemmKernel<0>);
    case 1:
      return reinterpret_cast<const void*>(&FakeGemmKernel<1>);
    default:
      return reinterpret_cast<const void*>(&FakeGemmKernel<2>);
  }
}

}  // namespace encore::graph_cache::testing
