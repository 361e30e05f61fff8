//===- ManifestTest.cpp - parsing tp_model_manifest() ---------------------===//

#include "tprt/manifest.h"

#include <gtest/gtest.h>

namespace {

/// The example from model.h.
const char *kExample = R"({
  "abi_version": 1, "backend": "cpu", "tp_size": 2, "function": "forward",
  "args": [ { "name": "x", "role": "input", "dtype": "f32",
              "shape": [1, 8, 768], "local_shape": [1, 8, 768],
              "shard": null },
            { "name": "h.0.attn.qkv.weight", "role": "weight",
              "dtype": "f32", "shape": [768, 2304],
              "local_shape": [768, 1152],
              "shard": { "dim": 1, "outer": 3 } } ],
  "results": [ { "name": "result0", "dtype": "f32",
                 "shape": [1, 8, 768] } ] })";

TEST(Manifest, ParsesTheDocumentedExample) {
  auto manifest = tprt::parseManifest(kExample);
  ASSERT_TRUE(manifest) << manifest.status().message();
  EXPECT_EQ(manifest->abiVersion, 1);
  EXPECT_EQ(manifest->backend, "cpu");
  EXPECT_EQ(manifest->tpSize, 2);
  ASSERT_EQ(manifest->args.size(), 2u);
  EXPECT_FALSE(manifest->args[0].shard);
  const tprt::ManifestArg &qkv = manifest->args[1];
  EXPECT_EQ(qkv.name, "h.0.attn.qkv.weight");
  ASSERT_TRUE(qkv.shard);
  EXPECT_EQ(qkv.shard->dim, 1);
  EXPECT_EQ(qkv.shard->outer, 3);
  EXPECT_EQ(qkv.localShape, (std::vector<int64_t>{768, 1152}));
  auto local = tprt::shardShape(qkv.shape, qkv.shard, manifest->tpSize);
  ASSERT_TRUE(local);
  EXPECT_EQ(*local, qkv.localShape);
  ASSERT_EQ(manifest->results.size(), 1u);
  EXPECT_EQ(manifest->results[0].localShape, (std::vector<int64_t>{1, 8, 768}));
}

TEST(Manifest, ParsesReplicatedShards) {
  auto manifest = tprt::parseManifest(R"({
    "abi_version": 1, "backend": "cpu", "tp_size": 4, "function": "forward",
    "args": [ { "name": "k.weight", "role": "weight", "dtype": "f32",
                "shape": [256, 1536], "local_shape": [128, 1536],
                "shard": { "dim": 0, "outer": 1, "replicas": 2 } } ],
    "results": [] })");
  ASSERT_TRUE(manifest) << manifest.status().message();
  const tprt::ManifestArg &k = manifest->args[0];
  ASSERT_TRUE(k.shard);
  EXPECT_EQ(k.shard->replicas, 2);
  auto local = tprt::shardShape(k.shape, k.shard, manifest->tpSize);
  ASSERT_TRUE(local) << local.status().message();
  EXPECT_EQ(*local, k.localShape);
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
  expectRejected(R"({"abi_version": 1, "backend": "cpu", "tp_size": 2,
                     "args": [], "results": {}})",
                 "missing array 'results'");
  expectRejected(R"({"abi_version": 1, "backend": "cpu", "tp_size": 2,
                     "args": [{"name": "x", "role": "output", "dtype": "f32",
                               "shape": [1], "local_shape": [1]}],
                     "results": []})",
                 "args[0] ('x'): role 'output' is neither");
  expectRejected(R"({"abi_version": 1, "backend": "cpu", "tp_size": 2,
                     "args": [{"name": "w", "role": "weight", "dtype": "f32",
                               "shape": [4], "local_shape": [2],
                               "shard": {"dim": 0}}],
                     "results": []})",
                 "args[0] ('w'): shard: missing integer 'outer'");
}

} // namespace
