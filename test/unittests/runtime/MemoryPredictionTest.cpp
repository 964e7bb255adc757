//===- MemoryPredictionTest.cpp - the predicted peak of a model -----------===//
//
// The signature's "memory" entry (docs/runtime-abi.md): parsing, evaluation
// of its expressions, Executable::predictPeakBytes and the C API, checked
// against the peak a run of the fixture measures.
//
//===----------------------------------------------------------------------===//
#include "disc/runtime/Runtime.h"
#include "disc/runtime/c_api.h"

#include <gtest/gtest.h>

using namespace disc;

namespace {

const char *kSignature = R"({"abi_version": 1, "model": "m",
  "inputs": [{"name": "x", "dtype": "float32", "shape": ["N", "H", 3]}],
  "outputs": [{"name": "y", "dtype": "float32", "shape": ["N", "?"]}],
  "symbols": [{"name": "N", "min": 1, "max": 8}, {"name": "H", "min": 1, "max": null}],
  MEMORY})";

Signature parseWith(const std::string &memory, Status *status) {
  std::string text = kSignature;
  text.replace(text.find("MEMORY"), 6, memory);
  Signature sig;
  *status = Signature::parse(text, &sig);
  return sig;
}

TEST(MemoryPrediction, ParsesAndEvaluatesExpressions) {
  Status s;
  Signature sig = parseWith(
      R"("memory": {"predictable": true, "num_allocs": 3, "peak_bytes": [
        ["+", ["*", "N", ["floordiv", ["+", "H", -1], 2]], 7],
        ["ceildiv", ["*", "N", "H"], 4],
        ["mod", ["+", "H", -9], 4]],
        "peak_bytes_text": ["N*((H - 1) floordiv 2) + 7", "", ""]})",
      &s);
  ASSERT_TRUE(s.isOk()) << s.message();
  const MemorySpec &m = sig.memory;
  EXPECT_TRUE(m.present);
  EXPECT_TRUE(m.predictable);
  EXPECT_EQ(m.numAllocs, 3);
  ASSERT_EQ(m.peakBytes.size(), 3u);
  std::map<std::string, int64_t> dims{{"N", 3}, {"H", 6}};
  EXPECT_EQ(m.peakBytes[0].evaluate(dims), 3 * 2 + 7);
  EXPECT_EQ(m.peakBytes[1].evaluate(dims), 5); // ceil(18 / 4)
  EXPECT_EQ(m.peakBytes[2].evaluate(dims), 1); // (-3) mod 4, floor semantics
  EXPECT_EQ(m.peakBytes[0].evaluate({{"N", 3}}), std::nullopt); // unbound H
  EXPECT_EQ(m.peakBytesText[0], "N*((H - 1) floordiv 2) + 7");

  std::map<std::string, int64_t> bound;
  ASSERT_TRUE(sig.bindDims({{2, 9, 3}}, &bound).isOk());
  EXPECT_EQ(bound["N"], 2);
  EXPECT_EQ(bound["H"], 9);
  Status bad = sig.bindDims({{9, 9, 3}}, &bound);
  EXPECT_EQ(bad.code(), StatusCode::InvalidArgument);
  EXPECT_NE(bad.message().find("outside the range [1, 8]"), std::string::npos)
      << bad.message();
  EXPECT_EQ(sig.bindDims({{2, 9, 4}}, &bound).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(sig.bindDims({{2, 9}}, &bound).code(), StatusCode::InvalidArgument);
}

TEST(MemoryPrediction, UnpredictableAndMalformed) {
  Status s;
  Signature sig = parseWith(
      R"("memory": {"predictable": false, "reason": "size 'range3' is not an input dim"})",
      &s);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_TRUE(sig.memory.present);
  EXPECT_FALSE(sig.memory.predictable);
  EXPECT_EQ(sig.memory.reason, "size 'range3' is not an input dim");

  for (const char *bad :
       {R"("memory": {"predictable": true, "peak_bytes": []})",
        R"("memory": {"predictable": true, "peak_bytes": [["pow", 2, 3]]})",
        R"("memory": {"predictable": true, "peak_bytes": [["+", 1]]})",
        R"("memory": {"peak_bytes": [1]})", R"("memory": 3)"}) {
    parseWith(bad, &s);
    EXPECT_EQ(s.code(), StatusCode::LoadFailed) << bad;
  }
  sig = parseWith(R"("no_memory": 0)", &s);
  ASSERT_TRUE(s.isOk());
  EXPECT_FALSE(sig.memory.present);
}

