//===- LibraryCalls.cpp - oneDNN MatMul and Conv for compiled models ------===//
//
// See LibraryCalls.h. oneDNN 2.6 C++ API (oneapi/dnnl/dnnl.hpp): matmul and
// convolution_forward primitives, reorders between the caller's strided
// layout and the layout a primitive prefers.
//
//===----------------------------------------------------------------------===//
#include "LibraryCalls.h"

#include "../core/CallOperands.h"
#include "disc/runtime/abi.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <list>
#include <mutex>
#include <new>
#include <optional>
#include <unordered_map>
#include <vector>

// The OpenMP API of libgomp, the runtime the Debian oneDNN runs on (OpenMP
// 5.1, section 3.2). Declared here rather than through <omp.h>, which is
// compiler-specific: a clang build must still set libgomp's thread count.
extern "C" {
int omp_get_max_threads(void);
void omp_set_num_threads(int numThreads);
}

using namespace disc::runtime;
using namespace disc::runtime::cpu;
using dnnl::memory;

namespace {

/// A strided f32 memory descriptor. Strides of size-1 dims do not address
/// anything; they are normalized so oneDNN accepts them.
memory::desc stridedDesc(const memory::dims &sizes,
                         const memory::dims &strides) {
  return memory::desc(sizes, memory::data_type::f32,
                      normalizedStrides(sizes, strides));
}

memory::desc denseDesc(const memory::dims &sizes) {
  memory::dims strides(sizes.size());
  int64_t dense = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = dense;
    dense *= sizes[i];
  }
  return memory::desc(sizes, memory::data_type::f32, strides);
}

/// True when the spatial sizes (dims 2..) of a Conv's output `out` follow
/// from its input `in` and filter `w` (ONNX Conv: floor of `(D + pads -
/// (K - 1) * dilation - 1) / stride + 1`), with positive strides and
/// dilations.
bool convSpatialMatches(const memory::dims &in, const memory::dims &w,
                        const memory::dims &out, const memory::dims &strides,
                        const memory::dims &dil, const memory::dims &padL,
                        const memory::dims &padR) {
  for (size_t i = 0; i + 2 < in.size(); ++i) {
    int64_t ext = (w[2 + i] - 1) * dil[i] + 1;
    int64_t span = in[2 + i] + padL[i] + padR[i] - ext;
    if (strides[i] < 1 || dil[i] < 1 || span < 0 ||
        out[2 + i] != span / strides[i] + 1)
      return false;
  }
  return true;
}

/// Writes zeros to every element of `v`.
void zeroFill(const View &v) {
  int64_t n = volume(v.sizes);
  if (n == 0)
    return;
  std::vector<int64_t> idx(v.sizes.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      off += idx[i] * v.strides[i];
    v.data[off] = 0.0f;
    for (int64_t i = static_cast<int64_t>(idx.size()) - 1; i >= 0; --i) {
      if (++idx[i] < v.sizes[i])
        break;
      idx[i] = 0;
    }
  }
}

/// A call with nothing to compute: an empty output (nothing to write), or
/// an empty input (the output is zeros; none written when only the
/// temporaries are asked, `tempBytes`). True when handled.
bool emptyCall(const View &out, const View &in0, const View &in1,
               const int64_t *tempBytes) {
  if (volume(out.sizes) == 0)
    return true;
  if (volume(in0.sizes) != 0 && volume(in1.sizes) != 0)
    return false;
  if (!tempBytes)
    zeroFill(out);
  return true;
}

/// Runs the enclosing scope on `n` OpenMP threads (n > 0), then restores
/// the calling thread's setting. oneDNN reads it when it creates a
/// primitive (kernel blocking) and when it runs one.
struct ThreadScope {
  int saved = 0;
  explicit ThreadScope(int n) {
    if (n <= 0)
      return;
    saved = omp_get_max_threads();
    if (saved == n)
      saved = 0;
    else
      omp_set_num_threads(n);
  }
  ~ThreadScope() {
    if (saved > 0)
      omp_set_num_threads(saved);
  }
};

/// The NHWC bits of a Conv call's flags (docs/runtime-abi.md): its output,
/// input, residual buffer holds NHWC data (channels last, dense).
constexpr int64_t kNhwcOutput = 64, kNhwcInput = 128, kNhwcResidual = 256;
/// The MatMul bits of the same positions (docs/runtime-abi.md): the
/// product is scaled by an f32 `alpha` (its bits follow the flags and any
/// clip bounds), and the output holds the addend when the call starts
/// (`C = alpha * A x B + C`, oneDNN's `sum` post-op; no residual operand).
constexpr int64_t kMatmulScale = 64, kMatmulAccumulate = 128;
/// Activations past those bits, for both: SiLU (`x * sigmoid(x)`),
/// HardSwish (`x * clip(x / 6 + 0.5, 0, 1)`), GELU (`x * (1 + erf(x /
/// sqrt(2))) / 2`).
constexpr int64_t kSwish = 512, kHardSwish = 1024, kGeluErf = 2048;
/// MatMul: the weights (B) are a constant of the model, so the kernel's
/// layout of them is made once per weights address and kept (docs/
/// runtime-abi.md, *Post-ops*).
constexpr int64_t kMatmulConstWeights = 4096;
/// Every activation bit (at most one is set).
constexpr int64_t kActivations =
    4 | 8 | 16 | 32 | kSwish | kHardSwish | kGeluErf;

/// The channels-last permutation of the dense buffer of `v` (shape
/// [N, C, D...], dense row-major strides checked): the strides of the same
/// shape laid out [N, D..., C]. `what` names the operand in the error.
void reinterpretNhwc(View &v, const std::string &who, const char *what) {
  int64_t r = static_cast<int64_t>(v.sizes.size()), dense = 1;
  for (int64_t i = r - 1; i >= 0; --i) {
    if (v.sizes[i] != 1 && v.strides[i] != dense)
      fail(1, who + "the " + what +
                  " is marked NHWC but its buffer is not dense: sizes " +
                  dimsText(v.sizes) + ", strides " + dimsText(v.strides));
    dense *= v.sizes[i];
  }
  int64_t c = v.sizes[1];
  v.strides[1] = 1;
  int64_t s = c;
  for (int64_t i = r - 1; i >= 2; --i) {
    v.strides[i] = s;
    s *= v.sizes[i];
  }
  v.strides[0] = s;
}

/// A descriptor of `sizes` in the layout the primitive prefers.
memory::desc anyDesc(const memory::dims &sizes) {
  return memory::desc(sizes, memory::data_type::f32, memory::format_tag::any);
}

/// ONNX dilations as oneDNN counts them (the skipped elements).
memory::dims oneDnnDilations(memory::dims dilations) {
  for (int64_t &d : dilations)
    d -= 1;
  return dilations;
}

/// The user memory descriptor of a Conv operand: oneDNN's channels-last
/// tag (acb, acdb, acdeb) for an NHWC buffer, else its strides.
memory::desc convUserDesc(const View &v, bool nhwc) {
  if (!nhwc)
    return stridedDesc(v.sizes, v.strides);
  static const memory::format_tag tags[] = {memory::format_tag::acb,
                                            memory::format_tag::acdb,
                                            memory::format_tag::acdeb};
  return memory::desc(v.sizes, memory::data_type::f32,
                      tags[v.sizes.size() - 3]);
}

/// Post-ops of a call (docs/runtime-abi.md): flags bit 0 bias, bit 1
/// residual add, then one activation: bit 2 Relu, bit 3 clip to [lo, hi],
/// bit 4 logistic, bit 5 tanh, bit 9 SiLU, bit 10 HardSwish, bit 11 GELU
/// (erf); applied in that order. Bits 6-8 (Conv only): the output, input,
/// residual is NHWC.
struct PostOps {
  int64_t flags = 0;
  View bias, res;             // bias: [channels]; res: the output's shape
  float lo = 0.0f, hi = 0.0f; // clip bounds
  float alpha = 1.0f;         // MatMul: the product's scale
  bool accumulate = false;    // MatMul: the output holds the addend
  bool bias_() const { return flags & 1; }
  bool res_() const { return flags & 2; }
  /// Any activation.
  bool act() const { return flags & kActivations; }
  /// The activation on one value.
  float activate(float v) const {
    if (flags & 4)
      return v > 0.0f ? v : 0.0f;
    if (flags & 8)
      return v < lo ? lo : v > hi ? hi : v;
    if (flags & 16)
      return 1.0f / (1.0f + std::exp(-v));
    if (flags & 32)
      return std::tanh(v);
    if (flags & kSwish)
      return v / (1.0f + std::exp(-v));
    if (flags & kHardSwish)
      return v * std::min(std::max(v / 6.0f + 0.5f, 0.0f), 1.0f);
    if (flags & kGeluErf)
      return 0.5f * v * (1.0f + std::erf(v * 0.70710678f));
    return v;
  }
};

/// Calls `f(offset)` for the element offset of every element of `sizes` /
/// `strides`.
template <typename F>
void forEach(const memory::dims &sizes, const memory::dims &strides, F f) {
  int64_t n = volume(sizes);
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      off += idx[i] * strides[i];
    f(off, idx);
    for (int64_t i = static_cast<int64_t>(idx.size()) - 1; i >= 0; --i) {
      if (++idx[i] < sizes[i])
        break;
      idx[i] = 0;
    }
  }
}

/// Applies the post-ops of `p` not done by oneDNN to `y` (bias along dim
/// `channelDim` when `withBias`).
void applyPostOps(const View &y, const PostOps &p, bool withBias, bool withRes,
                  bool withRelu, size_t channelDim) {
  if (!(withBias && p.bias_()) && !(withRes && p.res_()) &&
      !(withRelu && p.act()) && p.alpha == 1.0f)
    return;
  forEach(y.sizes, y.strides, [&](int64_t off, const std::vector<int64_t> &i) {
    float v = y.data[off];
    if (p.alpha != 1.0f)
      v *= p.alpha;
    if (withBias && p.bias_())
      v += p.bias.data[i[channelDim] * p.bias.strides[0]];
    if (withRes && p.res_()) {
      int64_t r = 0;
      for (size_t d = 0; d < i.size(); ++d)
        r += i[d] * p.res.strides[d];
      v += p.res.data[r];
    }
    if (withRelu)
      v = p.activate(v);
    y.data[off] = v;
  });
}

/// The cache key of a call: every word its primitive depends on (the call
/// id, each operand's rank, sizes and strides, the attributes), not the
/// data pointers and offsets. Fixed size, so building one and looking it up
/// allocate nothing.
struct Key {
  /// The call id and counts, 5 operands of rank <= 5, 32 attributes: more
  /// than any call takes (its checks reject the rest).
  static constexpr int32_t kMaxWords = 3 + 5 * (1 + 2 * 5) + 32;
  int32_t size = 0;
  size_t hash = 0;
  int64_t words[kMaxWords];

  bool operator==(const Key &o) const {
    return size == o.size && hash == o.hash &&
           std::memcmp(words, o.words, size * sizeof(int64_t)) == 0;
  }
};

struct KeyHash {
  size_t operator()(const Key &k) const { return k.hash; }
};

/// Fills `key` from a call's arguments (`operands` are memref descriptors,
/// docs/runtime-abi.md). False when they do not fit in a key.
bool makeKey(int32_t callId, int32_t numOperands, void *const *operands,
             const int32_t *ranks, int32_t numAttrs, const int64_t *attrs,
             Key &key) {
  int32_t n = 0;
  key.size = -1;
  key.hash = 0;
  key.words[n++] = callId;
  key.words[n++] = numOperands;
  key.words[n++] = numAttrs;
  if (numOperands > 5 || numAttrs < 0 || numAttrs > 32)
    return false;
  for (int32_t i = 0; i < numOperands; ++i) {
    int32_t r = ranks[i];
    if (r < 0 || r > 5)
      return false;
    const int64_t *w = static_cast<const int64_t *>(operands[i]);
    key.words[n++] = r;
    std::memcpy(key.words + n, w + 3, 2 * r * sizeof(int64_t));
    n += 2 * r;
  }
  if (numAttrs > 0)
    std::memcpy(key.words + n, attrs, numAttrs * sizeof(int64_t));
  n += numAttrs;
  key.size = n;
  uint64_t h = 0;
  for (int32_t i = 0; i < n; ++i) {
    h = (h ^ static_cast<uint64_t>(key.words[i])) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 32;
  }
  key.hash = static_cast<size_t>(h);
  return true;
}

