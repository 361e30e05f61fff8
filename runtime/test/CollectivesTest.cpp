//===- CollectivesTest.cpp - collectives at world size 1 ------------------===//
//
// With one rank the collectives move no data but must check their buffers,
// copy where the result is a different buffer, and be counted. Multi-rank
// results are checked by MpiCollectivesTest.cpp under mpirun.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "tprt/launch.h"

namespace {

using tprt::test::iota;

/// A contiguous buffer with its rank-R descriptor.
struct Tensor {
  explicit Tensor(std::vector<int64_t> shape, float start = 0)
      : shape(std::move(shape)) {
    int64_t count = 1;
    for (int64_t size : this->shape)
      count *= size;
    data = iota(size_t(count), start);
    descriptor = tprt::makeDescriptor(data.data(), this->shape);
  }
  tprt_unranked_memref unranked() {
    return {int64_t(shape.size()), descriptor.data()};
  }

  std::vector<int64_t> shape;
  std::vector<float> data;
  std::vector<int64_t> descriptor;
};

class Collectives : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(tprt_init(nullptr, nullptr), TPRT_OK) << tprt_last_error();
    ASSERT_EQ(tprt_world_size(), 1);
    ASSERT_EQ(tprt_rank(), 0);
    tprt_reset_counters();
  }
};

TEST_F(Collectives, AllReduceIsIdentityAndCounted) {
  Tensor t({2, 3, 4});
  std::vector<float> before = t.data;
  tprt_unranked_memref buffer = t.unranked();
  _mlir_ciface_tprt_all_reduce_sum_f32(&buffer);
  _mlir_ciface_tprt_all_reduce_sum_f32(&buffer);
  EXPECT_EQ(t.data, before);
  tprt_counters counters;
  tprt_get_counters(&counters);
  EXPECT_EQ(counters.all_reduce_calls, 2);
  EXPECT_EQ(counters.all_reduce_bytes, 2 * 24 * 4);
  EXPECT_EQ(counters.all_gather_calls, 0);
}

TEST_F(Collectives, AllGatherCopiesAlongAnyDim) {
  for (int64_t dim = 0; dim < 3; ++dim) {
    Tensor in({2, 3, 4}, 1), out({2, 3, 4}, 100);
    tprt_unranked_memref i = in.unranked(), o = out.unranked();
    _mlir_ciface_tprt_all_gather_f32(&i, &o, dim);
    EXPECT_EQ(out.data, in.data) << "dim " << dim;
  }
  tprt_counters counters;
  tprt_get_counters(&counters);
  EXPECT_EQ(counters.all_gather_calls, 3);
  EXPECT_EQ(counters.all_gather_bytes, 3 * 24 * 4);
}

TEST_F(Collectives, ScalarAndSizeOneDimensions) {
  Tensor scalar({});
  tprt_unranked_memref s = scalar.unranked();
  _mlir_ciface_tprt_all_reduce_sum_f32(&s);
  // A size-1 dimension may carry any stride and is still contiguous.
  Tensor t({1, 4});
  t.descriptor[3 + 2] = 99; // strides[0]
  tprt_unranked_memref u = t.unranked();
  _mlir_ciface_tprt_all_reduce_sum_f32(&u);
  tprt_counters counters;
  tprt_get_counters(&counters);
  EXPECT_EQ(counters.all_reduce_calls, 2);
  EXPECT_EQ(counters.all_reduce_bytes, 4 + 16);
}

using CollectivesDeathTest = Collectives;

TEST_F(CollectivesDeathTest, NonContiguousBufferIsRefused) {
  Tensor t({768, 2});
  // A transposed view: sizes [768, 2], strides [1, 768].
  t.descriptor[3 + 2] = 1;
  t.descriptor[3 + 3] = 768;
  tprt_unranked_memref buffer = t.unranked();
  EXPECT_EXIT(_mlir_ciface_tprt_all_reduce_sum_f32(&buffer),
              testing::ExitedWithCode(1),
              "tprt\\[rank 0\\]: all_reduce_sum_f32: buffer is not contiguous "
              "\\(sizes \\[768, 2\\], strides \\[1, 768\\]\\)");
}

TEST_F(CollectivesDeathTest, AllGatherShapeMismatchIsRefused) {
  Tensor in({2, 3}), out({2, 4});
  tprt_unranked_memref i = in.unranked(), o = out.unranked();
  EXPECT_EXIT(_mlir_ciface_tprt_all_gather_f32(&i, &o, 1),
              testing::ExitedWithCode(1),
              "all_gather_f32: out \\[2, 4\\] is not in \\[2, 3\\] gathered "
              "from 1 ranks along dimension 1");
}

} // namespace
