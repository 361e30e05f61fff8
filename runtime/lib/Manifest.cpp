//===- Manifest.cpp - parse a compiled model's manifest -------------------===//

#include "tprt/manifest.h"

#include <nlohmann/json.hpp>

#include <tuple>

namespace tprt {
namespace {

using json = nlohmann::json;

Status manifestError(const std::string &where, const std::string &what) {
  return Status(TPRT_ERR_INVALID_ARGUMENT,
                "manifest: " + (where.empty() ? "" : where + ": ") + what);
}

/// The member `key` of `object` as a string; `where` names the object.
Expected<std::string> getString(const json &object, const char *key,
                                const std::string &where) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string())
    return manifestError(where, std::string("missing string '") + key + "'");
  return it->get<std::string>();
}

Expected<int64_t> getInt(const json &object, const char *key,
                         const std::string &where) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer())
    return manifestError(where, std::string("missing integer '") + key + "'");
  return it->get<int64_t>();
}

Expected<std::vector<int64_t>> getShape(const json &object, const char *key,
                                        const std::string &where) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_array())
    return manifestError(where, std::string("missing array '") + key + "'");
  std::vector<int64_t> shape;
  for (const json &size : *it) {
    if (!size.is_number_integer() || size.get<int64_t>() < 0)
      return manifestError(where, std::string("'") + key + "' " + it->dump() +
                                      " is not a list of sizes");
    shape.push_back(size.get<int64_t>());
  }
  return shape;
}

/// The optional "shard" of `entry`.
Expected<std::optional<Shard>> parseShard(const json &entry,
                                          const std::string &named) {
  auto shard = entry.find("shard");
  if (shard == entry.end() || shard->is_null())
    return std::optional<Shard>();
  if (!shard->is_object())
    return manifestError(named, "'shard' is neither null nor an object");
  Expected<int64_t> dim = getInt(*shard, "dim", named + ": shard");
  if (!dim)
    return dim.status();
  Expected<int64_t> outer = getInt(*shard, "outer", named + ": shard");
  if (!outer)
    return outer.status();
  int64_t replicas = 1;
  if (shard->contains("replicas")) {
    Expected<int64_t> r = getInt(*shard, "replicas", named + ": shard");
    if (!r)
      return r.status();
    replicas = *r;
  }
  return std::optional<Shard>(Shard{*dim, *outer, replicas});
}

Expected<ManifestArg> parseArg(const json &entry, const std::string &where);

/// The parts of `stacked` (named `named`), "stack": {"dim", "parts"}: named
/// weights of its dtype, as wide as it but along the dimension they stack
/// in, which they fill; itself a whole tensor as the rank takes it.
Status parseStack(const json &stack, const std::string &named,
                  ManifestArg &stacked) {
  std::string where = named + ": stack";
  if (!stack.is_object() || !stack.contains("parts") ||
      !stack["parts"].is_array() || stack["parts"].size() < 2)
    return manifestError(where,
                         "not {\"dim\", \"parts\"} of two parts or more");
  Expected<int64_t> dim = getInt(stack, "dim", where);
  if (!dim)
    return dim.status();
  int64_t rank = int64_t(stacked.localShape.size());
  if (*dim < 0 || *dim >= rank)
    return manifestError(where, "'dim' " + std::to_string(*dim) +
                                    " is not a dimension of " +
                                    formatShape(stacked.localShape));
  if (stacked.shard || stacked.shape != stacked.localShape)
    return manifestError(where, "a stack is the rank's own tensor: no shard, "
                                "'shape' equal to 'local_shape'");
  if (!stacked.named || stacked.role != "weight" || stacked.checkpointShape ||
      stacked.positions || stacked.tokens)
    return manifestError(where, "a stack is a named weight (\"role\": "
                                "\"weight\") that only its parts describe");
  int64_t total = 0;
  const json &parts = stack["parts"];
  for (size_t j = 0; j < parts.size(); ++j) {
    Expected<ManifestArg> part =
        parseArg(parts[j], where + ".parts[" + std::to_string(j) + "]");
    if (!part)
      return part.status();
    std::string partNamed =
        where + ".parts[" + std::to_string(j) + "] ('" + part->name + "')";
    if (!part->named || part->role == "input" || !part->stack.empty() ||
        part->layout != ManifestArg::Layout::Rows)
      return manifestError(partNamed, "a part must be a named weight as "
                                      "stored, not an input, a stack or "
                                      "panels");
    std::vector<int64_t> expected = stacked.localShape;
    if (part->localShape.size() == size_t(rank))
      expected[*dim] = part->localShape[*dim];
    if (part->dtype != stacked.dtype || part->localShape != expected)
      return manifestError(partNamed,
                           part->dtype + " " + formatShape(part->localShape) +
                               " does not stack along dimension " +
                               std::to_string(*dim) + " into " + stacked.dtype +
                               " " + formatShape(stacked.localShape));
    total += part->localShape[*dim];
    stacked.stack.push_back(std::move(*part));
  }
  if (total != stacked.localShape[*dim])
    return manifestError(where, "the parts stack " + std::to_string(total) +
                                    " along dimension " + std::to_string(*dim) +
                                    ", not the " +
                                    std::to_string(stacked.localShape[*dim]) +
                                    " of " + formatShape(stacked.localShape));
  stacked.stackDim = *dim;
  return Status();
}

