#include "cuda_utils/status.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace encore {
namespace {

TEST(ToStatus, SuccessIsOk) {
  EXPECT_TRUE(ToStatus(cudaSuccess, "anything").ok());
  EXPECT_TRUE(ToStatus(CUDA_SUCCESS, "anything").ok());
}

TEST(ToStatus, RuntimeErrorNamesTheCallAndTheError) {
  absl::Status s = ToStatus(cudaErrorMemoryAllocation, "cudaMalloc(A)");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(s.message(), "cudaMalloc(A): ")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "cudaErrorMemoryAllocation")) << s;
}

TEST(ToStatus, RuntimeErrorClasses) {
  EXPECT_EQ(ToStatus(cudaErrorNoDevice, "x").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ToStatus(cudaErrorInvalidValue, "x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ToStatus(cudaErrorInvalidDevice, "x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ToStatus(cudaErrorLaunchFailure, "x").code(), absl::StatusCode::kInternal);
}

TEST(ToStatus, DriverErrorNamesTheCallAndCode) {
  absl::Status s = ToStatus(CUDA_ERROR_INVALID_VALUE, "cuTensorMapEncodeTiled(A)");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "cuTensorMapEncodeTiled(A): ")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "1")) << s;
  EXPECT_EQ(ToStatus(CUDA_ERROR_OUT_OF_MEMORY, "x").code(), absl::StatusCode::kResourceExhausted);
}

absl::Status ReturnsThrough(cudaError_t e) {
  ENCORE_RETURN_IF_CUDA_ERROR(e, "step");
  return absl::OkStatus();
}

int what_evaluations = 0;
std::string CountedWhat() {
  ++what_evaluations;
  return "counted step";
}

absl::Status ReturnsThroughCounted(cudaError_t e) {
  ENCORE_RETURN_IF_CUDA_ERROR(e, CountedWhat());
  return absl::OkStatus();
}

// The per-call paths build messages with absl::StrCat: on success they must cost nothing.
TEST(ToStatus, MessageIsBuiltOnlyOnFailure) {
  what_evaluations = 0;
  EXPECT_TRUE(ReturnsThroughCounted(cudaSuccess).ok());
  EXPECT_EQ(what_evaluations, 0);
  const absl::Status s = ReturnsThroughCounted(cudaErrorLaunchFailure);
  EXPECT_EQ(what_evaluations, 1);
  EXPECT_TRUE(absl::StartsWith(s.message(), "counted step: ")) << s;
}

TEST(ToStatus, ReturnMacroPropagates) {
  EXPECT_TRUE(ReturnsThrough(cudaSuccess).ok());
  EXPECT_EQ(ReturnsThrough(cudaErrorInvalidValue).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace encore
