//===- LibraryCalls.cpp - cuBLAS MatMul and cuDNN Conv for CUDA models ----===//
//
// See LibraryCalls.h. cuBLAS v2 API (cublasSgemmStridedBatched) and the
// cuDNN 9 legacy convolution API, through the tables of VendorLibs.h.
//
//===----------------------------------------------------------------------===//
#include "LibraryCalls.h"

#include "Device.h"
#include "disc/runtime/abi.h"

#include <algorithm>
#include <climits>
#include <list>
#include <map>
#include <mutex>

#pragma GCC visibility push(hidden)
namespace disc::runtime::cuda {

namespace {

int toInt(int64_t v, const char *what) {
  if (v < 0 || v > INT_MAX)
    fail(1, std::string(what) + " " + std::to_string(v) +
                " is outside the int range cuBLAS/cuDNN take");
  return static_cast<int>(v);
}

/// Fails (status 4) when the library status `st` of the call `what` is not
/// 0, with the library's text for it (`toText`, when the library has one)
/// and `type`, the status type's name.
void check(int st, const char *what, const char *(*toText)(int),
           const char *type) {
  if (st == 0)
    return;
  const char *text = toText ? toText(st) : 0;
  fail(4, std::string(what) + " failed: " + (text ? text : "unknown") + " (" +
              type + " " + std::to_string(st) + ")");
}

/// One column-major matrix in memory for an operand P of dims [p0, p1] and
/// strides [s0, s1]: either P^T (P row-major, `rowMajor`) or P itself, with
/// its leading dimension. Fails when neither dim has a unit stride.
struct ColMajor {
  bool rowMajor;
  int64_t ld;
};

ColMajor colMajor(int64_t p0, int64_t p1, int64_t s0, int64_t s1,
                  const char *name) {
  if (p0 == 0 || p1 == 0) // no element: any layout
    return {true, std::max<int64_t>(p1, 1)};
  if (s1 == 1 || p1 <= 1) {
    int64_t ld = p0 <= 1 ? std::max<int64_t>(p1, 1) : s0;
    if (ld >= std::max<int64_t>(p1, 1))
      return {true, ld};
  }
  if (s0 == 1 || p0 <= 1) {
    int64_t ld = p1 <= 1 ? std::max<int64_t>(p0, 1) : s1;
    if (ld >= std::max<int64_t>(p0, 1))
      return {false, ld};
  }
  fail(1, std::string("matmul operand ") + name + " [" + std::to_string(p0) +
              ", " + std::to_string(p1) + "] with strides [" +
              std::to_string(s0) + ", " + std::to_string(s1) +
              "]: cuBLAS needs a unit stride in one of the two dims");
}

/// RAII cuDNN tensor descriptor.
struct TensorDesc {
  const DnnApi &api;
  cudnnTensorDescriptor_t d = nullptr;
  explicit TensorDesc(const DnnApi &api) : api(api) {}
  ~TensorDesc() {
    if (d)
      api.destroyTensorDescriptor(d);
  }
};

} // namespace

/// A cached convolution: descriptors and the algorithms cuDNN's heuristics
/// rank for it (best first), with their workspace bytes.
struct ConvPlan {
  const DnnApi *api = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  std::vector<std::pair<int, size_t>> algos;
  ~ConvPlan() {
    if (!api)
      return;
    if (x)
      api->destroyTensorDescriptor(x);
    if (y)
      api->destroyTensorDescriptor(y);
    if (w)
      api->destroyFilterDescriptor(w);
    if (conv)
      api->destroyConvolutionDescriptor(conv);
  }
};

struct LibraryCalls::Impl {
  Device &device;
  std::vector<std::string> blasNames, dnnNames;
  size_t maxPlans;
  std::mutex mutex;
  const BlasApi *blas = nullptr;
  const DnnApi *dnn = nullptr;
  cublasHandle_t blasHandle = nullptr;
  cudnnHandle_t dnnHandle = nullptr;
  // LRU: most recent first; the map points into the list.
  std::list<std::pair<std::vector<int64_t>, std::unique_ptr<ConvPlan>>> lru;
  std::map<std::vector<int64_t>, decltype(lru)::iterator> plans;
  int64_t created = 0;

