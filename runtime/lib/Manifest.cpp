//===- Manifest.cpp - parse a compiled model's manifest -------------------===//

#include "tprt/manifest.h"

#include <nlohmann/json.hpp>

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

  auto shard = entry.find("shard");
  if (shard != entry.end() && !shard->is_null()) {
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
    arg.shard = Shard{*dim, *outer, replicas};
  }
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
  return result;
}

} // namespace

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
  if (root.contains("function")) {
    Expected<std::string> function = getString(root, "function", "");
    if (!function)
      return function.status();
    manifest.function = *function;
  }

  for (const char *key : {"args", "results"})
    if (!root.contains(key) || !root[key].is_array())
      return manifestError("", std::string("missing array '") + key + "'");
  const json &args = root["args"];
  for (size_t i = 0; i < args.size(); ++i) {
    Expected<ManifestArg> arg =
        parseArg(args[i], "args[" + std::to_string(i) + "]");
    if (!arg)
      return arg.status();
    manifest.args.push_back(std::move(*arg));
  }
  const json &results = root["results"];
  for (size_t i = 0; i < results.size(); ++i) {
    Expected<ManifestResult> result =
        parseResult(results[i], "results[" + std::to_string(i) + "]");
    if (!result)
      return result.status();
    manifest.results.push_back(std::move(*result));
  }
  return manifest;
}

} // namespace tprt
