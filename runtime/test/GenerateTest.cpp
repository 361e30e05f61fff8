//===- GenerateTest.cpp - the generation contract of a manifest -----------===//

#include "tprt/generate.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace {

/// @prefill(ids [2, 4], cache.0.k, w), @decode(ids [2, 1], pos,
/// cache.0.k, w) and @extend(ids [2, 4], pos, cache.0.k, w) at tp 2, the
/// cache cut by kv heads and updated in place, as tp-compile writes a
/// generating model.
tprt::ManifestFunction function(const std::string &name) {
  bool decode = name == "decode", positioned = name != "prefill";
  tprt::ManifestFunction f;
  f.name = name;
  f.symbol = "tp_model_" + name;
  tprt::ManifestArg ids{
      "ids", "", "i64", {2, decode ? 1 : 4}, {2, decode ? 1 : 4}, std::nullopt};
  ids.tokens = true;
  ids.vocab = 96;
  f.args.push_back(ids);
  if (positioned)
    f.args.push_back({"pos", "", "i64", {}, {}, std::nullopt});
  f.args.push_back({"cache.0.k",
                    "",
                    "f32",
                    {2, 2, 16, 8},
                    {2, 1, 16, 8},
                    tprt::Shard{1, 1}});
  f.args.push_back({"w", "", "f32", {8, 8}, {8, 8}, std::nullopt});
  f.results.push_back({"next_ids", "i64", {2, 1}, {2, 1}});
  tprt::ManifestResult cache{"cache.0.k", "f32", {2, 2, 16, 8}, {2, 1, 16, 8}};
  cache.shard = tprt::Shard{1, 1};
  cache.inPlace = positioned ? 2 : 1;
  f.results.push_back(cache);
  return f;
}

/// The inputs of `f` when a checkpoint holds w: all but the last argument.
std::vector<size_t> inputs(const tprt::ManifestFunction &f) {
  std::vector<size_t> in;
  for (size_t i = 0; i + 1 < f.args.size(); ++i)
    in.push_back(i);
  return in;
}

std::string problems(const tprt::ManifestFunction &prefill,
                     const tprt::ManifestFunction &decode) {
  auto found = tprt::generationSignature(prefill, inputs(prefill), decode,
                                         inputs(decode));
  return found ? "" : found.status().message();
}

TEST(Generate, FindsTheRolesOfAGeneratingModel) {
  tprt::ManifestFunction prefill = function("prefill");
  tprt::ManifestFunction decode = function("decode");
  auto s = tprt::generationSignature(prefill, inputs(prefill), decode,
                                     inputs(decode));
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_EQ(s->batch, 2);
  EXPECT_EQ(s->prefillLength, 4);
  EXPECT_EQ(s->cacheLength, 16);
  EXPECT_EQ(s->vocab, 96);
  EXPECT_EQ(s->cacheBytes, 2u * 1 * 16 * 8 * 4);
  EXPECT_EQ(s->prefill.tokens, 0u);
  EXPECT_EQ(s->prefill.caches, std::vector<size_t>{1});
  EXPECT_EQ(s->decode.position, 1u);
  EXPECT_EQ(s->decode.caches, std::vector<size_t>{2});
  EXPECT_EQ(s->decode.nextIds, 0u);
  EXPECT_FALSE(s->decode.logits);
  EXPECT_FALSE(s->rings);
}

