//===- RuntimeTest.cpp - Executable, Session, validation, memory limit ----===//

#include "disc/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

using namespace disc;

namespace {

std::shared_ptr<const Executable> loadOrDie(const char *path) {
  std::shared_ptr<const Executable> exe;
  Status s = Executable::load(path, &exe);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return exe;
}

Tensor iota(int64_t batch, float start) {
  std::vector<float> v(batch * 4);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = start + static_cast<float>(i);
  return Tensor::fromVector<float>({batch, 4}, v);
}

TEST(Executable, LoadsAndParsesSignature) {
  auto exe = loadOrDie(DISC_FIXTURE_ADD);
  ASSERT_TRUE(exe);
  const Signature &sig = exe->signature();
  EXPECT_EQ(sig.model, "add");
  ASSERT_EQ(sig.inputs.size(), 2u);
  EXPECT_EQ(sig.inputs[0].name, "a");
  EXPECT_EQ(sig.inputs[1].name, "b");
  EXPECT_EQ(sig.inputs[0].dtype, DType::Float32);
  ASSERT_EQ(sig.inputs[0].rank(), 2);
  EXPECT_TRUE(sig.inputs[0].shape[0].isSymbolic());
  EXPECT_EQ(sig.inputs[0].shape[0].symbol, "batch");
  EXPECT_TRUE(sig.inputs[0].shape[1].isStatic());
  EXPECT_EQ(sig.inputs[0].shape[1].size, 4);
  ASSERT_EQ(sig.outputs.size(), 1u);
  EXPECT_EQ(sig.outputs[0].name, "sum");
  const SymbolSpec *batch = sig.findSymbol("batch");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->min, 1);
  ASSERT_TRUE(batch->max.has_value());
  EXPECT_EQ(*batch->max, 64);
  EXPECT_EQ(sig.findInput("b"), 1);
  EXPECT_EQ(sig.findOutput("nope"), -1);
}

TEST(Executable, UnboundedSymbolAndUnknownDim) {
  auto exe = loadOrDie(DISC_FIXTURE_ALIAS);
  ASSERT_TRUE(exe);
  const SymbolSpec *n = exe->signature().findSymbol("n");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->min, 2);
  EXPECT_FALSE(n->max.has_value());
  EXPECT_TRUE(exe->signature().outputs[3].shape[0].isUnknown());
}

TEST(Executable, LoadErrors) {
  std::shared_ptr<const Executable> exe;
  Status s = Executable::load("/nonexistent/model.so", &exe);
  EXPECT_EQ(s.code(), StatusCode::LoadFailed);
  EXPECT_NE(s.message().find("/nonexistent/model.so"), std::string::npos);

  s = Executable::load(DISC_FIXTURE_BAD_VERSION, &exe);
  EXPECT_EQ(s.code(), StatusCode::LoadFailed);
  EXPECT_NE(s.message().find("ABI version 1"), std::string::npos)
      << s.message();

  s = Executable::load(DISC_FIXTURE_BAD_SIGNATURE, &exe);
  EXPECT_EQ(s.code(), StatusCode::LoadFailed);
  EXPECT_NE(s.message().find("invalid JSON"), std::string::npos) << s.message();

  s = Executable::load(DISC_FIXTURE_NO_RUN, &exe);
  EXPECT_EQ(s.code(), StatusCode::LoadFailed);
  EXPECT_NE(s.message().find("disc_model_run"), std::string::npos)
      << s.message();
  EXPECT_FALSE(exe);
}

TEST(Signature, ParseErrors) {
  Signature sig;
  EXPECT_FALSE(Signature::parse("[]", &sig).isOk());
  EXPECT_FALSE(Signature::parse(R"({"inputs": [], "outputs": {}})", &sig));
  Status s = Signature::parse(
      R"({"inputs": [{"name": "x", "dtype": "complex64", "shape": []}],
          "outputs": []})",
      &sig);
  EXPECT_EQ(s.code(), StatusCode::LoadFailed);
  EXPECT_NE(s.message().find("dtype"), std::string::npos);
  s = Signature::parse(
      R"({"inputs": [{"name": "x", "dtype": "bool", "shape": ["?"]}],
          "outputs": []})",
      &sig);
  EXPECT_FALSE(s.isOk());
  s = Signature::parse(R"({"inputs": [], "outputs": [], "symbols": null})",
                       &sig);
  EXPECT_TRUE(s.isOk()) << s.toString();
}

