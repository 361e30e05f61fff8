//===- ManifestTest.cpp - parsing tp_model_manifest() ---------------------===//

#include "tprt/manifest.h"

#include <gtest/gtest.h>

namespace {

/// The example from model.h.
const std::string kExample = R"({
  "abi_version": )" + std::to_string(TPRT_ABI_VERSION) +
                             R"(, "backend": "cpu", "tp_size": 2,
  "functions": [ {
    "name": "forward", "symbol": "tp_model_forward",
    "args": [ { "name": "x", "role": "input", "dtype": "f32",
                "shape": [1, 8, 768], "local_shape": [1, 8, 768],
                "shard": null },
              { "name": "h.0.attn.qkv.weight", "role": "weight",
                "dtype": "f32", "shape": [768, 2304],
                "local_shape": [768, 1152],
                "shard": { "dim": 1, "outer": 3 }, "layout": "panels" } ],
    "results": [ { "name": "result0", "dtype": "f32",
                   "shape": [1, 8, 768], "local_shape": [1, 8, 768],
                   "shard": null } ] } ] })";

/// `functions` (JSON text) in a manifest of this ABI version.
std::string manifestWith(const std::string &functions) {
  return R"({"abi_version": )" + std::to_string(TPRT_ABI_VERSION) +
         R"(, "backend": "cpu", "tp_size": 4, "functions": )" + functions + "}";
}

TEST(Manifest, ParsesTheDocumentedExample) {
  auto manifest = tprt::parseManifest(kExample);
  ASSERT_TRUE(manifest) << manifest.status().message();
  EXPECT_EQ(manifest->abiVersion, TPRT_ABI_VERSION);
  EXPECT_EQ(manifest->backend, "cpu");
  EXPECT_EQ(manifest->tpSize, 2);
  ASSERT_EQ(manifest->functions.size(), 1u);
  const tprt::ManifestFunction &forward = manifest->functions[0];
  EXPECT_EQ(manifest->find("forward"), &forward);
  EXPECT_EQ(manifest->find("decode"), nullptr);
  EXPECT_EQ(forward.symbol, "tp_model_forward");
  ASSERT_EQ(forward.args.size(), 2u);
  EXPECT_FALSE(forward.args[0].shard);
  const tprt::ManifestArg &qkv = forward.args[1];
  EXPECT_EQ(qkv.name, "h.0.attn.qkv.weight");
  ASSERT_TRUE(qkv.shard);
  EXPECT_EQ(qkv.shard->dim, 1);
  EXPECT_EQ(qkv.shard->outer, 3);
  EXPECT_EQ(qkv.localShape, (std::vector<int64_t>{768, 1152}));
  using Layout = tprt::ManifestArg::Layout;
  EXPECT_EQ(qkv.layout, Layout::Panels);
  EXPECT_EQ(forward.args[0].layout, Layout::Rows);
  // Laid out otherwise, the same tensor is not the same buffer.
  tprt::ManifestArg other = qkv;
  other.layout = Layout::Rows;
  EXPECT_FALSE(tprt::sameTensor(qkv, other));
  other.layout = Layout::TransposedPanels;
  EXPECT_FALSE(tprt::sameTensor(qkv, other));
  auto local = tprt::shardShape(qkv.shape, qkv.shard, manifest->tpSize);
  ASSERT_TRUE(local);
  EXPECT_EQ(*local, qkv.localShape);
  ASSERT_EQ(forward.results.size(), 1u);
  EXPECT_EQ(forward.results[0].localShape, (std::vector<int64_t>{1, 8, 768}));
  EXPECT_FALSE(forward.results[0].inPlace);
}

