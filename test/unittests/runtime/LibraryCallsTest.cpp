//===- LibraryCallsTest.cpp - oneDNN library calls against plain loops ----===//
#include "cpu/LibraryCalls.h"
#include "disc/runtime/Runtime.h"
#include "disc/runtime/abi.h"

#include <dnnl.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace disc;
using disc::runtime::cpu::LibraryCalls;
using disc::runtime::cpu::ScratchAllocator;

namespace {

/// Counts what the library call allocates (like the session's allocator).
struct CountingAllocator {
  int64_t live = 0, peak = 0, calls = 0;
  std::vector<std::pair<void *, int64_t>> blocks;
  int64_t limit = -1;  // refuse above this many live bytes
  bool poison = false; // fill each block with NaN (a reused block's data)

  ScratchAllocator hooks() {
    ScratchAllocator a;
    a.self = this;
    a.alloc = [](void *s, int64_t bytes, int64_t align) -> void * {
      auto *c = static_cast<CountingAllocator *>(s);
      if (c->limit >= 0 && c->live + bytes > c->limit)
        return nullptr;
      void *p = nullptr;
      if (posix_memalign(&p, static_cast<size_t>(align), bytes) != 0)
        return nullptr;
      if (c->poison)
        std::fill_n(static_cast<float *>(p), bytes / sizeof(float), NAN);
      c->blocks.push_back({p, bytes});
      c->live += bytes;
      c->peak = std::max(c->peak, c->live);
      ++c->calls;
      return p;
    };
    a.free = [](void *s, void *p) {
      auto *c = static_cast<CountingAllocator *>(s);
      for (auto it = c->blocks.begin(); it != c->blocks.end(); ++it)
        if (it->first == p) {
          c->live -= it->second;
          c->blocks.erase(it);
          break;
        }
      std::free(p);
    };
    return a;
  }
};

/// A memref descriptor (docs/runtime-abi.md) over `data`.
std::vector<int64_t> desc(float *data, std::vector<int64_t> sizes,
                          std::vector<int64_t> strides = {}) {
  if (strides.empty()) {
    strides.assign(sizes.size(), 1);
    for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * sizes[i + 1];
  }
  std::vector<int64_t> d = {(int64_t)(intptr_t)data, (int64_t)(intptr_t)data,
                            0};
  d.insert(d.end(), sizes.begin(), sizes.end());
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

std::vector<float> randomVector(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

int32_t run(LibraryCalls &lib, CountingAllocator &alloc, int32_t id,
            std::vector<int64_t> &x, std::vector<int64_t> &w,
            std::vector<int64_t> &y, int32_t rank,
            const std::vector<int64_t> &attrs, std::string &error) {
  void *ops[3] = {x.data(), w.data(), y.data()};
  int32_t ranks[3] = {rank, rank, rank};
  return lib.call(id, 3, ops, ranks, static_cast<int32_t>(attrs.size()),
                  attrs.data(), alloc.hooks(), error);
}

} // namespace

// Batched MatMul with a broadcast rhs batch and a transposed rhs (Gemm
// transB), against a triple loop.
TEST(LibraryCalls, MatMulBroadcastTransposedMatchesLoops) {
  const int64_t B = 3, M = 5, K = 7, N = 4;
  std::vector<float> a = randomVector(B * M * K, 1), b = randomVector(N * K, 2),
                     c(B * M * N, -1.0f);
  auto da = desc(a.data(), {B, M, K});
  auto db = desc(b.data(), {1, N, K}); // transposed: [1, N, K]
  auto dc = desc(c.data(), {B, M, N});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  ASSERT_EQ(run(lib, alloc, DISC_LIB_MATMUL, da, db, dc, 3, {0, 1}, error), 0)
      << error;
  for (int64_t bi = 0; bi < B; ++bi)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double ref = 0;
        for (int64_t k = 0; k < K; ++k)
          ref += a[(bi * M + i) * K + k] * b[j * K + k];
        EXPECT_NEAR(c[(bi * M + i) * N + j], ref, 1e-4);
      }
  EXPECT_EQ(alloc.live, 0);
  // Same shapes again: the cached primitive is reused.
  ASSERT_EQ(run(lib, alloc, DISC_LIB_MATMUL, da, db, dc, 3, {0, 1}, error), 0);
  EXPECT_EQ(lib.numCreated(), 1);
}

// A column-sliced (non-dense) lhs view is read through its strides.
TEST(LibraryCalls, MatMulReadsStridedViews) {
  const int64_t M = 4, K = 3, N = 2, ld = 10;
  std::vector<float> a = randomVector(M * ld, 3), b = randomVector(K * N, 4),
                     c(M * N);
  auto da = desc(a.data() + 1, {1, M, K}, {M * ld, ld, 2});
  auto db = desc(b.data(), {1, K, N});
  auto dc = desc(c.data(), {1, M, N});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  ASSERT_EQ(run(lib, alloc, DISC_LIB_MATMUL, da, db, dc, 3, {0, 0}, error), 0)
      << error;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k)
        ref += a[1 + i * ld + 2 * k] * b[k * N + j];
      EXPECT_NEAR(c[i * N + j], ref, 1e-4);
    }
}

// Grouped, dilated, strided, asymmetrically padded 2-D convolution with
// constant weights, against direct loops; run twice (cached weights).
TEST(LibraryCalls, GroupedDilatedConvMatchesLoops) {
  const int64_t N = 2, C = 6, H = 9, W = 8, G = 3, OC = 6, KH = 3, KW = 2;
  const int64_t sh = 2, sw = 1, dh = 2, dw = 3, pt = 1, pl = 2, pb = 0, pr = 1;
  const int64_t OH = (H + pt + pb - ((KH - 1) * dh + 1)) / sh + 1;
  const int64_t OW = (W + pl + pr - ((KW - 1) * dw + 1)) / sw + 1;
  const int64_t Cg = C / G, OCg = OC / G;
  std::vector<float> x = randomVector(N * C * H * W, 5),
                     w = randomVector(OC * Cg * KH * KW, 6),
                     y(N * OC * OH * OW);
  auto dx = desc(x.data(), {N, C, H, W});
  auto dw_ = desc(w.data(), {OC, Cg, KH, KW});
  auto dy = desc(y.data(), {N, OC, OH, OW});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  std::vector<int64_t> attrs = {G, 1, sh, sw, dh, dw, pt, pl, pb, pr};
  for (int pass = 0; pass < 2; ++pass) {
    std::fill(y.begin(), y.end(), 0.0f);
    ASSERT_EQ(run(lib, alloc, DISC_LIB_CONV, dx, dw_, dy, 4, attrs, error), 0)
        << error;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t o = 0; o < OC; ++o)
        for (int64_t i = 0; i < OH; ++i)
          for (int64_t j = 0; j < OW; ++j) {
            double ref = 0;
            int64_t g = o / OCg;
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t u = 0; u < KH; ++u)
                for (int64_t v = 0; v < KW; ++v) {
                  int64_t hi = i * sh - pt + u * dh, wi = j * sw - pl + v * dw;
                  if (hi < 0 || hi >= H || wi < 0 || wi >= W)
                    continue;
                  ref += x[((n * C + g * Cg + c) * H + hi) * W + wi] *
                         w[((o * Cg + c) * KH + u) * KW + v];
                }
            ASSERT_NEAR(y[((n * OC + o) * OH + i) * OW + j], ref, 1e-4)
                << "at " << n << "," << o << "," << i << "," << j;
          }
    EXPECT_EQ(alloc.live, 0);
  }
  EXPECT_EQ(lib.numCreated(), 1);
}

namespace {

/// Direct loops of a 3x3 stride-1 pad-1 Conv with bias, residual and an
/// optional Relu.
std::vector<float> convRef(const std::vector<float> &x,
                           const std::vector<float> &w,
                           const std::vector<float> &bias,
                           const std::vector<float> &res, int64_t N, int64_t C,
                           int64_t H, int64_t W, int64_t OC, bool relu) {
  const int64_t K = 3;
  std::vector<float> y(N * OC * H * W);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < OC; ++o)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j) {
          double ref = bias[o];
          for (int64_t c = 0; c < C; ++c)
            for (int64_t u = 0; u < K; ++u)
              for (int64_t v = 0; v < K; ++v) {
                int64_t hi = i - 1 + u, wi = j - 1 + v;
                if (hi < 0 || hi >= H || wi < 0 || wi >= W)
                  continue;
                ref += x[((n * C + c) * H + hi) * W + wi] *
                       w[((o * C + c) * K + u) * K + v];
              }
          int64_t at = ((n * OC + o) * H + i) * W + j;
          ref += res[at];
          y[at] = static_cast<float>(relu && ref < 0 ? 0 : ref);
        }
  return y;
}

} // namespace