Expected<ManifestArg> parseArg(const json &entry, const std::string &where) {
  if (!entry.is_object())
    return manifestError(where, "not a JSON object");
  ManifestArg arg;
  Expected<std::string> name = getString(entry, "name", where);
  if (!name)
    return name.status();
  arg.name = *name;
  std::string named = where + " ('" + arg.name + "')";
  if (entry.contains("role")) {
    Expected<std::string> role = getString(entry, "role", named);
    if (!role)
      return role.status();
    if (*role != "input" && *role != "weight")
      return manifestError(named, "role '" + *role +
                                      "' is neither 'input' nor 'weight'");
    arg.role = *role;
  }
  Expected<std::string> dtype = getString(entry, "dtype", named);
  if (!dtype)
    return dtype.status();
  arg.dtype = *dtype;
  Expected<std::vector<int64_t>> shape = getShape(entry, "shape", named);
  if (!shape)
    return shape.status();
  arg.shape = *shape;
  Expected<std::vector<int64_t>> local = getShape(entry, "local_shape", named);
  if (!local)
    return local.status();
  arg.localShape = *local;
  if (entry.contains("checkpoint_offset")) {
    Expected<int64_t> offset = getInt(entry, "checkpoint_offset", named);
    if (!offset)
      return offset.status();
    if (!entry.contains("checkpoint_shape"))
      return manifestError(named, "'checkpoint_offset' without the "
                                  "'checkpoint_shape' it reads rows of");
    arg.checkpointOffset = *offset;
  }
  if (entry.contains("checkpoint_shape")) {
    Expected<std::vector<int64_t>> stored =
        getShape(entry, "checkpoint_shape", named);
    if (!stored)
      return stored.status();
    if (arg.checkpointOffset &&
        !holdsRows(*stored, *arg.checkpointOffset, arg.shape))
      return manifestError(named, "'checkpoint_shape' " + formatShape(*stored) +
                                      " does not hold " +
                                      formatShape(arg.shape) + " at row " +
                                      std::to_string(*arg.checkpointOffset));
    if (!arg.checkpointOffset && !padsTo(*stored, arg.shape))
      return manifestError(named, "'checkpoint_shape' " + formatShape(*stored) +
                                      " is not padded to " +
                                      formatShape(arg.shape));
    arg.checkpointShape = *stored;
  }

  Expected<std::optional<Shard>> shard = parseShard(entry, named);
  if (!shard)
    return shard.status();
  arg.shard = *shard;
  for (auto [key, flag] : {std::pair<const char *, bool *>{"named", &arg.named},
                           {"tokens", &arg.tokens}}) {
    auto it = entry.find(key);
    if (it == entry.end())
      continue;
    if (!it->is_boolean())
      return manifestError(named,
                           std::string("'") + key + "' is not a boolean");
    *flag = it->get<bool>();
  }
  // Rows of a tensor found by name.
  if (arg.checkpointOffset && (!arg.named || arg.role == "input"))
    return manifestError(named, "'checkpoint_offset' on an argument that is "
                                "not a named weight");
  if (entry.contains("vocab")) {
    Expected<int64_t> vocab = getInt(entry, "vocab", named);
    if (!vocab)
      return vocab.status();
    arg.vocab = *vocab;
  }
  if (entry.contains("positions")) {
    Expected<int64_t> positions = getInt(entry, "positions", named);
    if (!positions)
      return positions.status();
    if (arg.shape.size() != 4 || *positions < arg.shape[2])
      return manifestError(named, "'positions' " + std::to_string(*positions) +
                                      " is not served by a cache " +
                                      formatShape(arg.shape) +
                                      " (a ring of at most that many rows)");
    arg.positions = *positions;
  }
  if (entry.contains("layout")) {
    Expected<std::string> layout = getString(entry, "layout", named);
    if (!layout)
      return layout.status();
    if (*layout == "panels")
      arg.layout = ManifestArg::Layout::Panels;
    else if (*layout == "transposed_panels")
      arg.layout = ManifestArg::Layout::TransposedPanels;
    else
      return manifestError(named, "layout '" + *layout +
                                      "' is neither 'panels' nor "
                                      "'transposed_panels'");
    if (arg.dtype != "f32" || arg.localShape.size() != 2)
      return manifestError(named,
                           "layout '" + *layout + "' needs a 2-D f32 tensor");
  }
  if (entry.contains("stack")) {
    Status parsed = parseStack(entry["stack"], named, arg);
    if (!parsed.ok())
      return parsed;
  }
  return arg;
}

