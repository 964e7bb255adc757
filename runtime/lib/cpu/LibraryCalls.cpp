//===- LibraryCalls.cpp - oneDNN MatMul and Conv for compiled models ------===//
//
// See LibraryCalls.h. oneDNN 2.6 C++ API (oneapi/dnnl/dnnl.hpp): matmul and
// convolution_forward primitives, reorders between the caller's strided
// layout and the layout a primitive prefers.
//
//===----------------------------------------------------------------------===//
#include "LibraryCalls.h"

#include "disc/runtime/abi.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <list>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

// The OpenMP API of libgomp, the runtime the Debian oneDNN runs on (OpenMP
// 5.1, section 3.2). Declared here rather than through <omp.h>, which is
// compiler-specific: a clang build must still set libgomp's thread count.
extern "C" {
int omp_get_max_threads(void);
void omp_set_num_threads(int numThreads);
}

using namespace disc::runtime::cpu;
using dnnl::memory;

namespace {

/// A memref descriptor of f32 data (docs/runtime-abi.md).
struct View {
  float *data = nullptr;
  memory::dims sizes, strides;
};

View readView(void *descriptor, int32_t rank) {
  const int64_t *w = static_cast<const int64_t *>(descriptor);
  View v;
  v.data = reinterpret_cast<float *>(static_cast<intptr_t>(w[1])) + w[2];
  v.sizes.assign(w + 3, w + 3 + rank);
  v.strides.assign(w + 3 + rank, w + 3 + 2 * rank);
  return v;
}

std::string dimsText(const memory::dims &d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

int64_t volume(const memory::dims &d) {
  int64_t n = 1;
  for (int64_t x : d)
    n *= x;
  return n;
}

/// A strided f32 memory descriptor. Strides of size-1 dims do not address
/// anything; they are normalized so oneDNN accepts them.
memory::desc stridedDesc(const memory::dims &sizes, memory::dims strides) {
  int64_t dense = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    if (sizes[i] == 1)
      strides[i] = dense;
    dense *= sizes[i] > 0 ? sizes[i] : 1;
  }
  return memory::desc(sizes, memory::data_type::f32, strides);
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

/// A buffer from the session allocator, freed on scope exit.
struct Temp {
  const ScratchAllocator &a;
  void *p = nullptr;
  explicit Temp(const ScratchAllocator &a) : a(a) {}
  ~Temp() {
    if (p)
      a.free(a.self, p);
  }
  /// False when the allocator refused.
  bool allocate(size_t bytes) {
    if (bytes == 0)
      return true;
    p = a.alloc(a.self, static_cast<int64_t>(bytes), 64);
    return p != nullptr;
  }
};

struct CallError {
  int32_t status;
  std::string message;
};

[[noreturn]] void fail(int32_t status, std::string message) {
  throw CallError{status, std::move(message)};
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
/// bit 4 logistic, bit 5 tanh; applied in that order. Bits 6-8 (Conv
/// only): the output, input, residual is NHWC.
struct PostOps {
  int64_t flags = 0;
  View bias, res; // bias: [channels]; res: the output's shape
  float lo = 0.0f, hi = 0.0f; // clip bounds
  bool bias_() const { return flags & 1; }
  bool res_() const { return flags & 2; }
  /// Any activation.
  bool act() const { return flags & 60; }
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
      !(withRelu && p.act()))
    return;
  forEach(y.sizes, y.strides, [&](int64_t off, const std::vector<int64_t> &i) {
    float v = y.data[off];
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
  std::list<std::string>::iterator lru;

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
/// residual when the primitive runs), else a `binary_add`.
dnnl::primitive_attr makeAttr(const PostOps &p, const memory::desc &resMd,
                              bool withPostOps, bool sum = false) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (withPostOps && (p.res_() || p.act())) {
    dnnl::post_ops po;
    if (p.res_() && sum)
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
    attr.set_post_ops(po);
  }
  return attr;
}

} // namespace

struct LibraryCalls::Impl {
  size_t capacity;
  int32_t threads = 0;
  std::mutex mutex;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::unordered_map<std::string, std::unique_ptr<Entry>> cache;
  std::list<std::string> lru; // most recently used first
  int64_t created = 0;

  Entry *lookup(const std::string &key) {
    auto it = cache.find(key);
    if (it == cache.end())
      return nullptr;
    lru.splice(lru.begin(), lru, it->second->lru);
    return it->second.get();
  }
  Entry *insert(const std::string &key, std::unique_ptr<Entry> e) {
    while (cache.size() >= capacity && !lru.empty()) {
      cache.erase(lru.back());
      lru.pop_back();
    }
    lru.push_front(key);
    e->lru = lru.begin();
    ++created;
    return (cache[key] = std::move(e)).get();
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

  /// Runs `e` on the caller's buffers `data[0..2]` (inputs, then output)
  /// with the post-op operands of `p`.
  void execute(Entry &e, float *const data[3], const PostOps &p,
               const ScratchAllocator &alloc, int weightsArg) {
    Temp t0(alloc), t1(alloc), t2(alloc), scratch(alloc);
    Temp *temps[3] = {&t0, &t1, &t2};
    memory user[3], prim[3];
    for (int i = 0; i < 3; ++i) {
      user[i] = memory(e.user[i], engine, data[i]);
      prim[i] = user[i];
    }
    for (int i = 0; i < 3; ++i) {
      if (!e.reorder[i])
        continue;
      if (i == 1 && e.constWeights) {
        auto it = e.constWeightsMem.find(data[1]);
        if (it == e.constWeightsMem.end()) {
          memory w(e.prim_[1], engine);
          e.reorders[1].execute(stream, user[1], w);
          it = e.constWeightsMem.emplace(data[1], w).first;
        }
        prim[1] = it->second;
        continue;
      }
      size_t bytes = e.prim_[i].get_size();
      if (!temps[i]->allocate(bytes))
        fail(2, "out of memory: a temporary of " + std::to_string(bytes) +
                    " bytes failed");
      prim[i] = memory(e.prim_[i], engine, temps[i]->p);
      if (i < 2)
        e.reorders[i].execute(stream, user[i], prim[i]);
    }
    size_t sbytes = e.scratchMd.get_size();
    if (!scratch.allocate(sbytes))
      fail(2, "out of memory: a scratchpad of " + std::to_string(sbytes) +
                  " bytes failed");
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, prim[0]},
                                            {weightsArg, prim[1]},
                                            {DNNL_ARG_DST, prim[2]}};
    if (sbytes)
      args[DNNL_ARG_SCRATCHPAD] = memory(e.scratchMd, engine, scratch.p);
    if (p.bias_())
      args[DNNL_ARG_BIAS] = memory(e.biasMd, engine, p.bias.data);
    if (p.res_() && !e.manual && !e.sum)
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] =
          memory(e.resMd, engine, p.res.data);
    if (p.res_() && !e.manual && e.sum) {
      memory res(e.resMd, engine, p.res.data);
      e.resReorder.execute(stream, res, prim[2]);
    }
    e.prim.execute(stream, args);
    if (e.reorder[2])
      e.reorders[2].execute(stream, prim[2], user[2]);
    stream.wait();
  }

  /// Reads the post-op operands (after the output) of a call.
  PostOps readPostOps(const int64_t *post, int32_t numPost, int32_t numOperands,
                      void *const *operands, const int32_t *ranks,
                      const View &y, int64_t channels, const char *name);

  Entry *matmulEntry(View &a, View &b, View &c, const int64_t *attrs,
                     const PostOps &p);
  void matmul(int32_t numOperands, void *const *operands, const int32_t *ranks,
              int32_t numAttrs, const int64_t *attrs,
              const ScratchAllocator &alloc, int64_t *tempBytes);
  void deconv(int32_t numOperands, void *const *operands, const int32_t *ranks,
              int32_t numAttrs, const int64_t *attrs,
              const ScratchAllocator &alloc, int64_t *tempBytes);
  void conv(int32_t numOperands, void *const *operands, const int32_t *ranks,
            int32_t numAttrs, const int64_t *attrs,
            const ScratchAllocator &alloc, int64_t *tempBytes);
};

/// Appends `v` to the cache key.
static void keyAdd(std::string &key, const memory::dims &v) {
  int64_t n = static_cast<int64_t>(v.size());
  key.append(reinterpret_cast<const char *>(&n), sizeof n);
  key.append(reinterpret_cast<const char *>(v.data()),
             v.size() * sizeof(int64_t));
}

PostOps LibraryCalls::Impl::readPostOps(const int64_t *post, int32_t numPost,
                                        int32_t numOperands,
                                        void *const *operands,
                                        const int32_t *ranks, const View &y,
                                        int64_t channels, const char *name) {
  PostOps p;
  int64_t flags = post[0];
  p.flags = flags;
  std::string who = std::string(name) + " library call: ";
  int64_t act = flags & 60;
  bool conv = std::strcmp(name, "Conv") == 0;
  if (flags < 0 || flags > (conv ? 511 : 63) || (act & (act - 1)) != 0 ||
      ((flags & kNhwcResidual) && !(flags & 2)))
    fail(1, who + "bad post-op flags " + std::to_string(flags));
  if (numPost != ((flags & 8) ? 3 : 1))
    fail(1, who + "post-op flags " + std::to_string(flags) + " take " +
                std::to_string((flags & 8) ? 2 : 0) + " more attributes");
  if (flags & 8) {
    auto f32 = [](int64_t bits) {
      uint32_t u = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &u, sizeof f);
      return f;
    };
    p.lo = f32(post[1]);
    p.hi = f32(post[2]);
    if (!(p.lo <= p.hi))
      fail(1, who + "clip bounds " + std::to_string(p.lo) + " > " +
                  std::to_string(p.hi));
  }
  int32_t want = 3 + (flags & 1) + ((flags >> 1) & 1);
  if (numOperands != want)
    fail(1, who + "expects " + std::to_string(want) + " operands");
  int32_t next = 3;
  if (p.bias_()) {
    if (ranks[next] != 1)
      fail(1, who + "the bias must have rank 1");
    p.bias = readView(operands[next++], 1);
    if (p.bias.sizes[0] != channels)
      fail(1, who + "bias of " + std::to_string(p.bias.sizes[0]) +
                  " elements for " + std::to_string(channels) + " channels");
  }
  if (p.res_()) {
    int32_t r = static_cast<int32_t>(y.sizes.size());
    if (ranks[next] != r)
      fail(1, who + "the residual must have the output's rank");
    p.res = readView(operands[next++], r);
    if (p.res.sizes != y.sizes)
      fail(1, who + "residual " + dimsText(p.res.sizes) + " and output " +
                  dimsText(y.sizes) + " differ");
    if (flags & kNhwcResidual)
      reinterpretNhwc(p.res, who, "residual");
  }
  return p;
}