// Conv with the post-op chain bias + residual + Relu (flags 7), on 2
// threads, against direct loops; `temporaryBytes` predicts exactly the
// peak the call takes from the allocator, without running it.
TEST(LibraryCalls, ConvPostOpsMatchLoopsAndTemporariesArePredicted) {
  const int64_t N = 2, C = 8, H = 7, W = 6, OC = 16, K = 3;
  std::vector<float> x = randomVector(N * C * H * W, 11),
                     w = randomVector(OC * C * K * K, 12),
                     bias = randomVector(OC, 13),
                     res = randomVector(N * OC * H * W, 14), y(N * OC * H * W);
  auto dx = desc(x.data(), {N, C, H, W});
  auto dw_ = desc(w.data(), {OC, C, K, K});
  auto dy = desc(y.data(), {N, OC, H, W});
  auto db = desc(bias.data(), {OC});
  auto dr = desc(res.data(), {N, OC, H, W});
  LibraryCalls lib(512, /*numThreads=*/2);
  CountingAllocator alloc;
  std::string error;
  std::vector<int64_t> attrs = {1, 0, 1, 1, 1, 1, 1, 1, 1, 1, /*flags=*/7};
  void *ops[5] = {dx.data(), dw_.data(), dy.data(), db.data(), dr.data()};
  int32_t ranks[5] = {4, 4, 4, 1, 4};
  int64_t predicted = -1;
  ASSERT_EQ(lib.temporaryBytes(DISC_LIB_CONV, 5, ops, ranks, 11, attrs.data(),
                               &predicted, error),
            0)
      << error;
  ASSERT_EQ(lib.call(DISC_LIB_CONV, 5, ops, ranks, 11, attrs.data(),
                     alloc.hooks(), error),
            0)
      << error;
  EXPECT_EQ(alloc.peak, predicted);
  EXPECT_EQ(lib.numCreated(), 1);
  std::vector<float> ref = convRef(x, w, bias, res, N, C, H, W, OC, true);
  for (size_t at = 0; at < y.size(); ++at)
    ASSERT_NEAR(y[at], ref[at], 1e-4) << "at " << at;
}

// Constant weights (attribute 1) read by a Conv at two input shapes: two
// primitives, one copy of the weights in their layout, shared; other
// weights get their own. Against loops at both shapes.
TEST(LibraryCalls, ConvShapesShareConstantWeights) {
  const int64_t C = 8, OC = 16;
  std::vector<float> w1 = randomVector(OC * C * 9, 21),
                     w2 = randomVector(OC * C * 9, 22),
                     bias = randomVector(OC, 23);
  LibraryCalls lib(512, /*numThreads=*/1);
  CountingAllocator alloc;
  std::string error;
  auto check = [&](std::vector<float> &w, int64_t N, int64_t H, int64_t W) {
    SCOPED_TRACE(std::to_string(N) + "x" + std::to_string(H) + "x" +
                 std::to_string(W));
    std::vector<float> x = randomVector(N * C * H * W, 24),
                       res = randomVector(N * OC * H * W, 25),
                       y(N * OC * H * W, NAN);
    auto dx = desc(x.data(), {N, C, H, W});
    auto dw_ = desc(w.data(), {OC, C, 3, 3});
    auto dy = desc(y.data(), {N, OC, H, W});
    auto db = desc(bias.data(), {OC});
    auto dr = desc(res.data(), {N, OC, H, W});
    std::vector<int64_t> attrs = {1, /*constWeights=*/1, 1, 1, 1, 1, 1, 1, 1,
                                  1, /*flags=*/7};
    void *ops[5] = {dx.data(), dw_.data(), dy.data(), db.data(), dr.data()};
    int32_t ranks[5] = {4, 4, 4, 1, 4};
    ASSERT_EQ(lib.call(DISC_LIB_CONV, 5, ops, ranks, 11, attrs.data(),
                       alloc.hooks(), error),
              0)
        << error;
    std::vector<float> ref = convRef(x, w, bias, res, N, C, H, W, OC, true);
    for (size_t at = 0; at < y.size(); ++at)
      ASSERT_NEAR(y[at], ref[at], 1e-4) << "at " << at;
  };
  check(w1, 1, 7, 6);
  EXPECT_EQ(lib.counts().packedWeights, 1);
  check(w1, 2, 9, 5);
  check(w1, 1, 7, 6);
  EXPECT_EQ(lib.numCreated(), 2);
  EXPECT_EQ(lib.counts().packedWeights, 1);
  check(w2, 2, 9, 5);
  EXPECT_EQ(lib.counts().packedWeights, 2);
  EXPECT_EQ(alloc.live, 0); // the packed weights are the module's
}