TEST(Generate, TakesTheLeastPositionsOfItsCaches) {
  // A second cache, a ring of 4 rows serving positions [0, 12): the model
  // serves 12 positions, and its caches take 16 + 4 rows.
  tprt::ManifestFunction prefill = function("prefill");
  tprt::ManifestFunction decode = function("decode");
  for (tprt::ManifestFunction *f : {&prefill, &decode}) {
    tprt::ManifestArg ring = f->args[f == &decode ? 2 : 1];
    ring.name = "cache.1.k";
    ring.shape[2] = ring.localShape[2] = 4;
    ring.positions = 12;
    f->args.insert(f->args.end() - 1, ring);
    tprt::ManifestResult result{"cache.1.k", "f32", ring.shape,
                                ring.localShape};
    result.shard = ring.shard;
    result.inPlace = f->args.size() - 2;
    f->results.push_back(result);
  }
  auto s = tprt::generationSignature(prefill, inputs(prefill), decode,
                                     inputs(decode));
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_EQ(s->cacheLength, 12);
  EXPECT_EQ(s->cacheBytes, 2u * 1 * (16 + 4) * 8 * 4);
  EXPECT_TRUE(s->rings);
}

TEST(Generate, RefusesWhatBreaksTheContract) {
  tprt::ManifestFunction prefill = function("prefill");
  tprt::ManifestFunction decode = function("decode");
  // A cache copied out rather than updated in place.
  decode.results[1].inPlace.reset();
  std::string message = problems(prefill, decode);
  EXPECT_NE(message.find("@decode: result 1 ('cache.0.k') is not updated in "
                         "its argument's buffer"),
            std::string::npos)
      << message;

  // The caches of the two functions cut differently: no shared buffer.
  decode = function("decode");
  decode.args[2].shard = tprt::Shard{1, 1, 2};
  decode.results[1].shard = tprt::Shard{1, 1, 2};
  EXPECT_EQ(problems(prefill, decode),
            "@prefill's cache 'cache.0.k' is not a cache of @decode of the "
            "same shape and cut");

  // No position; a weight no checkpoint holds (an input).
  decode = function("decode");
  decode.args.erase(decode.args.begin() + 1);
  decode.results[1].inPlace = 1;
  tprt::ManifestFunction weightless = function("prefill");
  auto found =
      tprt::generationSignature(weightless, {0, 1, 2}, decode, inputs(decode));
  ASSERT_FALSE(found);
  EXPECT_EQ(found.status().message(),
            "@prefill: 'w' is an input that generation does not "
            "fill (no checkpoint holds it)\n"
            "@decode: no position argument (a rank-0 integer input)");
}

TEST(Generate, ChecksThePrompt) {
  tprt::ManifestFunction prefill = function("prefill");
  tprt::ManifestFunction decode = function("decode");
  auto s = tprt::generationSignature(prefill, inputs(prefill), decode,
                                     inputs(decode));
  ASSERT_TRUE(s);
  std::string path = testing::TempDir() + "prompt.npy";
  std::vector<int64_t> ids = {1, 2, 3, 4, 5, 6, 7, 96, 9, 10};
  ASSERT_TRUE(tprt::writeNpy(path, ids.data(), {2, 5}, "i64").ok());
  std::vector<std::string> errors;
  // 5 prompt tokens and 13 new ones need 17 positions; the caches hold 16.
  std::optional<tprt::Prompt> prompt = tprt::readPrompt({path}, *s, 13, errors);
  ASSERT_TRUE(prompt);
  EXPECT_EQ(prompt->length, 5);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "prompt '" + path +
                           "' has 5 tokens; with 13 new ones that is 17 "
                           "positions, and the caches hold 16");
  EXPECT_EQ(errors[1], "prompt '" + path +
                           "': id 96 at [1, 2] is outside the vocabulary [0, "
                           "96)");
  errors.clear();
  ids[7] = 8;
  ASSERT_TRUE(tprt::writeNpy(path, ids.data(), {2, 5}, "i64").ok());
  EXPECT_TRUE(tprt::readPrompt({path}, *s, 12, errors));
  EXPECT_TRUE(errors.empty()) << errors[0];
  std::remove(path.c_str());
}

/// `f` with a "padding" input [2] after its other inputs (before the
/// caches), as tpmlir.build --ragged writes it.
tprt::ManifestFunction ragged(tprt::ManifestFunction f) {
  size_t at = f.name == "prefill" ? 1 : 2;
  f.args.insert(f.args.begin() + long(at),
                {"padding", "", "i64", {2}, {2}, std::nullopt});
  for (tprt::ManifestResult &result : f.results)
    if (result.inPlace)
      ++*result.inPlace;
  return f;
}