TEST(Manifest, ParsesReplicatedShards) {
  auto manifest = tprt::parseManifest(manifestWith(R"([{
    "name": "forward", "symbol": "tp_model_forward",
    "args": [ { "name": "k.weight", "role": "weight", "dtype": "f32",
                "shape": [256, 1536], "local_shape": [128, 1536],
                "shard": { "dim": 0, "outer": 1, "replicas": 2 } } ],
    "results": [] }])"));
  ASSERT_TRUE(manifest) << manifest.status().message();
  const tprt::ManifestArg &k = manifest->functions[0].args[0];
  ASSERT_TRUE(k.shard);
  EXPECT_EQ(k.shard->replicas, 2);
  auto local = tprt::shardShape(k.shape, k.shard, manifest->tpSize);
  ASSERT_TRUE(local) << local.status().message();
  EXPECT_EQ(*local, k.localShape);
}

TEST(Manifest, ParsesCutResultsUpdatedInPlace) {
  // A decode step: ids with their vocabulary, and a cache cut by heads that
  // the function updates in its argument's buffer.
  auto manifest = tprt::parseManifest(manifestWith(R"([{
    "name": "decode", "symbol": "tp_model_decode",
    "args": [ { "name": "ids", "dtype": "i64", "shape": [1, 1],
                "local_shape": [1, 1], "shard": null, "tokens": true,
                "vocab": 512 },
              { "name": "cache.0.k", "dtype": "f32", "shape": [1, 4, 8, 2],
                "local_shape": [1, 1, 8, 2],
                "shard": { "dim": 1, "outer": 1 } } ],
    "results": [ { "name": "next_ids", "dtype": "i64", "shape": [1, 1],
                   "local_shape": [1, 1], "shard": null },
                 { "name": "cache.0.k", "dtype": "f32",
                   "shape": [1, 4, 8, 2], "local_shape": [1, 1, 8, 2],
                   "shard": { "dim": 1, "outer": 1 }, "in_place": 1 } ] }])"));
  ASSERT_TRUE(manifest) << manifest.status().message();
  const tprt::ManifestFunction &decode = manifest->functions[0];
  EXPECT_EQ(decode.args[0].vocab, 512);
  EXPECT_FALSE(decode.args[1].vocab);
  EXPECT_FALSE(decode.results[0].inPlace);
  EXPECT_EQ(decode.results[1].inPlace, 1u);
  ASSERT_TRUE(decode.results[1].shard);
  EXPECT_EQ(decode.results[1].shard->dim, 1);
}

TEST(Manifest, ParsesRingCaches) {
  // A sliding layer's cache: a ring of 4 rows serving positions [0, 32).
  std::string ring = R"([{
    "name": "decode", "symbol": "tp_model_decode",
    "args": [ { "name": "cache.0.k", "dtype": "f32", "shape": [1, 4, 4, 2],
                "local_shape": [1, 4, 4, 2], "shard": null,
                "positions": 32 } ],
    "results": [] }])";
  auto manifest = tprt::parseManifest(manifestWith(ring));
  ASSERT_TRUE(manifest) << manifest.status().message();
  const tprt::ManifestArg &cache = manifest->functions[0].args[0];
  EXPECT_EQ(cache.positions, 32);
  EXPECT_EQ(tprt::cachePositions(cache), 32);
  // Fewer positions than rows: no ring.
  ring.replace(ring.find("\"positions\": 32"), 15, "\"positions\": 3");
  auto refused = tprt::parseManifest(manifestWith(ring));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find(
                "'positions' 3 is not served by a cache [1, 4, 4, 2]"),
            std::string::npos)
      << refused.status().message();
}

TEST(Manifest, ParsesCheckpointShapes) {
  // A vocabulary of 97 padded to 104 rows: the checkpoint holds 97.
  auto manifest = tprt::parseManifest(manifestWith(R"([{
    "name": "forward", "symbol": "tp_model_forward",
    "args": [ { "name": "wte", "dtype": "f32", "shape": [104, 8],
                "local_shape": [52, 8], "checkpoint_shape": [97, 8],
                "shard": { "dim": 0, "outer": 1 } } ],
    "results": [] }])"));
  ASSERT_TRUE(manifest) << manifest.status().message();
  const tprt::ManifestArg &wte = manifest->functions[0].args[0];
  EXPECT_EQ(wte.checkpointShape, (std::vector<int64_t>{97, 8}));
}