// 3x3 stride-1 Convs with 32 -> 64 channels run as F(2x2, 3x3) Winograd
// convolutions: on one thread a batch of 2 or 3 runs image by image, on
// two threads a batch of 2 at once. Bias, residual and Relu as post-ops,
// NCHW and NHWC operands, constant weights packed once per layout.
// Against direct loops (error at most 2e-6 of the output's largest
// magnitude; oneDNN's direct kernel: about 1.5e-6), with the temporaries
// (the nChw16c input and output and the scratchpad) predicted exactly.
TEST(LibraryCalls, WinogradConvMatchesLoops) {
  if (dnnl::get_effective_cpu_isa() < dnnl::cpu_isa::avx512_core)
    GTEST_SKIP() << "oneDNN's F(2x2, 3x3) Winograd kernel needs AVX-512";
  if (const char *env = std::getenv("DISC_CONV_WINOGRAD");
      env && std::string(env) == "0")
    GTEST_SKIP() << "DISC_CONV_WINOGRAD=0";
  const int64_t C = 32, OC = 64;
  std::vector<float> w = randomVector(OC * C * 9, 81),
                     bias = randomVector(OC, 82);
  LibraryCalls lib(512, /*numThreads=*/1);
  CountingAllocator alloc;
  std::string error;
  auto toNhwc = [](const std::vector<float> &v, int64_t N, int64_t C,
                   int64_t HW) {
    std::vector<float> t(v.size());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t p = 0; p < HW; ++p)
          t[(n * HW + p) * C + c] = v[(n * C + c) * HW + p];
    return t;
  };
  auto check = [&](int64_t N, int64_t H, int64_t W, bool nhwc,
                   LibraryCalls &calls) {
    SCOPED_TRACE(std::to_string(N) + "x" + std::to_string(H) + "x" +
                 std::to_string(W) + (nhwc ? " NHWC" : " NCHW"));
    std::vector<float> x = randomVector(N * C * H * W, 83),
                       res = randomVector(N * OC * H * W, 84),
                       y(N * OC * H * W, NAN);
    std::vector<float> xIn = nhwc ? toNhwc(x, N, C, H * W) : x,
                       resIn = nhwc ? toNhwc(res, N, OC, H * W) : res;
    auto dx = desc(xIn.data(), {N, C, H, W});
    auto dw_ = desc(w.data(), {OC, C, 3, 3});
    auto dy = desc(y.data(), {N, OC, H, W});
    auto db = desc(bias.data(), {OC});
    auto dr = desc(resIn.data(), {N, OC, H, W});
    int64_t bits = nhwc ? 64 | 128 | 256 : 0;
    std::vector<int64_t> attrs = {1, /*constWeights=*/1, 1, 1, 1, 1, 1, 1, 1,
                                  1, /*flags=*/7 | bits};
    void *ops[5] = {dx.data(), dw_.data(), dy.data(), db.data(), dr.data()};
    int32_t ranks[5] = {4, 4, 4, 1, 4};
    int64_t predicted = -1;
    ASSERT_EQ(calls.temporaryBytes(DISC_LIB_CONV, 5, ops, ranks, 11,
                                   attrs.data(), &predicted, error),
              0)
        << error;
    alloc.peak = 0;
    ASSERT_EQ(calls.call(DISC_LIB_CONV, 5, ops, ranks, 11, attrs.data(),
                         alloc.hooks(), error),
              0)
        << error;
    EXPECT_EQ(alloc.peak, predicted);
    EXPECT_GT(predicted, 0) << "the nChw16c input and output";
    EXPECT_EQ(alloc.live, 0);
    std::vector<float> ref = convRef(x, w, bias, res, N, C, H, W, OC, true);
    if (nhwc)
      ref = toNhwc(ref, N, OC, H * W);
    float scale = 0;
    for (float r : ref)
      scale = std::max(scale, std::fabs(r));
    for (size_t at = 0; at < y.size(); ++at)
      ASSERT_NEAR(y[at], ref[at], 2e-6f * scale) << "at " << at;
  };
  check(1, 12, 13, false, lib);
  EXPECT_EQ(lib.counts().winograd, 1);
  check(1, 12, 13, true, lib);
  check(2, 14, 12, false, lib);
  check(3, 12, 16, true, lib);
  EXPECT_EQ(lib.counts().winograd, 4);
  EXPECT_EQ(lib.numCreated(), 4);
  LibraryCalls lib2(512, /*numThreads=*/2);
  check(2, 14, 12, true, lib2);
  check(3, 12, 16, false, lib2);
  EXPECT_EQ(lib2.counts().winograd, 2);
  // A training step's library (winograd = false) keeps the direct kernels.
  LibraryCalls direct(512, /*numThreads=*/1, /*winograd=*/false);
  check(2, 14, 12, false, direct);
  EXPECT_EQ(direct.counts().winograd, 0);
  // 24 input channels, which nChw16c pads to 32, and an odd output, 2
  // images in turn: each image's view of the padded copies.
  {
    const int64_t C24 = 24, N = 2, H = 9, W = 11;
    std::vector<float> w24 = randomVector(OC * C24 * 9, 88),
                       x24 = randomVector(N * C24 * H * W, 89),
                       zero(N * OC * H * W, 0.0f), y24(N * OC * H * W, NAN);
    auto dx24 = desc(x24.data(), {N, C24, H, W});
    auto dw24 = desc(w24.data(), {OC, C24, 3, 3});
    auto dy24 = desc(y24.data(), {N, OC, H, W});
    auto db = desc(bias.data(), {OC});
    std::vector<int64_t> attrs = {1, /*constWeights=*/1, 1, 1, 1, 1, 1, 1, 1,
                                  1, /*flags=*/1};
    void *ops[4] = {dx24.data(), dw24.data(), dy24.data(), db.data()};
    int32_t ranks[4] = {4, 4, 4, 1};
    ASSERT_EQ(lib.call(DISC_LIB_CONV, 4, ops, ranks, 11, attrs.data(),
                       alloc.hooks(), error),
              0)
        << error;
    EXPECT_EQ(lib.counts().winograd, 5);
    std::vector<float> ref =
        convRef(x24, w24, bias, zero, N, C24, H, W, OC, false);
    float scale = 0;
    for (float r : ref)
      scale = std::max(scale, std::fabs(r));
    for (size_t at = 0; at < y24.size(); ++at)
      ASSERT_NEAR(y24[at], ref[at], 2e-6f * scale) << "at " << at;
  }
  // Weights oneDNN cannot reorder into the Winograd layout (an OHWI
  // buffer read as OIHW through its strides) stay direct, and right.
  {
    const int64_t H = 10, W = 9;
    std::vector<float> ohwi(OC * 9 * C);
    for (int64_t o = 0; o < OC; ++o)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t k = 0; k < 9; ++k)
          ohwi[(o * 9 + k) * C + c] = w[(o * C + c) * 9 + k];
    std::vector<float> xv = randomVector(C * H * W, 91), zero(OC * H * W, 0.0f),
                       yv(OC * H * W, NAN);
    auto dxv = desc(xv.data(), {1, C, H, W});
    auto dwv = desc(ohwi.data(), {OC, C, 3, 3}, {9 * C, 1, 3 * C, C});
    auto dyv = desc(yv.data(), {1, OC, H, W});
    ASSERT_EQ(run(lib, alloc, DISC_LIB_CONV, dxv, dwv, dyv, 4,
                  {1, /*constWeights=*/1, 1, 1, 1, 1, 1, 1, 1, 1}, error),
              0)
        << error;
    EXPECT_EQ(lib.counts().winograd, 5);
    std::vector<float> ref = convRef(xv, w, std::vector<float>(OC, 0.0f), zero,
                                     1, C, H, W, OC, false);
    for (size_t at = 0; at < yv.size(); ++at)
      ASSERT_NEAR(yv[at], ref[at], 1e-4f) << "at " << at;
  }
  // A 3x3 Conv of 8 input channels (the transforms would dominate), a
  // strided one and one of weights that are not constant stay direct.
  std::vector<float> w8 = randomVector(OC * 8 * 9, 85),
                     x8 = randomVector(8 * 100, 86), y8(OC * 100),
                     y10(OC * 100);
  auto dx8 = desc(x8.data(), {1, 8, 10, 10});
  auto dw8 = desc(w8.data(), {OC, 8, 3, 3});
  auto dy8 = desc(y8.data(), {1, OC, 10, 10});
  ASSERT_EQ(run(lib, alloc, DISC_LIB_CONV, dx8, dw8, dy8, 4,
                {1, 0, 1, 1, 1, 1, 1, 1, 1, 1}, error),
            0)
      << error;
  std::vector<float> x32 = randomVector(C * 400, 87);
  auto dx32 = desc(x32.data(), {1, C, 20, 20});
  auto dw32 = desc(w.data(), {OC, C, 3, 3});
  auto dy10 = desc(y10.data(), {1, OC, 10, 10});
  ASSERT_EQ(run(lib, alloc, DISC_LIB_CONV, dx32, dw32, dy10, 4,
                {1, 0, 2, 2, 1, 1, 1, 1, 1, 1}, error),
            0)
      << error;
  std::vector<float> x10 = randomVector(C * 100, 92), yc(OC * 100);
  auto dx10 = desc(x10.data(), {1, C, 10, 10});
  auto dyc = desc(yc.data(), {1, OC, 10, 10});
  ASSERT_EQ(run(lib, alloc, DISC_LIB_CONV, dx10, dw32, dyc, 4,
                {1, /*constWeights=*/0, 1, 1, 1, 1, 1, 1, 1, 1}, error),
            0)
      << error;
  EXPECT_EQ(lib.counts().winograd, 5);
  EXPECT_EQ(lib.numCreated(), 9);
}

// A call seen before runs its cached entry on the new call's buffers: every
// operand (input, weights, bias, residual, output at an offset) moves
// between calls of the same shapes, constant weights at a new address are
// reordered again, and other attributes (no Relu) or other strides make
// another entry.
TEST(LibraryCalls, CachedEntryRunsOnEachCallsBuffers) {
  const int64_t N = 1, H = 6, W = 5;
  int64_t C = 8, OC = 16;
  LibraryCalls lib(512, /*numThreads=*/1);
  CountingAllocator alloc;
  // Temporaries hold NaN when handed out: a padded layout's padding that
  // is not zeroed again on each call would show in the results.
  alloc.poison = true;
  std::string error;
  // Constant weights are the model's: they keep their address and data, so
  // every round's weights stay allocated (the entry keeps them reordered
  // by address).
  std::vector<std::vector<float>> weights;
  auto check = [&](int round, int64_t constW, int64_t flags, int64_t pad) {
    SCOPED_TRACE("round " + std::to_string(round));
    unsigned seed = 100 + 10 * round;
    weights.push_back(randomVector(OC * C * 9, seed + 1));
    const std::vector<float> &w = weights.back();
    std::vector<float> x = randomVector(N * C * H * W, seed),
                       bias = randomVector(OC, seed + 2),
                       res = randomVector(N * OC * H * W, seed + 3),
                       y(3 + N * OC * H * W, -7.0f);
    // The output 3 elements into its buffer (a descriptor offset); `pad`
    // widens the input's rows (other strides).
    std::vector<float> xp(N * C * H * (W + pad));
    for (int64_t r = 0; r < N * C * H; ++r)
      for (int64_t j = 0; j < W; ++j)
        xp[r * (W + pad) + j] = x[r * W + j];
    auto dx = desc(xp.data(), {N, C, H, W},
                   {C * H * (W + pad), H * (W + pad), W + pad, 1});
    auto dw_ = desc(const_cast<float *>(w.data()), {OC, C, 3, 3});
    auto dy = desc(y.data(), {N, OC, H, W});
    dy[2] = 3;
    auto db = desc(bias.data(), {OC});
    auto dr = desc(res.data(), {N, OC, H, W});
    std::vector<int64_t> attrs = {1, constW, 1, 1, 1, 1, 1, 1, 1, 1, flags};
    void *ops[5] = {dx.data(), dw_.data(), dy.data(), db.data(), dr.data()};
    int32_t ranks[5] = {4, 4, 4, 1, 4};
    ASSERT_EQ(lib.call(DISC_LIB_CONV, 5, ops, ranks, 11, attrs.data(),
                       alloc.hooks(), error),
              0)
        << error;
    std::vector<float> ref =
        convRef(x, w, bias, res, N, C, H, W, OC, (flags & 4) != 0);
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(y[k], -7.0f); // before the offset: untouched
    for (size_t k = 0; k < ref.size(); ++k)
      ASSERT_NEAR(y[3 + k], ref[k], 1e-4) << "at " << k;
    EXPECT_EQ(alloc.live, 0);
  };
  for (int round = 0; round < 3; ++round)
    check(round, /*constW=*/0, /*flags=*/7, /*pad=*/0);
  EXPECT_EQ(lib.numCreated(), 1);
  for (int round = 3; round < 5; ++round)
    check(round, /*constW=*/1, /*flags=*/7, /*pad=*/0);
  EXPECT_EQ(lib.numCreated(), 2);
  check(5, /*constW=*/0, /*flags=*/3, /*pad=*/0);
  EXPECT_EQ(lib.numCreated(), 3);
  check(6, /*constW=*/0, /*flags=*/7, /*pad=*/2);
  check(7, /*constW=*/0, /*flags=*/7, /*pad=*/2);
  EXPECT_EQ(lib.numCreated(), 4);
  // Channels that are not a multiple of any block (padded layouts where
  // oneDNN picks blocked ones).
  C = 3, OC = 5;
  for (int round = 8; round < 11; ++round)
    check(round, /*constW=*/round % 2, /*flags=*/7, /*pad=*/0);
  EXPECT_EQ(lib.numCreated(), 6);
  C = 8, OC = 16;
  // The prediction of a cached call's temporaries needs no buffers.
  std::vector<int64_t> dx = desc(nullptr, {N, C, H, W}),
                       dw_ = desc(nullptr, {OC, C, 3, 3}),
                       dy = desc(nullptr, {N, OC, H, W}),
                       db = desc(nullptr, {OC}),
                       dr = desc(nullptr, {N, OC, H, W});
  void *ops[5] = {dx.data(), dw_.data(), dy.data(), db.data(), dr.data()};
  int32_t ranks[5] = {4, 4, 4, 1, 4};
  std::vector<int64_t> attrs = {1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 7};
  int64_t bytes = -1;
  ASSERT_EQ(lib.temporaryBytes(DISC_LIB_CONV, 5, ops, ranks, 11, attrs.data(),
                               &bytes, error),
            0)
      << error;
  EXPECT_GE(bytes, 0);
  EXPECT_EQ(lib.numCreated(), 6);
}

