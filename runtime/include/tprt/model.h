/*===- model.h - what a compiled model exports --------------------*- C -*-===*
 *
 * Every shared object tp-compile builds exports tp_model_manifest and one
 * entry per function of the model (`tp_model_forward` for @forward;
 * `tp_model_prefill` and `tp_model_decode` for a generating model), under
 * the symbol its manifest entry names. tp-run dlopens the object, reads the
 * manifest, prepares one memref descriptor per argument and result (see
 * tprt.h for the layout) and calls an entry.
 *
 * The manifest is JSON:
 *
 *   { "abi_version": 7, "backend": "cpu", "tp_size": 2,
 *     "functions": [ {
 *       "name": "forward", "symbol": "tp_model_forward",
 *       "args": [ { "name": "x", "role": "input", "dtype": "f32",
 *                   "shape": [1, 8, 768], "local_shape": [1, 8, 768],
 *                   "shard": null },
 *                 { "name": "h.0.attn.qkv.weight", "role": "weight",
 *                   "dtype": "f32", "shape": [768, 2304],
 *                   "local_shape": [768, 1152],
 *                   "shard": { "dim": 1, "outer": 3 },
 *                   "layout": "panels" }, ... ],
 *       "results": [ { "name": "result0", "dtype": "f32",
 *                      "shape": [1, 8, 768], "local_shape": [1, 8, 768],
 *                      "shard": null } ] } ] }
 *
 * The functions share the checkpoint: an argument of the same name in two
 * functions reads the same tensor (the weights of @prefill and @decode).
 * `shape` is the full tensor (as stored in the checkpoint), `local_shape`
 * what this rank's program takes. "checkpoint_shape" (absent: `shape`) is
 * the shape the checkpoint stores a tensor in that the model takes padded
 * with zeros after it in each dimension (tp.checkpoint_shape in the IR: a
 * vocabulary padded so that the ranks divide it); the launcher pads it (a
 * checkpoint may store it padded too). With "checkpoint_offset": N the
 * argument is instead the rows [N, N + shape[0]) of that checkpoint tensor,
 * one of several weights packed in it (tp.checkpoint_offset: Phi-3's q, k
 * and v in one qkv_proj), or, of a tensor of another rank, as many whole
 * rows from row N as `shape` holds elements (buddy-mlir's flat parameters),
 * and its "role" is "weight". A shard {dim, outer}
 * reads dimension `dim` of the full tensor as [outer, D/outer] and gives rank r
 * part r of N contiguous parts of every one of the `outer` blocks (tp.shard in
 * the IR). A shard may add "replicas": R (absent: 1): then each block is cut
 * into N / R parts and rank r takes part r / R, so R consecutive ranks hold the
 * same part (the K/V weights of grouped-query attention with fewer kv heads
 * than ranks). "layout": "panels" (a 2-D f32 argument, cpu): the launcher lays
 * this rank's [k, n] part out in column panels (runtime/lib/Panels.h) before
 * the first call; "transposed_panels": the transpose of this rank's [n, k]
 * part; only tprt_matmul_panels_f32 reads them. "stack": {"dim": D, "parts":
 * [...]} (tp-stack-weights: q|k|v, gate|up) makes the argument the parts,
 * each an argument entry of its own (a named weight read and cut as such an
 * argument would be), this rank's slices one after the other along D; the
 * stacked argument itself is this rank's tensor ("shard": null, "shape" its
 * "local_shape"), a "weight" named after its parts. A named argument (tp.name
 * in the IR) has no "role": it is a weight bound to the checkpoint tensor of
 * its name when a checkpoint holds one, and an input otherwise. An argument
 * without a tp.name is named "argI" with "named": false and a "role": "input",
 * or, in a model that names no argument, "input" for argument 0 and "weight"
 * for the others, which bind by position: the k-th takes the checkpoint's k-th
 * tensor in file order (with several checkpoints: the files in the order tp-run
 * was given them). A dtype (of an argument or a result) is "f32", "i64", "i32"
 * or "i1" (integer tensors: cpu models only; i1 is one byte per element), or,
 * for the weights of a cuda model built with `tp-compile --dtype bf16` that
 * only GEMMs read, "bf16", which the launcher rounds from the checkpoint's F32
 * or F16 (or takes its BF16 as it is) before the first call; an "f32" weight
 * may be stored as BF16 or F16, which the launcher widens. "tokens": true marks
 * the input of token ids the model's vocabulary lookup reads (its largest
 * embedding table), which a launcher counts tokens from; absent on every other
 * argument. "positions": N marks a KV cache [B, kv_heads, W, head_dim] that
 * serves positions [0, N) as a ring of W <= N rows (tp.positions in the IR: a
 * sliding-window layer's cache holds its window alone).
 * A result has a `tp.name` when the IR gave it one ("result<j>" otherwise)
 * and may stay cut ("shard" as for an argument: the KV caches a generating
 * model returns, each rank its heads). A result with "in_place": I is
 * argument I updated in place: after the call argument I's buffer holds it
 * (a KV cache with this step's rows written in), and the entry ignores its
 * slot.
 *
 * Generating models (docs/generation.md) have "prefill" and "decode"
 * functions: the token ids ("tokens": true), in decode the position (a
 * rank-0 integer input), the caches (inputs that results update in place),
 * the weights; and among the results the next ids, the one integer result
 * of shape [B, 1]. Their manifest may carry "eos_token_ids" at the top level
 * (the module attribute tp.eos_token_ids): the end ids a launcher stops a
 * sequence at unless told others.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TPRT_MODEL_H
#define TPRT_MODEL_H

#ifdef __cplusplus
extern "C" {
#endif

/* NUL-terminated JSON, owned by the shared object. */
const char *tp_model_manifest(void);

/* Each entry (the symbol of a manifest function, for example
 * tp_model_forward) has this type: args[i] points to the descriptor of the
 * function's argument i, for i < #args, then to the descriptor of result j
 * at args[#args + j]; results are written into those (caller-allocated,
 * contiguous) buffers, but for the results updated in place. */
typedef void (*tp_model_entry)(void **args);

#ifdef __cplusplus
}
#endif

#endif /* TPRT_MODEL_H */