  Impl(Device &d, std::vector<std::string> b, std::vector<std::string> n,
       size_t m)
      : device(d), blasNames(std::move(b)), dnnNames(std::move(n)),
        maxPlans(std::max<size_t>(m, 1)) {}

  void checkBlas(cublasStatus_t st, const char *what) {
    check(st, what, blas->getStatusString, "cublasStatus_t");
  }
  void checkDnn(cudnnStatus_t st, const char *what) {
    check(st, what, dnn->getErrorString, "cudnnStatus_t");
  }

  /// Loads the table `api` of a library with `load` from `names` and
  /// creates its `handle` on the session stream (`<prefix>Create`,
  /// `<prefix>SetStream`; statuses as `check` with `toText` and
  /// `statusType`). Fails with status 3 when the library is not available.
  template <typename Api, typename Handle>
  void openLibrary(const Api *&api, Handle &handle,
                   const Api *(*load)(const std::vector<std::string> &,
                                      std::string *),
                   const std::vector<std::string> &names,
                   const char *(*Api::*toText)(int), const std::string &prefix,
                   const char *statusType) {
    std::string why;
    api = load(names, &why);
    if (!api)
      fail(3, why);
    check(api->create(&handle), (prefix + "Create").c_str(), api->*toText,
          statusType);
    check(api->setStream(handle, device.stream()),
          (prefix + "SetStream").c_str(), api->*toText, statusType);
  }
  void needBlas() {
    if (blasHandle)
      return;
    openLibrary(blas, blasHandle, loadBlas, blasNames,
                &BlasApi::getStatusString, "cublas", "cublasStatus_t");
    checkBlas(blas->setMathMode(blasHandle, kCublasDefaultMath),
              "cublasSetMathMode");
  }
  void needDnn() {
    if (!dnnHandle)
      openLibrary(dnn, dnnHandle, loadDnn, dnnNames, &DnnApi::getErrorString,
                  "cudnn", "cudnnStatus_t");
  }

  /// A float tensor descriptor of `sizes`/`strides` (4 or 5 dims).
  void setTensor(cudnnTensorDescriptor_t d, const std::vector<int64_t> &sizes,
                 const std::vector<int64_t> &strides) {
    std::vector<int64_t> st = normalizedStrides(sizes, strides);
    std::vector<int> dims(sizes.size()), str(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) {
      dims[i] = toInt(sizes[i], "tensor dim");
      str[i] = toInt(st[i], "tensor stride");
    }
    checkDnn(dnn->setTensorNdDescriptor(d, kCudnnDataFloat,
                                        static_cast<int>(dims.size()),
                                        dims.data(), str.data()),
             "cudnnSetTensorNdDescriptor");
  }