/// One cached primitive with the reorders around it.
struct Entry {
  dnnl::primitive prim;
  memory::desc scratchMd;
  // Operand i: the caller's layout, the primitive's, and the reorder
  // between them (caller -> primitive for inputs, back for the output).
  memory::desc user[3], prim_[3];
  bool reorder[3] = {false, false, false};
  dnnl::reorder reorders[3];
  // Post-ops: the bias and residual layouts; `manual` when oneDNN took no
  // post-op chain for this primitive (they run as a loop afterwards).
  memory::desc biasMd, resMd;
  bool manual = false;
  // The residual add as oneDNN's `sum` post-op (Conv): the residual is
  // reordered into the primitive's output before it runs.
  bool sum = false;
  dnnl::reorder resReorder;
  bool constWeights = false;
  // Reordered constant weights by the caller's weights address.
  std::unordered_map<const void *, memory> constWeightsMem;
  std::list<const Key *>::iterator lru;

  // What a cached call needs besides its buffers, set when the entry is
  // made: the post-op flags and clip bounds (for the loop of `manual`),
  // the dim the bias runs along, the output's rank, the weights argument.
  PostOps post;
  size_t channelDim = 1;
  int32_t rank = 0;
  int weightsArg = DNNL_ARG_WEIGHTS;
  // The output's argument (DNNL_ARG_DIFF_WEIGHTS for backward weights).
  int dstArg = DNNL_ARG_DST;
  // A MatMul's (its flag bits 6 and 7 are not the Conv layout bits).
  bool matmul = false;
  // A pooling call's (DISC_LIB_POOL): its operands are the input and the
  // output alone (no weights), mems 0 and 2.
  bool pool = false;
  // The memory objects of a run, made on the first one (`bound`) and
  // pointed at each call's buffers (set_data_handle; `handle` is what each
  // points at now): the caller's operands, their reordered temporaries,
  // the scratchpad, the bias and the residual. A layout with padding
  // (a blocked layout whose dims are not multiples of the block) is
  // pointed again on every call even at the same address: set_data_handle
  // zeroes the padding, which the buffer's previous user may have written.
  // A primitive made for one image of the batch (a Winograd Conv) runs
  // `images` times on the reordered input and output, memory objects
  // kImageSrc and kImageDst pointed at each image in turn.
  enum {
    kScratch = 6,
    kBias = 7,
    kRes = 8,
    kImageSrc = 9,
    kImageDst = 10,
    kNumMems = 11
  };
  int64_t images = 1;
  memory::desc imageMd[2];
  // A Winograd Conv (constant weights, packed once per layout).
  bool winograd = false;
  bool bound = false;
  memory mems[kNumMems];
  void *handle[kNumMems] = {};
  bool padded[kNumMems] = {};

  /// Bytes of the temporaries one run takes from the allocator: reordered
  /// operands (constant weights excluded: kept by the entry) and the
  /// scratchpad.
  int64_t temporaryBytes() const {
    int64_t n = static_cast<int64_t>(scratchMd.get_size());
    for (int i = 0; i < 3; ++i)
      if (reorder[i] && !(i == 1 && constWeights))
        n += static_cast<int64_t>(prim_[i].get_size());
    return n;
  }
};

/// The post-op chain oneDNN runs after the primitive (bias excluded: the
/// primitive takes it).
/// `sum`: the residual add as a `sum` post-op (the output holds the
/// residual when the primitive runs), else a `binary_add`. A MatMul's
/// scale is oneDNN's output scale, applied to the product before the
/// chain; its accumulation is a `sum` post-op.
dnnl::primitive_attr makeAttr(const PostOps &p, const memory::desc &resMd,
                              bool withPostOps, bool sum = false) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (withPostOps && p.alpha != 1.0f)
    attr.set_output_scales(0, {p.alpha});
  if (withPostOps && (p.res_() || p.act() || p.accumulate)) {
    dnnl::post_ops po;
    if (p.accumulate)
      po.append_sum(1.0f);
    else if (p.res_() && sum)
      po.append_sum(1.0f);
    else if (p.res_())
      po.append_binary(dnnl::algorithm::binary_add, resMd);
    if (p.flags & 4)
      po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    else if (p.flags & 8)
      po.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip_v2, p.lo, p.hi);
    else if (p.flags & 16)
      po.append_eltwise(1.0f, dnnl::algorithm::eltwise_logistic, 0.0f, 0.0f);
    else if (p.flags & 32)
      po.append_eltwise(1.0f, dnnl::algorithm::eltwise_tanh, 0.0f, 0.0f);
    else if (p.flags & kSwish)
      po.append_eltwise(1.0f, dnnl::algorithm::eltwise_swish, 1.0f, 0.0f);
    else if (p.flags & kHardSwish)
      po.append_eltwise(1.0f, dnnl::algorithm::eltwise_hardswish, 0.0f, 0.0f);
    else if (p.flags & kGeluErf)
      po.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    attr.set_post_ops(po);
  }
  return attr;
}

/// The arguments of a call (as LibraryCalls::call) with its key, and what
/// it is for: run with temporaries from `alloc`, or, with `tempBytes`, only
/// report their bytes there.
struct CallArgs {
  const Key &key;
  int32_t numOperands;
  void *const *operands;
  const int32_t *ranks;
  int32_t numAttrs;
  const int64_t *attrs;
  const ScratchAllocator &alloc;
  int64_t *tempBytes;
};

/// Integer Conv (DISC_LIB_CONV_INT): int32 operands holding 8-bit data
/// minus its zero points. oneDNN's int8 convolution takes u8 data with a
/// zero point and s8 weights whose zero point is 0 (oneDNN 2.6 dev guide,
/// "Quantization" and "Primitive Attributes: Quantization": the source zero
/// point is `primitive_attr::set_zero_points(DNNL_ARG_SRC, 0,
/// {DNNL_RUNTIME_S32_VAL})`, given at execution as
/// `DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC`; a padded position counts as
/// the zero point, i.e. 0 after centering, as the ONNX reference). So
///
///  * the input Xc [N, C, D...] becomes u8 `Xc + z` with `z = -min(Xc)`
///    (exact when max - min <= 255: ConvInteger's `x - x_zero_point`) and
///    zero point z, written channels last (NHWC, the layout oneDNN's int8
///    JIT kernels read);
///  * the weights Wc [OC, C/G, K...] become s8 `Wc - shift[oc]`, with
///    shift[oc] = 0 when the channel fits in [-128, 127], else
///    `min(Wc[oc]) + 128` (exact when the channel spans at most 256 values:
///    `w - w_zero_point` with a per-tensor or per-channel zero point; uint8
///    weights typically need it, int8 with zero point 0 do not);
///  * a shifted channel gets `shift[oc] * sum of Xc over its window` added
///    after the primitive (the window sums run over the per-group channel
///    sums S [N, G, D...], computed with the u8 copy).
///
/// The s8 weights are kept reordered by the entry with a copy of the int32
/// weights they came from, compared on every call (the weights are
/// usually computed by the model from constants into a fresh buffer).
/// Data outside those ranges, or an ISA without VNNI (where oneDNN's u8 x
/// s8 products may saturate in int16), run a direct int32 loop instead.
/// Temporaries (from the allocator, the same whichever way a call runs):
/// the u8 input, S, the primitive's scratchpad and, when the primitive
/// writes another layout, its output.
struct IntConvEntry {
  bool loop = false; // no primitive: always the direct loop
  dnnl::convolution_forward prim;
  memory::desc srcMd, userDst, primDst, scratchMd, wPlain;
  bool reorderDst = false;
  dnnl::reorder dstReorder;
  // The weights: their int32 source, the reordered s8 memory, the shifts.
  bool haveWeights = false, weightsFit = false, anyShift = false;
  std::vector<int32_t> wCopy, shift;
  memory wPrim;
  memory mems[4]; // src, dst (primitive's), scratchpad, zero point

  // The bytes of the u8 input and of the channel sums.
  int64_t srcBytes = 0, sumBytes = 0;

  int64_t temporaryBytes() const {
    int64_t n = srcBytes + sumBytes;
    if (loop)
      return n;
    n += static_cast<int64_t>(scratchMd.get_size());
    if (reorderDst)
      n += static_cast<int64_t>(primDst.get_size());
    return n;
  }
};

/// Up to 3 spatial dims as 3, the missing leading ones of size 1.
struct Spatial3 {
  int64_t size[3] = {1, 1, 1}, stride[3] = {0, 0, 0};
};

Spatial3 spatial3(const View &v) {
  Spatial3 s;
  size_t k = v.sizes.size() - 2;
  for (size_t i = 0; i < k; ++i) {
    s.size[3 - k + i] = v.sizes[2 + i];
    s.stride[3 - k + i] = v.strides[2 + i];
  }
  return s;
}

/// The window attributes of a k-D Conv as 3-D (unit leading dims).
struct Window3 {
  int64_t stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
};

Window3 window3(const ConvAttrs &ca) {
  Window3 w;
  size_t k = ca.strides.size();
  for (size_t i = 0; i < k; ++i) {
    w.stride[3 - k + i] = ca.strides[i];
    w.dil[3 - k + i] = ca.dilations[i];
    w.pad[3 - k + i] = ca.padBegin[i];
  }
  return w;
}

/// Calls `f(ki, ii)` for each in-bounds kernel position of output position
/// `o` (3-D), `ki` the kernel offset index and `ii` the input spatial
/// index, both flattened row-major.
template <typename F>
void forWindow(const int64_t o[3], const Spatial3 &in, const Spatial3 &ker,
               const Window3 &win, F f) {
  for (int64_t a = 0; a < ker.size[0]; ++a) {
    int64_t i0 = o[0] * win.stride[0] + a * win.dil[0] - win.pad[0];
    if (i0 < 0 || i0 >= in.size[0])
      continue;
    for (int64_t b = 0; b < ker.size[1]; ++b) {
      int64_t i1 = o[1] * win.stride[1] + b * win.dil[1] - win.pad[1];
      if (i1 < 0 || i1 >= in.size[1])
        continue;
      for (int64_t c = 0; c < ker.size[2]; ++c) {
        int64_t i2 = o[2] * win.stride[2] + c * win.dil[2] - win.pad[2];
        if (i2 < 0 || i2 >= in.size[2])
          continue;
        f(a, b, c, i0, i1, i2);
      }
    }
  }
}

/// True when oneDNN's int8 kernels on this CPU multiply u8 x s8 without an
/// int16 intermediate (VNNI or AMX).
bool exactInt8Isa() {
  using dnnl::cpu_isa;
  cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == cpu_isa::avx2_vnni || isa == cpu_isa::avx512_core_vnni ||
         isa == cpu_isa::avx512_core_bf16 || isa == cpu_isa::avx512_core_amx;
}

} // namespace

