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
 * A shard may add "replicas": R (absent: 1): then each block is cut into
 * N / R parts and rank r takes part r / R, so R consecutive ranks hold the
 * same part (the K/V weights of grouped-query attention with fewer kv heads
 * than ranks).
 * A named argument (tp.name in the IR) has no "role": it is a weight bound
 * to the checkpoint tensor of its name when a checkpoint holds one, and an
 * input otherwise. An argument without a tp.name is named "argI" with
 * "named": false and a "role": "input", or, in a model that names no
 * argument, "input" for argument 0 and "weight" for the others, which bind
 * by position: the k-th takes the checkpoint's k-th tensor in file order
 * (with several checkpoints: the files in the order tp-run was given them).
 * A dtype (of an argument or a result) is "f32", "i64", "i32" or "i1"
 * (integer tensors: cpu models only;
 * i1 is one byte per element), or, for the weights of a cuda model built
 * with `tp-compile --dtype bf16` that only GEMMs read, "bf16", which the
 * launcher converts from the checkpoint's f32 before the first call.
 * "tokens": true marks the input of token ids the model's vocabulary
 * lookup reads (its largest embedding table), which a launcher counts
 * tokens from; absent on every other argument.
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