  /// Post-ops on the output `y` (dims `sizes`, strides `strides`, 4 or 5
  /// dims; channels at `channelDim`): bias, residual add, Relu, in order.
  void postOps(int64_t flags, const std::vector<int64_t> &sizes,
               const std::vector<int64_t> &strides, float *y, const View *bias,
               const View *residual,
               const std::vector<int64_t> &residualStrides, size_t channelDim) {
    if (!(flags & 7))
      return;
    needDnn();
    const float one = 1.0f, zero = 0.0f;
    TensorDesc yd(*dnn);
    checkDnn(dnn->createTensorDescriptor(&yd.d), "cudnnCreateTensorDescriptor");
    setTensor(yd.d, sizes, strides);
    if (flags & 1) {
      std::vector<int64_t> bs(sizes.size(), 1);
      bs[channelDim] = sizes[channelDim];
      if (bias->sizes.size() != 1 || bias->sizes[0] != sizes[channelDim])
        fail(1, "bias of " + dimsText(bias->sizes) + " for " +
                    std::to_string(sizes[channelDim]) + " channels");
      std::vector<int64_t> bstr(sizes.size(), 0);
      for (size_t i = 0; i < sizes.size(); ++i)
        bstr[i] = i == channelDim ? bias->strides[0] : 0;
      TensorDesc bd(*dnn);
      checkDnn(dnn->createTensorDescriptor(&bd.d),
               "cudnnCreateTensorDescriptor");
      // Size-1 dims get dense strides; the channel dim keeps the bias's.
      std::vector<int64_t> dense = normalizedStrides(bs, bstr);
      dense[channelDim] = bias->strides[0] ? bias->strides[0] : 1;
      setTensor(bd.d, bs, dense);
      checkDnn(dnn->addTensor(dnnHandle, &one, bd.d, bias->data, &one, yd.d, y),
               "cudnnAddTensor (bias)");
    }
    if (flags & 2) {
      TensorDesc rd(*dnn);
      checkDnn(dnn->createTensorDescriptor(&rd.d),
               "cudnnCreateTensorDescriptor");
      setTensor(rd.d, sizes, residualStrides);
      checkDnn(
          dnn->addTensor(dnnHandle, &one, rd.d, residual->data, &one, yd.d, y),
          "cudnnAddTensor (residual)");
    }
    if (flags & 4) {
      cudnnActivationDescriptor_t act = nullptr;
      checkDnn(dnn->createActivationDescriptor(&act),
               "cudnnCreateActivationDescriptor");
      cudnnStatus_t st = dnn->setActivationDescriptor(act, kCudnnActivationRelu,
                                                      kCudnnPropagateNan, 0.0);
      if (st == 0)
        st = dnn->activationForward(dnnHandle, act, &one, yd.d, y, &zero, yd.d,
                                    y);
      dnn->destroyActivationDescriptor(act);
      checkDnn(st, "cudnnActivationForward (Relu)");
    }
  }

