// The GPU side of the fake grouped GEMM: three kernel variants (so a kernel-kind change changes the
// node's function) computing FakeValue for every row below FakeRows and every column.
//
// Example:
//   const void* fn = encore::graph_cache::testing::FakeKernel(/*variant=*/0);
#ifndef ENCORE_TESTS_GRAPH_CACHE_FAKE_KERNEL_H_
#define ENCORE_TESTS_GRAPH_CACHE_FAKE_KERNEL_H_

namespace encore::graph_cache::testing {

// The __global__ entry point of a variant (0 simple, 1 persistent, 2 stream-K); it takes one FakeParams by value, waits on
// griddepcontrol before touching memory (PDL-safe) and uses grid (x: row blocks, y: groups).
const void* FakeKernel(int variant);

}  // namespace encore::graph_cache::testing

#endif  // ENCORE_TESTS_GRAPH_CACHE_FAKE_KERNEL_H_
