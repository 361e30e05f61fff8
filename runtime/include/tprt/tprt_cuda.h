/*===- tprt_cuda.h - launcher calls of the cuda runtime -----------*- C -*-===*
 *
 * libtprt_cuda implements all of tprt.h on device buffers (every descriptor
 * the compiled code passes points to device memory). A launcher (tp-run-cuda)
 * also needs to move tensors between host and device; these calls do it on
 * the rank's stream. They return a tprt_status and leave their message in
 * tprt_last_error().
 *
 *===----------------------------------------------------------------------===*/

#ifndef TPRT_TPRT_CUDA_H
#define TPRT_TPRT_CUDA_H

#include "tprt/tprt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `bytes` of device memory (256-byte aligned) into *out; zero-filled when
 * `zero` is non-zero. */
tprt_status tprt_device_alloc(size_t bytes, int zero, void **out);
tprt_status tprt_device_free(void *pointer);
/* Host to device and device to host; both wait until the copy is done. */
tprt_status tprt_copy_to_device(void *device, const void *host, size_t bytes);
tprt_status tprt_copy_to_host(void *host, const void *device, size_t bytes);
/* Waits for everything issued on this rank's stream (a forward pass is
 * asynchronous: the launcher calls this before it stops a clock). */
tprt_status tprt_device_synchronize(void);
/* The rank's cudaStream_t and its device number. */
void *tprt_cuda_stream(void);
int tprt_cuda_device(void);

/* CUDA graphs: the work issued on the rank's stream between begin and end
 * (one call of a compiled function) is captured, not run, and instantiated
 * into *graph; tprt_graph_end fails (nothing instantiated) when something
 * in between waited for the GPU or read device memory on the host. Each
 * launch runs it on the stream, asynchronously, and adds its collective and
 * GEMM counts to the counters (no times). */
tprt_status tprt_graph_begin(void);
tprt_status tprt_graph_end(void **graph);
tprt_status tprt_graph_launch(void *graph);
void tprt_graph_destroy(void *graph);

/*--- compiled-code side, cuda only ----------------------------------------*/

/* A scalar the host side of compiled code reads (a generating model's
 * position): `bytes` from device to host on the rank's stream, after the
 * work issued before; ends every rank (tprt_abort) if the copy fails
 * (tp-host-scalar-reads). */
void tprt_read_scalar(void *host, const void *device, int64_t bytes);

/* tp-compile --dtype bf16: */

typedef struct tprt_memref2d_bf16 {
  uint16_t *allocated;
  uint16_t *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
} tprt_memref2d_bf16;

typedef struct tprt_memref3d_bf16 {
  uint16_t *allocated;
  uint16_t *aligned;
  int64_t offset;
  int64_t sizes[3];
  int64_t strides[3];
} tprt_memref3d_bf16;

/* c = op(a) * op(b) (+ c when accumulate) with bf16 a and b, fp32 c and
 * fp32 accumulation (cuBLAS CUBLAS_COMPUTE_32F); a and b must be row- or
 * column-major views. */
void _mlir_ciface_tprt_matmul_bf16(tprt_memref2d_bf16 *a, tprt_memref2d_bf16 *b,
                                   tprt_memref2d_f32 *c, int64_t trans_a,
                                   int64_t trans_b, int64_t accumulate);
void _mlir_ciface_tprt_batch_matmul_bf16(tprt_memref3d_bf16 *a,
                                         tprt_memref3d_bf16 *b,
                                         tprt_memref3d_f32 *c, int64_t trans_a,
                                         int64_t trans_b, int64_t accumulate);

#ifdef __cplusplus
}
#endif

#endif /* TPRT_TPRT_CUDA_H */