TEST(Session, RunsAddWithExactStats) {
  auto exe = loadOrDie(DISC_FIXTURE_ADD);
  ASSERT_TRUE(exe);
  Session session(exe);
  for (int64_t batch : {1, 3, 64}) {
    Tensor a = iota(batch, 0), b = iota(batch, 100);
    std::vector<Tensor> outputs;
    Status s = session.run({a, b}, &outputs);
    ASSERT_TRUE(s.isOk()) << s.toString();
    ASSERT_EQ(outputs.size(), 1u);
    const Tensor &sum = outputs[0];
    EXPECT_EQ(sum.dtype(), DType::Float32);
    EXPECT_EQ(sum.shape(), (std::vector<int64_t>{batch, 4}));
    for (int64_t i = 0; i < batch * 4; ++i)
      EXPECT_EQ(sum.data<float>()[i], a.data<float>()[i] + b.data<float>()[i]);
    const SessionStats &st = session.stats();
    EXPECT_EQ(st.peak_bytes, 32 * batch);
    EXPECT_EQ(st.current_bytes, 0);
    EXPECT_EQ(st.num_allocs, 2);
    EXPECT_EQ(st.leaked_allocs, 0);
    EXPECT_GE(st.last_latency_ms, 0.0);
  }
}

#if defined(__x86_64__) || defined(__i386__) // MXCSR; no effect elsewhere
TEST(Session, FlushesSubnormalsUnlessKept) {
  auto exe = loadOrDie(DISC_FIXTURE_ADD);
  ASSERT_TRUE(exe);
  // Two normal floats whose sum is below 2^-126 (subnormal), and a
  // subnormal operand plus 0.
  Tensor a = Tensor::fromVector<float>({1, 4}, {3e-38f, 1e-39f, 1.0f, -2.0f});
  Tensor b = Tensor::fromVector<float>({1, 4}, {-2.5e-38f, 0.0f, 2.0f, 0.5f});
  for (int32_t threads : {1, 2}) {
    SessionOptions flush;
    flush.num_threads = threads;
    EXPECT_TRUE(flush.flush_subnormals) << "the default";
    SessionOptions keep = flush;
    keep.flush_subnormals = false;
    std::vector<Tensor> flushed, kept;
    ASSERT_TRUE(Session(exe, flush).run({a, b}, &flushed).isOk());
    ASSERT_TRUE(Session(exe, keep).run({a, b}, &kept).isOk());
    const float *f = flushed[0].data<float>(), *k = kept[0].data<float>();
    EXPECT_EQ(f[0], 0.0f);
    EXPECT_EQ(f[1], 0.0f);
    EXPECT_EQ(k[0], 3e-38f - 2.5e-38f);
    EXPECT_GT(k[0], 0.0f);
    EXPECT_LT(k[0], 1.17549435e-38f);
    EXPECT_EQ(k[1], 1e-39f);
    for (const float *out : {f, k}) {
      EXPECT_EQ(out[2], 3.0f);
      EXPECT_EQ(out[3], -1.5f);
    }
  }
  // The calling thread's arithmetic is IEEE again after the run.
  volatile float x = 3e-38f, y = -2.5e-38f;
  EXPECT_GT(x + y, 0.0f);
}
#endif

TEST(Session, OutputsOutliveSession) {
  auto exe = loadOrDie(DISC_FIXTURE_ADD);
  std::vector<Tensor> outputs;
  {
    Session session(exe);
    ASSERT_TRUE(session.run({iota(2, 1), iota(2, 1)}, &outputs).isOk());
  }
  exe.reset();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].data<float>()[7], 16.0f);
}