// MatMul with bias and Relu (flags 5): C = relu(A x B + bias).
TEST(LibraryCalls, MatMulBiasReluMatchesLoops) {
  const int64_t M = 5, K = 9, N = 7;
  std::vector<float> a = randomVector(M * K, 21), b = randomVector(K * N, 22),
                     bias = randomVector(N, 23), c(M * N);
  auto da = desc(a.data(), {1, M, K});
  auto db = desc(b.data(), {1, K, N});
  auto dc = desc(c.data(), {1, M, N});
  auto dbias = desc(bias.data(), {N});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  std::vector<int64_t> attrs = {0, 0, 5};
  void *ops[4] = {da.data(), db.data(), dc.data(), dbias.data()};
  int32_t ranks[4] = {3, 3, 3, 1};
  ASSERT_EQ(lib.call(DISC_LIB_MATMUL, 4, ops, ranks, 3, attrs.data(),
                     alloc.hooks(), error),
            0)
      << error;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = bias[j];
      for (int64_t k = 0; k < K; ++k)
        ref += a[i * K + k] * b[k * N + j];
      EXPECT_NEAR(c[i * N + j], ref > 0 ? ref : 0, 1e-4);
    }
  // A bias of the wrong length is status 1 naming both sizes.
  auto shortBias = desc(bias.data(), {N - 1});
  ops[3] = shortBias.data();
  EXPECT_EQ(lib.call(DISC_LIB_MATMUL, 4, ops, ranks, 3, attrs.data(),
                     alloc.hooks(), error),
            1);
  EXPECT_NE(error.find("bias of 6 elements for 7 channels"), std::string::npos)
      << error;
}

// MatMul by constant weights (flags 4096, with a bias: 4097): the weights
// are packed once per address and kept; a second weights buffer at another
// address gets its own packing, and transposed weights (transB) and a
// residual post-op take the same path. Against loops, on sizes the packed
// layout does not divide (N = 70, K = 37).
TEST(LibraryCalls, MatMulConstantWeightsArePackedOnce) {
  const int64_t M = 13, K = 37, N = 70;
  std::vector<float> a = randomVector(M * K, 51), b1 = randomVector(K * N, 52),
                     b2 = randomVector(K * N, 53), bias = randomVector(N, 54),
                     res = randomVector(M * N, 55), c(M * N);
  auto da = desc(a.data(), {1, M, K});
  auto dc = desc(c.data(), {1, M, N});
  auto dbias = desc(bias.data(), {N});
  auto dres = desc(res.data(), {1, M, N});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  auto check = [&](std::vector<float> &b, bool transB, bool withRes) {
    auto db = transB ? desc(b.data(), {1, N, K}) : desc(b.data(), {1, K, N});
    std::vector<int64_t> attrs = {0, transB, 4096 | 1 | (withRes ? 2 : 0)};
    void *ops[5] = {da.data(), db.data(), dc.data(), dbias.data(), dres.data()};
    int32_t ranks[5] = {3, 3, 3, 1, 3};
    std::fill(c.begin(), c.end(), NAN);
    ASSERT_EQ(lib.call(DISC_LIB_MATMUL, withRes ? 5 : 4, ops, ranks, 3,
                       attrs.data(), alloc.hooks(), error),
              0)
        << error;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double ref = bias[j] + (withRes ? res[i * N + j] : 0.0);
        for (int64_t k = 0; k < K; ++k)
          ref += a[i * K + k] * (transB ? b[j * K + k] : b[k * N + j]);
        ASSERT_NEAR(c[i * N + j], ref, 1e-4) << i << ", " << j;
      }
  };
  for (int round = 0; round < 2; ++round) {
    check(b1, false, false);
    check(b2, false, false);
    check(b1, true, false);
    check(b2, false, true);
  }
  // The packed weights are the cache's, not run temporaries.
  EXPECT_EQ(alloc.live, 0);
}

// Pooling (DISC_LIB_POOL) against loops: max, average not counting the
// padding (both in ceil_mode, whose last windows overhang the input) and
// average counting it, with pads, on NCHW, on NHWC input and output (flags
// 192), and mixed (flags 128: NHWC input, NCHW output); wrong sizes are
// status 1.
TEST(LibraryCalls, PoolingMatchesLoops) {
  const int64_t N = 2, C = 5, H = 9, W = 8;
  std::vector<float> x = randomVector(N * C * H * W, 61);
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  struct Case {
    int64_t kind, k, s, pad;
    bool ceil;
    int64_t flags;
  };
  for (Case c : {Case{0, 3, 2, 1, true, 0}, Case{2, 3, 2, 0, true, 0},
                 Case{1, 3, 1, 1, false, 0}, Case{0, 2, 2, 0, true, 192},
                 Case{2, 3, 2, 1, true, 128}, Case{1, 3, 2, 1, false, 64}}) {
    auto out = [&](int64_t d) {
      int64_t span = d + 2 * c.pad - c.k;
      return (c.ceil ? (span + c.s - 1) / c.s : span / c.s) + 1;
    };
    int64_t OH = out(H), OW = out(W);
    std::vector<float> y(N * C * OH * OW, NAN);
    // An NHWC operand: the same buffer size, channels last.
    std::vector<float> xin = x;
    if (c.flags & 128)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t ch = 0; ch < C; ++ch)
          for (int64_t i = 0; i < H * W; ++i)
            xin[(n * H * W + i) * C + ch] = x[(n * C + ch) * H * W + i];
    auto dx = desc(xin.data(), {N, C, H, W});
    auto dy = desc(y.data(), {N, C, OH, OW});
    std::vector<int64_t> attrs = {c.kind, c.k,   c.k,   c.s,
                                  c.s,    c.pad, c.pad, c.flags};
    void *ops[2] = {dx.data(), dy.data()};
    int32_t ranks[2] = {4, 4};
    ASSERT_EQ(lib.call(DISC_LIB_POOL, 2, ops, ranks, 8, attrs.data(),
                       alloc.hooks(), error),
              0)
        << error;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t i = 0; i < OH; ++i)
          for (int64_t j = 0; j < OW; ++j) {
            double acc = c.kind == 0 ? -INFINITY : 0.0;
            int64_t count = 0, padded = 0;
            for (int64_t u = 0; u < c.k; ++u)
              for (int64_t v = 0; v < c.k; ++v) {
                int64_t hi = i * c.s - c.pad + u, wi = j * c.s - c.pad + v;
                // Inside the padded input (counted by kind 1).
                if (hi < H + c.pad && wi < W + c.pad)
                  ++padded;
                if (hi < 0 || hi >= H || wi < 0 || wi >= W)
                  continue;
                float e = x[((n * C + ch) * H + hi) * W + wi];
                acc = c.kind == 0 ? std::max<double>(acc, e) : acc + e;
                ++count;
              }
            double ref = c.kind == 0   ? acc
                         : c.kind == 1 ? acc / padded
                                       : acc / count;
            int64_t at = (c.flags & 64) ? ((n * OH + i) * OW + j) * C + ch
                                        : ((n * C + ch) * OH + i) * OW + j;
            ASSERT_NEAR(y[at], ref, 1e-5)
                << "kind " << c.kind << " flags " << c.flags << " at " << n
                << "," << ch << "," << i << "," << j;
          }
  }
  EXPECT_EQ(alloc.live, 0);
  // An output size the window, strides and pads do not give: status 1.
  std::vector<float> y(N * C * 3 * 3);
  auto dx = desc(x.data(), {N, C, H, W});
  auto dy = desc(y.data(), {N, C, 3, 3});
  std::vector<int64_t> attrs = {0, 3, 3, 1, 1, 0, 0, 0};
  void *ops[2] = {dx.data(), dy.data()};
  int32_t ranks[2] = {4, 4};
  EXPECT_EQ(lib.call(DISC_LIB_POOL, 2, ops, ranks, 8, attrs.data(),
                     alloc.hooks(), error),
            1);
  EXPECT_NE(error.find("do not match"), std::string::npos) << error;
}

