//===- CudaLibraryCallsTest.cpp - cuBLAS/cuDNN calls on substitute libs ---===//
//
// The CUDA library calls (runtime/lib/cuda/LibraryCalls.h) against the
// substitute driver (fixtures/fake_cuda_driver.c: device memory is host
// memory) and a substitute cuBLAS (fixtures/fake_cublas.c: the column-major
// reference GEMM of the cuBLAS documentation). Checks the row-major to
// column-major mapping (transposes, column-major views, broadcast batches)
// against a plain row-major product, the workspace accounting, and that a
// missing or wrong cuBLAS/cuDNN is a clear error naming the library, both
// here and through a session of a CUDA model. No GPU needed; ctest sets
// $DISC_CUDA_DRIVER. Its own process: the runtime loads the driver once.
//
//===----------------------------------------------------------------------===//

#include "cuda/Device.h"
#include "cuda/LibraryCalls.h"
#include "disc/runtime/Runtime.h"
#include "disc/runtime/abi.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

using namespace disc::runtime::cuda;

namespace {

/// A memref descriptor of rank `sizes.size()` over `data`.
std::vector<int64_t> desc(float *data, std::vector<int64_t> sizes,
                          std::vector<int64_t> strides) {
  std::vector<int64_t> d = {
      static_cast<int64_t>(reinterpret_cast<intptr_t>(data)),
      static_cast<int64_t>(reinterpret_cast<intptr_t>(data)), 0};
  d.insert(d.end(), sizes.begin(), sizes.end());
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

/// Counts the workspace bytes taken from the "session" allocator.
struct CountingScratch {
  Device *device = nullptr;
  int64_t live = 0, allocs = 0, maxBytes = 0;
  DeviceScratch hooks() {
    DeviceScratch s;
    s.self = this;
    s.alloc = [](void *self, int64_t bytes, int64_t) -> void * {
      auto *c = static_cast<CountingScratch *>(self);
      bool oom = false;
      std::string err;
      void *p = c->device->allocate(bytes, &oom, &err);
      if (p) {
        ++c->live;
        ++c->allocs;
        c->maxBytes = std::max(c->maxBytes, bytes);
      }
      return p;
    };
    s.free = [](void *self, void *p) {
      auto *c = static_cast<CountingScratch *>(self);
      --c->live;
      c->device->release(p);
    };
    return s;
  }
};

class CudaLibraryCalls : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_NE(std::getenv("DISC_CUDA_DRIVER"), nullptr)
        << "run through ctest, which sets DISC_CUDA_DRIVER";
    std::string error;
    device = Device::open(0, &error);
    ASSERT_TRUE(device) << error;
    scratch.device = device.get();
  }
  std::unique_ptr<Device> device;
  CountingScratch scratch;
};

/// Row-major [batch, M, K] x [batch, K, N] with logical element accessors.
struct MatMulCase {
  int64_t batch, ba, bb, m, k, n;
  bool transA, transB;
  bool colMajorA; // A stored column-major (a transposed view)
};