TEST(Manifest, ParsesPackedRows) {
  // k [2, 8] and v [2, 8], rows 8 and 10 of one qkv [12, 8]: one name, two
  // tensors.
  auto manifest = tprt::parseManifest(manifestWith(R"([{
    "name": "forward", "symbol": "tp_model_forward",
    "args": [ { "name": "qkv", "dtype": "f32", "shape": [2, 8],
                "local_shape": [2, 8], "checkpoint_shape": [12, 8],
                "checkpoint_offset": 8, "shard": null },
              { "name": "qkv", "dtype": "f32", "shape": [2, 8],
                "local_shape": [2, 8], "checkpoint_shape": [12, 8],
                "checkpoint_offset": 10, "shard": null } ],
    "results": [] }])"));
  ASSERT_TRUE(manifest) << manifest.status().message();
  const std::vector<tprt::ManifestArg> &args = manifest->functions[0].args;
  EXPECT_EQ(args[0].checkpointOffset, 8);
  EXPECT_EQ(args[1].checkpointShape, (std::vector<int64_t>{12, 8}));
  // One name, one shape, two offsets: two tensors.
  EXPECT_FALSE(tprt::sameTensor(args[0], args[1]));
}

TEST(Manifest, ParsesEndIds) {
  std::string json = manifestWith(R"([{
    "name": "forward", "symbol": "tp_model_forward", "args": [],
    "results": [] }])");
  auto manifest = tprt::parseManifest(json);
  ASSERT_TRUE(manifest) << manifest.status().message();
  EXPECT_TRUE(manifest->eosTokenIds.empty());
  json.insert(json.size() - 1, R"(, "eos_token_ids": [128001, 128009])");
  manifest = tprt::parseManifest(json);
  ASSERT_TRUE(manifest) << manifest.status().message();
  EXPECT_EQ(manifest->eosTokenIds, (std::vector<int64_t>{128001, 128009}));
  for (const char *bad : {"[-1]", "[1.5]", "\"2\"", "3"}) {
    std::string broken = json;
    broken.replace(broken.find("[128001, 128009]"), 16, bad);
    manifest = tprt::parseManifest(broken);
    ASSERT_FALSE(manifest) << bad;
    EXPECT_NE(manifest.status().message().find(
                  "'eos_token_ids' must be an array of token ids"),
              std::string::npos)
        << manifest.status().message();
  }
}

void expectRejected(const std::string &json, const std::string &what) {
  auto manifest = tprt::parseManifest(json);
  ASSERT_FALSE(manifest) << json;
  EXPECT_NE(manifest.status().message().find(what), std::string::npos)
      << manifest.status().message();
}