struct LibraryCalls::Impl {
  size_t capacity;
  int32_t threads = 0;
  std::mutex mutex;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::unordered_map<Key, std::unique_ptr<Entry>, KeyHash> cache;
  std::list<const Key *> lru; // most recently used first
  /// Integer Conv entries (their own kind; cleared when `capacity` is
  /// reached).
  std::unordered_map<Key, std::unique_ptr<IntConvEntry>, KeyHash> intConvs;
  int64_t created = 0;
  // Whether Conv calls may run as Winograd convolutions, and the entries
  // made so.
  bool allowWinograd = true;
  int64_t winograd = 0;
  /// Constant weights in a primitive's layout by the caller's weights
  /// address, with the caller's descriptor of them (the same buffer read
  /// transposed is other weights), shared by every entry that reads the
  /// same weights in the same layout: a Conv's primitives at several input
  /// shapes read one copy, so a shape change finds its weights where the
  /// previous shape's runs left them in the caches (MobileNetV2 holds 14 MB of
  /// them), and the session keeps one copy, not one per shape.
  std::unordered_map<const void *, std::vector<std::pair<memory::desc, memory>>>
      packedWeights;
  /// The key of the current call (guarded by `mutex`; kept here rather
  /// than on the stack: it is about 700 bytes).
  Key key;

  Entry *lookup(const Key &key) {
    auto it = cache.find(key);
    if (it == cache.end())
      return nullptr;
    lru.splice(lru.begin(), lru, it->second->lru);
    return it->second.get();
  }
  Entry *insert(const Key &key, std::unique_ptr<Entry> e) {
    if (key.size < 0)
      fail(1, "library call: operands of rank above 5 or more than 32 "
              "attributes");
    while (cache.size() >= capacity && !lru.empty()) {
      cache.erase(cache.find(*lru.back()));
      lru.pop_back();
    }
    auto it = cache.emplace(key, std::move(e)).first;
    lru.push_front(&it->first);
    it->second->lru = lru.begin();
    ++created;
    return it->second.get();
  }

  /// Fills the reorder slots of `e` for operand `i` (`toPrim`: caller to
  /// primitive layout, else back).
  void setReorder(Entry &e, int i, bool toPrim) {
    e.reorder[i] = !(e.user[i] == e.prim_[i]);
    if (!e.reorder[i])
      return;
    e.reorders[i] = toPrim ? dnnl::reorder(dnnl::reorder::primitive_desc(
                                 engine, e.user[i], engine, e.prim_[i]))
                           : dnnl::reorder(dnnl::reorder::primitive_desc(
                                 engine, e.prim_[i], engine, e.user[i]));
  }

  /// Runs `p` with `n` arguments on the stream (the C API: the C++ one
  /// copies its argument map into a vector on every call).
  void run(const dnnl::primitive &p, const dnnl_exec_arg_t *args, int n) {
    dnnl::error::wrap_c_api(
        dnnl_primitive_execute(p.get(), stream.get(), n, args),
        "could not execute a primitive");
  }

  /// Points memory object `i` of `e` at `data`.
  static void point(Entry &e, int i, void *data) {
    if (e.handle[i] == data && !e.padded[i])
      return;
    e.mems[i].set_data_handle(data);
    e.handle[i] = data;
  }

  /// Makes the memory objects of `e`, pointing at nothing yet.
  void bind(Entry &e) {
    for (int i = 0; i < 3; ++i) {
      if (e.pool && i == 1)
        continue; // no weights
      e.mems[i] = memory(e.user[i], engine, DNNL_MEMORY_NONE);
      if (e.reorder[i] && !(i == 1 && e.constWeights))
        e.mems[3 + i] = memory(e.prim_[i], engine, DNNL_MEMORY_NONE);
    }
    if (e.scratchMd.get_size())
      e.mems[Entry::kScratch] = memory(e.scratchMd, engine, DNNL_MEMORY_NONE);
    if (e.post.bias_())
      e.mems[Entry::kBias] = memory(e.biasMd, engine, DNNL_MEMORY_NONE);
    if (e.post.res_() && !e.manual)
      e.mems[Entry::kRes] = memory(e.resMd, engine, DNNL_MEMORY_NONE);
    if (e.images > 1) {
      e.mems[Entry::kImageSrc] = memory(e.imageMd[0], engine, DNNL_MEMORY_NONE);
      e.mems[Entry::kImageDst] = memory(e.imageMd[1], engine, DNNL_MEMORY_NONE);
    }
    for (int i = 0; i < Entry::kNumMems; ++i) {
      e.handle[i] = nullptr;
      e.padded[i] = false;
      if (!e.mems[i])
        continue;
      memory::desc md = e.mems[i].get_desc();
      for (int d = 0; d < md.data.ndims; ++d)
        e.padded[i] |= md.data.padded_dims[d] != md.data.dims[d];
    }
    e.bound = true;
  }

  /// Runs `e` on the caller's buffers `data[0..2]` (inputs, then output)
  /// and its post-op operands `data[3]` (bias) and `data[4]` (residual),
  /// null where the call has none. Allocates nothing but the temporaries
  /// (from `alloc`) on an entry that ran before.
  void execute(Entry &e, float *const data[5], const ScratchAllocator &alloc) {
    if (!e.bound)
      bind(e);
    ScratchBuffer t0(alloc, 64), t1(alloc, 64), t2(alloc, 64),
        scratch(alloc, 64);
    ScratchBuffer *temps[3] = {&t0, &t1, &t2};
    dnnl_memory_t user[3], prim[3];
    for (int i = 0; i < 3; ++i) {
      if (e.pool && i == 1) {
        user[i] = prim[i] = nullptr; // no weights
        continue;
      }
      point(e, i, data[i]);
      user[i] = prim[i] = e.mems[i].get();
    }
    for (int i = 0; i < 3; ++i) {
      if (!e.reorder[i])
        continue;
      if (i == 1 && e.constWeights) {
        auto it = e.constWeightsMem.find(data[1]);
        if (it == e.constWeightsMem.end()) {
          auto &layouts = packedWeights[data[1]];
          auto same = std::find_if(
              layouts.begin(), layouts.end(), [&](const auto &packed) {
                return packed.first == e.user[1] &&
                       packed.second.get_desc() == e.prim_[1];
              });
          if (same == layouts.end()) {
            memory w(e.prim_[1], engine);
            dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user[1]},
                                       {DNNL_ARG_TO, w.get()}};
            // A Winograd entry's reorder holds a scratchpad of 16 x IC x
            // OC floats while it exists: made for each packing only.
            if (!e.reorders[1])
              setReorder(e, 1, true);
            run(e.reorders[1], args, 2);
            if (e.winograd)
              e.reorders[1] = dnnl::reorder();
            layouts.emplace_back(e.user[1], w);
            same = std::prev(layouts.end());
          }
          it = e.constWeightsMem.emplace(data[1], same->second).first;
        }
        prim[1] = it->second.get();
        continue;
      }
      size_t bytes = e.prim_[i].get_size();
      if (!temps[i]->allocate(static_cast<int64_t>(bytes)))
        fail(2, "out of memory: a temporary of " + std::to_string(bytes) +
                    " bytes failed");
      point(e, 3 + i, temps[i]->p);
      prim[i] = e.mems[3 + i].get();
      // An accumulating output's addend goes in as well.
      if (i < 2 || e.post.accumulate) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user[i]},
                                   {DNNL_ARG_TO, prim[i]}};
        run(e.reorders[i], args, 2);
      }
    }
    size_t sbytes = e.scratchMd.get_size();
    if (!scratch.allocate(static_cast<int64_t>(sbytes)))
      fail(2, "out of memory: a scratchpad of " + std::to_string(sbytes) +
                  " bytes failed");
    dnnl_exec_arg_t args[6] = {
        {DNNL_ARG_SRC, prim[0]}, {e.weightsArg, prim[1]}, {e.dstArg, prim[2]}};
    int n = 3;
    if (e.pool) {
      args[1] = args[2];
      n = 2;
    }
    if (sbytes) {
      point(e, Entry::kScratch, scratch.p);
      args[n++] = {DNNL_ARG_SCRATCHPAD, e.mems[Entry::kScratch].get()};
    }
    if (e.post.bias_()) {
      point(e, Entry::kBias, data[3]);
      args[n++] = {DNNL_ARG_BIAS, e.mems[Entry::kBias].get()};
    }
    if (e.post.res_() && !e.manual) {
      point(e, Entry::kRes, data[4]);
      dnnl_memory_t res = e.mems[Entry::kRes].get();
      if (e.sum) {
        dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, res}, {DNNL_ARG_TO, prim[2]}};
        run(e.resReorder, r, 2);
      } else {
        args[n++] = {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, res};
      }
    }
    if (e.images == 1) {
      run(e.prim, args, n);
    } else {
      void *src = nullptr, *dst = nullptr;
      dnnl::error::wrap_c_api(dnnl_memory_get_data_handle(prim[0], &src),
                              "could not read a data handle");
      dnnl::error::wrap_c_api(dnnl_memory_get_data_handle(prim[2], &dst),
                              "could not read a data handle");
      size_t srcBytes = e.imageMd[0].get_size(),
             dstBytes = e.imageMd[1].get_size();
      for (int64_t i = 0; i < e.images; ++i) {
        point(e, Entry::kImageSrc, static_cast<char *>(src) + i * srcBytes);
        point(e, Entry::kImageDst, static_cast<char *>(dst) + i * dstBytes);
        args[0].memory = e.mems[Entry::kImageSrc].get();
        args[2].memory = e.mems[Entry::kImageDst].get();
        run(e.prim, args, n);
      }
    }
    if (e.reorder[2]) {
      dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, prim[2]}, {DNNL_ARG_TO, user[2]}};
      run(e.reorders[2], r, 2);
    }
    stream.wait();
  }

  /// Runs `e` on inputs `in0`, `in1`, output `out` and the post-op
  /// operands of `p` as `execute`, then the post-op loop of an entry that
  /// took no chain; or, with `tempBytes`, only sets `*tempBytes` to the
  /// bytes of its temporaries.
  void runEntry(Entry &e, const View &in0, const View &in1, const View &out,
                const PostOps &p, const ScratchAllocator &alloc,
                int64_t *tempBytes) {
    if (tempBytes) {
      *tempBytes = e.temporaryBytes();
      return;
    }
    float *data[5] = {in0.data, in1.data, out.data, p.bias.data, p.res.data};
    execute(e, data, alloc);
    if (e.manual)
      applyPostOps(out, p, false, true, true, e.channelDim);
  }

  /// `md` (a blocked layout of one image: batch dim 1) for `n` images one
  /// after another.
  static memory::desc withBatch(const memory::desc &md, int64_t n) {
    dnnl_memory_desc_t d = md.data;
    d.dims[0] = d.padded_dims[0] = n;
    return memory::desc(d);
  }

  /// Makes `e` run the Conv primitive of `pd`, made for one image, on `n`
  /// images in turn: false when its input or output layout does not hold
  /// the images one after another (a batch stride of one image's size).
  static bool batchImages(Entry &e,
                          const dnnl::convolution_forward::primitive_desc &pd,
                          int64_t n) {
    memory::desc image[2] = {pd.src_desc(), pd.dst_desc()};
    for (const memory::desc &md : image)
      if (md.data.format_kind != dnnl_blocked || md.data.dims[0] != 1 ||
          md.data.format_desc.blocking.strides[0] * 4 !=
              static_cast<int64_t>(md.get_size()) ||
          withBatch(md, n).get_size() != n * md.get_size())
        return false;
    e.images = n;
    e.imageMd[0] = image[0];
    e.imageMd[1] = image[1];
    return true;
  }

  /// Sets the primitive's layouts of the operands of `e`, their reorders
  /// and the scratchpad from the primitive descriptor `pd` of a Conv or
  /// ConvTranspose.
  template <typename PrimitiveDesc>
  void setLayouts(Entry &e, const PrimitiveDesc &pd) {
    e.prim_[0] = pd.src_desc();
    e.prim_[1] = pd.weights_desc();
    e.prim_[2] = pd.dst_desc();
    if (e.images > 1) {
      e.prim_[0] = withBatch(e.imageMd[0], e.images);
      e.prim_[2] = withBatch(e.imageMd[1], e.images);
    }
    for (int i = 0; i < 3; ++i)
      setReorder(e, i, i < 2);
    e.scratchMd = pd.scratchpad_desc();
  }

  /// Runs a call whose entry is cached: its operands were checked when the
  /// entry was made (same key: same ranks, sizes, strides and attributes),
  /// so only the buffers are read. `tempBytes` as in `dispatch`.
  void runCached(Entry &e, int32_t numOperands, void *const *operands,
                 const ScratchAllocator &alloc, int64_t *tempBytes) {
    if (tempBytes) {
      *tempBytes = e.temporaryBytes();
      return;
    }
    float *data[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
    if (e.pool) {
      data[0] = dataOf(operands[0]);
      data[2] = dataOf(operands[1]);
      execute(e, data, alloc);
      return;
    }
    for (int32_t i = 0; i < numOperands && i < 3; ++i)
      data[i] = dataOf(operands[i]);
    int32_t next = 3;
    if (e.post.bias_())
      data[3] = dataOf(operands[next++]);
    if (e.post.res_())
      data[4] = dataOf(operands[next++]);
    execute(e, data, alloc);
    if (!e.manual)
      return;
    // The post-op loop of a primitive that took no chain (rare: it reads
    // the views again).
    // NHWC buffers get the channels-last strides, as when the entry was
    // made (their density was checked then).
    PostOps p = e.post;
    View y = readView(operands[2], e.rank);
    if (!e.matmul && (p.flags & kNhwcOutput))
      reinterpretNhwc(y, "Conv library call: ", "output");
    next = 3;
    if (p.bias_())
      p.bias = readView(operands[next++], 1);
    if (p.res_()) {
      p.res = readView(operands[next++], e.rank);
      if (!e.matmul && (p.flags & kNhwcResidual))
        reinterpretNhwc(p.res, "Conv library call: ", "residual");
    }
    applyPostOps(y, p, false, true, true, e.channelDim);
  }

  /// Reads the post-op operands (after the output) of a call.
  PostOps readPostOps(const int64_t *post, int32_t numPost, int32_t numOperands,
                      void *const *operands, const int32_t *ranks,
                      const View &y, int64_t channels, const char *name);

  // A call whose entry is not cached: checks its operands, makes the
  // entry under `key` (none for an empty output) and runs it.
  Entry *matmulEntry(const Key &key, View &a, View &b, View &c,
                     const PostOps &p);
  void matmul(const CallArgs &call);
  void deconv(const CallArgs &call);
  void convBackwardFilter(const CallArgs &call);
  void conv(const CallArgs &call);
  void pool(const CallArgs &call);
  void convInt(const CallArgs &call);
};