TEST_F(CudaLibraryCalls, MatMulMatchesRowMajorReference) {
  LibraryCalls calls(*device, {FAKE_CUBLAS}, {"/nonexistent/libcudnn.so.9"});
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const MatMulCase cases[] = {
      {1, 1, 1, 3, 4, 5, false, false, false},
      {1, 1, 1, 3, 4, 5, true, false, false},
      {1, 1, 1, 3, 4, 5, false, true, false},
      {1, 1, 1, 3, 4, 5, true, true, false},
      {3, 3, 3, 2, 6, 4, false, false, false},
      {3, 1, 3, 2, 6, 4, false, false, false}, // broadcast A
      {3, 3, 1, 2, 6, 4, false, true, false},  // broadcast B
      {2, 2, 2, 5, 3, 1, false, false, true},  // A column-major, N = 1
      {2, 2, 2, 1, 3, 4, true, false, true},   // M = 1
      {1, 1, 1, 4, 0, 3, false, false, false}, // K = 0: zeros
  };
  for (const MatMulCase &c : cases) {
    SCOPED_TRACE("batch " + std::to_string(c.batch) + " m " +
                 std::to_string(c.m) + " k " + std::to_string(c.k) + " n " +
                 std::to_string(c.n) + " transA " + std::to_string(c.transA) +
                 " transB " + std::to_string(c.transB) + " colMajorA " +
                 std::to_string(c.colMajorA));
    // Stored dims of A: [ba, M, K] or [ba, K, M] (transA).
    int64_t a1 = c.transA ? c.k : c.m, a2 = c.transA ? c.m : c.k;
    int64_t b1 = c.transB ? c.n : c.k, b2 = c.transB ? c.k : c.n;
    std::vector<float> a(c.ba * a1 * a2), b(c.bb * b1 * b2),
        out(c.batch * c.m * c.n, 42.0f);
    for (float &x : a)
      x = dist(rng);
    for (float &x : b)
      x = dist(rng);
    // Column-major A: element (i, j) at i + j * a1.
    std::vector<int64_t> aStrides = c.colMajorA
                                        ? std::vector<int64_t>{a1 * a2, 1, a1}
                                        : std::vector<int64_t>{a1 * a2, a2, 1};
    auto aAt = [&](int64_t p, int64_t i, int64_t j) {
      return a[p * aStrides[0] + i * aStrides[1] + j * aStrides[2]];
    };
    auto bAt = [&](int64_t p, int64_t i, int64_t j) {
      return b[p * b1 * b2 + i * b2 + j];
    };
    auto da = desc(a.data(), {c.ba, a1, a2}, aStrides);
    auto db = desc(b.data(), {c.bb, b1, b2}, {b1 * b2, b2, 1});
    auto dc = desc(out.data(), {c.batch, c.m, c.n}, {c.m * c.n, c.n, 1});
    void *ops[3] = {da.data(), db.data(), dc.data()};
    int32_t ranks[3] = {3, 3, 3};
    int64_t attrs[2] = {c.transA, c.transB};
    std::string error;
    ASSERT_EQ(calls.call(DISC_LIB_MATMUL, 3, ops, ranks, 2, attrs,
                         scratch.hooks(), error),
              0)
        << error;
    for (int64_t p = 0; p < c.batch; ++p)
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j) {
          float want = 0.0f;
          for (int64_t l = 0; l < c.k; ++l) {
            int64_t pa = c.ba == 1 ? 0 : p, pb = c.bb == 1 ? 0 : p;
            float x = c.transA ? aAt(pa, l, i) : aAt(pa, i, l);
            float y = c.transB ? bAt(pb, j, l) : bAt(pb, l, j);
            want += x * y;
          }
          ASSERT_NEAR(out[(p * c.m + i) * c.n + j], want, 1e-5)
              << "at " << p << ", " << i << ", " << j;
        }
  }
  // One 4 MiB workspace per call from the allocator, all freed.
  EXPECT_EQ(scratch.live, 0);
  EXPECT_EQ(scratch.maxBytes, int64_t(4) << 20);
}

TEST_F(CudaLibraryCalls, MatMulRejectsOperandsThatDoNotFit) {
  LibraryCalls calls(*device, {FAKE_CUBLAS}, {"/nonexistent/libcudnn.so.9"});
  std::vector<float> a(24), b(24), c(24);
  int32_t ranks[3] = {3, 3, 3};
  int64_t attrs[2] = {0, 0};
  std::string error;
  // K mismatch: [1, 2, 3] x [1, 4, 2].
  auto da = desc(a.data(), {1, 2, 3}, {6, 3, 1});
  auto db = desc(b.data(), {1, 4, 2}, {8, 2, 1});
  auto dc = desc(c.data(), {1, 2, 2}, {4, 2, 1});
  void *ops[3] = {da.data(), db.data(), dc.data()};
  EXPECT_EQ(calls.call(DISC_LIB_MATMUL, 3, ops, ranks, 2, attrs,
                       scratch.hooks(), error),
            1);
  EXPECT_NE(error.find("does not give C"), std::string::npos) << error;
  // No unit stride in A's matrix dims.
  da = desc(a.data(), {1, 2, 3}, {24, 8, 2});
  db = desc(b.data(), {1, 3, 2}, {6, 2, 1});
  ops[0] = da.data();
  ops[1] = db.data();
  EXPECT_EQ(calls.call(DISC_LIB_MATMUL, 3, ops, ranks, 2, attrs,
                       scratch.hooks(), error),
            1);
  EXPECT_NE(error.find("unit stride"), std::string::npos) << error;
  // An unknown call id.
  EXPECT_EQ(calls.call(99, 3, ops, ranks, 2, attrs, scratch.hooks(), error), 1);
  EXPECT_NE(error.find("no CUDA implementation"), std::string::npos) << error;
}

TEST_F(CudaLibraryCalls, MissingCublasNamesTheLibrary) {
  LibraryCalls calls(*device, {"/nonexistent/libcublas.so.13"},
                     {"/nonexistent/libcudnn.so.9"});
  std::vector<float> a(6), b(6), c(4);
  auto da = desc(a.data(), {1, 2, 3}, {6, 3, 1});
  auto db = desc(b.data(), {1, 3, 2}, {6, 2, 1});
  auto dc = desc(c.data(), {1, 2, 2}, {4, 2, 1});
  void *ops[3] = {da.data(), db.data(), dc.data()};
  int32_t ranks[3] = {3, 3, 3};
  int64_t attrs[2] = {0, 0};
  std::string error;
  EXPECT_EQ(calls.call(DISC_LIB_MATMUL, 3, ops, ranks, 2, attrs,
                       scratch.hooks(), error),
            3);
  EXPECT_NE(error.find("cuBLAS is not available"), std::string::npos) << error;
  EXPECT_NE(error.find("/nonexistent/libcublas.so.13"), std::string::npos)
      << error;
  EXPECT_NE(error.find("$DISC_CUBLAS_LIBRARY"), std::string::npos) << error;
}

