//===- ArgmaxTest.cpp - the lanes' argmax against the scan it replaces ----===//
//
// tprt_argmax_f32 must leave max and index exactly as the compiled loop
// would: the same first position on ties, a NaN's effect, -0 below +0, the
// values they start from, and the tail past the last full vector.
//
//===----------------------------------------------------------------------===//

#include "Argmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using tprt::detail::argmaxRow;

namespace {

/// The loop tp-argmax-to-runtime replaces, written as the linalg body reads
/// (cmpf ogt, maximumf, select).
void reference(const std::vector<float> &x, float &max, int64_t &index,
               int64_t offset) {
  for (size_t j = 0; j < x.size(); ++j) {
    float v = x[j];
    bool greater = v > max;
    if (std::isnan(v) || std::isnan(max))
      max = std::numeric_limits<float>::quiet_NaN();
    else if (v > max || (v == max && !std::signbit(v)))
      max = v;
    if (greater)
      index = offset + int64_t(j);
  }
}

bool sameFloat(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expectAsScan(const std::vector<float> &x, float start = -INFINITY,
                  int64_t startIndex = 0, int64_t offset = 0) {
  float want = start, got = start;
  int64_t wantIndex = startIndex, gotIndex = startIndex;
  reference(x, want, wantIndex, offset);
  argmaxRow(x.data(), int64_t(x.size()), 1, got, gotIndex, offset);
  EXPECT_TRUE(sameFloat(got, want))
      << got << " vs " << want << ", n " << x.size();
  EXPECT_EQ(gotIndex, wantIndex) << "n " << x.size();
}

} // namespace

TEST(Argmax, RandomRowsOfEveryTailLength) {
  std::mt19937 rng(7);
  // Few distinct values: ties within and across lanes.
  std::uniform_int_distribution<int> value(-20, 20);
  for (size_t n : {1, 2, 15, 16, 17, 31, 32, 33, 47, 100, 1000, 50304})
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> x(n);
      for (float &v : x)
        v = float(value(rng)) / 4;
      expectAsScan(x);
      expectAsScan(x, /*start=*/2.5f, /*startIndex=*/-3, /*offset=*/1000);
    }
}

TEST(Argmax, TheFirstPositionOfTheMaximumAcrossLanes) {
  std::vector<float> x(64, 1.0f);
  x[37] = 5;
  x[21] = 5; // an earlier lane position, a later lane
  x[50] = 5;
  expectAsScan(x);
  float max = -INFINITY;
  int64_t index = 0;
  argmaxRow(x.data(), 64, 1, max, index, 10);
  EXPECT_EQ(index, 31);
  EXPECT_EQ(max, 5);
}

TEST(Argmax, ANaNWinsAndKeepsTheIndexBeforeIt) {
  for (size_t at : {0, 5, 16, 40, 63, 64}) {
    std::vector<float> x(65);
    for (size_t j = 0; j < x.size(); ++j)
      x[j] = float((j * 37) % 29);
    x[at] = std::numeric_limits<float>::quiet_NaN();
    expectAsScan(x);
  }
  std::vector<float> x(40, 1.0f);
  expectAsScan(x, std::numeric_limits<float>::quiet_NaN(), 7);
}

TEST(Argmax, ZerosAndInfinities) {
  std::vector<float> zeros(40, -0.0f);
  zeros[33] = 0.0f;
  expectAsScan(zeros);
  std::vector<float> negative(40, -INFINITY);
  expectAsScan(negative);
  expectAsScan(negative, -INFINITY, 9);
  std::vector<float> x(40, -1.0f);
  x[17] = INFINITY;
  expectAsScan(x);
  // A maximum the start already holds: no element is greater.
  expectAsScan(std::vector<float>(40, 3.0f), 3.0f, 4);
}

TEST(Argmax, AStridedRow) {
  std::vector<float> storage(3 * 40);
  std::vector<float> x(40);
  for (size_t j = 0; j < x.size(); ++j)
    storage[3 * j] = x[j] = float((j * 11) % 17);
  float want = -INFINITY, got = -INFINITY;
  int64_t wantIndex = 0, gotIndex = 0;
  reference(x, want, wantIndex, 0);
  argmaxRow(storage.data(), 40, 3, got, gotIndex, 0);
  EXPECT_EQ(got, want);
  EXPECT_EQ(gotIndex, wantIndex);
}