PostOps LibraryCalls::Impl::readPostOps(const int64_t *post, int32_t numPost,
                                        int32_t numOperands,
                                        void *const *operands,
                                        const int32_t *ranks, const View &y,
                                        int64_t channels, const char *name) {
  PostOps p;
  int64_t flags = post[0];
  p.flags = flags;
  std::string who = std::string(name) + " library call: ";
  int64_t act = flags & kActivations;
  bool conv = std::strcmp(name, "Conv") == 0;
  // MatMul: a scale is not combined with a bias, an accumulation not with
  // a residual operand.
  bool scale = !conv && (flags & kMatmulScale);
  p.accumulate = !conv && (flags & kMatmulAccumulate);
  if (flags < 0 ||
      (flags & ~(kActivations | (conv ? 511 : 255 | kMatmulConstWeights))) !=
          0 ||
      (act & (act - 1)) != 0 ||
      (conv && (flags & kNhwcResidual) && !(flags & 2)) ||
      (scale && (flags & 1)) || (p.accumulate && (flags & 2)))
    fail(1, who + "bad post-op flags " + std::to_string(flags));
  int32_t more = ((flags & 8) ? 2 : 0) + (scale ? 1 : 0);
  if (numPost != 1 + more)
    fail(1, who + "post-op flags " + std::to_string(flags) + " take " +
                std::to_string(more) + " more attributes");
  auto f32 = [](int64_t bits) {
    uint32_t u = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  };
  if (scale)
    p.alpha = f32(post[numPost - 1]);
  if (flags & 8) {
    p.lo = f32(post[1]);
    p.hi = f32(post[2]);
    if (!(p.lo <= p.hi))
      fail(1, who + "clip bounds " + std::to_string(p.lo) + " > " +
                  std::to_string(p.hi));
  }
  int32_t want = operandsFor(flags);
  if (numOperands != want)
    fail(1, who + "expects " + std::to_string(want) + " operands");
  PostOpOperands o = readPostOpOperands(
      flags, operands, ranks, static_cast<int32_t>(y.sizes.size()), who,
      "the output's rank", [&](const View &bias) {
        if (bias.sizes[0] != channels)
          fail(1, who + "bias of " + std::to_string(bias.sizes[0]) +
                      " elements for " + std::to_string(channels) +
                      " channels");
      });
  p.bias = std::move(o.bias);
  p.res = std::move(o.residual);
  if (p.res_()) {
    if (p.res.sizes != y.sizes)
      fail(1, who + "residual " + dimsText(p.res.sizes) + " and output " +
                  dimsText(y.sizes) + " differ");
    if (conv && (flags & kNhwcResidual))
      reinterpretNhwc(p.res, who, "residual");
  }
  return p;
}

void LibraryCalls::Impl::matmul(const CallArgs &call) {
  const auto &[key, numOperands, operands, ranks, numAttrs, attrs, alloc,
               tempBytes] = call;
  if (numAttrs < 2 || numAttrs > 6)
    fail(1, "MatMul library call: expects 2 to 6 attributes");
  if (ranks[0] != 3 || ranks[1] != 3 || ranks[2] != 3)
    fail(1, "MatMul library call: operands must have rank 3");
  View a = readView(operands[0], 3), b = readView(operands[1], 3),
       c = readView(operands[2], 3);
  if (attrs[0]) {
    std::swap(a.sizes[1], a.sizes[2]);
    std::swap(a.strides[1], a.strides[2]);
  }
  if (attrs[1]) {
    std::swap(b.sizes[1], b.sizes[2]);
    std::swap(b.strides[1], b.strides[2]);
  }
  int64_t batch = c.sizes[0], m = c.sizes[1], n = c.sizes[2], k = a.sizes[2];
  auto batchOk = [&](int64_t x) { return x == batch || x == 1; };
  if (b.sizes[1] != k || a.sizes[1] != m || b.sizes[2] != n ||
      !batchOk(a.sizes[0]) || !batchOk(b.sizes[0]))
    fail(1, "MatMul library call: shapes " + dimsText(a.sizes) + " x " +
                dimsText(b.sizes) + " -> " + dimsText(c.sizes) +
                " do not match");
  PostOps p;
  if (numAttrs > 2)
    p = readPostOps(attrs + 2, numAttrs - 2, numOperands, operands, ranks, c, n,
                    "MatMul");
  else if (numOperands != 3)
    fail(1, "MatMul library call: expects 3 operands");
  if (batch == 0 || m == 0 || n == 0)
    return;
  if (k == 0 || a.sizes[0] == 0 || b.sizes[0] == 0) {
    if (tempBytes || p.accumulate) // C += alpha * 0
      return;
    zeroFill(c);
    applyPostOps(c, p, true, true, true, 2);
    return;
  }
  Entry *e = matmulEntry(key, a, b, c, p);
  runEntry(*e, a, b, c, p, alloc, tempBytes);
}

Entry *LibraryCalls::Impl::matmulEntry(const Key &key, View &a, View &b,
                                       View &c, const PostOps &p) {
  if (Entry *e = lookup(key))
    return e;
  auto ne = std::make_unique<Entry>();
  ne->user[0] = stridedDesc(a.sizes, a.strides);
  ne->user[1] = stridedDesc(b.sizes, b.strides);
  ne->user[2] = stridedDesc(c.sizes, c.strides);
  if (p.bias_())
    ne->biasMd =
        stridedDesc({1, 1, p.bias.sizes[0]},
                    {p.bias.sizes[0], p.bias.sizes[0], p.bias.strides[0]});
  if (p.res_())
    ne->resMd = stridedDesc(p.res.sizes, p.res.strides);
  auto make = [&](const memory::desc *md, bool post) {
    dnnl::primitive_attr attr = makeAttr(p, ne->resMd, post);
    auto d = p.bias_() ? dnnl::matmul::desc(md[0], md[1], ne->biasMd, md[2])
                       : dnnl::matmul::desc(md[0], md[1], md[2]);
    return dnnl::matmul::primitive_desc(d, attr, engine);
  };
  memory::desc dense[3] = {denseDesc(a.sizes), denseDesc(b.sizes),
                           denseDesc(c.sizes)};
  dnnl::matmul::primitive_desc pd;
  bool done = false;
  // Constant weights of a single product (batch 1, as nn.Linear on N-D
  // inputs is called): the 2-D product with the weights in the layout the
  // kernel picks (brgemm's BA16a64b; for 3-D descriptors oneDNN 2.6 keeps
  // the plain layout and packs it on every call), reordered once per
  // weights address and kept. A [768, 3072] nn.Linear at 197 rows: 11.4
  // -> 5.8 ms on one thread.
  if ((p.flags & kMatmulConstWeights) && a.sizes[0] == 1 && b.sizes[0] == 1 &&
      c.sizes[0] == 1) {
    auto drop = [](const View &v) {
      return stridedDesc({v.sizes[1], v.sizes[2]},
                         {v.strides[1], v.strides[2]});
    };
    memory::desc md[3] = {drop(a),
                          memory::desc({b.sizes[1], b.sizes[2]},
                                       memory::data_type::f32,
                                       memory::format_tag::any),
                          drop(c)};
    memory::desc biasMd = ne->biasMd, resMd = ne->resMd;
    if (p.bias_())
      ne->biasMd = stridedDesc({1, p.bias.sizes[0]},
                               {p.bias.sizes[0], p.bias.strides[0]});
    if (p.res_())
      ne->resMd = drop(p.res);
    try {
      pd = make(md, true);
      ne->user[0] = md[0];
      ne->user[1] = drop(b);
      ne->user[2] = md[2];
      ne->prim_[0] = md[0];
      ne->prim_[1] = pd.weights_desc();
      ne->prim_[2] = md[2];
      ne->constWeights = true;
      done = true;
    } catch (const dnnl::error &) {
      ne->biasMd = biasMd;
      ne->resMd = resMd;
    }
  }
  // The caller's strides with the post-op chain, then on dense copies;
  // then the same without the chain (it runs as a loop afterwards), but
  // for an accumulation (the loop would have lost the addend).
  for (bool post : {true, false}) {
    if (done)
      break;
    if (!post && p.accumulate)
      break;
    const memory::desc *layouts[2] = {ne->user, dense};
    for (const memory::desc *md : layouts) {
      try {
        pd = make(md, post);
        for (int i = 0; i < 3; ++i)
          ne->prim_[i] = md[i];
        done = true;
      } catch (const dnnl::error &) {
      }
      if (done)
        break;
    }
    if (done) {
      ne->manual = !post;
      break;
    }
  }
  if (!done)
    pd = make(dense, p.accumulate); // throws the reason
  for (int i = 0; i < 3; ++i)
    setReorder(*ne, i, i < 2);
  ne->scratchMd = pd.scratchpad_desc();
  ne->prim = dnnl::matmul(pd);
  ne->post = p;
  ne->post.bias = ne->post.res = View();
  ne->channelDim = 2;
  ne->rank = 3;
  ne->matmul = true;
  return insert(key, std::move(ne));
}