Expected<ManifestResult> parseResult(const json &entry,
                                     const std::string &where) {
  if (!entry.is_object())
    return manifestError(where, "not a JSON object");
  ManifestResult result;
  Expected<std::string> name = getString(entry, "name", where);
  if (!name)
    return name.status();
  result.name = *name;
  std::string named = where + " ('" + result.name + "')";
  Expected<std::string> dtype = getString(entry, "dtype", named);
  if (!dtype)
    return dtype.status();
  result.dtype = *dtype;
  Expected<std::vector<int64_t>> shape = getShape(entry, "shape", named);
  if (!shape)
    return shape.status();
  result.shape = *shape;
  result.localShape = *shape;
  if (entry.contains("local_shape")) {
    Expected<std::vector<int64_t>> local =
        getShape(entry, "local_shape", named);
    if (!local)
      return local.status();
    result.localShape = *local;
  }
  Expected<std::optional<Shard>> shard = parseShard(entry, named);
  if (!shard)
    return shard.status();
  result.shard = *shard;
  if (entry.contains("in_place")) {
    Expected<int64_t> arg = getInt(entry, "in_place", named);
    if (!arg)
      return arg.status();
    if (*arg < 0)
      return manifestError(named, "'in_place' is negative");
    result.inPlace = size_t(*arg);
  }
  return result;
}