TEST_F(CudaLibraryCalls, MissingCudnnNamesTheLibrary) {
  LibraryCalls calls(*device, {FAKE_CUBLAS}, {"/nonexistent/libcudnn.so.9"});
  std::vector<float> x(1 * 2 * 4 * 4), w(3 * 2 * 3 * 3), y(1 * 3 * 4 * 4);
  auto dx = desc(x.data(), {1, 2, 4, 4}, {32, 16, 4, 1});
  auto dw = desc(w.data(), {3, 2, 3, 3}, {18, 9, 3, 1});
  auto dy = desc(y.data(), {1, 3, 4, 4}, {48, 16, 4, 1});
  void *ops[3] = {dx.data(), dw.data(), dy.data()};
  int32_t ranks[3] = {4, 4, 4};
  // {G, weights_constant, strides, dilations, pads_begin, pads_end}.
  int64_t attrs[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  std::string error;
  EXPECT_EQ(calls.call(DISC_LIB_CONV, 3, ops, ranks, 10, attrs, scratch.hooks(),
                       error),
            3);
  EXPECT_NE(error.find("cuDNN is not available"), std::string::npos) << error;
  EXPECT_NE(error.find("/nonexistent/libcudnn.so.9"), std::string::npos)
      << error;
  // Asymmetric pads are refused before any library is needed.
  int64_t asym[10] = {1, 1, 1, 1, 1, 1, 0, 0, 1, 1};
  EXPECT_EQ(calls.call(DISC_LIB_CONV, 3, ops, ranks, 10, asym, scratch.hooks(),
                       error),
            1);
  EXPECT_NE(error.find("symmetric pads"), std::string::npos) << error;
}

TEST_F(CudaLibraryCalls, LibraryWithoutTheSymbolsIsAClearError) {
  // The substitute cuBLAS has none of cuDNN's functions.
  LibraryCalls calls(*device, {FAKE_CUBLAS}, {FAKE_CUBLAS});
  std::vector<float> a(6), b(6), c(4);
  auto da = desc(a.data(), {1, 2, 3}, {6, 3, 1});
  auto db = desc(b.data(), {1, 3, 2}, {6, 2, 1});
  auto dc = desc(c.data(), {1, 2, 2}, {4, 2, 1});
  void *ops[3] = {da.data(), db.data(), dc.data()};
  int32_t ranks[3] = {3, 3, 3};
  int64_t attrs[3] = {0, 0, 4}; // Relu post-op: runs through cuDNN
  std::string error;
  EXPECT_EQ(calls.call(DISC_LIB_MATMUL, 3, ops, ranks, 3, attrs,
                       scratch.hooks(), error),
            3);
  EXPECT_NE(error.find("cuDNN is not available"), std::string::npos) << error;
  EXPECT_NE(error.find("has no symbol 'cudnnCreate'"), std::string::npos)
      << error;
}

/// Through a session of a CUDA model: the library call reaches cuBLAS on
/// the session's device, and a missing cuBLAS fails the run (status 3,
/// LoadFailed) with the library named.
TEST(CudaLibraryCallsSession, MatMulAndMissingCublas) {
  std::shared_ptr<const disc::Executable> exe;
  disc::Status s = disc::Executable::load(DISC_FIXTURE_CUDA_LIBCALL, &exe);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {1, 0, 0, 1, 1, 1};
  auto inputs = [&] {
    return std::vector<disc::Tensor>{
        disc::Tensor::fromVector<float>({2, 3}, a),
        disc::Tensor::fromVector<float>({3, 2}, b)};
  };
  ASSERT_EQ(setenv("DISC_CUBLAS_LIBRARY", FAKE_CUBLAS, 1), 0);
  {
    disc::Session session(exe);
    std::vector<disc::Tensor> out;
    s = session.run(inputs(), &out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{2, 2}));
    const float want[4] = {4, 5, 10, 11};
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(out[0].data<float>()[i], want[i]);
    // Output and the 4 MiB cuBLAS workspace, both tracked.
    EXPECT_GE(session.stats().peak_bytes, (int64_t(4) << 20) + 16);
  }
  ASSERT_EQ(setenv("DISC_CUBLAS_LIBRARY", "/nonexistent/libcublas.so.13", 1),
            0);
  {
    disc::Session session(exe);
    std::vector<disc::Tensor> out;
    s = session.run(inputs(), &out);
    EXPECT_FALSE(s.isOk());
    EXPECT_EQ(s.code(), disc::StatusCode::LoadFailed) << s.toString();
    EXPECT_NE(s.toString().find("cuBLAS is not available"), std::string::npos)
        << s.toString();
    EXPECT_NE(s.toString().find("libcublas.so.13"), std::string::npos)
        << s.toString();
  }
  unsetenv("DISC_CUBLAS_LIBRARY");
}

} // namespace
