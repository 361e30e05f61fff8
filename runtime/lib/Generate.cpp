//===- Generate.cpp - generation with a compiled model --------------------===//

#include "tprt/generate.h"
#include "tprt/sampler.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <tuple>

namespace tprt {

static bool isInteger(const std::string &dtype) {
  return dtype == "i64" || dtype == "i32";
}

std::optional<std::string>
idOutsideVocabulary(const std::vector<int64_t> &ids,
                    const std::vector<int64_t> &shape, int64_t vocab) {
  auto outside = std::find_if(ids.begin(), ids.end(), [&](int64_t id) {
    return id < 0 || id >= vocab;
  });
  if (outside == ids.end())
    return std::nullopt;
  std::string at;
  for (int64_t rest = outside - ids.begin(), d = int64_t(shape.size()); d-- > 0;
       rest /= shape[size_t(d)])
    at =
        std::to_string(rest % shape[size_t(d)]) + (at.empty() ? "" : ", ") + at;
  return "id " + std::to_string(*outside) + " at [" + at +
         "] is outside the vocabulary [0, " + std::to_string(vocab) + ")";
}

bool isPosition(const ManifestArg &arg) {
  return isInteger(arg.dtype) && arg.shape.empty() && !arg.tokens;
}

/// Inputs that generation does not fill, by argument: its name, whether a
/// checkpoint could have held it (named, no role), the functions taking it.
struct Unfilled {
  std::string name;
  bool weight;
  std::string functions;
};

/// The roles of `function`'s arguments and results; problems go to
/// `errors`, inputs that none of the roles covers to `unfilled`.
static GenerationCall callOf(const ManifestFunction &function,
                             const std::vector<size_t> &inputs,
                             bool takesPosition, bool takesValid,
                             std::vector<std::string> &errors,
                             std::vector<Unfilled> &unfilled) {
  GenerationCall call;
  std::string at = "@" + function.name + ": ";
  std::optional<size_t> tokens, nextIds;
  std::vector<bool> updated(function.args.size());
  for (size_t j = 0; j < function.results.size(); ++j) {
    const ManifestResult &result = function.results[j];
    if (result.inPlace) {
      updated[*result.inPlace] = true;
      continue;
    }
    bool cut = result.shard.has_value();
    if (isInteger(result.dtype) && result.localShape.size() == 2 &&
        result.localShape[1] == 1 && !cut && !nextIds)
      nextIds = j;
    else if (result.dtype == "f32" && result.localShape.size() == 3 &&
             result.localShape[1] == 1 && !cut && !call.logits)
      call.logits = j;
    else if (std::any_of(function.args.begin(), function.args.end(),
                         [&](const ManifestArg &arg) {
                           return arg.name == result.name;
                         }))
      errors.push_back(at + "result " + std::to_string(j) + " ('" +
                       result.name +
                       "') is not updated in its argument's buffer: every "
                       "step would copy the cache (tp-in-place-results "
                       "did not find it returned as the argument)");
  }
  for (size_t i = 0; i < function.args.size(); ++i) {
    const ManifestArg &arg = function.args[i];
    bool input = std::find(inputs.begin(), inputs.end(), i) != inputs.end();
    if (arg.tokens) {
      tokens = i;
    } else if (updated[i]) {
      call.caches.push_back(i);
    } else if (input && takesPosition && !call.position && isPosition(arg)) {
      call.position = i;
    } else if (input && takesValid && !call.valid && isPosition(arg) &&
               arg.name == "valid") {
      call.valid = i;
    } else if (input && !call.padding && arg.name == "padding" &&
               isInteger(arg.dtype) && arg.shape.size() == 1) {
      call.padding = i;
    } else if (input) {
      auto seen =
          std::find_if(unfilled.begin(), unfilled.end(),
                       [&](const Unfilled &u) { return u.name == arg.name; });
      if (seen == unfilled.end())
        unfilled.push_back(
            {arg.name, arg.named && arg.role.empty(), "@" + function.name});
      else
        seen->functions += ", @" + function.name;
    }
  }
  if (!tokens)
    errors.push_back(at + "no argument of token ids (\"tokens\" in the "
                          "manifest: the input its vocabulary lookup reads)");
  else if (!isInteger(function.args[*tokens].dtype) ||
           function.args[*tokens].shape.size() != 2)
    errors.push_back(at + "the token ids '" + function.args[*tokens].name +
                     "' are not an integer [B, S] tensor");
  if (takesPosition && !call.position)
    errors.push_back(at + "no position argument (a rank-0 integer input)");
  if (!nextIds)
    errors.push_back(at + "no result of next ids (an integer [B, 1] tensor)");
  if (call.caches.empty())
    errors.push_back(at + "no cache (an argument a result updates in place)");
  call.tokens = tokens.value_or(0);
  call.nextIds = nextIds.value_or(0);
  return call;
}

Expected<GenerationSignature> generationSignature(
    const ManifestFunction &prefill, const std::vector<size_t> &prefillInputs,
    const ManifestFunction &decode, const std::vector<size_t> &decodeInputs,
    const ManifestFunction *extend, const std::vector<size_t> &extendInputs) {
  std::vector<std::string> errors;
  std::vector<Unfilled> unfilled;
  GenerationSignature s;
  s.prefill = callOf(prefill, prefillInputs, /*takesPosition=*/false,
                     /*takesValid=*/false, errors, unfilled);
  s.decode = callOf(decode, decodeInputs, /*takesPosition=*/true,
                    /*takesValid=*/false, errors, unfilled);
  if (extend)
    s.extend = callOf(*extend, extendInputs, /*takesPosition=*/true,
                      /*takesValid=*/true, errors, unfilled);
  // One line for all of them: a checkpoint left out makes every weight one.
  if (!unfilled.empty()) {
    const Unfilled &first = unfilled.front();
    std::string line = first.functions + ": '" + first.name + "'";
    if (unfilled.size() > 1)
      line += " and " + std::to_string(unfilled.size() - 1) + " more";
    line += unfilled.size() > 1 ? " are inputs" : " is an input";
    line += " that generation does not fill";
    if (std::all_of(unfilled.begin(), unfilled.end(),
                    [](const Unfilled &u) { return u.weight; }))
      line += " (no checkpoint holds " +
              std::string(unfilled.size() > 1 ? "them)" : "it)");
    errors.insert(errors.begin(), line);
  }
  if (errors.empty()) {
    const std::vector<int64_t> &ids = prefill.args[s.prefill.tokens].shape;
    const std::vector<int64_t> &step = decode.args[s.decode.tokens].shape;
    s.batch = ids[0];
    s.prefillLength = ids[1];
    if (step != std::vector<int64_t>{s.batch, 1})
      errors.push_back("@decode takes token ids " + formatShape(step) +
                       ", not [" + std::to_string(s.batch) +
                       ", 1] (@prefill's batch, one token)");
    // The caches must be the same tensors in both functions: the launcher
    // gives them one buffer (sameTensor).
    for (size_t i : s.decode.caches) {
      const ManifestArg &cache = decode.args[i];
      if (cache.shape.size() != 4 || cache.shape[0] != s.batch) {
        errors.push_back("@decode: cache '" + cache.name + "' " +
                         formatShape(cache.shape) +
                         " is not [B, kv_heads, S_max or a ring's rows, "
                         "head_dim]");
        continue;
      }
      s.cacheLength = s.cacheLength
                          ? std::min(s.cacheLength, cachePositions(cache))
                          : cachePositions(cache);
      s.rings |= cache.positions.has_value();
      s.cacheBytes += size_t(numElements(cache.localShape)) *
                      npyElementSize(cache.dtype).value_or(4);
    }
    for (size_t i : s.prefill.caches)
      if (std::none_of(s.decode.caches.begin(), s.decode.caches.end(),
                       [&](size_t j) {
                         return sameTensor(prefill.args[i], decode.args[j]);
                       }))
        errors.push_back("@prefill's cache '" + prefill.args[i].name +
                         "' is not a cache of @decode of the same shape and "
                         "cut");
    if (s.prefill.caches.size() != s.decode.caches.size() && errors.empty())
      errors.push_back("@prefill and @decode update different caches");
    if (s.extend) {
      const std::vector<int64_t> &chunk = extend->args[s.extend->tokens].shape;
      if (chunk != ids)
        errors.push_back("@extend takes token ids " + formatShape(chunk) +
                         ", not " + formatShape(ids) + " (@prefill's)");
      for (size_t i : s.extend->caches)
        if (std::none_of(s.decode.caches.begin(), s.decode.caches.end(),
                         [&](size_t j) {
                           return sameTensor(extend->args[i], decode.args[j]);
                         }))
          errors.push_back("@extend's cache '" + extend->args[i].name +
                           "' is not a cache of @decode of the same shape "
                           "and cut");
      if (s.extend->caches.size() != s.decode.caches.size() && errors.empty())
        errors.push_back("@extend and @decode update different caches");
      auto logitsShape = [](const ManifestFunction &f,
                            const GenerationCall &call) {
        return call.logits ? f.results[*call.logits].localShape
                           : std::vector<int64_t>{};
      };
      if (logitsShape(*extend, *s.extend) != logitsShape(prefill, s.prefill))
        errors.push_back("@extend's logits " +
                         formatShape(logitsShape(*extend, *s.extend)) +
                         " are not @prefill's " +
                         formatShape(logitsShape(prefill, s.prefill)));
    }
    s.vocab = prefill.args[s.prefill.tokens].vocab;
    // Every call of a ragged batch must know its padding.
    for (auto [name, function, call] :
         {std::tuple<const char *, const ManifestFunction *,
                     const GenerationCall *>{"@prefill", &prefill, &s.prefill},
          {"@decode", &decode, &s.decode},
          {"@extend", extend, s.extend ? &*s.extend : nullptr}}) {
      if (!call)
        continue;
      if (call->padding != std::nullopt &&
          function->args[*call->padding].shape != std::vector<int64_t>{s.batch})
        errors.push_back(std::string(name) + "'s padding " +
                         formatShape(function->args[*call->padding].shape) +
                         " is not [" + std::to_string(s.batch) +
                         "] (one per sequence)");
      if (call->padding.has_value() != s.prefill.padding.has_value())
        errors.push_back(std::string(name) +
                         (call->padding ? " takes" : " does not take") +
                         " a padding input and @prefill " +
                         (s.prefill.padding ? "does" : "does not"));
    }
  }
  if (!errors.empty()) {
    std::string message;
    for (const std::string &error : errors)
      message += (message.empty() ? "" : "\n") + error;
    return Status(TPRT_ERR_INVALID_ARGUMENT, message);
  }
  return s;
}

std::vector<std::pair<size_t, int64_t>>
promptCalls(const GenerationSignature &signature, int64_t length) {
  std::vector<std::pair<size_t, int64_t>> calls;
  int64_t chunk = signature.prefillLength, t = 0;
  if (length >= chunk) {
    calls.emplace_back(0, 0);
    t = chunk;
  }
  if (t && signature.extend)
    for (; t < length; t += chunk) {
      bool padded =
          signature.extend->valid && t + chunk <= signature.cacheLength;
      if (t + chunk <= length || padded)
        calls.emplace_back(2, t);
      else if (signature.rings)
        break;
      else
        calls.emplace_back(2, length - chunk);
    }
  for (; t < length; ++t)
    calls.emplace_back(1, t);
  return calls;
}

std::optional<Prompt> readPrompt(const std::vector<std::string> &paths,
                                 const GenerationSignature &signature,
                                 int64_t newTokens,
                                 std::vector<std::string> &errors) {
  // Each file's rows and their length.
  std::vector<std::pair<std::vector<int64_t>, int64_t>> files;
  bool unread = false;
  std::vector<std::string> outside; // after the batch's problems

  for (const std::string &path : paths) {
    Expected<NpyArray> read = readNpy(path);
    if (!read) {
      errors.push_back("prompt " + read.status().message());
      unread = true;
      continue;
    }
    std::string where = "prompt '" + path + "'";
    if (!isInteger(read->dtype) || read->shape.size() != 2) {
      errors.push_back(where + " is " + read->dtype + " " +
                       formatShape(read->shape) +
                       "; it must be token ids [B, P] of int64 or int32");
      unread = true;
      continue;
    }
    if (read->shape[1] < 1 || read->shape[0] < 1) {
      errors.push_back(where + " is empty");
      unread = true;
      continue;
    }
    if (signature.vocab)
      if (std::optional<std::string> why = idOutsideVocabulary(
              integerValues(*read), read->shape, *signature.vocab))
        outside.push_back(where + ": " + *why);
    files.emplace_back(integerValues(*read), read->shape[1]);
  }
  if (unread)
    return std::nullopt;
  Prompt prompt;
  for (const auto &[ids, length] : files) {
    prompt.batch += int64_t(ids.size()) / length;
    prompt.length = std::max(prompt.length, length);
  }
  std::string where =
      paths.size() == 1 ? "prompt '" + paths[0] + "'" : "the prompts";
  if (prompt.batch != signature.batch)
    errors.push_back(where + " hold" + (paths.size() == 1 ? "s " : " ") +
                     std::to_string(prompt.batch) +
                     " sequences; the model was built for a batch of " +
                     std::to_string(signature.batch));
  // The last new id is not fed back: S + K - 1 positions.
  if (prompt.length + newTokens - 1 > signature.cacheLength)
    errors.push_back(where + " ha" + (paths.size() == 1 ? "s " : "ve ") +
                     std::to_string(prompt.length) + " tokens; with " +
                     std::to_string(newTokens) +
                     (newTokens == 1 ? " new one" : " new ones") + " that is " +
                     std::to_string(prompt.length + newTokens - 1) +
                     " positions, and the caches hold " +
                     std::to_string(signature.cacheLength));
  errors.insert(errors.end(), outside.begin(), outside.end());
  // Left padding, with each sequence's first id (any id the lookup reads).
  bool ragged = false;
  for (const auto &[ids, length] : files)
    for (size_t row = 0; row < ids.size() / size_t(length); ++row) {
      const int64_t *first = ids.data() + row * size_t(length);
      prompt.ids.insert(prompt.ids.end(), size_t(prompt.length - length),
                        *first);
      prompt.ids.insert(prompt.ids.end(), first, first + length);
      prompt.padding.push_back(prompt.length - length);
      ragged |= length != prompt.length;
    }
  if (!ragged)
    prompt.padding.clear();
  if (ragged && !signature.prefill.padding) {
    int64_t shortest = prompt.length;
    for (const auto &file : files)
      shortest = std::min(shortest, file.second);
    errors.push_back(where + " are of different lengths (" +
                     std::to_string(shortest) + " to " +
                     std::to_string(prompt.length) +
                     " tokens): the model takes prompts of one length (build "
                     "it with tpmlir.build --ragged)");
  }
  return prompt;
}

namespace {

double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

/// `values` as `count` elements of the integer `dtype`.
std::vector<uint8_t> encode(const std::vector<int64_t> &values,
                            const std::string &dtype) {
  std::vector<uint8_t> bytes(values.size() * (dtype == "i64" ? 8 : 4));
  for (size_t k = 0; k < values.size(); ++k) {
    if (dtype == "i64") {
      std::memcpy(&bytes[8 * k], &values[k], 8);
    } else {
      int32_t v = int32_t(values[k]);
      std::memcpy(&bytes[4 * k], &v, 4);
    }
  }
  return bytes;
}

std::vector<int64_t> decodeIds(const std::vector<uint8_t> &bytes,
                               const std::string &dtype) {
  size_t size = dtype == "i64" ? 8 : 4;
  std::vector<int64_t> values(bytes.size() / size);
  for (size_t k = 0; k < values.size(); ++k) {
    if (size == 8) {
      std::memcpy(&values[k], &bytes[8 * k], 8);
    } else {
      int32_t v;
      std::memcpy(&v, &bytes[4 * k], 4);
      values[k] = v;
    }
  }
  return values;
}

/// Sequence b's left padding in `prompt`.
int64_t paddingOf(const Prompt &prompt, int64_t b) {
  return prompt.padding.empty() ? 0 : prompt.padding[size_t(b)];
}

} // namespace

Expected<GenerationResult>
generate(const LoadedModel &model, ModelArguments &arguments,
         const GenerationSignature &signature, const Prompt &prompt,
         int64_t newTokens, const std::vector<int64_t> &eos,
         const std::function<void()> &onFirstIds, bool replayDecode,
         const std::optional<DrawnIds> &drawn) {
  const int64_t batch = signature.batch;
  if (drawn && !signature.returnsLogits())
    return Status(TPRT_ERR_INVALID_ARGUMENT,
                  "sampling needs the model's logits (tpmlir.build "
                  "--keep-logits)");
  if (std::optional<std::string> why =
          drawn ? drawn->sampling.whyNotFor(batch) : std::nullopt)
    return Status(TPRT_ERR_INVALID_ARGUMENT, *why);
  GenerationResult out;
  // Each sequence's ids: its prompt's, then the new ones (a repetition
  // penalty reads them all).
  std::vector<std::vector<int64_t>> sequences(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b)
    sequences[size_t(b)].assign(prompt.ids.begin() + b * prompt.length +
                                    paddingOf(prompt, b),
                                prompt.ids.begin() + (b + 1) * prompt.length);
  // The end id each sequence gave, once it has.
  std::vector<std::optional<int64_t>> ended(static_cast<size_t>(batch));
  double start = now();

  // The logits the last call's next ids come from, [B, width], if
  // returned; out.vocab of each row are the model's (a padded vocabulary's
  // other columns are -inf).
  std::vector<float> logits;
  int64_t width = 0;
  std::vector<std::vector<float>> logitsOfIds(static_cast<size_t>(batch));

  // @decode through its graph when asked, after a first plain call; a
  // plain call when there is no graph.
  auto callDecode = [&]() -> Status {
    if (replayDecode && out.decodeCalls++ > 0 && out.graphWhyNot.empty()) {
      Expected<LoadedModel::Replay> replayed = model.replay(arguments, 1);
      if (!replayed)
        return replayed.status();
      if (replayed->launched) {
        ++out.replayedCalls;
        return Status::success();
      }
      out.graphWhyNot = replayed->whyNot;
    }
    return model.call(arguments, 1);
  };
  // One call; its next ids (and logits), or failure. `at` says which call
  // for a message.
  auto run = [&](size_t function,
                 const std::string &at) -> Expected<std::vector<int64_t>> {
    if (Status status =
            function == 1 ? callDecode() : model.call(arguments, function);
        !status)
      return status;
    const GenerationCall &call = signature.call(function);
    const ManifestFunction &fn = model.function(function);
    if (call.logits) {
      width = fn.results[*call.logits].localShape[2];
      out.vocab = std::min(width, signature.vocab.value_or(width));
      logits.resize(size_t(batch * width));
      if (Status status = arguments.read(function, *call.logits, logits.data());
          !status)
        return status;
    }
    const ManifestResult &result = fn.results[call.nextIds];
    std::vector<uint8_t> bytes(size_t(batch) *
                               npyElementSize(result.dtype).value_or(8));
    if (Status status = arguments.read(function, call.nextIds, bytes.data());
        !status)
      return status;
    std::vector<int64_t> ids = decodeIds(bytes, result.dtype);
    // An id the lookup cannot read would be fed back: an argmax combined
    // across a cut vocabulary gives -1 for NaN logits (tp-shard). Every rank
    // has the same ids, so every rank stops here.
    if (signature.vocab)
      for (int64_t b = 0; b < batch; ++b)
        if (ids[size_t(b)] < 0 || ids[size_t(b)] >= *signature.vocab)
          return Status(TPRT_ERR_INVALID_ARGUMENT,
                        at + " gave sequence " + std::to_string(b) +
                            " the next id " + std::to_string(ids[size_t(b)]) +
                            ", outside the vocabulary [0, " +
                            std::to_string(*signature.vocab) +
                            ") (NaN logits? check the weights)");
    return ids;
  };
  // Each sequence's padding, for a model that takes it.
  std::vector<int64_t> padding;
  for (int64_t b = 0; b < batch; ++b)
    padding.push_back(paddingOf(prompt, b));
  // `function` over `ids` [B, its tokens], at `position` when it takes one,
  // `count` of them the prompt's when it takes that.
  auto step = [&](size_t function, const std::vector<int64_t> &ids,
                  int64_t position,
                  int64_t count = 0) -> Expected<std::vector<int64_t>> {
    const ManifestFunction &fn = model.function(function);
    const GenerationCall &call = signature.call(function);
    // The ids, the position and the count, each where the function takes it.
    for (auto [arg, values] :
         {std::pair<std::optional<size_t>, std::vector<int64_t>>{call.tokens,
                                                                 ids},
          {call.position, {position}},
          {call.valid, {count}},
          {call.padding, padding}}) {
      if (!arg)
        continue;
      std::vector<uint8_t> bytes = encode(values, fn.args[*arg].dtype);
      if (Status status = arguments.write(function, *arg, bytes.data());
          !status)
        return status;
    }
    return run(function,
               "@" + fn.name +
                   (call.position ? " at position " + std::to_string(position)
                                  : std::string()));
  };

  // The prompt: @prefill, @extend and @decode calls (promptCalls).
  std::vector<int64_t> next;
  for (auto [function, first] : promptCalls(signature, prompt.length)) {
    int64_t tokens = function == 1 ? 1 : signature.prefillLength;
    // A last chunk of fewer tokens is padded with the prompt's last.
    int64_t count = std::min(tokens, prompt.length - first);
    std::vector<int64_t> ids;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = first; t < first + tokens; ++t)
        ids.push_back(prompt.ids[size_t(b * prompt.length +
                                        std::min(t, first + count - 1))]);
    Expected<std::vector<int64_t>> ids0 = step(function, ids, first, count);
    if (!ids0)
      return ids0.status();
    next = std::move(*ids0);
  }
  out.firstTokenSeconds = now() - start;