TEST(MemoryPrediction, PredictionEqualsTheMeasuredPeak) {
  std::shared_ptr<const Executable> exe;
  ASSERT_TRUE(Executable::load(DISC_FIXTURE_MEMORY, &exe).isOk());
  Session session(exe, SessionOptions());
  for (int64_t batch : {1, 5, 64}) {
    int64_t predicted = 0;
    ASSERT_TRUE(
        exe->predictPeakBytes({{batch, 4}, {batch, 4}}, &predicted).isOk());
    Tensor a = Tensor::zeros(DType::Float32, {batch, 4});
    Tensor b = Tensor::zeros(DType::Float32, {batch, 4});
    std::vector<Tensor> out;
    ASSERT_TRUE(session.run({a, b}, &out).isOk());
    EXPECT_EQ(predicted, session.stats().peak_bytes) << "batch " << batch;
    EXPECT_EQ(predicted, 32 * batch);
  }
  int64_t predicted = 0;
  Status s = exe->predictPeakBytes({{65, 4}, {65, 4}}, &predicted);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  s = exe->predictPeakBytes({{2, 4}, {3, 4}}, &predicted);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("'batch'"), std::string::npos) << s.message();

  // A model without a memory model: -1.
  std::shared_ptr<const Executable> add;
  ASSERT_TRUE(Executable::load(DISC_FIXTURE_ADD, &add).isOk());
  ASSERT_TRUE(add->predictPeakBytes({{2, 4}, {2, 4}}, &predicted).isOk());
  EXPECT_EQ(predicted, -1);
}

// The session predicts once per input shapes and keeps the result (at most
// 32 shapes, most recently used first): each run's stats carry the
// prediction of its own shapes, whichever came before.
TEST(MemoryPrediction, SessionPredictionFollowsTheShapes) {
  std::shared_ptr<const Executable> exe;
  ASSERT_TRUE(Executable::load(DISC_FIXTURE_MEMORY, &exe).isOk());
  Session session(exe, SessionOptions());
  std::vector<int64_t> batches = {1, 5, 1, 5, 64, 1};
  for (int64_t b = 2; b <= 40; ++b) // more shapes than the session keeps
    batches.push_back(b);
  for (int64_t b : {1, 40, 3, 2, 1})
    batches.push_back(b);
  for (int64_t batch : batches) {
    Tensor a = Tensor::zeros(DType::Float32, {batch, 4});
    Tensor b = Tensor::zeros(DType::Float32, {batch, 4});
    std::vector<Tensor> out;
    ASSERT_TRUE(session.run({a, b}, &out).isOk());
    EXPECT_EQ(session.stats().predicted_peak_bytes, 32 * batch)
        << "batch " << batch;
    EXPECT_EQ(session.stats().peak_bytes, 32 * batch) << "batch " << batch;
    EXPECT_EQ(session.stats().remat_minimum_peak_bytes, 32 * batch);
  }
  // A batch outside the symbol's range is still rejected.
  std::vector<Tensor> out;
  Status s = session.run({Tensor::zeros(DType::Float32, {65, 4}),
                          Tensor::zeros(DType::Float32, {65, 4})},
                         &out);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
}

TEST(MemoryPrediction, CApi) {
  disc_executable_t *exe = nullptr;
  ASSERT_EQ(disc_executable_load(DISC_FIXTURE_MEMORY, &exe), DISC_STATUS_OK)
      << disc_last_error_message();
  int64_t shape[2] = {7, 4};
  const int64_t *shapes[2] = {shape, shape};
  int64_t ranks[2] = {2, 2};
  int64_t bytes = 0;
  ASSERT_EQ(disc_executable_predict_peak_bytes(exe, 2, ranks, shapes, &bytes),
            DISC_STATUS_OK)
      << disc_last_error_message();
  EXPECT_EQ(bytes, 7 * 32);
  EXPECT_STREQ(disc_executable_peak_unpredictable_reason(exe), "");
  int64_t wrong[2] = {7, 5};
  const int64_t *badShapes[2] = {shape, wrong};
  EXPECT_EQ(
      disc_executable_predict_peak_bytes(exe, 2, ranks, badShapes, &bytes),
      DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(disc_last_error_message()).find("dim 1"),
            std::string::npos);
  EXPECT_EQ(disc_executable_predict_peak_bytes(exe, 2, ranks, shapes, nullptr),
            DISC_STATUS_INVALID_ARGUMENT);
  disc_executable_release(exe);
}

} // namespace