TEST(Generate, ReadsPromptsOfDifferentLengths) {
  tprt::ManifestFunction prefill = ragged(function("prefill"));
  tprt::ManifestFunction decode = ragged(function("decode"));
  auto s = tprt::generationSignature(prefill, inputs(prefill), decode,
                                     inputs(decode));
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_EQ(s->prefill.padding, std::optional<size_t>(1));
  EXPECT_EQ(s->decode.padding, std::optional<size_t>(2));
  EXPECT_EQ(s->decode.caches, std::vector<size_t>{3});

  std::string five = testing::TempDir() + "five.npy",
              three = testing::TempDir() + "three.npy";
  std::vector<int64_t> ids = {1, 2, 3, 4, 5};
  ASSERT_TRUE(tprt::writeNpy(five, ids.data(), {1, 5}, "i64").ok());
  std::vector<int32_t> narrow = {3, 4, 5};
  ASSERT_TRUE(tprt::writeNpy(three, narrow.data(), {1, 3}, "i32").ok());
  std::vector<std::string> errors;
  std::optional<tprt::Prompt> prompt =
      tprt::readPrompt({five, three}, *s, 4, errors);
  ASSERT_TRUE(prompt);
  EXPECT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(prompt->batch, 2);
  EXPECT_EQ(prompt->length, 5);
  // The shorter one left-padded with its first id.
  EXPECT_EQ(prompt->ids, (std::vector<int64_t>{1, 2, 3, 4, 5, 3, 3, 3, 4, 5}));
  EXPECT_EQ(prompt->padding, (std::vector<int64_t>{0, 2}));

  // A model without the input takes one length only; a batch of 3 is not 2.
  auto plain = tprt::generationSignature(
      function("prefill"), inputs(function("prefill")), function("decode"),
      inputs(function("decode")));
  ASSERT_TRUE(plain);
  tprt::readPrompt({five, three, three}, *plain, 4, errors);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "the prompts hold 3 sequences; the model was built "
                       "for a batch of 2");
  EXPECT_EQ(errors[1], "the prompts are of different lengths (3 to 5 "
                       "tokens): the model takes prompts of one length "
                       "(build it with tpmlir.build --ragged)");
  std::remove(five.c_str());
  std::remove(three.c_str());

  // Every function takes it, or none; one per sequence.
  EXPECT_EQ(problems(prefill, function("decode")),
            "@decode does not take a padding input and @prefill does");
  tprt::ManifestFunction extend = function("extend");
  tprt::ManifestFunction wide = decode;
  wide.args[2].shape = wide.args[2].localShape = {3};
  auto refused = tprt::generationSignature(
      prefill, inputs(prefill), wide, inputs(wide), &extend, inputs(extend));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().message(),
            "@decode's padding [3] is not [2] (one per sequence)\n"
            "@extend does not take a padding input and @prefill does");
}

