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

#include <algorithm>
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

int64_t volume(const std::vector<int64_t> &d) {
  int64_t n = 1;
  for (int64_t x : d)
    n *= x;
  return n;
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

/// Dense row-major strides of `sizes`.
std::vector<int64_t> dense(const std::vector<int64_t> &sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t d = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    st[i] = d;
    d *= sizes[i];
  }
  return st;
}

/// ONNX Conv (transposed = false) or ConvTranspose (true), k spatial dims,
/// symmetric pads, from the operator definitions: Conv
///   Y[n, oc, o] = sum_{c in group, r} X[n, c, o*s - p + r*d] W[oc, c', r],
/// ConvTranspose
///   Y[n, oc, i*s - p + r*d] += X[n, c, i] W[c, oc', r].
/// X and Y dense; returns Y.
std::vector<float>
referenceConv(bool transposed, const std::vector<float> &x,
              const std::vector<int64_t> &xs, const std::vector<float> &w,
              const std::vector<int64_t> &ws, const std::vector<int64_t> &ys,
              int64_t g, const std::vector<int64_t> &s,
              const std::vector<int64_t> &d, const std::vector<int64_t> &p) {
  size_t k = xs.size() - 2;
  std::vector<float> y(volume(ys), 0.0f);
  std::vector<int64_t> xst = dense(xs), wst = dense(ws), yst = dense(ys);
  // Iterate over (n, input channel c, input position i, filter tap r) for
  // ConvTranspose, over (n, oc, output position o, c', r) for Conv.
  const std::vector<int64_t> &outer = transposed ? xs : ys;
  int64_t cgIn = transposed ? xs[1] / g : ws[1];
  int64_t ocPerGroup = transposed ? ws[1] : ys[1] / g;
  std::vector<int64_t> pos(k), tap(k);
  for (int64_t e = 0; e < volume(outer); ++e) {
    int64_t rem = e;
    std::vector<int64_t> idx(outer.size());
    for (int64_t i = static_cast<int64_t>(outer.size()) - 1; i >= 0; --i) {
      idx[i] = rem % outer[i];
      rem /= outer[i];
    }
    std::vector<int64_t> rs(ws.begin() + 2, ws.end());
    for (int64_t t = 0; t < volume(rs); ++t) {
      int64_t rr = t;
      for (int64_t i = static_cast<int64_t>(k) - 1; i >= 0; --i) {
        tap[i] = rr % rs[i];
        rr /= rs[i];
      }
      bool inside = true;
      for (size_t i = 0; i < k; ++i) {
        pos[i] = idx[2 + i] * s[i] - p[i] + tap[i] * d[i];
        int64_t lim = transposed ? ys[2 + i] : xs[2 + i];
        inside &= pos[i] >= 0 && pos[i] < lim;
      }
      if (!inside)
        continue;
      if (transposed) {
        int64_t c = idx[1], grp = c / cgIn;
        for (int64_t oo = 0; oo < ocPerGroup; ++oo) {
          int64_t yo = idx[0] * yst[0] + (grp * ocPerGroup + oo) * yst[1];
          int64_t wo = c * wst[0] + oo * wst[1];
          int64_t xo = idx[0] * xst[0] + c * xst[1];
          for (size_t i = 0; i < k; ++i) {
            yo += pos[i] * yst[2 + i];
            wo += tap[i] * wst[2 + i];
            xo += idx[2 + i] * xst[2 + i];
          }
          y[yo] += x[xo] * w[wo];
        }
      } else {
        int64_t oc = idx[1], grp = oc / ocPerGroup;
        for (int64_t ci = 0; ci < cgIn; ++ci) {
          int64_t xo = idx[0] * xst[0] + (grp * cgIn + ci) * xst[1];
          int64_t wo = oc * wst[0] + ci * wst[1];
          int64_t yo = idx[0] * yst[0] + oc * yst[1];
          for (size_t i = 0; i < k; ++i) {
            xo += pos[i] * xst[2 + i];
            wo += tap[i] * wst[2 + i];
            yo += idx[2 + i] * yst[2 + i];
          }
          y[yo] += x[xo] * w[wo];
        }
      }
    }
  }
  return y;
}