// The clip bounds of the post-op attributes: f32 bit patterns.
static int64_t f32Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Depthwise Conv + bias + Clip(0, 6) (ReLU6, flags 9 and the two bounds),
// against direct loops; relu together with clip is refused.
TEST(LibraryCalls, DepthwiseConvBiasClipMatchesLoops) {
  const int64_t N = 2, C = 16, H = 9, W = 7, K = 3;
  std::vector<float> x = randomVector(N * C * H * W, 31),
                     w = randomVector(C * K * K, 32),
                     bias = randomVector(C, 33), y(N * C * H * W);
  for (float &v : x)
    v *= 8.0f; // so that both bounds clip
  auto dx = desc(x.data(), {N, C, H, W});
  auto dw_ = desc(w.data(), {C, 1, K, K});
  auto dy = desc(y.data(), {N, C, H, W});
  auto db = desc(bias.data(), {C});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  std::vector<int64_t> attrs = {C,
                                1,
                                1,
                                1,
                                1,
                                1,
                                1,
                                1,
                                1,
                                1,
                                /*flags=*/9,
                                f32Bits(0.0f),
                                f32Bits(6.0f)};
  void *ops[4] = {dx.data(), dw_.data(), dy.data(), db.data()};
  int32_t ranks[4] = {4, 4, 4, 1};
  ASSERT_EQ(lib.call(DISC_LIB_CONV, 4, ops, ranks, 13, attrs.data(),
                     alloc.hooks(), error),
            0)
      << error;
  int clippedLo = 0, clippedHi = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j) {
          double ref = bias[c];
          for (int64_t u = 0; u < K; ++u)
            for (int64_t v = 0; v < K; ++v) {
              int64_t hi = i - 1 + u, wi = j - 1 + v;
              if (hi < 0 || hi >= H || wi < 0 || wi >= W)
                continue;
              ref +=
                  x[((n * C + c) * H + hi) * W + wi] * w[(c * K + u) * K + v];
            }
          clippedLo += ref < 0;
          clippedHi += ref > 6;
          ref = ref < 0 ? 0 : ref > 6 ? 6 : ref;
          ASSERT_NEAR(y[((n * C + c) * H + i) * W + j], ref, 1e-4);
        }
  EXPECT_GT(clippedLo, 0);
  EXPECT_GT(clippedHi, 0);
  EXPECT_EQ(alloc.live, 0);
  // Relu and clip together, or a clip without its bounds: status 1.
  attrs[10] = 13;
  EXPECT_EQ(lib.call(DISC_LIB_CONV, 4, ops, ranks, 13, attrs.data(),
                     alloc.hooks(), error),
            1);
  EXPECT_NE(error.find("bad post-op flags 13"), std::string::npos) << error;
  attrs[10] = 9;
  EXPECT_EQ(lib.call(DISC_LIB_CONV, 4, ops, ranks, 11, attrs.data(),
                     alloc.hooks(), error),
            1);
  EXPECT_NE(error.find("take 2 more attributes"), std::string::npos) << error;
}

// MatMul + bias + Sigmoid (flags 17), + Tanh (33), + SiLU (1 | 512),
// + HardSwish (1 | 1024), + GELU (1 | 2048); two activations are refused.
TEST(LibraryCalls, MatMulBiasActivationsMatchLoops) {
  const int64_t M = 6, K = 11, N = 5;
  std::vector<float> a = randomVector(M * K, 41), b = randomVector(K * N, 42),
                     bias = randomVector(N, 43), c(M * N);
  auto da = desc(a.data(), {1, M, K});
  auto db = desc(b.data(), {1, K, N});
  auto dc = desc(c.data(), {1, M, N});
  auto dbias = desc(bias.data(), {N});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  for (float &v : a)
    v *= 4.0f; // so that HardSwish's both bounds are reached
  for (int64_t flags : {17, 33, 513, 1025, 2049}) {
    std::vector<int64_t> attrs = {0, 0, flags};
    void *ops[4] = {da.data(), db.data(), dc.data(), dbias.data()};
    int32_t ranks[4] = {3, 3, 3, 1};
    ASSERT_EQ(lib.call(DISC_LIB_MATMUL, 4, ops, ranks, 3, attrs.data(),
                       alloc.hooks(), error),
              0)
        << error;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double ref = bias[j];
        for (int64_t k = 0; k < K; ++k)
          ref += a[i * K + k] * b[k * N + j];
        if (flags == 17)
          ref = 1.0 / (1.0 + std::exp(-ref));
        else if (flags == 33)
          ref = std::tanh(ref);
        else if (flags == 513)
          ref = ref / (1.0 + std::exp(-ref));
        else if (flags == 1025)
          ref = ref * std::min(std::max(ref / 6.0 + 0.5, 0.0), 1.0);
        else
          ref = 0.5 * ref * (1.0 + std::erf(ref / std::sqrt(2.0)));
        EXPECT_NEAR(c[i * N + j], ref, 1e-4 * std::max(1.0, std::fabs(ref)))
            << "flags " << flags;
      }
  }
  std::vector<int64_t> attrs = {0, 0, 1 | 512 | 1024};
  void *ops[4] = {da.data(), db.data(), dc.data(), dbias.data()};
  int32_t ranks[4] = {3, 3, 3, 1};
  EXPECT_EQ(lib.call(DISC_LIB_MATMUL, 4, ops, ranks, 3, attrs.data(),
                     alloc.hooks(), error),
            1);
  EXPECT_NE(error.find("bad post-op flags 1537"), std::string::npos) << error;
}

// Operands that do not fit the call are status 1 with shapes in the text;
// a refused temporary is status 2; neither aborts.
TEST(LibraryCalls, MismatchedShapesAndRefusedScratchAreErrors) {
  std::vector<float> a(12), b(12), c(16);
  auto da = desc(a.data(), {1, 4, 3});
  auto db = desc(b.data(), {1, 4, 3}); // K mismatch: 3 vs 4
  auto dc = desc(c.data(), {1, 4, 3});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  EXPECT_EQ(run(lib, alloc, DISC_LIB_MATMUL, da, db, dc, 3, {0, 0}, error), 1);
  EXPECT_EQ(error, "MatMul library call: shapes [1, 4, 3] x [1, 4, 3] -> "
                   "[1, 4, 3] do not match");

  std::vector<float> x(2 * 4 * 5 * 5), w(8 * 2 * 3 * 3), y(2 * 8 * 3 * 3);
  auto dx = desc(x.data(), {2, 4, 5, 5});
  auto dw = desc(w.data(), {8, 2, 3, 3});
  auto dy = desc(y.data(), {2, 8, 3, 3});
  std::vector<int64_t> bad = {3, 0, 1, 1, 1, 1, 0, 0, 0, 0}; // C != G * Cg
  EXPECT_EQ(run(lib, alloc, DISC_LIB_CONV, dx, dw, dy, 4, bad, error), 1);
  EXPECT_NE(error.find("Conv library call (group 3)"), std::string::npos)
      << error;
  // Blocked layouts need temporaries; with none allowed the call fails.
  alloc.limit = 0;
  std::vector<int64_t> ok = {2, 0, 1, 1, 1, 1, 0, 0, 0, 0};
  int32_t st = run(lib, alloc, DISC_LIB_CONV, dx, dw, dy, 4, ok, error);
  if (st != 0) {
    EXPECT_EQ(st, 2);
    EXPECT_NE(error.find("out of memory"), std::string::npos) << error;
  }
  EXPECT_EQ(alloc.live, 0);
}