/// One element of "functions", `where` naming it.
Expected<ManifestFunction> parseFunction(const json &entry,
                                         const std::string &where) {
  if (!entry.is_object())
    return manifestError(where, "not a JSON object");
  ManifestFunction function;
  for (auto [key, field] :
       {std::pair<const char *, std::string *>{"name", &function.name},
        {"symbol", &function.symbol}}) {
    Expected<std::string> value = getString(entry, key, where);
    if (!value)
      return value.status();
    *field = *value;
  }
  std::string named = where + " ('" + function.name + "')";
  for (const char *key : {"args", "results"})
    if (!entry.contains(key) || !entry[key].is_array())
      return manifestError(named, std::string("missing array '") + key + "'");
  const json &args = entry["args"];
  for (size_t i = 0; i < args.size(); ++i) {
    Expected<ManifestArg> arg =
        parseArg(args[i], named + ": args[" + std::to_string(i) + "]");
    if (!arg)
      return arg.status();
    function.args.push_back(std::move(*arg));
  }
  const json &results = entry["results"];
  for (size_t i = 0; i < results.size(); ++i) {
    Expected<ManifestResult> result =
        parseResult(results[i], named + ": results[" + std::to_string(i) + "]");
    if (!result)
      return result.status();
    if (result->inPlace && *result->inPlace >= function.args.size())
      return manifestError(named + ": results[" + std::to_string(i) + "] ('" +
                               result->name + "')",
                           "'in_place' names argument " +
                               std::to_string(*result->inPlace) +
                               ", which the function does not have");
    if (result->inPlace &&
        function.args[*result->inPlace].layout != ManifestArg::Layout::Rows)
      return manifestError(named + ": results[" + std::to_string(i) + "] ('" +
                               result->name + "')",
                           "'in_place' names argument " +
                               std::to_string(*result->inPlace) +
                               ", which is laid out in panels");
    function.results.push_back(std::move(*result));
  }
  if (entry.contains("host_reads")) {
    if (!entry["host_reads"].is_boolean())
      return manifestError(named, "'host_reads' is not a boolean");
    function.hostReads = entry["host_reads"].get<bool>();
  }
  return function;
}

} // namespace

bool sameTensor(const ManifestArg &a, const ManifestArg &b) {
  auto cut = [](const std::optional<Shard> &s) {
    return s ? std::make_tuple(s->dim, s->outer, s->replicas)
             : std::make_tuple(int64_t(-1), int64_t(0), int64_t(0));
  };
  return a.name == b.name && a.checkpointOffset == b.checkpointOffset &&
         a.dtype == b.dtype && a.shape == b.shape &&
         a.localShape == b.localShape && cut(a.shard) == cut(b.shard) &&
         a.layout == b.layout && a.stackDim == b.stackDim &&
         std::equal(a.stack.begin(), a.stack.end(), b.stack.begin(),
                    b.stack.end(), sameTensor);
}

const ManifestFunction *Manifest::find(const std::string &name) const {
  for (const ManifestFunction &function : functions)
    if (function.name == name)
      return &function;
  return nullptr;
}

Expected<Manifest> parseManifest(const std::string &text) {
  json root = json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return manifestError("", "not valid JSON");
  if (!root.is_object())
    return manifestError("", "not a JSON object");

  Manifest manifest;
  Expected<int64_t> abi = getInt(root, "abi_version", "");
  if (!abi)
    return abi.status();
  manifest.abiVersion = *abi;
  Expected<std::string> backend = getString(root, "backend", "");
  if (!backend)
    return backend.status();
  manifest.backend = *backend;
  Expected<int64_t> tpSize = getInt(root, "tp_size", "");
  if (!tpSize)
    return tpSize.status();
  manifest.tpSize = *tpSize;
  // What follows changed between versions; the launcher refuses another
  // version with a message of its own.
  if (manifest.abiVersion != TPRT_ABI_VERSION)
    return manifest;
  if (!root.contains("functions") || !root["functions"].is_array() ||
      root["functions"].empty())
    return manifestError("", "missing non-empty array 'functions'");
  const json &functions = root["functions"];
  for (size_t i = 0; i < functions.size(); ++i) {
    Expected<ManifestFunction> function =
        parseFunction(functions[i], "functions[" + std::to_string(i) + "]");
    if (!function)
      return function.status();
    if (manifest.find(function->name))
      return manifestError("", "two functions named '" + function->name + "'");
    manifest.functions.push_back(std::move(*function));
  }
  if (root.contains("eos_token_ids")) {
    const json &ids = root["eos_token_ids"];
    bool valid = ids.is_array();
    for (size_t i = 0; valid && i < ids.size(); ++i)
      valid = ids[i].is_number_integer() && ids[i].get<int64_t>() >= 0;
    if (!valid)
      return manifestError("", "'eos_token_ids' must be an array of token "
                               "ids (integers >= 0)");
    manifest.eosTokenIds = ids.get<std::vector<int64_t>>();
  }
  return manifest;
}

} // namespace tprt
