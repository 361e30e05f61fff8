/*===- tprt.h - the C ABI between compiled models and libtprt -----*- C -*-===*
 *
 * Compiled code (from tp-compile) calls the `_mlir_ciface_tprt_*` entry
 * points; launchers (tp-run) call the `tprt_*` functions. One rank per
 * process. Every buffer argument is an MLIR memref descriptor, passed by
 * pointer: for rank R,
 *
 *   struct { T *allocated; T *aligned; int64_t offset;
 *            int64_t sizes[R]; int64_t strides[R]; }
 *
 * and an unranked memref is `struct { int64_t rank; void *descriptor; }`.
 *
 * Compiled code cannot handle a status in the middle of a forward pass, so
 * a failing `_mlir_ciface_*` call records the error (readable with
 * tprt_last_error), prints it naming the rank and the call, and ends every
 * rank (MPI_Abort with exit code 1). Launcher calls return a tprt_status.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TPRT_TPRT_H
#define TPRT_TPRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this ABI; compiled models record the version they were built
 * for in their manifest and tp-run refuses a mismatch. */
#define TPRT_ABI_VERSION 8

typedef enum tprt_status {
  TPRT_OK = 0,
  TPRT_ERR_INVALID_ARGUMENT = 1, /* bad shape, stride, dtype or pointer */
  TPRT_ERR_BLAS = 2,             /* the BLAS backend refused a call */
  TPRT_ERR_COMM = 3,             /* MPI/NCCL failure or timeout */
  TPRT_ERR_IO = 4,               /* file missing, truncated or corrupt */
  TPRT_ERR_STATE = 5,            /* called before tprt_init / after finalize */
  TPRT_ERR_NO_DEVICE = 6         /* the backend needs a device there is none */
} tprt_status;

typedef struct tprt_memref1d_f32 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} tprt_memref1d_f32;

typedef struct tprt_memref1d_i64 {
  int64_t *allocated;
  int64_t *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} tprt_memref1d_i64;

typedef struct tprt_memref2d_f32 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
} tprt_memref2d_f32;

typedef struct tprt_memref3d_f32 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[3];
  int64_t strides[3];
} tprt_memref3d_f32;

typedef struct tprt_unranked_memref {
  int64_t rank;
  void *descriptor; /* points to a ranked descriptor of that rank */
} tprt_unranked_memref;

/*--- launcher side --------------------------------------------------------*/

/* Starts the runtime on this process: MPI_Init (if not initialised yet),
 * rank and world size, BLAS set to one thread unless TPRT_BLAS_THREADS is
 * set. `argc`/`argv` may be NULL. */
tprt_status tprt_init(int *argc, char ***argv);
tprt_status tprt_finalize(void);
int tprt_rank(void);
int tprt_world_size(void);
/* The message of the last failed call on this rank ("" if none). */
const char *tprt_last_error(void);

/* Collectives issued since tprt_init, for the run report. Bytes are what
 * the rank contributes (elements * element size). */
typedef struct tprt_counters {
  int64_t all_reduce_calls, all_reduce_bytes;
  int64_t all_gather_calls, all_gather_bytes;
  int64_t reduce_scatter_calls, reduce_scatter_bytes;
  int64_t gemm_calls;
  double gemm_flops;   /* 2*m*n*k summed */
  double gemm_seconds; /* wall time inside GEMM calls */
  double comm_seconds; /* wall time inside collectives */
} tprt_counters;
void tprt_get_counters(tprt_counters *out);
void tprt_reset_counters(void);

/* Ends every rank with `message` (prefixed with the rank) and exit code 1. */
void tprt_abort(const char *message);

/*--- compiled-code side ---------------------------------------------------*/

/* c = op(a) * op(b) + (accumulate ? c : 0), fp32, row-major logical views
 * given by the descriptors; op transposes when trans_* != 0. Any strides are
 * accepted (a view whose inner stride is not 1 is handled by BLAS
 * transposition or a copy). accumulate = 0 does not read c (the compiler
 * drops the zero fill before the GEMM); with k = 0 it is refused. */
void _mlir_ciface_tprt_matmul_f32(tprt_memref2d_f32 *a, tprt_memref2d_f32 *b,
                                  tprt_memref2d_f32 *c, int64_t trans_a,
                                  int64_t trans_b, int64_t accumulate);
