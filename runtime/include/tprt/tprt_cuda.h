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

#ifdef __cplusplus
}
#endif

#endif /* TPRT_TPRT_CUDA_H */