TEST(Session, RunByName) {
  auto exe = loadOrDie(DISC_FIXTURE_ADD);
  Session session(exe);
  std::vector<Tensor> outputs;
  Status s = session.run(
      std::map<std::string, Tensor>{{"b", iota(2, 1)}, {"a", iota(2, 0)}},
      &outputs);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(outputs[0].data<float>()[0], 1.0f);

  s = session.run(std::map<std::string, Tensor>{{"a", iota(2, 0)}}, &outputs);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "missing input 'b'");

  s = session.run(std::map<std::string, Tensor>{{"a", iota(2, 0)},
                                                {"b", iota(2, 0)},
                                                {"c", iota(2, 0)}},
                  &outputs);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("unknown input 'c'"), std::string::npos);
}

TEST(Session, ValidationErrors) {
  auto exe = loadOrDie(DISC_FIXTURE_ADD);
  Session session(exe);
  std::vector<Tensor> outputs;
  auto expectError = [&](std::vector<Tensor> inputs, const std::string &msg) {
    Status s = session.run(inputs, &outputs);
    EXPECT_EQ(s.code(), StatusCode::InvalidArgument) << s.toString();
    EXPECT_EQ(s.message(), msg);
    EXPECT_TRUE(outputs.empty());
    EXPECT_EQ(session.stats().num_allocs, 0);
  };
  expectError({iota(2, 0)}, "expected 2 inputs but got 1");
  expectError({iota(2, 0), Tensor::zeros(DType::Float32, {8})},
              "input 'b': expected rank 2 but got rank 1 (shape [8])");
  expectError({Tensor::zeros(DType::Int32, {2, 4}), iota(2, 0)},
              "input 'a': expected dtype float32 but got int32");
  expectError({iota(2, 0), Tensor::zeros(DType::Float32, {2, 5})},
              "input 'b' dim 1: expected 4 but got 5");
  expectError({iota(5, 0), iota(7, 0)},
              "input 'b' dim 0 ('batch'): got 7 but input 'a' dim 0 has "
              "'batch' = 5");
  expectError({iota(65, 0), iota(65, 0)},
              "input 'a' dim 0 ('batch'): got 65, outside the range [1, 64] "
              "of 'batch'");
  expectError({Tensor::zeros(DType::Float32, {0, 4}),
               Tensor::zeros(DType::Float32, {0, 4})},
              "input 'a' dim 0 ('batch'): got 0, outside the range [1, 64] "
              "of 'batch'");
  expectError({Tensor(), iota(1, 0)}, "input 'a': tensor is empty (no buffer)");
}

TEST(Session, CopiesAliasesConstantsAndStridedViews) {
  auto exe = loadOrDie(DISC_FIXTURE_ALIAS);
  Session session(exe);
  const int64_t n = 4;
  std::vector<float> xs(n * 3);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<float>(i) * 0.5f;
  Tensor x = Tensor::fromVector<float>({n, 3}, xs);
  std::vector<Tensor> out;
  Status s = session.run({x}, &out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_EQ(out.size(), 5u);
  // same: a copy, not the input buffer.
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{n, 3}));
  EXPECT_NE(out[0].data(), x.data());
  EXPECT_EQ(std::memcmp(out[0].data(), x.data(), n * 12), 0);
  // transposed.
  EXPECT_EQ(out[1].shape(), (std::vector<int64_t>{3, n}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < n; ++j)
      EXPECT_EQ(out[1].data<float>()[i * n + j], xs[j * 3 + i]);
  // constant.
  EXPECT_EQ(out[2].dtype(), DType::Int64);
  EXPECT_EQ(out[2].data<int64_t>()[0], 7);
  EXPECT_EQ(out[2].data<int64_t>()[1], 9);
  // tail: rows 1.. of a fresh allocation (adopted with an offset).
  EXPECT_EQ(out[3].shape(), (std::vector<int64_t>{n - 1, 3}));
  for (int64_t i = 0; i < (n - 1) * 3; ++i)
    EXPECT_EQ(out[3].data<float>()[i], xs[3 + i]);
  // scratch_t.
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < n; ++j)
      EXPECT_EQ(out[4].data<float>()[i * n + j], xs[j * 3 + i]);
  const SessionStats &st = session.stats();
  EXPECT_EQ(st.peak_bytes, 24 * n + 100);
  EXPECT_EQ(st.num_allocs, 3);
  EXPECT_EQ(st.leaked_allocs, 1);
  EXPECT_EQ(st.current_bytes, 0);

  // Mutating the input afterwards must not change the outputs.
  x.data<float>()[0] = 1000;
  EXPECT_EQ(out[0].data<float>()[0], 0.0f);
}