  // Each new id is fed back at the next position.
  if (onFirstIds)
    onFirstIds();
  std::optional<TokenSampler> sampler;
  if (drawn)
    sampler.emplace(drawn->sampling);
  int64_t position = prompt.length;
  while (true) {
    // One draw per sequence and new id, an ended sequence's too: the stream
    // stays where a replay of it expects. Its time is the step's.
    if (sampler) {
      double drawStart = now();
      for (int64_t b = 0; b < batch; ++b)
        next[size_t(b)] = sampler->draw(&logits[size_t(b * width)], out.vocab,
                                        sequences[size_t(b)], size_t(b));
      if (drawn->fromRankZero)
        drawn->fromRankZero(next);
      for (int64_t b = 0; b < batch; ++b)
        if (next[size_t(b)] < 0 && !ended[size_t(b)])
          return Status(TPRT_ERR_INVALID_ARGUMENT,
                        "sequence " + std::to_string(b) + " at position " +
                            std::to_string(position - 1) +
                            ": no finite logits to draw from (NaN logits? "
                            "check the weights)");
      (out.steps ? out.stepSeconds.back() : out.firstTokenSeconds) +=
          now() - drawStart;
    }
    bool all = true;
    for (int64_t b = 0; b < batch; ++b) {
      std::optional<int64_t> &end = ended[size_t(b)];
      int64_t id = end ? *end : next[size_t(b)];
      sequences[size_t(b)].push_back(id);
      size_t row = size_t(b * width);
      logitsOfIds[size_t(b)].insert(
          logitsOfIds[size_t(b)].end(),
          logits.begin() + std::min(logits.size(), row),
          logits.begin() + std::min(logits.size(), row + size_t(out.vocab)));
      if (std::find(eos.begin(), eos.end(), id) != eos.end())
        end = id;
      all = all && end;
    }
    ++out.steps;
    if (out.steps == newTokens || all)
      break;
    double stepStart = now();
    std::vector<int64_t> fed;
    for (int64_t b = 0; b < batch; ++b)
      fed.push_back(sequences[size_t(b)].back());
    Expected<std::vector<int64_t>> ids = step(1, fed, position++);
    if (!ids)
      return ids.status();
    next = std::move(*ids);
    out.stepSeconds.push_back(now() - stepStart);
  }
  for (int64_t b = 0; b < batch; ++b) {
    out.ids.insert(out.ids.end(),
                   sequences[size_t(b)].begin() + prompt.length -
                       paddingOf(prompt, b),
                   sequences[size_t(b)].end());
    out.logits.insert(out.logits.end(), logitsOfIds[size_t(b)].begin(),
                      logitsOfIds[size_t(b)].end());
  }
  return out;
}

} // namespace tprt