TEST(Manifest, RejectsMalformedManifests) {
  expectRejected("{", "manifest: not valid JSON");
  expectRejected(R"({"backend": "cpu"})", "missing integer 'abi_version'");
  expectRejected(manifestWith("[]"), "missing non-empty array 'functions'");
  expectRejected(manifestWith(R"([{"name": "f", "args": []}])"),
                 "functions[0]: missing string 'symbol'");
  expectRejected(manifestWith(R"([{"name": "f", "symbol": "tp_model_f",
                                   "args": [], "results": {}}])"),
                 "functions[0] ('f'): missing array 'results'");
  expectRejected(manifestWith(R"([{"name": "f", "symbol": "tp_model_f",
                        "args": [{"name": "x", "role": "output",
                                  "dtype": "f32", "shape": [1],
                                  "local_shape": [1]}],
                        "results": []}])"),
                 "functions[0] ('f'): args[0] ('x'): role 'output' is neither");
  expectRejected(manifestWith(R"([{"name": "f", "symbol": "tp_model_f",
                        "args": [{"name": "w", "role": "weight",
                                  "dtype": "f32", "shape": [4],
                                  "local_shape": [2], "shard": {"dim": 0}}],
                        "results": []}])"),
                 "args[0] ('w'): shard: missing integer 'outer'");
  expectRejected(
      manifestWith(R"([{"name": "f", "symbol": "tp_model_f", "args": [],
                        "results": [{"name": "c", "dtype": "f32",
                                     "shape": [2], "in_place": 0}]}])"),
      "results[0] ('c'): 'in_place' names argument 0, which the function "
      "does not have");
  for (auto [arg, message] :
       {std::pair<const char *, const char *>{
            R"("dtype": "f32", "shape": [4, 2], "local_shape": [4, 2],
               "layout": "tiles")",
            "args[0] ('w'): layout 'tiles' is neither 'panels' nor "
            "'transposed_panels'"},
        {R"("dtype": "f32", "shape": [8, 4], "local_shape": [8, 4],
            "checkpoint_shape": [9, 4])",
         "args[0] ('w'): 'checkpoint_shape' [9, 4] is not padded to [8, 4]"},
        {R"("dtype": "f32", "shape": [8, 4], "local_shape": [8, 4],
            "checkpoint_shape": [8])",
         "args[0] ('w'): 'checkpoint_shape' [8] is not padded to [8, 4]"},
        {R"("dtype": "f32", "shape": [8, 4], "local_shape": [8, 4],
            "checkpoint_shape": [12, 4], "checkpoint_offset": 6)",
         "args[0] ('w'): 'checkpoint_shape' [12, 4] does not hold [8, 4] at "
         "row 6"},
        {R"("dtype": "f32", "shape": [8, 4], "local_shape": [8, 4],
            "checkpoint_offset": 0)",
         "args[0] ('w'): 'checkpoint_offset' without the 'checkpoint_shape' "
         "it reads rows of"},
        {R"("dtype": "f32", "shape": [8, 4], "local_shape": [8, 4],
            "checkpoint_shape": [12, 4], "checkpoint_offset": 0,
            "role": "input")",
         "args[0] ('w'): 'checkpoint_offset' on an argument that is not a "
         "named weight"},
        {R"("dtype": "f32", "shape": [8], "local_shape": [8],
            "layout": "panels")",
         "args[0] ('w'): layout 'panels' needs a 2-D f32 tensor"},
        {R"("dtype": "i64", "shape": [4, 2], "local_shape": [4, 2],
            "layout": "transposed_panels")",
         "args[0] ('w'): layout 'transposed_panels' needs a 2-D f32 "
         "tensor"}})
    expectRejected(manifestWith(R"([{"name": "f", "symbol": "tp_model_f",
                                     "args": [{"name": "w", )" +
                                std::string(arg) + R"(}], "results": []}])"),
                   message);
  expectRejected(
      manifestWith(R"([{"name": "f", "symbol": "tp_model_f",
                        "args": [{"name": "w", "dtype": "f32", "shape": [4, 2],
                                  "local_shape": [4, 2], "layout": "panels"}],
                        "results": [{"name": "w", "dtype": "f32",
                                     "shape": [4, 2], "in_place": 0}]}])"),
      "results[0] ('w'): 'in_place' names argument 0, which is laid out in "
      "panels");
  expectRejected(manifestWith(R"([{"name": "f", "symbol": "a", "args": [],
                        "results": []},
                       {"name": "f", "symbol": "b", "args": [],
                        "results": []}])"),
                 "two functions named 'f'");
}

TEST(Manifest, ReadsOnlyTheVersionOfAnotherVersion) {
  // The launcher says which version it implements.
  auto manifest = tprt::parseManifest(
      R"({"abi_version": 4, "backend": "cpu", "tp_size": 2,
          "function": "forward", "args": [], "results": []})");
  ASSERT_TRUE(manifest) << manifest.status().message();
  EXPECT_EQ(manifest->abiVersion, 4);
  EXPECT_TRUE(manifest->functions.empty());
}