TEST(LibraryCalls, CacheIsBounded) {
  LibraryCalls lib(/*maxPrimitives=*/2);
  CountingAllocator alloc;
  std::string error;
  for (int64_t m = 1; m <= 5; ++m) {
    std::vector<float> a(m * 2, 1.0f), b(2 * 3, 1.0f), c(m * 3);
    auto da = desc(a.data(), {1, m, 2});
    auto db = desc(b.data(), {1, 2, 3});
    auto dc = desc(c.data(), {1, m, 3});
    ASSERT_EQ(run(lib, alloc, DISC_LIB_MATMUL, da, db, dc, 3, {0, 0}, error),
              0);
    EXPECT_EQ(c[0], 2.0f);
  }
  EXPECT_EQ(lib.numCreated(), 5);
  EXPECT_EQ(lib.numCached(), 2);
}

// Through a session: the call's error comes back as the run's status and
// message, the output already allocated is released, the session stays
// usable.
TEST(LibraryCalls, SessionReportsLibraryCallErrors) {
  std::shared_ptr<const Executable> exe;
  ASSERT_TRUE(Executable::load(DISC_FIXTURE_LIBCALL, &exe).isOk());
  Session session(exe);
  std::vector<Tensor> out;
  Status s = session.run({Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                          Tensor::fromVector<float>({2, 2}, {1, 0, 0, 1})},
                         &out);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "MatMul library call: shapes [1, 2, 3] x [1, 2, 2] "
                         "-> [1, 2, 2] do not match");
  EXPECT_EQ(session.stats().current_bytes, 0);
  ASSERT_TRUE(session
                  .run({Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                        Tensor::fromVector<float>({3, 1}, {1, 1, 1})},
                       &out)
                  .isOk());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data<float>()[0], 6.0f);
  EXPECT_EQ(out[0].data<float>()[1], 15.0f);
}

// Two chained Conv calls with the NHWC bits (docs/runtime-abi.md): conv1
// (bias, Relu) writes its output channels-last (flags 5 | 64); conv2 reads
// it as its input and as its residual (flags 2 | 128 | 256) and writes
// NCHW. The buffer between them holds NHWC data (checked against direct
// loops), the final output equals the same chain without the bits, and
// `temporaryBytes` predicts each call's peak exactly.
TEST(LibraryCalls, NhwcChainMatchesNchwChainAndLoops) {
  const int64_t N = 2, C = 5, H = 7, W = 6, OC = 16, K = 3;
  std::vector<float> x = randomVector(N * C * H * W, 61),
                     w1 = randomVector(OC * C * K * K, 62),
                     b1 = randomVector(OC, 63), w2 = randomVector(OC * OC, 64);
  std::vector<float> t(N * OC * H * W), y(N * OC * H * W), tRef(N * OC * H * W),
      yRef(N * OC * H * W);
  auto dx = desc(x.data(), {N, C, H, W});
  auto dw1 = desc(w1.data(), {OC, C, K, K});
  auto db1 = desc(b1.data(), {OC});
  auto dw2 = desc(w2.data(), {OC, OC, 1, 1});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  // conv1: 3x3 pad 1, bias + Relu; conv2: 1x1 + residual (its input).
  auto chain = [&](std::vector<float> &mid, std::vector<float> &out,
                   int64_t bits1, int64_t bits2) {
    auto dt = desc(mid.data(), {N, OC, H, W});
    auto dy = desc(out.data(), {N, OC, H, W});
    std::vector<int64_t> a1 = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 5 | bits1};
    void *ops1[4] = {dx.data(), dw1.data(), dt.data(), db1.data()};
    int32_t ranks1[4] = {4, 4, 4, 1};
    int64_t predicted = -1;
    ASSERT_EQ(lib.temporaryBytes(DISC_LIB_CONV, 4, ops1, ranks1, 11, a1.data(),
                                 &predicted, error),
              0)
        << error;
    alloc.peak = 0;
    ASSERT_EQ(lib.call(DISC_LIB_CONV, 4, ops1, ranks1, 11, a1.data(),
                       alloc.hooks(), error),
              0)
        << error;
    EXPECT_EQ(alloc.peak, predicted) << "conv1, bits " << bits1;
    std::vector<int64_t> a2 = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2 | bits2};
    void *ops2[4] = {dt.data(), dw2.data(), dy.data(), dt.data()};
    int32_t ranks2[4] = {4, 4, 4, 4};
    ASSERT_EQ(lib.temporaryBytes(DISC_LIB_CONV, 4, ops2, ranks2, 11, a2.data(),
                                 &predicted, error),
              0)
        << error;
    alloc.peak = 0;
    ASSERT_EQ(lib.call(DISC_LIB_CONV, 4, ops2, ranks2, 11, a2.data(),
                       alloc.hooks(), error),
              0)
        << error;
    EXPECT_EQ(alloc.peak, predicted) << "conv2, bits " << bits2;
    EXPECT_EQ(alloc.live, 0);
  };
  chain(t, y, 64, 128 | 256);
  chain(tRef, yRef, 0, 0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < OC; ++o)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j) {
          double ref = b1[o];
          for (int64_t c = 0; c < C; ++c)
            for (int64_t u = 0; u < K; ++u)
              for (int64_t v = 0; v < K; ++v) {
                int64_t hi = i - 1 + u, wi = j - 1 + v;
                if (hi < 0 || hi >= H || wi < 0 || wi >= W)
                  continue;
                ref += x[((n * C + c) * H + hi) * W + wi] *
                       w1[((o * C + c) * K + u) * K + v];
              }
          ref = ref > 0 ? ref : 0;
          // Channels last: [N, H, W, OC].
          ASSERT_NEAR(t[((n * H + i) * W + j) * OC + o], ref, 1e-4)
              << "at " << n << "," << o << "," << i << "," << j;
          ASSERT_NEAR(tRef[((n * OC + o) * H + i) * W + j], ref, 1e-4);
        }
  for (size_t e = 0; e < y.size(); ++e)
    ASSERT_NEAR(y[e], yRef[e], 1e-4) << "at " << e;
  // And conv2's output against loops over the NCHW intermediate.
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < OC; ++o)
      for (int64_t p = 0; p < H * W; ++p) {
        double ref = tRef[(n * OC + o) * H * W + p];
        for (int64_t c = 0; c < OC; ++c)
          ref += tRef[(n * OC + c) * H * W + p] * w2[o * OC + c];
        ASSERT_NEAR(yRef[(n * OC + o) * H * W + p], ref, 1e-4);
      }
}

// The NHWC bits need dense buffers and a Conv: a strided output view, a
// residual bit without a residual, or bit 8 on a MatMul are status 1.
TEST(LibraryCalls, NhwcBitsAreChecked) {
  const int64_t N = 1, C = 4, H = 5, W = 5;
  std::vector<float> x = randomVector(N * C * H * W, 71),
                     w = randomVector(C * C, 72), y(N * C * H * (W + 1));
  auto dx = desc(x.data(), {N, C, H, W});
  auto dw = desc(w.data(), {C, C, 1, 1});
  // A view of the first W columns of [N, C, H, W + 1].
  auto dy =
      desc(y.data(), {N, C, H, W}, {C * H * (W + 1), H * (W + 1), W + 1, 1});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  std::vector<int64_t> attrs = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, /*flags=*/64};
  EXPECT_EQ(run(lib, alloc, DISC_LIB_CONV, dx, dw, dy, 4, attrs, error), 1);
  EXPECT_NE(error.find("the output is marked NHWC but its buffer is not "
                       "dense"),
            std::string::npos)
      << error;
  attrs.back() = 256;
  EXPECT_EQ(run(lib, alloc, DISC_LIB_CONV, dx, dw, dy, 4, attrs, error), 1);
  EXPECT_NE(error.find("bad post-op flags 256"), std::string::npos) << error;
  std::vector<float> a(12), b(12), c(9);
  auto da = desc(a.data(), {1, 3, 4});
  auto db = desc(b.data(), {1, 4, 3});
  auto dc = desc(c.data(), {1, 3, 3});
  EXPECT_EQ(run(lib, alloc, DISC_LIB_MATMUL, da, db, dc, 3, {0, 0, 256}, error),
            1);
  EXPECT_NE(error.find("bad post-op flags 256"), std::string::npos) << error;
  EXPECT_EQ(alloc.live, 0);
}