std::vector<float> randomVector(int64_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

TEST_F(CudaLibraryCalls, ConvWithPostOpsMatchesOnnxReference) {
  LibraryCalls calls(*device, {FAKE_CUBLAS}, {FAKE_CUDNN});
  std::mt19937 rng(11);
  // X [2, 4, 5, 6] as a strided view (channel stride padded), W [6, 2, 3,
  // 3], 2 groups, strides {2, 1}, dilations {1, 2}, pads {1, 2}.
  std::vector<int64_t> xs = {2, 4, 5, 6}, ws = {6, 2, 3, 3}, ys = {2, 6, 3, 6};
  std::vector<float> x = randomVector(volume(xs), rng);
  std::vector<float> xPadded(2 * 4 * 40, 99.0f);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 4; ++c)
      for (int64_t i = 0; i < 30; ++i)
        xPadded[n * 160 + c * 40 + i] = x[(n * 4 + c) * 30 + i];
  std::vector<float> w = randomVector(volume(ws), rng);
  std::vector<float> bias = randomVector(6, rng);
  std::vector<float> res = randomVector(volume(ys), rng);
  std::vector<float> y(volume(ys), 42.0f);
  auto dx = desc(xPadded.data(), xs, {160, 40, 6, 1});
  auto dw = desc(w.data(), ws, dense(ws));
  auto dy = desc(y.data(), ys, dense(ys));
  auto db = desc(bias.data(), {6}, {1});
  auto dr = desc(res.data(), ys, dense(ys));
  void *ops[5] = {dx.data(), dw.data(), dy.data(), db.data(), dr.data()};
  int32_t ranks[5] = {4, 4, 4, 1, 4};
  int64_t attrs[11] = {2, 1, 2, 1, 1, 2, 1, 2, 1, 2, 7};
  std::vector<float> want =
      referenceConv(false, x, xs, w, ws, ys, 2, {2, 1}, {1, 2}, {1, 2});
  for (int64_t e = 0; e < volume(ys); ++e)
    want[e] = std::max(0.0f, want[e] + bias[(e / 18) % 6] + res[e]);
  for (int run = 0; run < 2; ++run) {
    std::string error;
    ASSERT_EQ(calls.call(DISC_LIB_CONV, 5, ops, ranks, 11, attrs,
                         scratch.hooks(), error),
              0)
        << error;
    for (int64_t e = 0; e < volume(ys); ++e)
      ASSERT_NEAR(y[e], want[e], 1e-5) << "at " << e;
  }
  // One plan for both runs; the preferred algorithm's 1 MiB workspace
  // came from the allocator and went back.
  EXPECT_EQ(calls.numPlansCreated(), 1);
  EXPECT_EQ(scratch.maxBytes, int64_t(1) << 20);
  EXPECT_EQ(scratch.live, 0);
}

TEST_F(CudaLibraryCalls, Conv1dAndConvTransposeMatchOnnxReference) {
  LibraryCalls calls(*device, {FAKE_CUBLAS}, {FAKE_CUDNN});
  std::mt19937 rng(13);
  {
    // Conv 1-D (a 2-D convolution over [.., 1, W]): X [1, 3, 7], W [2, 3,
    // 3], stride 2, pad 1.
    std::vector<int64_t> xs = {1, 3, 7}, ws = {2, 3, 3}, ys = {1, 2, 4};
    std::vector<float> x = randomVector(volume(xs), rng),
                       w = randomVector(volume(ws), rng), y(volume(ys));
    auto dx = desc(x.data(), xs, dense(xs));
    auto dw = desc(w.data(), ws, dense(ws));
    auto dy = desc(y.data(), ys, dense(ys));
    void *ops[3] = {dx.data(), dw.data(), dy.data()};
    int32_t ranks[3] = {3, 3, 3};
    int64_t attrs[6] = {1, 1, 2, 1, 1, 1};
    std::string error;
    ASSERT_EQ(calls.call(DISC_LIB_CONV, 3, ops, ranks, 6, attrs,
                         scratch.hooks(), error),
              0)
        << error;
    std::vector<float> want =
        referenceConv(false, x, xs, w, ws, ys, 1, {2}, {1}, {1});
    for (int64_t e = 0; e < volume(ys); ++e)
      ASSERT_NEAR(y[e], want[e], 1e-5) << "conv1d at " << e;
  }
  {
    // ConvTranspose 2-D: X [1, 4, 3, 3], W [4, 3, 3, 3], strides 2, pads 1:
    // Y [1, 3, 5, 5].
    std::vector<int64_t> xs = {1, 4, 3, 3}, ws = {4, 3, 3, 3},
                         ys = {1, 3, 5, 5};
    std::vector<float> x = randomVector(volume(xs), rng),
                       w = randomVector(volume(ws), rng), y(volume(ys), 42.0f);
    auto dx = desc(x.data(), xs, dense(xs));
    auto dw = desc(w.data(), ws, dense(ws));
    auto dy = desc(y.data(), ys, dense(ys));
    void *ops[3] = {dx.data(), dw.data(), dy.data()};
    int32_t ranks[3] = {4, 4, 4};
    int64_t attrs[10] = {1, 1, 2, 2, 1, 1, 1, 1, 1, 1};
    std::string error;
    ASSERT_EQ(calls.call(DISC_LIB_CONV_TRANSPOSE, 3, ops, ranks, 10, attrs,
                         scratch.hooks(), error),
              0)
        << error;
    std::vector<float> want =
        referenceConv(true, x, xs, w, ws, ys, 1, {2, 2}, {1, 1}, {1, 1});
    for (int64_t e = 0; e < volume(ys); ++e)
      ASSERT_NEAR(y[e], want[e], 1e-5) << "conv_transpose at " << e;
    // The same with post-ops, as the CUDA target marks them on a
    // ConvTranspose (flags 5: the bias [3], then Relu), `_post1`.
    std::vector<float> bias = randomVector(3, rng), yb(volume(ys), 42.0f);
    auto dyb = desc(yb.data(), ys, dense(ys));
    auto db = desc(bias.data(), {3}, {1});
    void *pops[4] = {dx.data(), dw.data(), dyb.data(), db.data()};
    int32_t pranks[4] = {4, 4, 4, 1};
    int64_t pattrs[11] = {1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 5};
    ASSERT_EQ(calls.call(DISC_LIB_CONV_TRANSPOSE, 4, pops, pranks, 11, pattrs,
                         scratch.hooks(), error),
              0)
        << error;
    for (int64_t e = 0; e < volume(ys); ++e) {
      float ref = std::max(0.0f, want[e] + bias[(e / 25) % 3]);
      ASSERT_NEAR(yb[e], ref, 1e-5) << "conv_transpose + bias + relu at " << e;
    }
    // The flags word's operands must be there: flags 1 without the bias.
    EXPECT_NE(calls.call(DISC_LIB_CONV_TRANSPOSE, 3, ops, ranks, 11, pattrs,
                         scratch.hooks(), error),
              0);
    EXPECT_NE(error.find("operands for post-op flags"), std::string::npos)
        << error;
  }
  EXPECT_EQ(calls.numPlansCreated(), 2);
  EXPECT_EQ(scratch.live, 0);
}

