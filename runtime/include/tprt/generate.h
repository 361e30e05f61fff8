//===- generate.h - greedy generation with a compiled model ------*- C++
//-*-===//
//
// What tp-run --generate does on each rank (library tprt_loader): find the
// roles of @prefill's and @decode's arguments and results (the generation
// contract of model.h and docs/generation.md), check a prompt against them,
// then run @prefill over the prompt and @decode once per new token, the KV
// caches staying in their buffers (updated in place) between the calls.
// Every rank computes the same ids (the argmax is combined across ranks),
// so every rank makes the same decisions without communicating.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_GENERATE_H
#define TPRT_GENERATE_H

#include "tprt/launch.h"
#include "tprt/sampler.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tprt {

/// The arguments and results of one of the two functions.
struct GenerationCall {
  /// Arguments: the token ids [B, S] ("tokens"), the position (decode
  /// only: a rank-0 integer), the caches (updated in place).
  size_t tokens = 0;
  std::optional<size_t> position;
  /// @extend's second rank-0 integer input, "valid", when it has one: how
  /// many of its tokens are the prompt's (a last chunk shorter than
  /// prefillLength, the rest padding that writes no ring row and gives no
  /// logits).
  std::optional<size_t> valid;
  /// A ragged model's "padding", an integer [B] input: how many of each
  /// sequence's first positions are left padding (tpmlir.build --ragged).
  std::optional<size_t> padding;
  std::vector<size_t> caches;
  /// The result of the next ids, [B, 1], and of their logits, [B, 1, V],
  /// when the model returns them (tpmlir.build --keep-logits).
  size_t nextIds = 0;
  std::optional<size_t> logits;
};

struct GenerationSignature {
  GenerationCall prefill, decode;
  /// A chunked prefill's @extend (function 2): the prompt's next
  /// prefillLength tokens at a position, over the caches of @decode.
  std::optional<GenerationCall> extend;
  /// B, the tokens @prefill takes per sequence, the positions the caches
  /// serve (the least cachePositions: a cache [B, kv_heads, S_max,
  /// head_dim]'s S_max, a ring's "positions").
  int64_t batch = 0, prefillLength = 0, cacheLength = 0;
  /// Rows of the vocabulary table, when the manifest says.
  std::optional<int64_t> vocab;
  /// This rank's bytes of all caches.
  size_t cacheBytes = 0;
  /// Whether a cache is a ring (a sliding window's, "positions"): a chunk
  /// must not run positions again there, whose rows have dropped the keys
  /// the positions before them attend to (promptCalls).
  bool rings = false;

  /// Whether the functions return their logits (what a draw needs).
  bool returnsLogits() const {
    return prefill.logits && decode.logits && (!extend || extend->logits);
  }
  /// Function `function`'s call: 0 @prefill, 1 @decode, 2 @extend.
  const GenerationCall &call(size_t function) const {
    return function == 0 ? prefill : function == 1 ? decode : *extend;
  }
};

/// "id X at [i, j] is outside the vocabulary [0, V)" for the first of `ids`
/// (C order over `shape`) outside [0, vocab); none if all are inside.
std::optional<std::string>
idOutsideVocabulary(const std::vector<int64_t> &ids,
                    const std::vector<int64_t> &shape, int64_t vocab);

/// The calls that run a prompt of `length` tokens: (function, first
/// position) pairs, function 0 @prefill, 1 @decode (one token), 2
/// @extend (see generate()). A last chunk shorter than prefillLength runs
/// padded, told its count, when @extend takes one and the caches have rows
/// for the whole chunk; otherwise it ends at the prompt's end, running
/// positions the one before ran again, unless the caches are rings (whose
/// rows have dropped keys those positions attend to): then the tokens after
/// the last whole chunk run through @decode.
std::vector<std::pair<size_t, int64_t>>
promptCalls(const GenerationSignature &signature, int64_t length);

/// Whether `arg` looks like a step's position: a rank-0 integer (not the
/// token ids). `@decode`'s is its first such input.
bool isPosition(const ManifestArg &arg);