/// Whether a Conv runs as oneDNN's Winograd convolution F(2x2, 3x3) (on
/// nChw16c data; Lavin and Gray, "Fast Algorithms for Convolutional Neural
/// Networks", CVPR 2016) rather than its direct kernels: a 2-D 3x3 Conv of
/// constant weights (transformed once, not per call), stride 1, no
/// dilation, one group, with 16 or more input and 64 or more output
/// channels, at most 128 x 128 channel pairs, an output of at least
/// 8 x 8 and at most 32768 pixels over the batch. There the Winograd
/// kernel, with the reorders of the input and the output from and to the
/// caller's layout, takes 0.58-0.73 of the direct kernel's time on
/// AVX-512 (benchmarks/conv_algorithms.py; docs/performance.md, *Winograd
/// convolutions*). With fewer
/// channels the transforms dominate. The nChw16c copies of the input and
/// output are temporaries of the call, counted in the peak: the pixel
/// bound keeps them small where the gain shrinks (0.92 at 224 x 224).
/// Larger weights are transformed slowly (about 50 ms for 512 x 512
/// channels, once per weights and layout, in the first run) into 16/9 of
/// their size, for 0-6% of a whole model's time (ResNet-18's and the NHWC
/// ConvNet's 256 x 256 Convs). DISC_CONV_WINOGRAD=0 turns it off
/// (measurements). The arithmetic is FP32: results differ from the direct
/// kernel's by rounding, whose error is no larger. Sessions of training
/// steps keep the direct kernels: the BatchNorm backward over a few values
/// per channel amplifies any rounding difference (ResNet-18's SGD step at
/// 3x3x48x64 moves 1-31% off the float64 update with Winograd, 3.5e-4
/// with the direct kernels; test/e2e/train_step.py).
static bool winogradPays(const memory::dims &x, const memory::dims &w,
                         const memory::dims &y, const ConvAttrs &ca) {
  static const char *env = std::getenv("DISC_CONV_WINOGRAD");
  if (env && std::string(env) == "0")
    return false;
  if (x.size() != 4 || !ca.constWeights || ca.groups != 1 || w[2] != 3 ||
      w[3] != 3)
    return false;
  for (int i = 0; i < 2; ++i)
    if (ca.strides[i] != 1 || ca.dilations[i] != 1)
      return false;
  constexpr int64_t kMinInputChannels = 16, kMinOutputChannels = 64;
  constexpr int64_t kMaxChannelPairs = 128 * 128, kMinSide = 8;
  constexpr int64_t kMaxPixels = 32768;
  return w[1] >= kMinInputChannels && w[0] >= kMinOutputChannels &&
         w[0] * w[1] <= kMaxChannelPairs && y[2] >= kMinSide &&
         y[3] >= kMinSide && y[0] * y[2] * y[3] <= kMaxPixels;
}

void LibraryCalls::Impl::conv(const CallArgs &call) {
  const auto &[key, numOperands, operands, ranks, numAttrs, attrs, alloc,
               tempBytes] = call;
  int32_t r = ranks[0];
  int64_t k = r - 2;
  if (k < 1 || k > 3 || ranks[1] != r || ranks[2] != r ||
      (numAttrs != 2 + 4 * k && numAttrs != 3 + 4 * k && numAttrs != 5 + 4 * k))
    fail(1, "Conv library call: operands must have equal rank 3..5 and " +
                std::to_string(2 + 4 * k) + ", " + std::to_string(3 + 4 * k) +
                " or " + std::to_string(5 + 4 * k) + " attributes");
  View x = readView(operands[0], r), w = readView(operands[1], r),
       y = readView(operands[2], r);
  ConvAttrs ca = readConvAttrs(numAttrs, attrs, k);
  int64_t groups = ca.groups;
  const memory::dims &strides = ca.strides, &dil = ca.dilations,
                     &padL = ca.padBegin, &padR = ca.padEnd;
  int64_t oc = w.sizes[0], cg = w.sizes[1];
  bool ok =
      groups >= 1 && x.sizes[1] == groups * cg && oc % groups == 0 &&
      y.sizes[0] == x.sizes[0] && y.sizes[1] == oc &&
      convSpatialMatches(x.sizes, w.sizes, y.sizes, strides, dil, padL, padR);
  if (!ok)
    fail(1, "Conv library call (group " + std::to_string(groups) +
                "): shapes " + dimsText(x.sizes) + " * " + dimsText(w.sizes) +
                " -> " + dimsText(y.sizes) + " do not match");
  PostOps p;
  if (ca.numPost > 0)
    p = readPostOps(ca.post, ca.numPost, numOperands, operands, ranks, y, oc,
                    "Conv");
  else if (numOperands != 3)
    fail(1, "Conv library call: expects 3 operands");
  // NHWC buffers: their views get the channels-last strides.
  if (p.flags & kNhwcInput)
    reinterpretNhwc(x, "Conv library call: ", "input");
  if (p.flags & kNhwcOutput)
    reinterpretNhwc(y, "Conv library call: ", "output");
  if (volume(y.sizes) == 0)
    return;
  if (cg == 0 || volume(w.sizes) == 0) {
    if (tempBytes)
      return;
    zeroFill(y);
    applyPostOps(y, p, true, true, true, 1);
    return;
  }
  Entry *e = lookup(key);
  if (!e) {
    auto ne = std::make_unique<Entry>();
    ne->constWeights = ca.constWeights;
    ne->user[0] = convUserDesc(x, p.flags & kNhwcInput);
    ne->user[2] = convUserDesc(y, p.flags & kNhwcOutput);
    memory::dims wSizes = w.sizes, wStrides = w.strides;
    if (groups > 1) {
      wSizes = {groups, oc / groups};
      wStrides = {oc / groups * w.strides[0], w.strides[0]};
      for (int32_t i = 1; i < r; ++i) {
        wSizes.push_back(w.sizes[i]);
        wStrides.push_back(w.strides[i]);
      }
    }
    ne->user[1] = stridedDesc(wSizes, wStrides);
    if (p.bias_())
      ne->biasMd = stridedDesc({oc}, p.bias.strides);
    if (p.res_())
      ne->resMd = convUserDesc(p.res, p.flags & kNhwcResidual);
    memory::dims dilates = oneDnnDilations(dil);
    auto make = [&](const memory::desc &src, const memory::desc &dst, bool post,
                    dnnl::algorithm alg = dnnl::algorithm::convolution_direct) {
      dnnl::primitive_attr attr = makeAttr(p, ne->resMd, post, /*sum=*/true);
      auto d = p.bias_()
                   ? dnnl::convolution_forward::desc(
                         dnnl::prop_kind::forward_inference, alg, src,
                         anyDesc(wSizes), ne->biasMd, dst, strides, dilates,
                         padL, padR)
                   : dnnl::convolution_forward::desc(
                         dnnl::prop_kind::forward_inference, alg, src,
                         anyDesc(wSizes), dst, strides, dilates, padL, padR);
      return dnnl::convolution_forward::primitive_desc(d, attr, engine);
    };
    // The caller's plain layouts first: no per-call reorders of the input
    // and output. When only the reference or the im2col+GEMM kernel takes
    // them, let oneDNN pick its blocked layouts (nChw16c on AVX-512) and
    // reorder around the primitive: the direct JIT kernels are 3-5x faster
    // than GEMM on ResNet's 3x3 convs, the reorders are memory-bound copies.
    // DISC_CONV_LAYOUT=plain or =blocked forces one (measurements). The
    // post-op chain runs inside the primitive where a kernel takes it, else
    // as a loop afterwards.
    dnnl::convolution_forward::primitive_desc pd;
    bool done = false;
    static const char *layoutEnv = std::getenv("DISC_CONV_LAYOUT");
    std::string layout = layoutEnv ? layoutEnv : "auto";
    // Winograd: oneDNN's F(2x2, 3x3) kernel for the whole batch, else
    // made for one image and run image by image (oneDNN offers it for a
    // batch of at most min(threads, 28) images that fits its cache rule).
    // Its F(4x4, 3x3) kernel is never taken: its rounding error is 2-3x
    // the direct kernel's (on sums of 576 products: 6e-5 against 2.5e-5;
    // F(2x2, 3x3) 1e-5).
    if (allowWinograd && winogradPays(x.sizes, w.sizes, y.sizes, ca)) {
      std::vector<int64_t> batches = {x.sizes[0]};
      if (x.sizes[0] > 1)
        batches.push_back(1);
      for (int64_t mb : batches) {
        memory::dims xs = x.sizes, ys = y.sizes;
        xs[0] = ys[0] = mb;
        try {
          auto wpd = make(anyDesc(xs), anyDesc(ys), /*post=*/true,
                          dnnl::algorithm::convolution_winograd);
          // oneDNN's first choice only: stepping its iterator on from a
          // Winograd kernel (next_impl) crashed now and then in oneDNN 2.6.
          bool ok = std::string(wpd.impl_info_str()).find("wino_2x3") !=
                    std::string::npos;
          // oneDNN reorders into the Winograd weights only from dense
          // OIHW or HWIO weights (a view of other strides stays direct).
          if (ok)
            (void)dnnl::reorder::primitive_desc(engine, ne->user[1], engine,
                                                wpd.weights_desc());
          if (ok && mb != x.sizes[0])
            ok = batchImages(*ne, wpd, x.sizes[0]);
          if (ok) {
            pd = wpd;
            done = ne->winograd = true;
            break;
          }
        } catch (const dnnl::error &) {
        }
      }
      winograd += done;
    }
    for (bool post : {true, false}) {
      if (done)
        break;
      bool plain = false, plainOk = false;
      try {
        pd = make(ne->user[0], ne->user[2], post);
        std::string impl = pd.impl_info_str();
        plainOk = impl.find("ref") == std::string::npos;
        plain = plainOk && layout != "blocked" &&
                (layout == "plain" || impl.find("gemm") == std::string::npos);
      } catch (const dnnl::error &) {
      }
      if (!plain) {
        try {
          pd = make(anyDesc(x.sizes), anyDesc(y.sizes), post);
          plain = true;
        } catch (const dnnl::error &) {
          if (plainOk) {
            pd = make(ne->user[0], ne->user[2], post);
            plain = true;
          }
        }
      }
      if (plain) {
        ne->manual = !post;
        done = true;
        break;
      }
    }
    if (!done)
      pd = make(anyDesc(x.sizes), anyDesc(y.sizes), false); // throws the reason
    setLayouts(*ne, pd);
    if (ne->winograd)
      ne->reorders[1] = dnnl::reorder(); // made when weights are packed
    if (p.res_() && !ne->manual) {
      ne->sum = true;
      ne->resReorder = dnnl::reorder(dnnl::reorder::primitive_desc(
          engine, ne->resMd, engine, ne->prim_[2]));
    }
    ne->prim = dnnl::convolution_forward(pd);
    ne->post = p;
    ne->post.bias = ne->post.res = View();
    ne->channelDim = 1;
    ne->rank = r;
    e = insert(key, std::move(ne));
  }
  runEntry(*e, x, w, y, p, alloc, tempBytes);
}