TEST(Manifest, ParsesStackedWeights) {
  // q [8, 8] and k [4, 8] of a rank at tp 4, stacked along their rows.
  auto manifest = tprt::parseManifest(manifestWith(R"([{
    "name": "forward", "symbol": "tp_model_forward",
    "args": [ { "name": "{q,k}", "role": "weight", "dtype": "f32",
                "shape": [12, 8], "local_shape": [12, 8], "shard": null,
                "stack": { "dim": 0, "parts": [
                  { "name": "q", "dtype": "f32", "shape": [32, 8],
                    "local_shape": [8, 8], "shard": { "dim": 0, "outer": 1 } },
                  { "name": "k", "dtype": "f32", "shape": [16, 8],
                    "local_shape": [4, 8],
                    "shard": { "dim": 0, "outer": 1 } } ] } } ],
    "results": [] }])"));
  ASSERT_TRUE(manifest) << manifest.status().message();
  const tprt::ManifestArg &stacked = manifest->functions[0].args[0];
  EXPECT_EQ(stacked.stackDim, 0);
  ASSERT_EQ(stacked.stack.size(), 2u);
  EXPECT_EQ(stacked.stack[1].name, "k");
  EXPECT_EQ(stacked.stack[1].localShape, (std::vector<int64_t>{4, 8}));
}

TEST(Manifest, RejectsStacksThatDoNotFit) {
  auto stacked = [](const std::string &stack) {
    return manifestWith(R"([{"name": "f", "symbol": "tp_model_f",
      "args": [{"name": "s", "role": "weight", "dtype": "f32",
                "shape": [12, 8], "local_shape": [12, 8], "shard": null,
                "stack": )" +
                        stack + R"(}], "results": []}])");
  };
  auto part = [](const std::string &name, const std::string &local,
                 const std::string &extra = "") {
    return R"({"name": ")" + name + R"(", "dtype": "f32", "shape": )" + local +
           R"(, "local_shape": )" + local + R"(, "shard": null)" + extra + "}";
  };
  expectRejected(
      stacked(R"({"dim": 0, "parts": [)" + part("q", "[12, 8]") + "]}"),
      "args[0] ('s'): stack: not {\"dim\", \"parts\"} of two parts "
      "or more");
  expectRejected(stacked(R"({"dim": 2, "parts": [)" + part("q", "[8, 8]") +
                         "," + part("k", "[4, 8]") + "]}"),
                 "stack: 'dim' 2 is not a dimension of [12, 8]");
  expectRejected(stacked(R"({"dim": 0, "parts": [)" + part("q", "[8, 8]") +
                         "," + part("k", "[4, 4]") + "]}"),
                 "stack.parts[1] ('k'): f32 [4, 4] does not stack along "
                 "dimension 0 into f32 [12, 8]");
  expectRejected(stacked(R"({"dim": 0, "parts": [)" + part("q", "[8, 8]") +
                         "," + part("k", "[2, 8]") + "]}"),
                 "stack: the parts stack 10 along dimension 0, not the 12 of "
                 "[12, 8]");
  expectRejected(stacked(R"({"dim": 0, "parts": [)" + part("q", "[8, 8]") +
                         "," + part("k", "[4, 8]", R"(, "role": "input")") +
                         "]}"),
                 "stack.parts[1] ('k'): a part must be a named weight");
  // The stack itself is a weight its parts describe, never an input.
  std::string input = stacked(R"({"dim": 0, "parts": [)" + part("q", "[8, 8]") +
                              "," + part("k", "[4, 8]") + "]}");
  input.replace(input.find(R"("role": "weight")"), 16, R"("role": "input")");
  expectRejected(input, "args[0] ('s'): stack: a stack is a named weight");
}

} // namespace
