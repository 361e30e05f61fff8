/*===- FakeModel.c - a hand-written stand-in for a compiled model ---------===*
 *
 * What tp-compile will emit for a two-matmul MLP block at tp FAKE_TP:
 *   y = (x @ fc1) @ fc2,  x [2, 4, 8], fc1 [8, 16], fc2 [16, 8]
 * fc1 is cut by columns and fc2 by rows, both in 2 outer blocks (like a
 * fused projection), so each rank computes a partial y and one all-reduce
 * sums it. Built with FAKE_BACKEND / FAKE_ABI variants for refusal tests,
 * with FAKE_BREAK, where rank 1 hands the all-reduce a transposed view
 * while rank 0 already waits in it, and with FAKE_STOP, where rank 1 stops
 * itself (SIGSTOP) before the all-reduce, as if it hung.
 *
 *===----------------------------------------------------------------------===*/

#include "tprt/model.h"
#include "tprt/tprt.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_ABI
#define FAKE_ABI TPRT_ABI_VERSION
#endif

#define HIDDEN 16

const char *tp_model_manifest(void) {
  static char manifest[2048];
  if (!manifest[0])
    snprintf(
        manifest, sizeof(manifest),
        "{\"abi_version\": %d, \"backend\": \"%s\", \"tp_size\": %d,"
        " \"functions\": [{\"name\": \"forward\","
        " \"symbol\": \"tp_model_forward\", \"args\": ["
        " {\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\","
        "  \"shape\": [2, 4, 8], \"local_shape\": [2, 4, 8],"
        "  \"shard\": null},"
        " {\"name\": \"fc1.weight\", \"role\": \"weight\","
        "  \"dtype\": \"f32\", \"shape\": [8, %d],"
        "  \"local_shape\": [8, %d], \"shard\": {\"dim\": 1, \"outer\": 2}},"
        " {\"name\": \"fc2.weight\", \"role\": \"weight\","
        "  \"dtype\": \"f32\", \"shape\": [%d, 8],"
        "  \"local_shape\": [%d, 8], \"shard\": {\"dim\": 0, \"outer\": 2}}],"
        " \"results\": [{\"name\": \"result0\", \"dtype\": \"f32\","
        "  \"shape\": [2, 4, 8]}]}]}",
        FAKE_ABI, FAKE_BACKEND, FAKE_TP, HIDDEN, HIDDEN / FAKE_TP, HIDDEN,
        HIDDEN / FAKE_TP);
  return manifest;
}

void tp_model_forward(void **args) {
  tprt_memref3d_f32 *x = (tprt_memref3d_f32 *)args[0];
  tprt_memref2d_f32 *fc1 = (tprt_memref2d_f32 *)args[1];
  tprt_memref2d_f32 *fc2 = (tprt_memref2d_f32 *)args[2];
  tprt_memref3d_f32 *y = (tprt_memref3d_f32 *)args[3];

  int64_t tokens = x->sizes[0] * x->sizes[1];
  int64_t model = x->sizes[2], hidden = fc1->sizes[1];
  tprt_memref2d_f32 x2 = {
      x->allocated, x->aligned, x->offset, {tokens, model}, {model, 1}};
  float *h = calloc((size_t)(tokens * hidden), sizeof(float));
  tprt_memref2d_f32 h2 = {h, h, 0, {tokens, hidden}, {hidden, 1}};
  _mlir_ciface_tprt_matmul_f32(&x2, fc1, &h2, 0, 0, 1);

  /* y is overwritten (accumulate = 0), as after a dropped zero fill. */
  tprt_memref2d_f32 y2 = {
      y->allocated, y->aligned, y->offset, {tokens, model}, {model, 1}};
  _mlir_ciface_tprt_matmul_f32(&h2, fc2, &y2, 0, 0, 0);
  free(h);

  tprt_memref3d_f32 view = *y;
#ifdef FAKE_BREAK
  if (tprt_rank() == 1) {
    view.sizes[1] = y->sizes[2];
    view.sizes[2] = y->sizes[1];
    view.strides[1] = 1;
    view.strides[2] = y->sizes[2];
  }
#endif
#ifdef FAKE_STOP
  if (tprt_rank() == 1)
    raise(SIGSTOP);
#endif
  tprt_unranked_memref partial = {3, &view};
  _mlir_ciface_tprt_all_reduce_sum_f32(&partial);
}
