//===- manifest.h - the manifest a compiled model exports -------*- C++ -*-===//
//
// Parses the JSON that tp_model_manifest() returns (model.h) into structs and
// checks its shape: every field present with the right type. Checks against
// a checkpoint or a world size are the launcher's.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_MANIFEST_H
#define TPRT_MANIFEST_H

#include "tprt/loader.h"

#include <optional>
#include <string>
#include <vector>

namespace tprt {

struct ManifestArg {
  std::string name;
  /// "input", "weight", or empty: a named argument without a role is a
  /// weight when a checkpoint holds a tensor of its name, else an input.
  std::string role;
  /// "f32", "bf16" (cuda weights), "i64", "i32" or "i1".
  std::string dtype;
  std::vector<int64_t> shape;      // the full tensor
  std::vector<int64_t> localShape; // what this rank's program takes
  std::optional<Shard> shard = std::nullopt;
  /// False for an argument the IR gave no tp.name: it binds to the
  /// checkpoint tensor at its position instead (see model.h).
  bool named = true;
  /// The token ids the model's vocabulary lookup reads: what tokens/s
  /// counts (see model.h).
  bool tokens = false;
  /// With `tokens`: the rows of the table the ids index, when known.
  std::optional<int64_t> vocab = std::nullopt;
  /// How the loader lays the argument out for the GEMMs that alone read
  /// it (runtime/lib/Panels.h): "layout": "panels", a [k, n] weight in
  /// column panels; "transposed_panels", an [n, k] one whose transpose is
  /// laid out so (the GEMMs read it transposed).
  enum class Layout { Rows, Panels, TransposedPanels } layout = Layout::Rows;
  /// The shape the checkpoint holds the tensor in when the model takes it
  /// padded with zeros after it in each dimension ("checkpoint_shape": a
  /// vocabulary padded so that the ranks divide it).
  std::optional<std::vector<int64_t>> checkpointShape = std::nullopt;
  /// With `checkpointShape`: the tensor is the rows [offset, offset +
  /// shape[0]) of the checkpoint's ("checkpoint_offset"), one of several
  /// weights packed in it (Phi-3's q|k|v sections of unequal widths); of a
  /// checkpoint tensor of another rank, as many whole rows from `offset` as
  /// `shape` holds elements (buddy-mlir's flat parameters; holdsRows).
  std::optional<int64_t> checkpointOffset = std::nullopt;
  /// A KV cache [B, kv_heads, W, head_dim] that serves positions [0, N) as
  /// a ring of W rows ("positions": N; tp.positions in the IR).
  std::optional<int64_t> positions = std::nullopt;
  /// Weights stacked into this argument along `stackDim` ("stack":
  /// tp-stack-weights' q|k|v, gate|up): the loader reads each part as an
  /// argument of its own, slices it for the rank, and stacks the slices.
  std::vector<ManifestArg> stack = {};
  int64_t stackDim = 0;
};

/// The positions a KV cache [B, kv_heads, S, head_dim] serves: S, or a
/// ring's "positions".
inline int64_t cachePositions(const ManifestArg &cache) {
  return cache.positions.value_or(cache.shape[2]);
}

struct ManifestResult {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  /// `local_shape` when the manifest gives one, else `shape`.
  std::vector<int64_t> localShape;
  /// A result that stays cut (a KV cache).
  std::optional<Shard> shard = std::nullopt;
  /// The argument whose buffer holds the result after a call.
  std::optional<size_t> inPlace = std::nullopt;
};

/// One entry of the model: `@forward`, or `@prefill` and `@decode`.
struct ManifestFunction {
  std::string name;
  /// The entry's symbol in the shared object (model.h).
  std::string symbol;
  std::vector<ManifestArg> args;
  std::vector<ManifestResult> results;
  /// Whether the host reads device memory within a call (cuda: the length
  /// of a decode step's attention), so that the call cannot be captured as
  /// a graph; unknown for a model compiled before the manifest said.
  std::optional<bool> hostReads;
};

struct Manifest {
  int64_t abiVersion = 0;
  std::string backend;
  int64_t tpSize = 0;
  std::vector<ManifestFunction> functions;
  /// A generating model's end ids ("eos_token_ids": its config's
  /// eos_token_id), which tp-run stops at unless told others; may be empty.
  std::vector<int64_t> eosTokenIds;

  /// The function named `name`, or null.
  const ManifestFunction *find(const std::string &name) const;
};

/// `a` and `b` (arguments of two functions) are the same tensor cut and
/// laid out the same way: name, dtype, full and local shape, shard, layout.
/// A launcher gives them one buffer (the weights, and the caches of
/// @prefill and @decode).
bool sameTensor(const ManifestArg &a, const ManifestArg &b);

/// Parses `json`; errors say "manifest: <where>: <what>". Of a manifest of
/// another ABI version, only the version, backend and tp size are read.
Expected<Manifest> parseManifest(const std::string &json);

} // namespace tprt

#endif // TPRT_MANIFEST_H