// An SGD step fused into the weight-gradient MatMul (docs/runtime-abi.md,
// MatMul bits 6 and 7): W - lr * X^T dY as the product scaled by -lr plus
// the residual W (flags 2 | 64), and accumulated into W's own buffer
// (flags 128 | 64, no residual operand), against loops in double. A scale
// with a bias, an accumulation with a residual, or a missing scale are
// status 1.
TEST(LibraryCalls, MatMulScaledResidualAndAccumulation) {
  const int64_t K = 37, M = 11, N = 6; // X: [K, M], dY: [K, N], W: [M, N]
  const float lr = 0.01f;
  std::vector<float> x = randomVector(K * M, 81), dy = randomVector(K * N, 82),
                     w = randomVector(M * N, 83), out(M * N, NAN);
  std::vector<double> ref(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double g = 0;
      for (int64_t k = 0; k < K; ++k)
        g += double(x[k * M + i]) * dy[k * N + j];
      ref[i * N + j] = w[i * N + j] - double(lr) * g;
    }
  auto dx = desc(x.data(), {1, K, M});
  auto ddy = desc(dy.data(), {1, K, N});
  auto dout = desc(out.data(), {1, M, N});
  auto dw = desc(w.data(), {1, M, N});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  // transA (X is [K, M]); flags; -lr.
  std::vector<int64_t> attrs = {1, 0, 2 | 64, f32Bits(-lr)};
  void *ops[4] = {dx.data(), ddy.data(), dout.data(), dw.data()};
  int32_t ranks[4] = {3, 3, 3, 3};
  ASSERT_EQ(lib.call(DISC_LIB_MATMUL, 4, ops, ranks, 4, attrs.data(),
                     alloc.hooks(), error),
            0)
      << error;
  for (int64_t i = 0; i < M * N; ++i)
    EXPECT_NEAR(out[i], ref[i], 1e-5) << i;
  // In place: W's buffer is the output and holds the addend.
  attrs[2] = 128 | 64;
  void *inPlace[3] = {dx.data(), ddy.data(), dw.data()};
  ASSERT_EQ(lib.call(DISC_LIB_MATMUL, 3, inPlace, ranks, 4, attrs.data(),
                     alloc.hooks(), error),
            0)
      << error;
  for (int64_t i = 0; i < M * N; ++i)
    EXPECT_NEAR(w[i], ref[i], 1e-5) << i;
  EXPECT_EQ(alloc.live, 0);
  // Refused combinations.
  for (int64_t flags : {1 | 64, 2 | 128}) {
    std::vector<int64_t> bad = {1, 0, flags, f32Bits(-lr)};
    EXPECT_EQ(lib.call(DISC_LIB_MATMUL, 4, ops, ranks, 4, bad.data(),
                       alloc.hooks(), error),
              1);
    EXPECT_NE(error.find("bad post-op flags " + std::to_string(flags)),
              std::string::npos)
        << error;
  }
  std::vector<int64_t> noScale = {1, 0, 128 | 64};
  EXPECT_EQ(lib.call(DISC_LIB_MATMUL, 3, inPlace, ranks, 3, noScale.data(),
                     alloc.hooks(), error),
            1);
  EXPECT_NE(error.find("take 1 more attributes"), std::string::npos) << error;
}

// Conv -> ConvTranspose through an NHWC buffer (conv flags 64, the
// ConvTranspose's flags word 128), and a ConvTranspose writing NHWC (64):
// the same values as the NCHW chain, and the predicted temporaries.
TEST(LibraryCalls, NhwcConvTransposeMatchesNchw) {
  const int64_t N = 1, C = 3, H = 5, W = 4, OC = 16, OC2 = 8;
  std::vector<float> x = randomVector(N * C * H * W, 81),
                     w1 = randomVector(OC * C, 82),
                     w2 = randomVector(OC * OC2 * 2 * 2, 83);
  const int64_t OH = 2 * H, OW = 2 * W;
  auto dx = desc(x.data(), {N, C, H, W});
  auto dw1 = desc(w1.data(), {OC, C, 1, 1});
  auto dw2 = desc(w2.data(), {OC, OC2, 2, 2}); // ONNX [C, OC/G, K...]
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  auto chain = [&](std::vector<float> &out, int64_t convBits,
                   int64_t deconvBits) {
    std::vector<float> t(N * OC * H * W);
    auto dt = desc(t.data(), {N, OC, H, W});
    auto dy = desc(out.data(), {N, OC2, OH, OW});
    std::vector<int64_t> a1 = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
    if (convBits)
      a1.push_back(convBits);
    ASSERT_EQ(run(lib, alloc, DISC_LIB_CONV, dx, dw1, dt, 4, a1, error), 0)
        << error;
    std::vector<int64_t> a2 = {1, 1, 2, 2, 1, 1, 0, 0, 0, 0};
    if (deconvBits)
      a2.push_back(deconvBits);
    void *ops[3] = {dt.data(), dw2.data(), dy.data()};
    int32_t ranks[3] = {4, 4, 4};
    int64_t predicted = -1;
    ASSERT_EQ(lib.temporaryBytes(DISC_LIB_CONV_TRANSPOSE, 3, ops, ranks,
                                 static_cast<int32_t>(a2.size()), a2.data(),
                                 &predicted, error),
              0)
        << error;
    alloc.peak = 0;
    ASSERT_EQ(
        run(lib, alloc, DISC_LIB_CONV_TRANSPOSE, dt, dw2, dy, 4, a2, error), 0)
        << error;
    EXPECT_EQ(alloc.peak, predicted) << "bits " << deconvBits;
    EXPECT_EQ(alloc.live, 0);
  };
  std::vector<float> ref(N * OC2 * OH * OW), y(ref.size()), yNhwc(ref.size());
  chain(ref, 0, 0);
  chain(y, 64, 128);
  chain(yNhwc, 64, 128 | 64);
  for (int64_t o = 0; o < OC2; ++o)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j) {
        // Stride 2, kernel 2: one input pixel per output pixel.
        double r = 0;
        for (int64_t c = 0; c < OC; ++c) {
          double t = 0;
          for (int64_t ci = 0; ci < C; ++ci)
            t += x[(ci * H + i / 2) * W + j / 2] * w1[c * C + ci];
          r += t * w2[((c * OC2 + o) * 2 + i % 2) * 2 + j % 2];
        }
        int64_t at = (o * OH + i) * OW + j;
        ASSERT_NEAR(ref[at], r, 1e-4) << "at " << o << "," << i << "," << j;
        ASSERT_NEAR(y[at], r, 1e-4) << "at " << o << "," << i << "," << j;
        ASSERT_NEAR(yNhwc[(i * OW + j) * OC2 + o], r, 1e-4)
            << "at " << o << "," << i << "," << j;
      }
  // Other bits on a ConvTranspose are status 1.
  std::vector<float> t(N * OC * H * W);
  auto dt = desc(t.data(), {N, OC, H, W});
  auto dy = desc(y.data(), {N, OC2, OH, OW});
  EXPECT_EQ(run(lib, alloc, DISC_LIB_CONV_TRANSPOSE, dt, dw2, dy, 4,
                {1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1}, error),
            1);
  EXPECT_NE(error.find("bad flags 1"), std::string::npos) << error;
}

// The filter gradient of a Conv (DISC_LIB_CONV_BACKWARD_FILTER, oneDNN's
// backward weights) against direct loops, strided and padded, 2 spatial
// dims; the temporaries it takes stay below the filter's size plus its
// operands' (no per-call copy larger than what it reads and writes).
TEST(LibraryCalls, ConvBackwardFilterMatchesLoops) {
  const int64_t N = 3, C = 5, OC = 7, H = 9, W = 8, KH = 3, KW = 2;
  const int64_t S = 2, P = 1;
  const int64_t OH = (H + 2 * P - KH) / S + 1, OW = (W + 2 * P - KW) / S + 1;
  std::vector<float> x = randomVector(N * C * H * W, 91),
                     g = randomVector(N * OC * OH * OW, 92),
                     dw(OC * C * KH * KW, NAN);
  auto dx = desc(x.data(), {N, C, H, W});
  auto dg = desc(g.data(), {N, OC, OH, OW});
  auto ddw = desc(dw.data(), {OC, C, KH, KW});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  std::vector<int64_t> attrs = {S, S, 1, 1, P, P, P, P};
  ASSERT_EQ(run(lib, alloc, DISC_LIB_CONV_BACKWARD_FILTER, dx, dg, ddw, 4,
                attrs, error),
            0)
      << error;
  for (int64_t o = 0; o < OC; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          double ref = 0;
          for (int64_t n = 0; n < N; ++n)
            for (int64_t i = 0; i < OH; ++i)
              for (int64_t j = 0; j < OW; ++j) {
                int64_t h = i * S + kh - P, w = j * S + kw - P;
                if (h < 0 || h >= H || w < 0 || w >= W)
                  continue;
                ref += double(g[((n * OC + o) * OH + i) * OW + j]) *
                       x[((n * C + c) * H + h) * W + w];
              }
          EXPECT_NEAR(dw[((o * C + c) * KH + kh) * KW + kw], ref, 1e-4);
        }
  EXPECT_EQ(alloc.live, 0);
  // A gradient whose spatial size does not follow from the input's is
  // status 1 naming the three shapes.
  auto bad = desc(g.data(), {N, OC, OH - 1, OW});
  EXPECT_EQ(run(lib, alloc, DISC_LIB_CONV_BACKWARD_FILTER, dx, bad, ddw, 4,
                attrs, error),
            1);
  EXPECT_NE(error.find("do not give filter [7, 5, 3, 2]"), std::string::npos)
      << error;
}