/// DISC_LIB_POOL (abi.h): oneDNN's pooling_forward (inference) on the
/// caller's layouts (NCHW strides, or channels-last for the NHWC bits). The
/// end pads follow from the sizes: the smallest non-negative pad with
/// floor((D + begin + end - K) / s) + 1 = O, which covers ceil_mode's last
/// windows; max pooling never takes a padding element and the average
/// that does not count padding divides by the window's elements inside the
/// input, as ONNX; the average that counts it is called only without
/// ceil_mode (the compiler's rule), where that end pad is ONNX's.
void LibraryCalls::Impl::pool(const CallArgs &call) {
  const auto &[key, numOperands, operands, ranks, numAttrs, attrs, alloc,
               tempBytes] = call;
  const char *who = "pooling library call";
  int32_t r = ranks[0];
  int64_t k = r - 2;
  if (numOperands != 2 || k < 1 || k > 3 || ranks[1] != r ||
      numAttrs != 2 + 3 * k)
    fail(1, std::string(who) + ": 2 operands of equal rank 3..5 and " +
                std::to_string(2 + 3 * k) + " attributes");
  View x = readView(operands[0], r), y = readView(operands[1], r);
  int64_t kind = attrs[0], flags = attrs[1 + 3 * k];
  memory::dims window(attrs + 1, attrs + 1 + k),
      strides(attrs + 1 + k, attrs + 1 + 2 * k),
      padL(attrs + 1 + 2 * k, attrs + 1 + 3 * k), padR(k);
  if (kind < 0 || kind > 2 || (flags & ~(kNhwcInput | kNhwcOutput)) != 0)
    fail(1, std::string(who) + ": bad kind " + std::to_string(kind) +
                " or flags " + std::to_string(flags));
  bool ok = y.sizes[0] == x.sizes[0] && y.sizes[1] == x.sizes[1];
  for (int64_t i = 0; ok && i < k; ++i) {
    int64_t d = x.sizes[2 + i], o = y.sizes[2 + i];
    ok = window[i] >= 1 && strides[i] >= 1 && padL[i] >= 0 &&
         padL[i] < window[i] && o >= 1 && d + padL[i] >= window[i];
    if (!ok)
      break;
    padR[i] =
        std::max<int64_t>(0, (o - 1) * strides[i] + window[i] - d - padL[i]);
    ok = (d + padL[i] + padR[i] - window[i]) / strides[i] + 1 == o &&
         padR[i] < window[i];
  }
  if (!ok)
    fail(1, std::string(who) + ": shapes " + dimsText(x.sizes) + " -> " +
                dimsText(y.sizes) + " do not match its window, strides and " +
                "pads");
  if (flags & kNhwcInput)
    reinterpretNhwc(x, who + std::string(": "), "input");
  if (flags & kNhwcOutput)
    reinterpretNhwc(y, who + std::string(": "), "output");
  if (volume(y.sizes) == 0)
    return;
  auto ne = std::make_unique<Entry>();
  ne->pool = true;
  ne->user[0] = convUserDesc(x, flags & kNhwcInput);
  ne->user[2] = convUserDesc(y, flags & kNhwcOutput);
  dnnl::algorithm alg = kind == 0 ? dnnl::algorithm::pooling_max
                        : kind == 1
                            ? dnnl::algorithm::pooling_avg_include_padding
                            : dnnl::algorithm::pooling_avg_exclude_padding;
  auto make = [&](const memory::desc &src, const memory::desc &dst) {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, src,
                                  dst, strides, window, padL, padR);
    return dnnl::pooling_forward::primitive_desc(d, attr, engine);
  };
  // The caller's layouts where a kernel other than the reference one takes
  // them; else (an NCHW input and an NHWC output, or the reverse: only the
  // reference kernel mixes them) the output in the input's layout, then
  // reordered (the output is the smaller one).
  dnnl::pooling_forward::primitive_desc pd = make(ne->user[0], ne->user[2]);
  if (std::string(pd.impl_info_str()).find("ref") != std::string::npos) {
    static const memory::format_tag plain[] = {memory::format_tag::abc,
                                               memory::format_tag::abcd,
                                               memory::format_tag::abcde},
                                    last[] = {memory::format_tag::acb,
                                              memory::format_tag::acdb,
                                              memory::format_tag::acdeb};
    try {
      pd = make(ne->user[0], memory::desc(y.sizes, memory::data_type::f32,
                                          (flags & kNhwcInput) ? last[k - 1]
                                                               : plain[k - 1]));
    } catch (const dnnl::error &) {
    }
  }
  ne->prim_[0] = pd.src_desc();
  ne->prim_[2] = pd.dst_desc();
  setReorder(*ne, 0, true);
  setReorder(*ne, 2, false);
  ne->scratchMd = pd.scratchpad_desc();
  ne->prim = dnnl::pooling_forward(pd);
  ne->channelDim = 1;
  ne->rank = r;
  Entry *e = insert(key, std::move(ne));
  if (tempBytes) {
    *tempBytes = e->temporaryBytes();
    return;
  }
  float *data[5] = {x.data, nullptr, y.data, nullptr, nullptr};
  execute(*e, data, alloc);
}

void LibraryCalls::Impl::convInt(const CallArgs &call) {
  const auto &[key, numOperands, operands, ranks, numAttrs, attrs, alloc,
               tempBytes] = call;
  const char *who = "integer Conv library call";
  int32_t r = ranks[0];
  int64_t k = r - 2;
  if (numOperands != 3 || k < 1 || k > 3 || ranks[1] != r || ranks[2] != r ||
      numAttrs != 2 + 4 * k)
    fail(1, std::string(who) + ": 3 operands of equal rank 3..5 and " +
                std::to_string(2 + 4 * k) + " attributes");
  View x = readView(operands[0], r), w = readView(operands[1], r),
       y = readView(operands[2], r);
  ConvAttrs ca = readConvAttrs(numAttrs, attrs, k);
  int64_t groups = ca.groups;
  int64_t oc = w.sizes[0], cg = w.sizes[1];
  bool ok = groups >= 1 && x.sizes[1] == groups * cg && oc % groups == 0 &&
            y.sizes[0] == x.sizes[0] && y.sizes[1] == oc &&
            convSpatialMatches(x.sizes, w.sizes, y.sizes, ca.strides,
                               ca.dilations, ca.padBegin, ca.padEnd);
  if (!ok)
    fail(1, std::string(who) + " (group " + std::to_string(groups) +
                "): shapes " + dimsText(x.sizes) + " * " + dimsText(w.sizes) +
                " -> " + dimsText(y.sizes) + " do not match");
  if (volume(y.sizes) == 0)
    return;
  auto *xd = reinterpret_cast<const int32_t *>(x.data);
  auto *wd = reinterpret_cast<const int32_t *>(w.data);
  auto *yd = reinterpret_cast<int32_t *>(y.data);
  int64_t n = x.sizes[0], c = x.sizes[1], ocg = oc / groups;
  Spatial3 xs = spatial3(x), ws = spatial3(w), ys = spatial3(y);
  Window3 win = window3(ca);
  int64_t xSpatial = xs.size[0] * xs.size[1] * xs.size[2];
  auto yAt = [&](int64_t b, int64_t o, int64_t p0, int64_t p1,
                 int64_t p2) -> int32_t & {
    return yd[b * y.strides[0] + o * y.strides[1] + p0 * ys.stride[0] +
              p1 * ys.stride[1] + p2 * ys.stride[2]];
  };
  auto xAt = [&](int64_t b, int64_t ch, int64_t i0, int64_t i1, int64_t i2) {
    return xd[b * x.strides[0] + ch * x.strides[1] + i0 * xs.stride[0] +
              i1 * xs.stride[1] + i2 * xs.stride[2]];
  };
  auto wAt = [&](int64_t o, int64_t ch, int64_t a, int64_t b2, int64_t c2) {
    return wd[o * w.strides[0] + ch * w.strides[1] + a * ws.stride[0] +
              b2 * ws.stride[1] + c2 * ws.stride[2]];
  };

  auto found = intConvs.find(key);
  IntConvEntry *e = found == intConvs.end() ? nullptr : found->second.get();
  if (!e) {
    if (key.size < 0)
      fail(1, std::string(who) + ": operands of rank above 5");
    auto ne = std::make_unique<IntConvEntry>();
    static const memory::format_tag nhwc[] = {memory::format_tag::acb,
                                              memory::format_tag::acdb,
                                              memory::format_tag::acdeb};
    ne->srcMd = memory::desc(x.sizes, memory::data_type::u8, nhwc[k - 1]);
    ne->userDst = memory::desc(y.sizes, memory::data_type::s32,
                               normalizedStrides(y.sizes, y.strides));
    memory::dims wSizes = w.sizes;
    if (groups > 1) {
      wSizes = {groups, ocg};
      for (int32_t i = 1; i < r; ++i)
        wSizes.push_back(w.sizes[i]);
    }
    ne->wPlain = memory::desc(wSizes, memory::data_type::s8,
                              normalizedStrides(wSizes, [&] {
                                memory::dims s(wSizes.size());
                                int64_t d = 1;
                                for (int64_t i = s.size() - 1; i >= 0; --i) {
                                  s[i] = d;
                                  d *= wSizes[i];
                                }
                                return s;
                              }()));
    ne->srcBytes = n * c * xSpatial;
    ne->sumBytes = 4 * n * groups * xSpatial;
    ne->loop = !exactInt8Isa();
    if (!ne->loop) {
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      auto make = [&](const memory::desc &dst) {
        return dnnl::convolution_forward::primitive_desc(
            dnnl::convolution_forward::desc(
                dnnl::prop_kind::forward_inference,
                dnnl::algorithm::convolution_direct, ne->srcMd,
                memory::desc(wSizes, memory::data_type::s8,
                             memory::format_tag::any),
                dst, ca.strides, oneDnnDilations(ca.dilations), ca.padBegin,
                ca.padEnd),
            attr, engine);
      };
      // The caller's output layout when a JIT kernel writes it, else
      // channels last and a reorder back.
      dnnl::convolution_forward::primitive_desc pd;
      bool done = false;
      for (bool user : {true, false}) {
        try {
          memory::desc dst =
              user ? ne->userDst
                   : memory::desc(y.sizes, memory::data_type::s32, nhwc[k - 1]);
          pd = make(dst);
          std::string impl = pd.impl_info_str();
          if (user && impl.find("jit") == std::string::npos)
            continue;
          done = true;
          break;
        } catch (const dnnl::error &) {
        }
      }
      if (!done) {
        ne->loop = true;
      } else {
        ne->primDst = pd.dst_desc();
        ne->reorderDst = !(ne->primDst == ne->userDst);
        if (ne->reorderDst)
          ne->dstReorder = dnnl::reorder(dnnl::reorder::primitive_desc(
              engine, ne->primDst, engine, ne->userDst));
        ne->scratchMd = pd.scratchpad_desc();
        ne->prim = dnnl::convolution_forward(pd);
        ne->wPrim = memory(pd.weights_desc(), engine);
        ne->mems[0] = memory(ne->srcMd, engine, DNNL_MEMORY_NONE);
        ne->mems[1] = memory(ne->primDst, engine, DNNL_MEMORY_NONE);
        if (ne->scratchMd.get_size())
          ne->mems[2] = memory(ne->scratchMd, engine, DNNL_MEMORY_NONE);
        ne->mems[3] = memory(
            memory::desc({1}, memory::data_type::s32, memory::format_tag::a),
            engine, DNNL_MEMORY_NONE);
      }
    }
    if (intConvs.size() >= capacity)
      intConvs.clear();
    e = intConvs.emplace(key, std::move(ne)).first->second.get();
    ++created;
  }
  if (tempBytes) {
    *tempBytes = e->temporaryBytes();
    return;
  }
  ScratchBuffer src(alloc, 64), sums(alloc, 64), scratch(alloc, 64),
      dst(alloc, 64);
  auto take = [&](ScratchBuffer &b, int64_t bytes) {
    if (!b.allocate(bytes))
      fail(2, "out of memory: a temporary of " + std::to_string(bytes) +
                  " bytes failed");
  };
  take(src, e->srcBytes);
  take(sums, e->sumBytes);
  if (!e->loop) {
    if (e->reorderDst)
      take(dst, static_cast<int64_t>(e->primDst.get_size()));
    take(scratch, static_cast<int64_t>(e->scratchMd.get_size()));
  }

  // The weights: made again when they differ from the last ones.
  int64_t wVolume = volume(w.sizes);
  bool same = e->haveWeights;
  if (same) {
    int64_t i = 0;
    for (int64_t o = 0; o < oc && same; ++o)
      for (int64_t ch = 0; ch < cg && same; ++ch)
        for (int64_t a = 0; a < ws.size[0] && same; ++a)
          for (int64_t b2 = 0; b2 < ws.size[1] && same; ++b2)
            for (int64_t c2 = 0; c2 < ws.size[2]; ++c2)
              if (wAt(o, ch, a, b2, c2) != e->wCopy[i++]) {
                same = false;
                break;
              }
  }
  if (!same) {
    e->wCopy.resize(wVolume);
    e->shift.assign(oc, 0);
    e->weightsFit = true;
    e->anyShift = false;
    int64_t i = 0;
    for (int64_t o = 0; o < oc; ++o) {
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (int64_t ch = 0; ch < cg; ++ch)
        for (int64_t a = 0; a < ws.size[0]; ++a)
          for (int64_t b2 = 0; b2 < ws.size[1]; ++b2)
            for (int64_t c2 = 0; c2 < ws.size[2]; ++c2) {
              int32_t v = wAt(o, ch, a, b2, c2);
              e->wCopy[i++] = v;
              lo = std::min<int64_t>(lo, v);
              hi = std::max<int64_t>(hi, v);
            }
      if (hi - lo > 255)
        e->weightsFit = false;
      else if (lo < -128 || hi > 127)
        e->shift[o] = static_cast<int32_t>(lo + 128);
      e->anyShift |= e->shift[o] != 0;
    }
    if (!e->loop && e->weightsFit) {
      std::vector<int8_t> s8(wVolume);
      int64_t per = wVolume / oc;
      for (int64_t j = 0; j < wVolume; ++j)
        s8[j] = static_cast<int8_t>(e->wCopy[j] - e->shift[j / per]);
      memory plain(e->wPlain, engine, s8.data());
      dnnl::reorder(plain, e->wPrim).execute(stream, plain, e->wPrim);
      stream.wait();
    }
    e->haveWeights = true;
  }

  // The input's range; its zero point.
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i0 = 0; i0 < xs.size[0]; ++i0)
        for (int64_t i1 = 0; i1 < xs.size[1]; ++i1)
          for (int64_t i2 = 0; i2 < xs.size[2]; ++i2) {
            int32_t v = xAt(b, ch, i0, i1, i2);
            lo = std::min<int64_t>(lo, v);
            hi = std::max<int64_t>(hi, v);
          }
  if (e->loop || !e->weightsFit || hi - lo > 255) {
    // The direct loop: y = sum over the window of Xc * Wc.
    for (int64_t b = 0; b < n; ++b)
      for (int64_t o = 0; o < oc; ++o) {
        int64_t g = o / ocg;
        for (int64_t p0 = 0; p0 < ys.size[0]; ++p0)
          for (int64_t p1 = 0; p1 < ys.size[1]; ++p1)
            for (int64_t p2 = 0; p2 < ys.size[2]; ++p2) {
              int64_t pos[3] = {p0, p1, p2};
              uint32_t acc = 0;
              forWindow(pos, xs, ws, win,
                        [&](int64_t a, int64_t b2, int64_t c2, int64_t i0,
                            int64_t i1, int64_t i2) {
                          for (int64_t ch = 0; ch < cg; ++ch)
                            acc +=
                                (static_cast<uint32_t>(
                                     xAt(b, g * cg + ch, i0, i1, i2)) *
                                 static_cast<uint32_t>(wAt(o, ch, a, b2, c2)));
                        });
              yAt(b, o, p0, p1, p2) = static_cast<int32_t>(acc);
            }
      }
    return;
  }
  int32_t zp = static_cast<int32_t>(-lo);
  // The u8 input, channels last, and (for shifted weights) the per-group
  // channel sums; read in the input's order.
  auto *u8 = static_cast<uint8_t *>(src.p);
  auto *sum = static_cast<int32_t *>(sums.p);
  if (e->anyShift)
    std::fill_n(sum, n * groups * xSpatial, 0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      uint8_t *out = u8 + b * xSpatial * c + ch;
      int32_t *s = sum + (b * groups + ch / cg) * xSpatial;
      int64_t sp = 0;
      for (int64_t i0 = 0; i0 < xs.size[0]; ++i0)
        for (int64_t i1 = 0; i1 < xs.size[1]; ++i1) {
          const int32_t *row = xd + b * x.strides[0] + ch * x.strides[1] +
                               i0 * xs.stride[0] + i1 * xs.stride[1];
          for (int64_t i2 = 0; i2 < xs.size[2]; ++i2, ++sp) {
            int32_t v = row[i2 * xs.stride[2]];
            out[sp * c] = static_cast<uint8_t>(v + zp);
            if (e->anyShift)
              s[sp] += v;
          }
        }
    }
  size_t sbytes = e->scratchMd.get_size();
  e->mems[0].set_data_handle(src.p);
  e->mems[1].set_data_handle(e->reorderDst ? dst.p : y.data);
  e->mems[3].set_data_handle(&zp);
  dnnl_exec_arg_t args[5] = {
      {DNNL_ARG_SRC, e->mems[0].get()},
      {DNNL_ARG_WEIGHTS, e->wPrim.get()},
      {DNNL_ARG_DST, e->mems[1].get()},
      {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, e->mems[3].get()}};
  int nargs = 4;
  if (sbytes) {
    e->mems[2].set_data_handle(scratch.p);
    args[nargs++] = {DNNL_ARG_SCRATCHPAD, e->mems[2].get()};
  }
  run(e->prim, args, nargs);
  if (e->reorderDst) {
    memory userY(e->userDst, engine, y.data);
    dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, e->mems[1].get()},
                             {DNNL_ARG_TO, userY.get()}};
    run(e->dstReorder, ra, 2);
  }
  stream.wait();
  if (!e->anyShift)
    return;
  // The shifted channels: + shift[oc] * the window sum of Xc.
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      const int32_t *s = sum + (b * groups + g) * xSpatial;
      for (int64_t p0 = 0; p0 < ys.size[0]; ++p0)
        for (int64_t p1 = 0; p1 < ys.size[1]; ++p1)
          for (int64_t p2 = 0; p2 < ys.size[2]; ++p2) {
            int64_t pos[3] = {p0, p1, p2};
            int32_t acc = 0;
            forWindow(pos, xs, ws, win,
                      [&](int64_t, int64_t, int64_t, int64_t i0, int64_t i1,
                          int64_t i2) {
                        acc += s[(i0 * xs.size[1] + i1) * xs.size[2] + i2];
                      });
            for (int64_t o = g * ocg; o < (g + 1) * ocg; ++o)
              if (e->shift[o])
                yAt(b, o, p0, p1, p2) +=
                    static_cast<int32_t>(static_cast<uint32_t>(e->shift[o]) *
                                         static_cast<uint32_t>(acc));
          }
    }
}