TEST(Session, MemoryLimitAbortsCleanly) {
  auto exe = loadOrDie(DISC_FIXTURE_HOG);
  Tensor x = Tensor::fromVector<float>({3}, {1, 2, 3});
  {
    Session unlimited(exe);
    std::vector<Tensor> out;
    ASSERT_TRUE(unlimited.run({x}, &out).isOk());
    EXPECT_EQ(out[0].data<float>()[0], 6.0f);
    EXPECT_EQ(unlimited.stats().peak_bytes, 10 << 20);
    EXPECT_EQ(unlimited.stats().num_allocs, 11);
  }
  SessionOptions options;
  options.memory_limit_bytes = 4 << 20;
  Session limited(exe, options);
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<Tensor> out;
    Status s = limited.run({x}, &out);
    EXPECT_EQ(s.code(), StatusCode::ResourceExhausted);
    EXPECT_EQ(s.message(), "memory limit exceeded: requested 1048576 bytes "
                           "with 4194304 bytes live, limit 4194304 bytes");
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(limited.stats().current_bytes, 0);
    EXPECT_EQ(limited.stats().peak_bytes, 4 << 20);
    EXPECT_EQ(limited.stats().num_allocs, 4);
  }
  // A limit exactly at the peak is enough.
  options.memory_limit_bytes = 10 << 20;
  Session exact(exe, options);
  std::vector<Tensor> out;
  EXPECT_TRUE(exact.run({x}, &out).isOk());
}

TEST(Session, ReservedBytesCountKeptBlocks) {
  // The session keeps freed blocks for the next run (docs/runtime-api.md):
  // what it holds from the OS is at least the live peak and below twice
  // the highest peak. Under a memory limit only blocks of the requested
  // sizes are reused, and live plus kept blocks stay at most the limit.
  auto exe = loadOrDie(DISC_FIXTURE_HOG);
  Tensor x = Tensor::fromVector<float>({3}, {1, 2, 3});
  Session unlimited(exe);
  for (int run = 0; run < 3; ++run) {
    std::vector<Tensor> out;
    ASSERT_TRUE(unlimited.run({x}, &out).isOk());
    const SessionStats &st = unlimited.stats();
    EXPECT_EQ(st.peak_bytes, 10 << 20);
    EXPECT_GE(st.reserved_peak_bytes, st.peak_bytes);
    EXPECT_LT(st.reserved_peak_bytes, 2 * st.peak_bytes);
  }
  SessionOptions options;
  options.memory_limit_bytes = 10 << 20;
  Session limited(exe, options);
  for (int run = 0; run < 3; ++run) {
    std::vector<Tensor> out;
    ASSERT_TRUE(limited.run({x}, &out).isOk());
    EXPECT_EQ(limited.stats().peak_bytes, 10 << 20);
    EXPECT_EQ(limited.stats().reserved_peak_bytes, 10 << 20);
  }
  options.memory_limit_bytes = (10 << 20) + 100;
  Session loose(exe, options);
  for (int run = 0; run < 3; ++run) {
    std::vector<Tensor> out;
    ASSERT_TRUE(loose.run({x}, &out).isOk());
    EXPECT_EQ(loose.stats().peak_bytes, 10 << 20);
    EXPECT_GE(loose.stats().reserved_peak_bytes, 10 << 20);
    EXPECT_LE(loose.stats().reserved_peak_bytes, (10 << 20) + 100);
  }
}