TEST_F(CudaLibraryCalls, MatMulPostOpsThroughCudnn) {
  LibraryCalls calls(*device, {FAKE_CUBLAS}, {FAKE_CUDNN});
  std::mt19937 rng(17);
  // [2, 3, 4] x [2, 4, 5] + bias [5] + residual, Relu.
  std::vector<float> a = randomVector(24, rng), b = randomVector(40, rng),
                     bias = randomVector(5, rng), res = randomVector(30, rng),
                     c(30);
  auto da = desc(a.data(), {2, 3, 4}, {12, 4, 1});
  auto db = desc(b.data(), {2, 4, 5}, {20, 5, 1});
  auto dc = desc(c.data(), {2, 3, 5}, {15, 5, 1});
  auto dbias = desc(bias.data(), {5}, {1});
  auto dr = desc(res.data(), {2, 3, 5}, {15, 5, 1});
  void *ops[5] = {da.data(), db.data(), dc.data(), dbias.data(), dr.data()};
  int32_t ranks[5] = {3, 3, 3, 1, 3};
  int64_t attrs[3] = {0, 0, 7};
  std::string error;
  ASSERT_EQ(calls.call(DISC_LIB_MATMUL, 5, ops, ranks, 3, attrs,
                       scratch.hooks(), error),
            0)
      << error;
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        float want = 0.0f;
        for (int64_t l = 0; l < 4; ++l)
          want += a[p * 12 + i * 4 + l] * b[p * 20 + l * 5 + j];
        want = std::max(0.0f, want + bias[j] + res[p * 15 + i * 5 + j]);
        ASSERT_NEAR(c[p * 15 + i * 5 + j], want, 1e-5);
      }
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

TEST(CudaLibraryCallsSession, TracedRunTimesTheCallOnTheDevice) {
  // A traced run brackets each library call with CUDA events: one device
  // slice, named by the signature's "kernels" entry (its ONNX node), the
  // callee naming the library.
  std::shared_ptr<const disc::Executable> exe;
  disc::Status s = disc::Executable::load(DISC_FIXTURE_CUDA_LIBCALL, &exe);
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_EQ(exe->signature().kernels.size(), 1u);
  ASSERT_EQ(setenv("DISC_CUBLAS_LIBRARY", FAKE_CUBLAS, 1), 0);
  disc::SessionOptions opts;
  opts.record_trace = true;
  disc::Session session(exe, opts);
  std::vector<disc::Tensor> out;
  s = session.run({disc::Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                   disc::Tensor::fromVector<float>({3, 2}, {1, 0, 0, 1, 1, 1})},
                  &out);
  unsetenv("DISC_CUBLAS_LIBRARY");
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<disc::RunTrace::Slice> device;
  for (const auto &slice : session.lastTrace().slices)
    if (slice.device)
      device.push_back(slice);
  ASSERT_EQ(device.size(), 1u);
  EXPECT_EQ(device[0].name, "/mm/MatMul");
  EXPECT_EQ(device[0].callee, "cuBLAS matmul");
  EXPECT_EQ(device[0].kind, "library");
  EXPECT_GE(device[0].durationUs, 0.0);
  EXPECT_GE(device[0].startUs, 0.0);
  std::string json = disc::chromeTraceJson(session.lastTrace());
  EXPECT_NE(json.find("device (CUDA events)"), std::string::npos);
  EXPECT_NE(json.find("\"callee\":\"cuBLAS matmul\""), std::string::npos);
}

} // namespace