/* The same for each batch index: c[i] = op(a[i]) * op(b[i]) (+ c[i]). */
void _mlir_ciface_tprt_batch_matmul_f32(tprt_memref3d_f32 *a,
                                        tprt_memref3d_f32 *b,
                                        tprt_memref3d_f32 *c, int64_t trans_a,
                                        int64_t trans_b, int64_t accumulate);
/* Columns per panel of a weight the manifest marks "layout": "panels" (or
 * "transposed_panels"): the loader lays its op(b), k x n (the weight, or its
 * transpose), out as panels of TPRT_PANEL_COLS columns (the last one may be
 * narrower), the panel of column j starting at float (j - j % TPRT_PANEL_COLS)
 * * k and holding its k rows one after the other, each as wide as the panel.
 * Compiled code reads such a weight there too (an embedding lookup of a
 * tied LM head), so a change is a change of the ABI version. */
#define TPRT_PANEL_COLS 32

/* ABI 6. As tprt_matmul_f32 for a b whose op(b), k x n, the loader laid
 * out in column panels (a weight the manifest marks "layout": "panels", or
 * "transposed_panels" with trans_b: runtime/lib/Panels.h): b's descriptor
 * gives its shape as declared and must be the whole contiguous buffer. */
void _mlir_ciface_tprt_matmul_panels_f32(tprt_memref2d_f32 *a,
                                         tprt_memref2d_f32 *b,
                                         tprt_memref2d_f32 *c, int64_t trans_a,
                                         int64_t trans_b, int64_t accumulate);
/* ABI 7. For each row r of `in`: max[r] and index[r] as the scan
 *   gt = in[r, j] > max[r]; max[r] = maximumf(in[r, j], max[r]);
 *   if (gt) index[r] = offset + j     (j = 0, 1, ...)
 * leaves them from their values (arith.maximumf: a NaN wins, -0 < +0): the
 * greedy next token over a step's logits (tp-argmax-to-runtime). */
void _mlir_ciface_tprt_argmax_f32(tprt_memref2d_f32 *in, tprt_memref1d_f32 *max,
                                  tprt_memref1d_i64 *index, int64_t offset);
/* In place, contiguous (identity layout) buffers of any rank: every rank
 * ends with the elementwise sum (max, min) over ranks. */
void _mlir_ciface_tprt_all_reduce_sum_f32(tprt_unranked_memref *buffer);
/* ABI 4. */
void _mlir_ciface_tprt_all_reduce_max_f32(tprt_unranked_memref *buffer);
void _mlir_ciface_tprt_all_reduce_min_f32(tprt_unranked_memref *buffer);
/* `out` (contiguous) receives the concatenation of every rank's `in`
 * (contiguous) along `dim`, rank order. */
void _mlir_ciface_tprt_all_gather_f32(tprt_unranked_memref *in,
                                      tprt_unranked_memref *out, int64_t dim);

/* A 1-D memref descriptor of any element type: every element type's has
 * this layout; the function taking it names the type. */
typedef struct tprt_memref1d_any {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} tprt_memref1d_any;

/* cuda backend only (ABI 3; the types other than f32 ABI 8): `result` views
 * a device copy of `host`, one of the model's constant arrays (contiguous;
 * its memref.global), uploaded on the first call and kept until
 * tprt_finalize. i1 elements take a byte each, as compiled code stores
 * them. */
void _mlir_ciface_tprt_device_constant_f32(tprt_memref1d_any *result,
                                           tprt_memref1d_any *host);
void _mlir_ciface_tprt_device_constant_f64(tprt_memref1d_any *result,
                                           tprt_memref1d_any *host);
void _mlir_ciface_tprt_device_constant_f16(tprt_memref1d_any *result,
                                           tprt_memref1d_any *host);
void _mlir_ciface_tprt_device_constant_bf16(tprt_memref1d_any *result,
                                            tprt_memref1d_any *host);
void _mlir_ciface_tprt_device_constant_i64(tprt_memref1d_any *result,
                                           tprt_memref1d_any *host);
void _mlir_ciface_tprt_device_constant_i32(tprt_memref1d_any *result,
                                           tprt_memref1d_any *host);
void _mlir_ciface_tprt_device_constant_i16(tprt_memref1d_any *result,
                                           tprt_memref1d_any *host);
void _mlir_ciface_tprt_device_constant_i8(tprt_memref1d_any *result,
                                          tprt_memref1d_any *host);
void _mlir_ciface_tprt_device_constant_i1(tprt_memref1d_any *result,
                                          tprt_memref1d_any *host);

#ifdef __cplusplus
}
#endif

#endif /* TPRT_TPRT_H */