Entry *LibraryCalls::Impl::matmulEntry(View &a, View &b, View &c,
                                       const int64_t *attrs, const PostOps &p) {
  std::string key = "mm";
  for (const View *v : {&a, &b, &c}) {
    keyAdd(key, v->sizes);
    keyAdd(key, v->strides);
  }
  keyAdd(key, {p.flags, attrs[0], attrs[1]});
  if (p.flags & 8) {
    float bounds[2] = {p.lo, p.hi};
    key.append(reinterpret_cast<const char *>(bounds), sizeof bounds);
  }
  if (p.bias_())
    keyAdd(key, p.bias.strides);
  if (p.res_())
    keyAdd(key, p.res.strides);
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
  // The caller's strides with the post-op chain, then on dense copies;
  // then the same without the chain (it runs as a loop afterwards).
  for (bool post : {true, false}) {
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
    pd = make(dense, false); // throws the reason
  for (int i = 0; i < 3; ++i)
    setReorder(*ne, i, i < 2);
  ne->scratchMd = pd.scratchpad_desc();
  ne->prim = dnnl::matmul(pd);
  return insert(key, std::move(ne));
}

void LibraryCalls::Impl::matmul(int32_t numOperands, void *const *operands,
                                const int32_t *ranks, int32_t numAttrs,
                                const int64_t *attrs,
                                const ScratchAllocator &alloc,
                                int64_t *tempBytes) {
  if (numAttrs != 2 && numAttrs != 3 && numAttrs != 5)
    fail(1, "MatMul library call: expects 2, 3 or 5 attributes");
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
    if (tempBytes)
      return;
    zeroFill(c);
    applyPostOps(c, p, true, true, true, 2);
    return;
  }
  Entry *e = matmulEntry(a, b, c, attrs, p);
  if (tempBytes) {
    *tempBytes = e->temporaryBytes();
    return;
  }
  float *data[3] = {a.data, b.data, c.data};
  execute(*e, data, p, alloc, DNNL_ARG_WEIGHTS);
  if (e->manual)
    applyPostOps(c, p, false, true, true, 2);
}

