//===- UnitTestMain.cpp - main of tprt-unittests --------------------------===//
//
// Tests that need the runtime started call tprt_init themselves (it is
// idempotent); the runtime is finalized once after all tests. Death tests
// re-run this binary ("threadsafe" style), so a child never inherits the
// parent's MPI state.
//
//===----------------------------------------------------------------------===//

#include "tprt/tprt.h"

#include <gtest/gtest.h>

namespace {
class RuntimeEnvironment : public testing::Environment {
public:
  void TearDown() override { tprt_finalize(); }
};
} // namespace

int main(int argc, char **argv) {
  testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  testing::AddGlobalTestEnvironment(new RuntimeEnvironment);
  return RUN_ALL_TESTS();
}
