/*===- model.h - what a compiled model exports --------------------*- C -*-===*
 *
 * Every shared object tp-compile builds exports these two symbols. tp-run
 * dlopens the object, reads the manifest, prepares one memref descriptor per
 * argument and result (see tprt.h for the layout) and calls the entry.
 *
 * The manifest is JSON:
 *
 *   { "abi_version": 4, "backend": "cpu", "tp_size": 2, "function": "forward",
 *     "args": [ { "name": "x", "role": "input", "dtype": "f32",
 *                 "shape": [1, 8, 768], "local_shape": [1, 8, 768],
 *                 "shard": null },
 *               { "name": "h.0.attn.qkv.weight", "role": "weight",
 *                 "dtype": "f32", "shape": [768, 2304],
 *                 "local_shape": [768, 1152],
 *                 "shard": { "dim": 1, "outer": 3 } }, ... ],
 *     "results": [ { "name": "result0", "dtype": "f32",
 *                    "shape": [1, 8, 768] } ] }
 *
 * `shape` is the full tensor (as stored in the checkpoint), `local_shape`
 * what this rank's program takes. A shard {dim, outer} reads dimension `dim`
 * of the full tensor as [outer, D/outer] and gives rank r part r of N
 * contiguous parts of every one of the `outer` blocks (tp.shard in the IR).
 * Argument 0 is the input; every other argument is a weight, bound to the
 * checkpoint tensor of the same name. An argument without a tp.name in the
 * IR is named "argI" with "named": false, and binds by position: weight
 * argument i (i >= 1) takes the checkpoint's i-th tensor in file order
 * (with several checkpoints: the files in the order tp-run was given them).
 * Every dtype is "f32", except the weights of a cuda model built with
 * `tp-compile --dtype bf16` that only GEMMs read: "bf16", which the
 * launcher converts from the checkpoint's f32 before the first call.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TPRT_MODEL_H
#define TPRT_MODEL_H

#ifdef __cplusplus
extern "C" {
#endif

/* NUL-terminated JSON, owned by the shared object. */
const char *tp_model_manifest(void);

/* args[i] points to the descriptor of manifest argument i, for i < #args,
 * then to the descriptor of result j at args[#args + j]; results are written
 * into those (caller-allocated, contiguous) buffers. */
void tp_model_forward(void **args);

#ifdef __cplusplus
}
#endif

#endif /* TPRT_MODEL_H */