void LibraryCalls::Impl::conv(int32_t numOperands, void *const *operands,
                              const int32_t *ranks, int32_t numAttrs,
                              const int64_t *attrs,
                              const ScratchAllocator &alloc,
                              int64_t *tempBytes) {
  int32_t r = ranks[0];
  int64_t k = r - 2;
  if (k < 1 || k > 3 || ranks[1] != r || ranks[2] != r ||
      (numAttrs != 2 + 4 * k && numAttrs != 3 + 4 * k && numAttrs != 5 + 4 * k))
    fail(1, "Conv library call: operands must have equal rank 3..5 and " +
                std::to_string(2 + 4 * k) + ", " + std::to_string(3 + 4 * k) +
                " or " + std::to_string(5 + 4 * k) + " attributes");
  View x = readView(operands[0], r), w = readView(operands[1], r),
       y = readView(operands[2], r);
  int64_t groups = attrs[0];
  bool constW = attrs[1] != 0;
  memory::dims strides(attrs + 2, attrs + 2 + k),
      dil(attrs + 2 + k, attrs + 2 + 2 * k),
      padL(attrs + 2 + 2 * k, attrs + 2 + 3 * k),
      padR(attrs + 2 + 3 * k, attrs + 2 + 4 * k);
  int64_t oc = w.sizes[0], cg = w.sizes[1];
  std::string shapes = dimsText(x.sizes) + " * " + dimsText(w.sizes) + " -> " +
                       dimsText(y.sizes);
  bool ok = groups >= 1 && x.sizes[1] == groups * cg && oc % groups == 0 &&
            y.sizes[0] == x.sizes[0] && y.sizes[1] == oc;
  for (int64_t i = 0; ok && i < k; ++i) {
    int64_t ext = (w.sizes[2 + i] - 1) * dil[i] + 1;
    int64_t span = x.sizes[2 + i] + padL[i] + padR[i] - ext;
    ok = strides[i] >= 1 && dil[i] >= 1 && span >= 0 &&
         y.sizes[2 + i] == span / strides[i] + 1;
  }
  if (!ok)
    fail(1, "Conv library call (group " + std::to_string(groups) +
                "): shapes " + shapes + " do not match");
  PostOps p;
  if (numAttrs > 2 + 4 * k)
    p = readPostOps(attrs + 2 + 4 * k, numAttrs - 2 - 4 * k, numOperands,
                    operands, ranks, y, oc, "Conv");
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
  std::string key = "conv";
  for (const View *v : {&x, &w, &y}) {
    keyAdd(key, v->sizes);
    keyAdd(key, v->strides);
  }
  keyAdd(key, memory::dims(attrs, attrs + numAttrs));
  if (p.bias_())
    keyAdd(key, p.bias.strides);
  if (p.res_())
    keyAdd(key, p.res.strides);
  Entry *e = lookup(key);
  if (!e) {
    auto ne = std::make_unique<Entry>();
    ne->constWeights = constW;
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
    auto any = [](const memory::dims &d) {
      return memory::desc(d, memory::data_type::f32, memory::format_tag::any);
    };
    memory::dims dilates = dil;
    for (int64_t &d : dilates)
      d -= 1; // oneDNN counts the skipped elements
    auto make = [&](const memory::desc &src, const memory::desc &dst,
                    bool post) {
      dnnl::primitive_attr attr = makeAttr(p, ne->resMd, post, /*sum=*/true);
      auto d = p.bias_()
                   ? dnnl::convolution_forward::desc(
                         dnnl::prop_kind::forward_inference,
                         dnnl::algorithm::convolution_direct, src, any(wSizes),
                         ne->biasMd, dst, strides, dilates, padL, padR)
                   : dnnl::convolution_forward::desc(
                         dnnl::prop_kind::forward_inference,
                         dnnl::algorithm::convolution_direct, src, any(wSizes),
                         dst, strides, dilates, padL, padR);
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
    for (bool post : {true, false}) {
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
          pd = make(any(x.sizes), any(y.sizes), post);
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
      pd = make(any(x.sizes), any(y.sizes), false); // throws the reason
    if (p.res_() && !ne->manual) {
      ne->sum = true;
      ne->resReorder = dnnl::reorder(dnnl::reorder::primitive_desc(
          engine, ne->resMd, engine, pd.dst_desc()));
    }
    ne->prim_[0] = pd.src_desc();
    ne->prim_[1] = pd.weights_desc();
    ne->prim_[2] = pd.dst_desc();
    for (int i = 0; i < 3; ++i)
      setReorder(*ne, i, i < 2);
    ne->scratchMd = pd.scratchpad_desc();
    ne->prim = dnnl::convolution_forward(pd);
    e = insert(key, std::move(ne));
  }
  if (tempBytes) {
    *tempBytes = e->temporaryBytes();
    return;
  }
  float *data[3] = {x.data, w.data, y.data};
  execute(*e, data, p, alloc, DNNL_ARG_WEIGHTS);
  if (e->manual)
    applyPostOps(y, p, false, true, true, 1);
}

void LibraryCalls::Impl::deconv(int32_t numOperands, void *const *operands,
                                const int32_t *ranks, int32_t numAttrs,
                                const int64_t *attrs,
                                const ScratchAllocator &alloc,
                                int64_t *tempBytes) {
  int32_t r = ranks[0];
  int64_t k = r - 2;
  if (numOperands != 3 || k < 1 || k > 3 || ranks[1] != r || ranks[2] != r ||
      (numAttrs != 2 + 4 * k && numAttrs != 3 + 4 * k))
    fail(1, "ConvTranspose library call: 3 operands of equal rank 3..5 and " +
                std::to_string(2 + 4 * k) + " or " + std::to_string(3 + 4 * k) +
                " attributes");
  View x = readView(operands[0], r), w = readView(operands[1], r),
       y = readView(operands[2], r);
  // The flags word: only the NHWC bits of the input and the output.
  int64_t flags = numAttrs == 3 + 4 * k ? attrs[2 + 4 * k] : 0;
  if (flags & ~(kNhwcOutput | kNhwcInput))
    fail(1, "ConvTranspose library call: bad flags " + std::to_string(flags));
  if (flags & kNhwcInput)
    reinterpretNhwc(x, "ConvTranspose library call: ", "input");
  if (flags & kNhwcOutput)
    reinterpretNhwc(y, "ConvTranspose library call: ", "output");
  int64_t groups = attrs[0];
  bool constW = attrs[1] != 0;
  memory::dims strides(attrs + 2, attrs + 2 + k),
      dil(attrs + 2 + k, attrs + 2 + 2 * k),
      padL(attrs + 2 + 2 * k, attrs + 2 + 3 * k),
      padR(attrs + 2 + 3 * k, attrs + 2 + 4 * k);
  int64_t ic = w.sizes[0], ocg = w.sizes[1];
  bool ok = groups >= 1 && x.sizes[1] == ic && ic % groups == 0 &&
            y.sizes[0] == x.sizes[0] && y.sizes[1] == groups * ocg;
  for (int64_t i = 0; ok && i < k; ++i)
    ok = strides[i] >= 1 && dil[i] >= 1 && padL[i] >= 0 && padR[i] >= 0 &&
         y.sizes[2 + i] == (x.sizes[2 + i] - 1) * strides[i] +
                               (w.sizes[2 + i] - 1) * dil[i] + 1 - padL[i] -
                               padR[i];
  if (!ok)
    fail(1, "ConvTranspose library call (group " + std::to_string(groups) +
                "): shapes " + dimsText(x.sizes) + " * " + dimsText(w.sizes) +
                " -> " + dimsText(y.sizes) + " do not match");
  if (volume(y.sizes) == 0)
    return;
  if (volume(x.sizes) == 0 || volume(w.sizes) == 0) {
    if (!tempBytes)
      zeroFill(y);
    return;
  }
  std::string key = "deconv";
  for (const View *v : {&x, &w, &y}) {
    keyAdd(key, v->sizes);
    keyAdd(key, v->strides);
  }
  keyAdd(key, memory::dims(attrs, attrs + numAttrs));
  Entry *e = lookup(key);
  if (!e) {
    auto ne = std::make_unique<Entry>();
    ne->constWeights = constW;
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
    auto any = [](const memory::dims &d) {
      return memory::desc(d, memory::data_type::f32, memory::format_tag::any);
    };
    memory::dims dilates = dil;
    for (int64_t &d : dilates)
      d -= 1;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto make = [&](const memory::desc &src, const memory::desc &dst) {
      return dnnl::deconvolution_forward::primitive_desc(
          dnnl::deconvolution_forward::desc(
              dnnl::prop_kind::forward_inference,
              dnnl::algorithm::deconvolution_direct, src, any(wSizes), dst,
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
        pd = make(any(x.sizes), any(y.sizes));
      } catch (const dnnl::error &) {
        if (!plainOk)
          throw;
        pd = make(ne->user[0], ne->user[2]);
      }
    }
    ne->prim_[0] = pd.src_desc();
    ne->prim_[1] = pd.weights_desc();
    ne->prim_[2] = pd.dst_desc();
    for (int i = 0; i < 3; ++i)
      setReorder(*ne, i, i < 2);
    ne->scratchMd = pd.scratchpad_desc();
    ne->prim = dnnl::deconvolution_forward(pd);
    e = insert(key, std::move(ne));
  }
  if (tempBytes) {
    *tempBytes = e->temporaryBytes();
    return;
  }
  float *data[3] = {x.data, w.data, y.data};
  execute(*e, data, PostOps(), alloc, DNNL_ARG_WEIGHTS);
}

LibraryCalls::LibraryCalls(size_t maxPrimitives, int32_t numThreads)
    : impl_(std::make_unique<Impl>()) {
  impl_->capacity = maxPrimitives ? maxPrimitives : 1;
  impl_->threads = numThreads > 0 ? numThreads : 0;
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

int32_t LibraryCalls::dispatch(int32_t callId, int32_t numOperands,
                               void *const *operands, const int32_t *ranks,
                               int32_t numAttrs, const int64_t *attrs,
                               const ScratchAllocator &allocator,
                               int64_t *tempBytes, std::string &error) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  ThreadScope threads(impl_->threads);
  const char *name = callId == DISC_LIB_MATMUL           ? "MatMul"
                     : callId == DISC_LIB_CONV           ? "Conv"
                     : callId == DISC_LIB_CONV_TRANSPOSE ? "ConvTranspose"
                                                         : "unknown";
  try {
    if (numOperands < 3 || numOperands > 5 || !operands || !ranks ||
        (numAttrs > 0 && !attrs))
      fail(1, std::string(name) + " library call: expects 3 to 5 operands");
    switch (callId) {
    case DISC_LIB_MATMUL:
      impl_->matmul(numOperands, operands, ranks, numAttrs, attrs, allocator,
                    tempBytes);
      return 0;
    case DISC_LIB_CONV_TRANSPOSE:
      impl_->deconv(numOperands, operands, ranks, numAttrs, attrs, allocator,
                    tempBytes);
      return 0;
    case DISC_LIB_CONV:
      impl_->conv(numOperands, operands, ranks, numAttrs, attrs, allocator,
                  tempBytes);
      return 0;
    default:
      fail(1, "unknown library call id " + std::to_string(callId));
    }
  } catch (const CallError &e) {
    error = e.message;
    return e.status;
  } catch (const dnnl::error &e) {
    error = std::string("oneDNN ") + name + ": " + e.what() + " (status " +
            std::to_string(static_cast<int>(e.status)) + ")";
    return 4;
  } catch (const std::bad_alloc &) {
    error = std::string(name) + " library call: out of host memory";
    return 2;
  }
}

int64_t LibraryCalls::numCreated() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->created;
}

int64_t LibraryCalls::numCached() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return static_cast<int64_t>(impl_->cache.size());
}