// ResNet-18's last 3x3 conv at batch 8 (2x2 positions): the temporaries
// of its filter gradient, at most one reordered filter and its operands
// (oneDNN's GEMM kernel on the plain layouts takes four filters).
TEST(LibraryCalls, ConvBackwardFilterTemporaries) {
  const int64_t N = 8, C = 512, H = 2;
  std::vector<float> x(N * C * H * H, 1.0f), g(N * C * H * H, 1.0f),
      dw(C * C * 9);
  auto dx = desc(x.data(), {N, C, H, H});
  auto dg = desc(g.data(), {N, C, H, H});
  auto ddw = desc(dw.data(), {C, C, 3, 3});
  void *ops[3] = {dx.data(), dg.data(), ddw.data()};
  int32_t ranks[3] = {4, 4, 4};
  std::vector<int64_t> attrs = {1, 1, 1, 1, 1, 1, 1, 1};
  LibraryCalls lib(64, 1);
  int64_t bytes = -1;
  std::string error;
  ASSERT_EQ(lib.temporaryBytes(DISC_LIB_CONV_BACKWARD_FILTER, 3, ops, ranks, 8,
                               attrs.data(), &bytes, error),
            0)
      << error;
  EXPECT_LE(bytes, int64_t((dw.size() + x.size() + g.size()) * sizeof(float)))
      << bytes;
}

// A ConvTranspose whose end pad is negative (output_padding beyond the end
// pad): the data gradient of a 1x1 stride-2 Conv of an even size (ResNet's
// downsample), zero at the positions the Conv never read.
TEST(LibraryCalls, ConvTransposeNegativeEndPad) {
  const int64_t N = 2, C = 3, OC = 4, O = 3, D = 6;
  std::vector<float> g = randomVector(N * OC * O * O, 95),
                     w = randomVector(OC * C, 96), dx(N * C * D * D, NAN);
  auto dg = desc(g.data(), {N, OC, O, O});
  auto dw = desc(w.data(), {OC, C, 1, 1});
  auto ddx = desc(dx.data(), {N, C, D, D});
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  std::vector<int64_t> attrs = {1, 0, 2, 2, 1, 1, 0, 0, -1, -1};
  ASSERT_EQ(
      run(lib, alloc, DISC_LIB_CONV_TRANSPOSE, dg, dw, ddx, 4, attrs, error), 0)
      << error;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < D; ++h)
        for (int64_t x = 0; x < D; ++x) {
          double ref = 0;
          if (h % 2 == 0 && x % 2 == 0)
            for (int64_t o = 0; o < OC; ++o)
              ref += double(g[((n * OC + o) * O + h / 2) * O + x / 2]) *
                     w[o * C + c];
          EXPECT_NEAR(dx[((n * C + c) * D + h) * D + x], ref, 1e-5)
              << h << " " << x;
        }
}

namespace {

/// A direct int32 Conv (2-D, groups) of `x` [N, C, H, W] and `w`
/// [OC, C/G, KH, KW]: what DISC_LIB_CONV_INT must give bit for bit.
std::vector<int32_t> intConvLoops(const std::vector<int32_t> &x,
                                  const std::vector<int32_t> &w, int64_t n,
                                  int64_t c, int64_t h, int64_t wd, int64_t oc,
                                  int64_t kh, int64_t kw, int64_t g,
                                  int64_t stride, int64_t dil, int64_t pad,
                                  int64_t oh, int64_t ow) {
  int64_t cg = c / g, ocg = oc / g;
  std::vector<int32_t> y(n * oc * oh * ow, 0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int32_t acc = 0;
          for (int64_t ch = 0; ch < cg; ++ch)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                int64_t ii = i * stride + a * dil - pad,
                        jj = j * stride + e * dil - pad;
                if (ii < 0 || ii >= h || jj < 0 || jj >= wd)
                  continue;
                acc += x[((b * c + (o / ocg) * cg + ch) * h + ii) * wd + jj] *
                       w[((o * cg + ch) * kh + a) * kw + e];
              }
          y[((b * oc + o) * oh + i) * ow + j] = acc;
        }
  return y;
}

} // namespace

// The integer Conv of centered 8-bit data (ConvInteger): a uint8 input
// minus its zero point, uint8 weights minus per-channel zero points (the
// shifted channels and their window-sum corrections) and int8 weights with
// zero point 0, grouped, strided, dilated and padded, equal to int32 loops;
// the temporaries are what temporaryBytes reports; new weights at the same
// address are picked up; data spanning more than 256 values (the direct
// loop) is still exact.
TEST(LibraryCalls, IntConvMatchesLoops) {
  const int64_t N = 2, C = 8, H = 9, W = 11, OC = 6, K = 3, G = 2;
  const int64_t S = 2, D = 1, P = 1;
  const int64_t OH = (H + 2 * P - D * (K - 1) - 1) / S + 1;
  const int64_t OW = (W + 2 * P - D * (K - 1) - 1) / S + 1;
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> u8(0, 255), s8(-127, 127);
  std::vector<int32_t> x(N * C * H * W), w(OC * (C / G) * K * K);
  const int32_t xzp = 131;
  for (int32_t &v : x)
    v = u8(gen) - xzp;
  auto fillWeights = [&](bool unsignedW) {
    int64_t per = w.size() / OC;
    for (int64_t o = 0; o < OC; ++o) {
      int32_t wzp = unsignedW ? (o * 53) % 256 : 0;
      for (int64_t i = 0; i < per; ++i)
        w[o * per + i] = (unsignedW ? u8(gen) : s8(gen)) - wzp;
    }
  };
  std::vector<int32_t> y(N * OC * OH * OW, -1);
  auto dx = desc(reinterpret_cast<float *>(x.data()), {N, C, H, W});
  auto dw = desc(reinterpret_cast<float *>(w.data()), {OC, C / G, K, K});
  auto dy = desc(reinterpret_cast<float *>(y.data()), {N, OC, OH, OW});
  std::vector<int64_t> attrs = {G, 0, S, S, D, D, P, P, P, P};
  LibraryCalls lib;
  CountingAllocator alloc;
  std::string error;
  void *ops[3] = {dx.data(), dw.data(), dy.data()};
  int32_t ranks[3] = {4, 4, 4};
  int64_t bytes = -1;
  ASSERT_EQ(lib.temporaryBytes(DISC_LIB_CONV_INT, 3, ops, ranks, 10,
                               attrs.data(), &bytes, error),
            0)
      << error;
  for (bool unsignedW : {true, false, true}) {
    fillWeights(unsignedW);
    alloc.peak = 0;
    ASSERT_EQ(run(lib, alloc, DISC_LIB_CONV_INT, dx, dw, dy, 4, attrs, error),
              0)
        << error;
    EXPECT_EQ(y, intConvLoops(x, w, N, C, H, W, OC, K, K, G, S, D, P, OH, OW))
        << "unsigned weights " << unsignedW;
    EXPECT_EQ(alloc.live, 0);
    EXPECT_EQ(alloc.peak, bytes);
  }
  // An input spanning 300 values and a channel spanning 400.
  x[5] = 200;
  x[6] = -100;
  w[3] = 300;
  w[4] = -100;
  ASSERT_EQ(run(lib, alloc, DISC_LIB_CONV_INT, dx, dw, dy, 4, attrs, error), 0)
      << error;
  EXPECT_EQ(y, intConvLoops(x, w, N, C, H, W, OC, K, K, G, S, D, P, OH, OW));
  EXPECT_EQ(alloc.live, 0);
  // A bad attribute count is reported.
  std::vector<int64_t> bad = {G, 0, S, S};
  EXPECT_EQ(run(lib, alloc, DISC_LIB_CONV_INT, dx, dw, dy, 4, bad, error), 1);
  EXPECT_NE(error.find("integer Conv"), std::string::npos) << error;
}