void LibraryCalls::Impl::deconv(const CallArgs &call) {
  const auto &[key, numOperands, operands, ranks, numAttrs, attrs, alloc,
               tempBytes] = call;
  int32_t r = ranks[0];
  int64_t k = r - 2;
  if (numOperands != 3 || k < 1 || k > 3 || ranks[1] != r || ranks[2] != r ||
      (numAttrs != 2 + 4 * k && numAttrs != 3 + 4 * k))
    fail(1, "ConvTranspose library call: 3 operands of equal rank 3..5 and " +
                std::to_string(2 + 4 * k) + " or " + std::to_string(3 + 4 * k) +
                " attributes");
  View x = readView(operands[0], r), w = readView(operands[1], r),
       y = readView(operands[2], r);
  ConvAttrs ca = readConvAttrs(numAttrs, attrs, k);
  // The flags word: only the NHWC bits of the input and the output.
  int64_t flags = ca.flags;
  if (flags & ~(kNhwcOutput | kNhwcInput))
    fail(1, "ConvTranspose library call: bad flags " + std::to_string(flags));
  if (flags & kNhwcInput)
    reinterpretNhwc(x, "ConvTranspose library call: ", "input");
  if (flags & kNhwcOutput)
    reinterpretNhwc(y, "ConvTranspose library call: ", "output");
  int64_t groups = ca.groups;
  const memory::dims &strides = ca.strides, &dil = ca.dilations,
                     &padL = ca.padBegin, &padR = ca.padEnd;
  int64_t ic = w.sizes[0], ocg = w.sizes[1];
  bool ok = groups >= 1 && x.sizes[1] == ic && ic % groups == 0 &&
            y.sizes[0] == x.sizes[0] && y.sizes[1] == groups * ocg;
  for (int64_t i = 0; ok && i < k; ++i)
    ok = strides[i] >= 1 && dil[i] >= 1 && padL[i] >= 0 &&
         y.sizes[2 + i] == (x.sizes[2 + i] - 1) * strides[i] +
                               (w.sizes[2 + i] - 1) * dil[i] + 1 - padL[i] -
                               padR[i];
  if (!ok)
    fail(1, "ConvTranspose library call (group " + std::to_string(groups) +
                "): shapes " + dimsText(x.sizes) + " * " + dimsText(w.sizes) +
                " -> " + dimsText(y.sizes) + " do not match");
  if (emptyCall(y, x, w, tempBytes))
    return;
  Entry *e = lookup(key);
  if (!e) {
    auto ne = std::make_unique<Entry>();
    ne->constWeights = ca.constWeights;
    ne->user[0] = convUserDesc(x, flags & kNhwcInput);
    ne->user[2] = convUserDesc(y, flags & kNhwcOutput);
    // ONNX W [IC, OC/G, K...] is oneDNN's [OC, IC, K...] (or [G, OC/G,
    // IC/G, K...]) read with swapped strides.
    int64_t icg = ic / groups;
    memory::dims wSizes, wStrides;
    if (groups > 1) {
      wSizes = {groups, ocg, icg};
      wStrides = {icg * w.strides[0], w.strides[1], w.strides[0]};
    } else {
      wSizes = {ocg, ic};
      wStrides = {w.strides[1], w.strides[0]};
    }
    for (int32_t i = 2; i < r; ++i) {
      wSizes.push_back(w.sizes[i]);
      wStrides.push_back(w.strides[i]);
    }
    ne->user[1] = stridedDesc(wSizes, wStrides);
    memory::dims dilates = oneDnnDilations(dil);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto make = [&](const memory::desc &src, const memory::desc &dst) {
      return dnnl::deconvolution_forward::primitive_desc(
          dnnl::deconvolution_forward::desc(
              dnnl::prop_kind::forward_inference,
              dnnl::algorithm::deconvolution_direct, src, anyDesc(wSizes), dst,
              strides, dilates, padL, padR),
          attr, engine);
    };
    // As for Conv: plain layouts unless only a reference or GEMM kernel
    // takes them.
    dnnl::deconvolution_forward::primitive_desc pd;
    bool plain = false, plainOk = false;
    try {
      pd = make(ne->user[0], ne->user[2]);
      std::string impl = pd.impl_info_str();
      plainOk = impl.find("ref") == std::string::npos;
      plain = plainOk && impl.find("gemm") == std::string::npos;
    } catch (const dnnl::error &) {
    }
    // One NHWC operand: the JIT kernel takes channels last only for both
    // (oneDNN 2.6), so the other is reordered from or to it.
    if (!plain && (flags & (kNhwcInput | kNhwcOutput))) {
      try {
        pd = make(convUserDesc(x, true), convUserDesc(y, true));
        std::string impl = pd.impl_info_str();
        plain = impl.find("ref") == std::string::npos &&
                impl.find("gemm") == std::string::npos;
      } catch (const dnnl::error &) {
      }
    }
    if (!plain) {
      try {
        pd = make(anyDesc(x.sizes), anyDesc(y.sizes));
      } catch (const dnnl::error &) {
        if (!plainOk)
          throw;
        pd = make(ne->user[0], ne->user[2]);
      }
    }
    setLayouts(*ne, pd);
    ne->prim = dnnl::deconvolution_forward(pd);
    ne->rank = r;
    e = insert(key, std::move(ne));
  }
  runEntry(*e, x, w, y, PostOps(), alloc, tempBytes);
}

