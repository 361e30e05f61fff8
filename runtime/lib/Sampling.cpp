//===- Sampling.cpp - choosing the next token -----------------------------===//
//
// The entry points compiled models call to pick a token from a step's
// logits: the greedy argmax (tp-argmax-to-runtime).
//
//===----------------------------------------------------------------------===//

#include "Argmax.h"
#include "RuntimeState.h"
#include "Views.h"

using namespace tprt::common;

extern "C" void _mlir_ciface_tprt_argmax_f32(tprt_memref2d_f32 *in,
                                             tprt_memref1d_f32 *max,
                                             tprt_memref1d_i64 *index,
                                             int64_t offset) {
  const char *call = "argmax_f32";
  checkDescriptor(call, "in", in);
  checkDescriptor(call, "max", max);
  checkDescriptor(call, "index", index);
  int64_t rows = in->sizes[0], n = in->sizes[1];
  if (max->sizes[0] != rows || index->sizes[0] != rows)
    fail(call, "in has " + std::to_string(rows) + " rows, max " +
                   std::to_string(max->sizes[0]) + ", index " +
                   std::to_string(index->sizes[0]));
  for (int64_t r = 0; r < rows; ++r)
    tprt::detail::argmaxRow(
        in->aligned + in->offset + r * in->strides[0], n, in->strides[1],
        max->aligned[max->offset + r * max->strides[0]],
        index->aligned[index->offset + r * index->strides[0]], offset);
}