TEST(Session, ModelFailureFreesAllocations) {
  auto exe = loadOrDie(DISC_FIXTURE_FAILING);
  Session session(exe);
  std::vector<Tensor> out;
  Status s = session.run(std::vector<Tensor>{}, &out);
  EXPECT_EQ(s.code(), StatusCode::Internal);
  EXPECT_NE(s.message().find("returned status 4"), std::string::npos);
  EXPECT_EQ(session.stats().current_bytes, 0);
  EXPECT_EQ(session.stats().peak_bytes, 64);
}

TEST(Session, ModelErrorIsInvalidArgumentAndReleasesBuffers) {
  auto exe = loadOrDie(DISC_FIXTURE_CHECK);
  Session session(exe);
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<Tensor> out;
    Status s = session.run({Tensor::fromVector<int64_t>({1}, {-7})}, &out);
    EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
    EXPECT_EQ(s.message(), "Gather node 'g': index -7 is out of range [-5, 5)");
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(session.stats().current_bytes, 0);
    EXPECT_EQ(session.stats().peak_bytes, 1008);
    // The session stays usable: a valid input runs right after.
    ASSERT_TRUE(
        session.run({Tensor::fromVector<int64_t>({1}, {3})}, &out).isOk());
    EXPECT_EQ(out[0].data<int64_t>()[0], 3);
    EXPECT_EQ(session.stats().leaked_allocs, 0);
  }
}

TEST(Session, IndependentSessionsRunConcurrently) {
  auto exe = loadOrDie(DISC_FIXTURE_ADD);
  auto worker = [&](int64_t batch, bool *ok) {
    Session session(exe);
    *ok = true;
    for (int i = 0; i < 200; ++i) {
      std::vector<Tensor> out;
      Status s = session.run({iota(batch, 0), iota(batch, 1)}, &out);
      *ok &= s.isOk() &&
             out[0].data<float>()[batch * 4 - 1] ==
                 2.0f * (batch * 4 - 1) + 1.0f &&
             session.stats().peak_bytes == 32 * batch;
    }
  };
  bool ok1 = false, ok2 = false;
  std::thread t1(worker, 3, &ok1), t2(worker, 9, &ok2);
  t1.join();
  t2.join();
  EXPECT_TRUE(ok1);
  EXPECT_TRUE(ok2);
}

TEST(Tensor, HalfConversions) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f,
                  5.960464477539063e-08f, 0.333251953125f})
    EXPECT_EQ(halfToFloat(floatToHalf(f)), f) << f;
  EXPECT_EQ(floatToHalf(1e6f), 0x7c00);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_EQ(floatToHalf(1.0f + 1.0f / 4096), 0x3c00); // Ties to even.
}

TEST(Tensor, BFloat16Conversions) {
  // Values ONNX Runtime 1.30 gives for Cast(float -> bfloat16 -> float).
  EXPECT_EQ(bfloat16ToFloat(floatToBFloat16(0.47892547f)), 0.478515625f);
  EXPECT_EQ(bfloat16ToFloat(floatToBFloat16(0.48033667f)), 0.48046875f);
  EXPECT_EQ(bfloat16ToFloat(floatToBFloat16(0.49968487f)), 0.5f);
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.0f + 1.0f / 256), 0x3f80); // Ties to even.
  EXPECT_EQ(floatToBFloat16(1.0f + 3.0f / 256), 0x3f82);
  EXPECT_EQ(floatToBFloat16(INFINITY), 0x7f80);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBFloat16(NAN))));
  EXPECT_EQ(bfloat16ToFloat(0xc0a0), -5.0f);
  EXPECT_STREQ(dtypeName(DType::BFloat16), "bfloat16");
  EXPECT_EQ(dtypeSize(DType::BFloat16), 2);
}

} // namespace
