// Shared GoogleTest helpers: GPU tests skip, with the reason, on machines without a CUDA device.
//
// Example:
//   TEST(Kernel, Exact) {
//     ENCORE_SKIP_WITHOUT_GPU();
//     ...
//   }
#ifndef ENCORE_TESTS_TEST_UTIL_H_
#define ENCORE_TESTS_TEST_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "cuda_utils/device.h"
#include "gtest/gtest.h"

// Skips the current test when no usable CUDA device exists; the skip message is the reason.
#define ENCORE_SKIP_WITHOUT_GPU()                                          \
  do {                                                                     \
    if (absl::Status _gpu = ::encore::CudaDeviceAvailable(); !_gpu.ok()) { \
      GTEST_SKIP() << std::string(_gpu.message());                         \
    }                                                                      \
  } while (0)

#define ENCORE_ASSERT_OK(expr)                     \
  do {                                             \
    const absl::Status _s = (expr);                \
    ASSERT_TRUE(_s.ok()) << #expr << " -> " << _s; \
  } while (0)

#define ENCORE_EXPECT_OK(expr)                     \
  do {                                             \
    const absl::Status _s = (expr);                \
    EXPECT_TRUE(_s.ok()) << #expr << " -> " << _s; \
  } while (0)

#endif  // ENCORE_TESTS_TEST_UTIL_H_