/// The signature of `prefill` and `decode` (functions 0 and 1 of a loaded
/// model), and of `extend` (function 2) when the model has one, whose
/// arguments `*Inputs` are inputs (the others are bound to checkpoint
/// tensors), or every way they break the contract, one message each,
/// naming the function and argument; the inputs other than the ids, the
/// position and the caches (weights no checkpoint holds) in one message,
/// the first named.
Expected<GenerationSignature> generationSignature(
    const ManifestFunction &prefill, const std::vector<size_t> &prefillInputs,
    const ManifestFunction &decode, const std::vector<size_t> &decodeInputs,
    const ManifestFunction *extend = nullptr,
    const std::vector<size_t> &extendInputs = {});

/// A prompt read from .npy files: ids [B, P], int64 or int32. Sequences
/// shorter than P are left-padded (with their first id) by `padding[b]`
/// positions; empty when none is.
struct Prompt {
  int64_t batch = 0, length = 0;
  std::vector<int64_t> ids;
  std::vector<int64_t> padding;
};

/// Reads `paths`, each ids [b, P] (the files' P may differ), their rows one
/// batch in order, and checks it against `signature` for `newTokens` new
/// ids: the batch, a length that leaves room for them in the caches, ids
/// inside the vocabulary, and prompts of different lengths only for a model
/// that takes "padding". Every problem goes to `errors`.
std::optional<Prompt> readPrompt(const std::vector<std::string> &paths,
                                 const GenerationSignature &signature,
                                 int64_t newTokens,
                                 std::vector<std::string> &errors);

/// Ids drawn from the logits (tp-run --temperature, --sample), or their
/// argmax after a repetition penalty: a TokenSampler, one stream per
/// generation or per sequence (Sampling::seeds), one draw per sequence and
/// new id, in order.
struct DrawnIds {
  Sampling sampling;
  /// Makes a step's B drawn ids rank 0's on every rank (tp-run: MPI_Bcast).
  /// Ranks hold the same logits, but one a reduction left a last bit apart
  /// could draw another id and feed it, and the ranks would diverge.
  std::function<void(std::vector<int64_t> &)> fromRankZero;
};

struct GenerationResult {
  /// [B, T]: T <= the new tokens asked for; fewer when every sequence has
  /// given the end id, after which a sequence repeats it.
  std::vector<int64_t> ids;
  /// [B, T, vocab]: the logits each id came from (the one it repeats after
  /// its end id too); empty for a model that does not return them. A
  /// vocabulary padded so that the ranks divide it keeps the checkpoint's
  /// columns only (the padded ones are -inf).
  std::vector<float> logits;
  int64_t vocab = 0;
  int64_t steps = 0;
  /// From the first call to the first new ids, and per decode step after.
  double firstTokenSeconds = 0;
  std::vector<double> stepSeconds;
  /// With `replayDecode`: the @decode calls that ran as a CUDA graph, of
  /// all of them; why none did, when the graph could not be made or run.
  int64_t decodeCalls = 0, replayedCalls = 0;
  std::string graphWhyNot;
};

/// Generation of `newTokens` ids after `prompt`: @prefill over its
/// first prefillLength tokens (a shorter prompt goes through @decode
/// alone), @extend over the rest in chunks of prefillLength when the model
/// has it (a last chunk of fewer tokens padded with the prompt's last and
/// told their count, or as promptCalls says where the caches have no rows
/// for it), else @decode over
/// the rest of the prompt; then @decode once per new id; stops early when every
/// sequence has given one of the ids `eos` (each sequence that has is continued
/// with its own end id). `arguments` come from `model.slice` with functions
/// "prefill" and "decode" (and "extend"). `onFirstIds` runs once the first new
/// ids are there, before the decode steps that follow (tp-run resets its
/// collective counters there). `replayDecode`: after one plain call (which
/// loads the kernels and the constants' device copies), @decode runs as a CUDA
/// graph (LoadedModel::replay), or as before when its graph cannot be made or
/// launched. `drawn`: each new id drawn from the logits, or their argmax after
/// a repetition penalty, instead of the graph's argmax (the model must return
/// them).
Expected<GenerationResult>
generate(const LoadedModel &model, ModelArguments &arguments,
         const GenerationSignature &signature, const Prompt &prompt,
         int64_t newTokens, const std::vector<int64_t> &eos,
         const std::function<void()> &onFirstIds = {},
         bool replayDecode = false,
         const std::optional<DrawnIds> &drawn = std::nullopt);

} // namespace tprt

#endif // TPRT_GENERATE_H