  void matmul(int32_t numOperands, void *const *operands, const int32_t *ranks,
              int32_t numAttrs, const int64_t *attrs,
              const DeviceScratch &scratch);
  void conv(int32_t numOperands, void *const *operands, const int32_t *ranks,
            int32_t numAttrs, const int64_t *attrs,
            const DeviceScratch &scratch, bool transposed);
  ConvPlan &plan(const std::vector<int64_t> &key, const View &x, const View &w,
                 const View &y, int64_t groups, const std::vector<int> &pads,
                 const std::vector<int> &strides,
                 const std::vector<int> &dilations, bool backwardData);
};

void LibraryCalls::Impl::matmul(int32_t numOperands, void *const *operands,
                                const int32_t *ranks, int32_t numAttrs,
                                const int64_t *attrs,
                                const DeviceScratch &scratch) {
  if (numOperands < 3 || numAttrs < 2 || ranks[0] != 3 || ranks[1] != 3 ||
      ranks[2] != 3)
    fail(1, "matmul: expected A, B, C of rank 3 and {transA, transB}");
  int64_t flags = numAttrs > 2 ? attrs[2] : 0;
  int32_t want = operandsFor(flags);
  if (numOperands != want || (numAttrs != 2 && numAttrs != 3))
    fail(1, "matmul: " + std::to_string(numOperands) +
                " operands for post-op flags " + std::to_string(flags));
  View a = readView(operands[0], 3), b = readView(operands[1], 3),
       c = readView(operands[2], 3);
  bool transA = attrs[0] != 0, transB = attrs[1] != 0;
  int64_t batch = c.sizes[0], m = c.sizes[1], n = c.sizes[2];
  int64_t am = a.sizes[transA ? 2 : 1], ak = a.sizes[transA ? 1 : 2];
  int64_t bk = b.sizes[transB ? 2 : 1], bn = b.sizes[transB ? 1 : 2];
  if (am != m || bn != n || ak != bk ||
      (a.sizes[0] != batch && a.sizes[0] != 1) ||
      (b.sizes[0] != batch && b.sizes[0] != 1))
    fail(1, "matmul: A " + dimsText(a.sizes) + (transA ? "^T" : "") + " x B " +
                dimsText(b.sizes) + (transB ? "^T" : "") + " does not give C " +
                dimsText(c.sizes));
  int64_t k = ak;
  if (batch == 0 || m == 0 || n == 0)
    return;
  device.makeCurrent();
  needBlas();
  // C row-major [M, N] is column-major C^T [N, M]: C^T = op(B)^T op(A)^T.
  ColMajor cc = colMajor(m, n, c.strides[1], c.strides[2], "C");
  if (!cc.rowMajor)
    fail(1, "matmul: the output " + dimsText(c.sizes) + " with strides " +
                dimsText(c.strides) + " is not row-major");
  ColMajor ca =
      colMajor(a.sizes[1], a.sizes[2], a.strides[1], a.strides[2], "A");
  ColMajor cb =
      colMajor(b.sizes[1], b.sizes[2], b.strides[1], b.strides[2], "B");
  // The column-major matrix of B in memory is B^T when B is row-major; the
  // product needs op(B)^T, i.e. B^T untransposed unless transB.
  int opB = (cb.rowMajor != transB) ? kCublasOpN : kCublasOpT;
  int opA = (ca.rowMajor != transA) ? kCublasOpN : kCublasOpT;
  long long strideA = a.sizes[0] == 1 ? 0 : a.strides[0];
  long long strideB = b.sizes[0] == 1 ? 0 : b.strides[0];
  long long strideC = batch == 1 ? m * n : c.strides[0];
  // cuBLAS: lda >= rows of the stored matrix, >= 1.
  const float alpha = 1.0f, beta = 0.0f;
  ScratchBuffer ws(scratch, 256);
  constexpr int64_t kWorkspaceBytes = int64_t(4) << 20;
  if (ws.allocate(kWorkspaceBytes))
    checkBlas(blas->setWorkspace(blasHandle, ws.p, kWorkspaceBytes),
              "cublasSetWorkspace");
  else
    checkBlas(blas->setWorkspace(blasHandle, nullptr, 0), "cublasSetWorkspace");
  // k == 0: beta = 0 makes cuBLAS write zeros.
  checkBlas(blas->sgemmStridedBatched(
                blasHandle, opB, opA, toInt(n, "N"), toInt(m, "M"),
                toInt(k, "K"), &alpha, b.data, toInt(cb.ld, "ldb"), strideB,
                a.data, toInt(ca.ld, "lda"), strideA, &beta, c.data,
                toInt(cc.ld, "ldc"), strideC, toInt(batch, "batch")),
            "cublasSgemmStridedBatched");
  if (flags & 7) {
    PostOpOperands o = readPostOpOperands(
        flags, operands, ranks, 3, "matmul: ", "rank 3", [](const View &) {});
    View &bias = o.bias, &residual = o.residual;
    if (flags & 2) {
      if (residual.sizes != c.sizes)
        fail(1, "matmul: residual " + dimsText(residual.sizes) +
                    " for output " + dimsText(c.sizes));
    }
    // [B, M, N] as a 4-D tensor [B, M, N, 1]; channels (the bias) at N.
    std::vector<int64_t> sizes = {batch, m, n, 1};
    std::vector<int64_t> strides = {c.strides[0], c.strides[1], c.strides[2],
                                    1};
    std::vector<int64_t> rstr;
    if (flags & 2)
      rstr = {residual.strides[0], residual.strides[1], residual.strides[2], 1};
    postOps(flags, sizes, strides, c.data, &bias, &residual, rstr, 2);
  }
}

ConvPlan &LibraryCalls::Impl::plan(const std::vector<int64_t> &key,
                                   const View &x, const View &w, const View &y,
                                   int64_t groups, const std::vector<int> &pads,
                                   const std::vector<int> &strides,
                                   const std::vector<int> &dilations,
                                   bool backwardData) {
  if (auto it = plans.find(key); it != plans.end()) {
    lru.splice(lru.begin(), lru, it->second);
    return *it->second->second;
  }
  auto p = std::make_unique<ConvPlan>();
  p->api = dnn;
  checkDnn(dnn->createTensorDescriptor(&p->x), "cudnnCreateTensorDescriptor");
  checkDnn(dnn->createTensorDescriptor(&p->y), "cudnnCreateTensorDescriptor");
  checkDnn(dnn->createFilterDescriptor(&p->w), "cudnnCreateFilterDescriptor");
  checkDnn(dnn->createConvolutionDescriptor(&p->conv),
           "cudnnCreateConvolutionDescriptor");
  setTensor(p->x, x.sizes, x.strides);
  setTensor(p->y, y.sizes, y.strides);
  std::vector<int> wdims(w.sizes.size());
  for (size_t i = 0; i < w.sizes.size(); ++i)
    wdims[i] = toInt(w.sizes[i], "weight dim");
  checkDnn(dnn->setFilterNdDescriptor(p->w, kCudnnDataFloat, kCudnnTensorNchw,
                                      static_cast<int>(wdims.size()),
                                      wdims.data()),
           "cudnnSetFilterNdDescriptor");
  checkDnn(dnn->setConvolutionNdDescriptor(
               p->conv, static_cast<int>(pads.size()), pads.data(),
               strides.data(), dilations.data(), kCudnnCrossCorrelation,
               kCudnnDataFloat),
           "cudnnSetConvolutionNdDescriptor");
  checkDnn(dnn->setConvolutionGroupCount(p->conv, toInt(groups, "groups")),
           "cudnnSetConvolutionGroupCount");
  checkDnn(dnn->setConvolutionMathType(p->conv, kCudnnFmaMath),
           "cudnnSetConvolutionMathType");
  CudnnConvFwdAlgoPerf perf[16] = {};
  int returned = 0;
  if (backwardData)
    checkDnn(dnn->getConvolutionBackwardDataAlgorithm(
                 dnnHandle, p->w, p->y, p->conv, p->x, 16, &returned, perf),
             "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  else
    checkDnn(dnn->getConvolutionForwardAlgorithm(dnnHandle, p->x, p->w, p->conv,
                                                 p->y, 16, &returned, perf),
             "cudnnGetConvolutionForwardAlgorithm_v7");
  for (int i = 0; i < returned && i < 16; ++i)
    if (perf[i].status == 0 && (perf[i].mathType == kCudnnFmaMath ||
                                perf[i].mathType == kCudnnDefaultMath))
      p->algos.emplace_back(perf[i].algo, perf[i].memory);
  // None reported with FMA math: any algorithm cuDNN can run (it runs with
  // the descriptor's FMA math).
  bool anyMath = p->algos.empty();
  for (int i = 0; anyMath && i < returned && i < 16; ++i)
    if (perf[i].status == 0)
      p->algos.emplace_back(perf[i].algo, perf[i].memory);
  if (p->algos.empty())
    fail(4, "cuDNN has no f32 algorithm for the convolution of " +
                dimsText(x.sizes) + " by " + dimsText(w.sizes));
  ++created;
  lru.emplace_front(key, std::move(p));
  plans[key] = lru.begin();
  while (lru.size() > maxPlans) {
    plans.erase(lru.back().first);
    lru.pop_back();
  }
  return *lru.front().second;
}

void LibraryCalls::Impl::conv(int32_t numOperands, void *const *operands,
                              const int32_t *ranks, int32_t numAttrs,
                              const int64_t *attrs,
                              const DeviceScratch &scratch, bool transposed) {
  const std::string what = transposed ? "conv_transpose" : "conv";
  int64_t k = convSpatialDims(numOperands, ranks);
  int32_t rank = static_cast<int32_t>(k + 2);
  if (k == 0 || (numAttrs != 2 + 4 * k && numAttrs != 3 + 4 * k))
    fail(1, what + ": expected X, W, Y of rank 3..5 and 2 + 4k attributes "
                   "(3 + 4k with the post-op flags)");
  ConvAttrs ca = readConvAttrs(numAttrs, attrs, k);
  int64_t flags = ca.flags;
  int32_t want = operandsFor(flags);
  if (numOperands != want)
    fail(1, "conv: " + std::to_string(numOperands) +
                " operands for post-op flags " + std::to_string(flags));
  View x = readView(operands[0], rank), w = readView(operands[1], rank),
       y = readView(operands[2], rank);
  int64_t groups = ca.groups;
  const std::vector<int64_t> &str = ca.strides, &dil = ca.dilations,
                             &pb = ca.padBegin, &pe = ca.padEnd;
  for (int64_t i = 0; i < k; ++i)
    if (pb[i] != pe[i])
      fail(1, what + ": cuDNN takes symmetric pads only, spatial dim " +
                  std::to_string(i) + " has " + std::to_string(pb[i]) +
                  " and " + std::to_string(pe[i]));
  // ConvTranspose: W [C, OC/G, K...] is the filter of the convolution
  // from Y (its input) to X (its output).
  const View &fwdIn = transposed ? y : x, &fwdOut = transposed ? x : y;
  if (groups < 1 || fwdIn.sizes[1] != w.sizes[1] * groups ||
      fwdOut.sizes[1] != w.sizes[0] || x.sizes[0] != y.sizes[0])
    fail(1, what + ": X " + dimsText(x.sizes) + ", W " + dimsText(w.sizes) +
                ", Y " + dimsText(y.sizes) + " with " + std::to_string(groups) +
                " groups do not fit");
  if (volume(y.sizes) == 0)
    return;
  if (volume(x.sizes) == 0)
    fail(1, what + ": empty input " + dimsText(x.sizes) + " for output " +
                dimsText(y.sizes));
  // Dense weights (cuDNN filters have no strides).
  {
    std::vector<int64_t> dense(rank);
    int64_t d = 1;
    for (int64_t i = rank - 1; i >= 0; --i) {
      dense[i] = d;
      d *= w.sizes[i];
    }
    if (normalizedStrides(w.sizes, w.strides) != dense)
      fail(1, what + ": the weights " + dimsText(w.sizes) + " with strides " +
                  dimsText(w.strides) + " are not dense");
  }
  device.makeCurrent();
  needDnn();
  // 1-D: a 2-D convolution over [.., 1, W].
  std::vector<int> pads, strides, dilations;
  if (k == 1) {
    auto promote = [](View &v) {
      v.sizes.insert(v.sizes.begin() + 2, 1);
      v.strides.insert(v.strides.begin() + 2, v.sizes[3] * v.strides[2]);
    };
    promote(x);
    promote(w);
    promote(y);
    pads.push_back(0);
    strides.push_back(1);
    dilations.push_back(1);
  }
  for (int64_t i = 0; i < k; ++i) {
    pads.push_back(toInt(pb[i], "pad"));
    strides.push_back(toInt(str[i], "stride"));
    dilations.push_back(toInt(dil[i], "dilation"));
  }
  std::vector<int64_t> key = {transposed, groups,
                              static_cast<int64_t>(x.sizes.size())};
  for (const View *v : {&x, &w, &y}) {
    key.insert(key.end(), v->sizes.begin(), v->sizes.end());
    std::vector<int64_t> s = normalizedStrides(v->sizes, v->strides);
    key.insert(key.end(), s.begin(), s.end());
  }
  key.insert(key.end(), pads.begin(), pads.end());
  key.insert(key.end(), strides.begin(), strides.end());
  key.insert(key.end(), dilations.begin(), dilations.end());
  ConvPlan &p = transposed ? plan(key, y, w, x, groups, pads, strides,
                                  dilations, /*backwardData=*/true)
                           : plan(key, x, w, y, groups, pads, strides,
                                  dilations, /*backwardData=*/false);
  // The best algorithm whose workspace the allocator grants.
  ScratchBuffer ws(scratch, 256);
  int algo = -1;
  size_t wsBytes = 0;
  for (const auto &[a, bytes] : p.algos) {
    if (ws.allocate(static_cast<int64_t>(bytes))) {
      algo = a;
      wsBytes = bytes;
      break;
    }
  }
  if (algo < 0)
    fail(2, "conv: no cuDNN workspace could be allocated (the smallest "
            "needs " +
                std::to_string(p.algos.back().second) + " bytes)");
  const float one = 1.0f, zero = 0.0f;
  if (transposed)
    checkDnn(dnn->convolutionBackwardData(dnnHandle, &one, p.w, w.data, p.y,
                                          x.data, p.conv, algo, ws.p, wsBytes,
                                          &zero, p.x, y.data),
             "cudnnConvolutionBackwardData");
  else
    checkDnn(dnn->convolutionForward(dnnHandle, &one, p.x, x.data, p.w, w.data,
                                     p.conv, algo, ws.p, wsBytes, &zero, p.y,
                                     y.data),
             "cudnnConvolutionForward");
  if (flags & 7) {
    PostOpOperands o =
        readPostOpOperands(flags, operands, ranks, rank,
                           "conv: ", "the output's rank", [](const View &) {});
    View &bias = o.bias, &residual = o.residual;
    std::vector<int64_t> rstr;
    if (flags & 2) {
      if (k == 1) {
        residual.sizes.insert(residual.sizes.begin() + 2, 1);
        residual.strides.insert(residual.strides.begin() + 2,
                                residual.sizes[3] * residual.strides[2]);
      }
      if (residual.sizes != y.sizes)
        fail(1, "conv: residual " + dimsText(residual.sizes) + " for output " +
                    dimsText(y.sizes));
      rstr = residual.strides;
    }
    postOps(flags, y.sizes, y.strides, y.data, &bias, &residual, rstr, 1);
  }
}

const char *LibraryCalls::libraryCallName(int32_t callId) {
  switch (callId) {
  case DISC_LIB_MATMUL:
    return "cuBLAS matmul";
  case DISC_LIB_CONV:
    return "cuDNN conv";
  case DISC_LIB_CONV_TRANSPOSE:
    return "cuDNN conv_transpose";
  default:
    return "library call";
  }
}

LibraryCalls::LibraryCalls(Device &device, std::vector<std::string> blasNames,
                           std::vector<std::string> dnnNames, size_t maxPlans)
    : impl_(std::make_unique<Impl>(device, std::move(blasNames),
                                   std::move(dnnNames), maxPlans)) {}

LibraryCalls::~LibraryCalls() {
  impl_->device.makeCurrent();
  impl_->lru.clear();
  impl_->plans.clear();
  if (impl_->blasHandle)
    impl_->blas->destroy(impl_->blasHandle);
  if (impl_->dnnHandle)
    impl_->dnn->destroy(impl_->dnnHandle);
}

int32_t LibraryCalls::call(int32_t callId, int32_t numOperands,
                           void *const *operands, const int32_t *ranks,
                           int32_t numAttrs, const int64_t *attrs,
                           const DeviceScratch &scratch, std::string &error) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  // A traced run times the call (Device::timedBegin): the library's own
  // kernels between the two events.
  int64_t timed = impl_->device.timedBegin();
  int32_t rc = catchCallError(
      [&]() -> int32_t {
        switch (callId) {
        case DISC_LIB_MATMUL:
          impl_->matmul(numOperands, operands, ranks, numAttrs, attrs, scratch);
          return 0;
        case DISC_LIB_CONV:
          impl_->conv(numOperands, operands, ranks, numAttrs, attrs, scratch,
                      /*transposed=*/false);
          return 0;
        case DISC_LIB_CONV_TRANSPOSE:
          impl_->conv(numOperands, operands, ranks, numAttrs, attrs, scratch,
                      /*transposed=*/true);
          return 0;
        default:
          error = "library call " + std::to_string(callId) +
                  " has no CUDA implementation (MatMul, Conv and ConvTranspose "
                  "have)";
          return 1;
        }
      },
      error, "out of host memory in a CUDA library call");
  if (timed >= 0)
    impl_->device.timedEnd(timed, libraryCallName(callId), /*library=*/true);
  return rc;
}

CacheCounts LibraryCalls::counts() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return {impl_->created, static_cast<int64_t>(impl_->lru.size())};
}

} // namespace disc::runtime::cuda
#pragma GCC visibility pop