void LibraryCalls::Impl::convBackwardFilter(const CallArgs &call) {
  const auto &[key, numOperands, operands, ranks, numAttrs, attrs, alloc,
               tempBytes] = call;
  const char *who = "ConvBackwardFilter library call";
  int32_t r = ranks[0];
  int64_t k = r - 2;
  if (numOperands != 3 || k < 1 || k > 3 || ranks[1] != r || ranks[2] != r ||
      numAttrs != 4 * k)
    fail(1, std::string(who) + ": 3 operands of equal rank 3..5 and " +
                std::to_string(4 * k) + " attributes");
  View x = readView(operands[0], r), g = readView(operands[1], r),
       dw = readView(operands[2], r);
  memory::dims strides(attrs, attrs + k), dil(attrs + k, attrs + 2 * k),
      padL(attrs + 2 * k, attrs + 3 * k), padR(attrs + 3 * k, attrs + 4 * k);
  bool ok =
      dw.sizes[0] == g.sizes[1] && dw.sizes[1] == x.sizes[1] &&
      g.sizes[0] == x.sizes[0] &&
      convSpatialMatches(x.sizes, dw.sizes, g.sizes, strides, dil, padL, padR);
  if (!ok)
    fail(1, std::string(who) + ": input " + dimsText(x.sizes) +
                " and output gradient " + dimsText(g.sizes) +
                " do not give filter " + dimsText(dw.sizes));
  if (emptyCall(dw, x, g, tempBytes))
    return;
  Entry *e = lookup(key);
  if (!e) {
    auto ne = std::make_unique<Entry>();
    ne->user[0] = stridedDesc(x.sizes, x.strides);
    ne->user[1] = stridedDesc(g.sizes, g.strides);
    ne->user[2] = stridedDesc(dw.sizes, dw.strides);
    memory::dims dilates = oneDnnDilations(dil);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    // oneDNN's backward weights takes the forward primitive as a hint.
    auto make = [&](const memory::desc &src, const memory::desc &diffDst,
                    const memory::desc &diffW) {
      dnnl::convolution_forward::primitive_desc hint(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                          dnnl::algorithm::convolution_direct,
                                          src, diffW, diffDst, strides, dilates,
                                          padL, padR),
          engine);
      return dnnl::convolution_backward_weights::primitive_desc(
          dnnl::convolution_backward_weights::desc(
              dnnl::algorithm::convolution_direct, src, diffW, diffDst, strides,
              dilates, padL, padR),
          attr, engine, hint);
    };
    // The caller's plain layouts (oneDNN's GEMM kernel) or the layouts
    // oneDNN picks (its direct JIT kernel, the operands reordered around
    // it), whichever takes fewer temporary bytes: the GEMM kernel's
    // scratchpad holds several copies of the filter (4 of ResNet-18's last
    // 3x3 filter, 37.8 MB, against one reordered copy, 9.6 MB); the
    // reference kernel only when nothing else is made.
    // DISC_CONV_LAYOUT=plain or =blocked forces one (measurements).
    static const char *layoutEnv = std::getenv("DISC_CONV_LAYOUT");
    std::string layout = layoutEnv ? layoutEnv : "auto";
    auto temporaries =
        [&](const dnnl::convolution_backward_weights::primitive_desc &d) {
          const memory::desc prim[3] = {d.src_desc(), d.diff_dst_desc(),
                                        d.diff_weights_desc()};
          size_t bytes = d.scratchpad_desc().get_size();
          for (int i = 0; i < 3; ++i)
            if (!(prim[i] == ne->user[i]))
              bytes += prim[i].get_size();
          return bytes;
        };
    auto isRef =
        [](const dnnl::convolution_backward_weights::primitive_desc &d) {
          return std::string(d.impl_info_str()).find("ref") !=
                 std::string::npos;
        };
    std::optional<dnnl::convolution_backward_weights::primitive_desc> plain,
        blocked;
    if (layout != "blocked")
      try {
        plain = make(ne->user[0], ne->user[1], ne->user[2]);
      } catch (const dnnl::error &) {
      }
    if (layout != "plain")
      try {
        blocked = make(anyDesc(x.sizes), anyDesc(g.sizes), anyDesc(dw.sizes));
      } catch (const dnnl::error &) {
      }
    if (plain && blocked && isRef(*plain) != isRef(*blocked))
      (isRef(*plain) ? plain : blocked).reset();
    if (plain && blocked && temporaries(*blocked) < temporaries(*plain))
      plain.reset();
    dnnl::convolution_backward_weights::primitive_desc pd =
        plain     ? *plain
        : blocked ? *blocked
                  : make(ne->user[0], ne->user[1], ne->user[2]); // the reason
    ne->prim_[0] = pd.src_desc();
    ne->prim_[1] = pd.diff_dst_desc();
    ne->prim_[2] = pd.diff_weights_desc();
    for (int i = 0; i < 3; ++i)
      setReorder(*ne, i, i < 2);
    ne->scratchMd = pd.scratchpad_desc();
    ne->prim = dnnl::convolution_backward_weights(pd);
    ne->weightsArg = DNNL_ARG_DIFF_DST;
    ne->dstArg = DNNL_ARG_DIFF_WEIGHTS;
    ne->rank = r;
    e = insert(key, std::move(ne));
  }
  runEntry(*e, x, g, dw, PostOps(), alloc, tempBytes);
}

LibraryCalls::LibraryCalls(size_t maxPrimitives, int32_t numThreads,
                           bool winograd)
    : impl_(std::make_unique<Impl>()) {
  impl_->capacity = maxPrimitives ? maxPrimitives : 1;
  impl_->threads = numThreads > 0 ? numThreads : 0;
  impl_->allowWinograd = winograd;
}

LibraryCalls::~LibraryCalls() = default;

int32_t LibraryCalls::call(int32_t callId, int32_t numOperands,
                           void *const *operands, const int32_t *ranks,
                           int32_t numAttrs, const int64_t *attrs,
                           const ScratchAllocator &allocator,
                           std::string &error) {
  return dispatch(callId, numOperands, operands, ranks, numAttrs, attrs,
                  allocator, nullptr, error);
}

int32_t LibraryCalls::temporaryBytes(int32_t callId, int32_t numOperands,
                                     void *const *operands,
                                     const int32_t *ranks, int32_t numAttrs,
                                     const int64_t *attrs, int64_t *bytes,
                                     std::string &error) {
  *bytes = 0;
  return dispatch(callId, numOperands, operands, ranks, numAttrs, attrs,
                  ScratchAllocator(), bytes, error);
}

/// The OpenMP threads of a call: `threads`, or 1 when the call has fewer
/// than kSerialMacs multiply-adds (an OpenMP fork and join of the team
/// costs several microseconds, more than such a call's work: a
/// [3, 64] x [64, 256] MatMul of a one-token decoder step is 49,152). A
/// function of the operands' sizes only, which are part of the cache key,
/// so an entry is always made and run on the same threads. Operands whose
/// ranks are out of range get `threads` (their checks fail later).
static int callThreads(int32_t callId, void *const *operands,
                       const int32_t *ranks, int threads) {
  constexpr double kSerialMacs = 1 << 18;
  if (threads == 1)
    return threads;
  int numOperands = callId == DISC_LIB_POOL ? 2 : 3;
  for (int i = 0; i < numOperands; ++i)
    if (!operands[i] || ranks[i] < 1 || ranks[i] > 8)
      return threads;
  auto dims = [&](int i) {
    return static_cast<const int64_t *>(operands[i]) + 3;
  };
  auto volume = [&](int i) {
    double v = 1;
    for (int32_t d = 0; d < ranks[i]; ++d)
      v *= static_cast<double>(dims(i)[d]);
    return v;
  };
  double macs;
  if (callId == DISC_LIB_POOL) // about one comparison or add per input
    macs = volume(0);
  else if (callId == DISC_LIB_MATMUL) // output x the reduced dim of A
    macs = volume(2) * static_cast<double>(dims(0)[ranks[0] - 1]);
  else if (callId == DISC_LIB_CONV ||
           callId == DISC_LIB_CONV_INT) // output x weights per output channel
    macs = volume(2) * volume(1) / std::max<double>(1, dims(1)[0]);
  else if (callId == DISC_LIB_CONV_BACKWARD_FILTER) // filter x dY per channel
    macs = volume(2) * volume(1) / std::max<double>(1, dims(1)[1]);
  else // ConvTranspose: input x weights per input channel
    macs = volume(0) * volume(1) / std::max<double>(1, dims(1)[0]);
  return macs < kSerialMacs ? 1 : threads;
}

int32_t LibraryCalls::dispatch(int32_t callId, int32_t numOperands,
                               void *const *operands, const int32_t *ranks,
                               int32_t numAttrs, const int64_t *attrs,
                               const ScratchAllocator &allocator,
                               int64_t *tempBytes, std::string &error) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const char *name = callId == DISC_LIB_MATMUL           ? "MatMul"
                     : callId == DISC_LIB_CONV           ? "Conv"
                     : callId == DISC_LIB_CONV_TRANSPOSE ? "ConvTranspose"
                     : callId == DISC_LIB_CONV_INT       ? "integer Conv"
                     : callId == DISC_LIB_CONV_BACKWARD_FILTER
                         ? "ConvBackwardFilter"
                     : callId == DISC_LIB_POOL ? "pooling"
                                               : "unknown";
  auto run = [&]() -> int32_t {
    int32_t least = callId == DISC_LIB_POOL ? 2 : 3;
    if (numOperands < least || numOperands > 5 || !operands || !ranks ||
        (numAttrs > 0 && !attrs))
      fail(1, std::string(name) + " library call: expects " +
                  std::to_string(least) + " to 5 operands");
    // The primitive is made and run on these threads (oneDNN sizes its
    // kernels and scratchpad by the threads it is made with).
    ThreadScope threads(callThreads(callId, operands, ranks, impl_->threads));
    // A call seen before (same key) runs its cached entry without reading
    // or checking its operands again.
    // A call that does not fit in a key fails its checks below.
    Key &key = impl_->key;
    if (!makeKey(callId, numOperands, operands, ranks, numAttrs, attrs, key))
      key.size = -1;
    else if (Entry *e = impl_->lookup(key)) {
      impl_->runCached(*e, numOperands, operands, allocator, tempBytes);
      return 0;
    }
    CallArgs args{key,      numOperands, operands,  ranks,
                  numAttrs, attrs,       allocator, tempBytes};
    switch (callId) {
    case DISC_LIB_MATMUL:
      impl_->matmul(args);
      return 0;
    case DISC_LIB_CONV_TRANSPOSE:
      impl_->deconv(args);
      return 0;
    case DISC_LIB_CONV:
      impl_->conv(args);
      return 0;
    case DISC_LIB_CONV_BACKWARD_FILTER:
      impl_->convBackwardFilter(args);
      return 0;
    case DISC_LIB_CONV_INT:
      impl_->convInt(args);
      return 0;
    case DISC_LIB_POOL:
      impl_->pool(args);
      return 0;
    default:
      fail(1, "unknown library call id " + std::to_string(callId));
    }
  };
  return catchCallError(
      [&]() -> int32_t {
        try {
          return run();
        } catch (const dnnl::error &e) {
          error = std::string("oneDNN ") + name + ": " + e.what() +
                  " (status " + std::to_string(static_cast<int>(e.status)) +
                  ")";
          return 4;
        }
      },
      error, std::string(name) + " library call: out of host memory");
}

CacheCounts LibraryCalls::counts() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  int64_t packed = 0;
  for (auto &entry : impl_->packedWeights)
    packed += static_cast<int64_t>(entry.second.size());
  return {impl_->created, static_cast<int64_t>(impl_->cache.size()), packed,
          impl_->winograd};
}
