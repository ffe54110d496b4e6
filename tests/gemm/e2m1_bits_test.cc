// The kernels' e2m1 -> fp16 bit tricks against the host reference (DecodeE2M1, FloatToHalfBits):
// every code pair in every nibble-pair position, the other nibbles random, both forms.
#include "gemm/kernels/internal/e2m1_bits.h"

#include <cstdint>
#include <cstring>
#include <random>

#include "gemm/nvfp4.h"
#include "gtest/gtest.h"

namespace encore::gemm::sm90 {
namespace {

constexpr float kTwoToMinus14 = 1.0f / 16384.0f;

// fp16 bits of e2m1(code) * 2^-14 (exact: at most 2 significant bits, >= 2^-15).
uint16_t Expected(uint32_t code) { return FloatToHalfBits(DecodeE2M1(code) * kTwoToMinus14); }

template <int kI>
void CheckPosition(std::mt19937& rng) {
  for (uint32_t lo = 0; lo < 16; ++lo) {
    for (uint32_t hi = 0; hi < 16; ++hi) {
      for (int rep = 0; rep < 64; ++rep) {
        uint32_t w = static_cast<uint32_t>(rng());
        w &= ~((0xFu << (4 * kI)) | (0xFu << (4 * (kI + 4))));
        w |= (lo << (4 * kI)) | (hi << (4 * (kI + 4)));
        const uint32_t expected = Expected(lo) | (static_cast<uint32_t>(Expected(hi)) << 16);
        ASSERT_EQ(E2m1PairToHalf2Shifted<kI>(w), expected)
            << "pair " << kI << " word 0x" << std::hex << w;
        ASSERT_EQ(E2m1PairToHalf2ShiftedOneCopy<kI>(w), expected)
            << "pair " << kI << " word 0x" << std::hex << w;
      }
    }
  }
}

TEST(E2m1Bits, EveryCodePairInEveryPositionIsE2m1TimesTwoToMinus14) {
  std::mt19937 rng(20261130);
  CheckPosition<0>(rng);
  CheckPosition<1>(rng);
  CheckPosition<2>(rng);
  CheckPosition<3>(rng);
}

template <int kS>
void CheckSlot(std::mt19937& rng) {
  const int n_lo = kSlotNibbles[kS][0], n_hi = kSlotNibbles[kS][1];
  for (uint32_t lo = 0; lo < 16; ++lo) {
    for (uint32_t hi = 0; hi < 16; ++hi) {
      for (int rep = 0; rep < 64; ++rep) {
        uint32_t w = static_cast<uint32_t>(rng());
        w &= ~((0xFu << (4 * n_lo)) | (0xFu << (4 * n_hi)));
        w |= (lo << (4 * n_lo)) | (hi << (4 * n_hi));
        const uint32_t expected = Expected(lo) | (static_cast<uint32_t>(Expected(hi)) << 16);
        ASSERT_EQ(E2m1Slot<kS>(w), expected) << "slot " << kS << " word 0x" << std::hex << w;
      }
    }
  }
}

// The byte form's four slots cover the word's 8 nibbles once each.
TEST(E2m1Bits, EveryCodePairInEverySlotIsE2m1TimesTwoToMinus14) {
  std::mt19937 rng(20261201);
  CheckSlot<0>(rng);
  CheckSlot<1>(rng);
  CheckSlot<2>(rng);
  CheckSlot<3>(rng);
  int seen = 0;
  for (const auto& s : kSlotNibbles) seen |= (1 << s[0]) | (1 << s[1]);
  EXPECT_EQ(seen, 0xFF);
}

TEST(E2m1Bits, TheSubnormalAndTheSignsAreKept) {
  // 0x1 = +0.5 -> fp16 subnormal 2^-15 (0x0200); 0x9 = -0.5; 0x8 = -0; 0x7 = +6, 0xF = -6.
  EXPECT_EQ(E2m1PairToHalf2Shifted<0>(0x00090001u), 0x82000200u);
  EXPECT_EQ(E2m1PairToHalf2Shifted<3>(0x80007000u), 0x80000E00u);
  EXPECT_EQ(E2m1PairToHalf2Shifted<3>(0xF0000000u), 0x8E000000u);
}

}  // namespace
}  // namespace encore::gemm::sm90