TEST(Generate, FindsAChunkedPrefill) {
  tprt::ManifestFunction prefill = function("prefill");
  tprt::ManifestFunction decode = function("decode");
  tprt::ManifestFunction extend = function("extend");
  auto s = tprt::generationSignature(prefill, inputs(prefill), decode,
                                     inputs(decode), &extend, inputs(extend));
  ASSERT_TRUE(s) << s.status().message();
  ASSERT_TRUE(s->extend);
  EXPECT_EQ(s->extend->position, std::optional<size_t>(1));
  EXPECT_EQ(s->extend->caches, std::vector<size_t>{2});
  EXPECT_FALSE(s->extend->valid);
  // A second rank-0 integer after the position: the chunk's count.
  tprt::ManifestFunction counted = extend;
  counted.args.insert(counted.args.begin() + 2,
                      {"valid", "", "i64", {}, {}, std::nullopt});
  counted.results[1].inPlace = 3;
  s = tprt::generationSignature(prefill, inputs(prefill), decode,
                                inputs(decode), &counted, inputs(counted));
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_EQ(s->extend->valid, std::optional<size_t>(2));
  EXPECT_EQ(s->extend->caches, std::vector<size_t>{3});
  // Logits where @prefill has none: refused (a draw would read stale ones).
  tprt::ManifestFunction withLogits = extend;
  withLogits.results.push_back({"logits", "f32", {2, 1, 96}, {2, 1, 96}});
  s = tprt::generationSignature(prefill, inputs(prefill), decode,
                                inputs(decode), &withLogits,
                                inputs(withLogits));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().message(),
            "@extend's logits [2, 1, 96] are not @prefill's []");
  // Chunks of @prefill's 4 ids, or refused.
  extend.args[0].shape = extend.args[0].localShape = {2, 3};
  s = tprt::generationSignature(prefill, inputs(prefill), decode,
                                inputs(decode), &extend, inputs(extend));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().message(),
            "@extend takes token ids [2, 3], not [2, 4] (@prefill's)");
}

TEST(Generate, RunsAPromptInChunks) {
  using Calls = std::vector<std::pair<size_t, int64_t>>;
  tprt::GenerationSignature s;
  s.prefillLength = 4;
  // Without @extend: @decode past the first 4, or for all of a shorter one.
  EXPECT_EQ(tprt::promptCalls(s, 6), (Calls{{0, 0}, {1, 4}, {1, 5}}));
  EXPECT_EQ(tprt::promptCalls(s, 2), (Calls{{1, 0}, {1, 1}}));
  s.extend = tprt::GenerationCall{};
  // Chunks of 4, the last ending at the prompt's end.
  EXPECT_EQ(tprt::promptCalls(s, 4), (Calls{{0, 0}}));
  EXPECT_EQ(tprt::promptCalls(s, 8), (Calls{{0, 0}, {2, 4}}));
  EXPECT_EQ(tprt::promptCalls(s, 11), (Calls{{0, 0}, {2, 4}, {2, 7}}));
  EXPECT_EQ(tprt::promptCalls(s, 3), (Calls{{1, 0}, {1, 1}, {1, 2}}));
  // Over ring caches no chunk runs a position again: @decode after the
  // last whole one.
  s.rings = true;
  EXPECT_EQ(tprt::promptCalls(s, 11),
            (Calls{{0, 0}, {2, 4}, {1, 8}, {1, 9}, {1, 10}}));
  EXPECT_EQ(tprt::promptCalls(s, 12), (Calls{{0, 0}, {2, 4}, {2, 8}}));
  // An @extend told its count runs a last chunk of 3 padded, where the
  // caches have rows for all 4 (12 of them), rings or not; else as before.
  s.extend->valid = 3;
  s.cacheLength = 12;
  for (bool rings : {true, false}) {
    s.rings = rings;
    EXPECT_EQ(tprt::promptCalls(s, 11), (Calls{{0, 0}, {2, 4}, {2, 8}}));
  }
  // No rows for it: the last chunk runs positions again, or over rings
  // the rest is stepped.
  s.cacheLength = 11;
  EXPECT_EQ(tprt::promptCalls(s, 11), (Calls{{0, 0}, {2, 4}, {2, 7}}));
  s.rings = true;
  EXPECT_EQ(tprt::promptCalls(s, 11),
            (Calls{{0, 0}, {2, 4}, {1, 8}, {1, 9}, {1, 10}}));
  // Rows enough, but an @extend that takes no count: as before.
  s.extend->valid.reset();
  s.cacheLength = 12;
  EXPECT_EQ(tprt::promptCalls(s, 11),
            (Calls{{0, 0}, {2, 4}, {1, 8}, {1, 9}, {1, 10}}));
  s.rings = false;
  EXPECT_EQ(tprt::promptCalls(s, 11), (Calls{{0, 0}, {2, 4}, {2, 7}}));
}

} // namespace
