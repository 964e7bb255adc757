//===- abi.h - C ABI between compiled DISC models and the runtime ---------===//
//
// The only types shared between a compiled `model.so` and the runtime. See
// docs/runtime-abi.md. This header is plain C and has no dependencies.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_ABI_H
#define DISC_RUNTIME_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Version 3 added the rematerialization and device entries at the end of
/// `disc_ral_context`, version 4 `device_check`, version 5 `parallel_for`,
/// version 6 `trace_op` and the signature's "trace_points", version 7 the
/// `device_check` images DISC_CHECK_ALL_MODULES and DISC_CHECK_END_OF_RUN
/// (a CUDA model no longer waits after each launch; an older runtime must
/// refuse it); the runtime still loads version 2 to 6 models (they use a
/// prefix of the context).
#define DISC_MODEL_ABI_VERSION 7

/// Runtime services handed to every `disc_model_run` call. `alloc` returns a
/// buffer of `bytes` bytes aligned to `alignment` (power of two, >= 16) or
/// NULL; `free` releases a pointer returned by `alloc`. `error` records why
/// the run failed (a run-time contract check: an index out of range, shapes
/// that do not broadcast, ...): `status` is a status code of
/// docs/runtime-abi.md (1 = invalid argument), `message` a NUL-terminated
/// text the runtime copies. `error` returns; the model then stops and
/// `disc_model_run` returns `status`.
typedef struct disc_ral_context {
  void *self;
  void *(*alloc)(void *self, int64_t bytes, int64_t alignment);
  void (*free)(void *self, void *ptr);
  void (*error)(void *self, int32_t status, const char *message);
  /// Library call (docs/runtime-abi.md, "Library calls"): runs primitive
  /// `call_id` (DISC_LIB_*) on `num_operands` memref descriptors `operands`
  /// (3 + 2*rank int64 words each, ranks in `ranks`; inputs first, the
  /// output, already allocated through `alloc`, last) with `num_attrs`
  /// integer parameters `attrs`. Returns 0, or a status code after the
  /// runtime recorded the reason as through `error`; the model then stops
  /// and `disc_model_run` returns that status. NULL when the runtime has no
  /// library module (the model reports an internal error).
  int32_t (*library_call)(void *self, int32_t call_id, int32_t num_operands,
                          void *const *operands, const int32_t *ranks,
                          int32_t num_attrs, const int64_t *attrs);
  /// Rematerialization (ABI v3; docs/memory.md, "Rematerialization").
  /// Evict point of candidate `id` (the signature's "remat" list): `ptr` is
  /// the block `alloc` returned for the candidate's buffer, which the model
  /// frees right after this call. The runtime either lets that free happen
  /// (evicted) or keeps the block, still counted as live, for the
  /// regenerate point. Returns 0, or a status code after recording the
  /// reason as through `error`.
  int32_t (*remat_evict)(void *self, int32_t id, void *ptr);
  /// Regenerate point of candidate `id`: returns 1 when the block was kept;
  /// the model's next `alloc` (the regenerated buffer, same size) then
  /// returns that block with its data. Returns 0 when it was evicted: the
  /// model recomputes the value into a fresh buffer and then calls
  /// `remat_regenerated`. Negative: a status code, negated, after `error`.
  int32_t (*remat_regenerate)(void *self, int32_t id);
  /// End of the recompute of candidate `id` (statistics).
  void (*remat_regenerated)(void *self, int32_t id);
  /* Device entries (ABI v3, docs/cuda.md). NULL in a session of a CPU
     model. In a session of a CUDA model `alloc`/`free` manage device
     memory (same tracked peak and memory limit) and the model's memref
     descriptors hold device pointers. Each returns 0, or a status code after
     the runtime recorded the reason as through `error`. */
  /// Launches `kernel` of the cubin `image` on the session's stream, with
  /// `grid`/`block` extents {x, y, z}, `shared_bytes` of dynamic shared
  /// memory and cuLaunchKernel-style `params` (pointers to each argument).
  int32_t (*device_launch)(void *self, const void *image, const char *kernel,
                           const int64_t *grid, const int64_t *block,
                           int32_t shared_bytes, void **params);
  /// Copies `bytes` bytes on the session's stream; `dst` and `src` may be
  /// host or device pointers.
  int32_t (*device_copy)(void *self, void *dst, const void *src, int64_t bytes);
  /// Waits until the session's stream has finished.
  int32_t (*device_sync)(void *self);
  /// Run-time checks inside kernels (ABI v4, docs/cuda.md): after a launch
  /// of a kernel of the cubin `image` has finished, reads and clears the
  /// module's device error word `disc_check_error` (5 int64 words) into
  /// `words`. Returns 1 when a check failed (words[0] = 1 + the check id of
  /// `disc_check_failed`, words[1..4] its values), 0 when none failed or the
  /// module has no such word, or a status code, negated, after `error`.
  /// With `image` NULL (DISC_CHECK_ALL_MODULES): waits for the stream and
  /// reads the words of every module loaded so far (one synchronization;
  /// the first failure in the order the modules were first launched); with
  /// DISC_CHECK_END_OF_RUN: the same when some loaded module has a word,
  /// and nothing (no wait) when none has. Kernels themselves are then
  /// launched without a wait (docs/cuda.md, "Synchronization").
  int32_t (*device_check)(void *self, const void *image, int64_t *words);
  /// Device copy of constant data (ABI v4): sets `*device` to the device
  /// address of a copy of the `bytes` bytes at `host` (model.so's constants,
  /// which never change), uploaded on the session's first request and kept
  /// until the session ends. Like model.so's constants on the CPU, these
  /// copies are not counted in the session's peak or memory limit. Returns
  /// 0, or a status code after `error`.
  int32_t (*device_constant)(void *self, const void *host, int64_t bytes,
                             void **device);
  /// Device slot `site` of `bytes` bytes (ABI v4): small static buffers
  /// that do not escape (at most 1 KiB; the CPU keeps them on its stack)
  /// live in per-session device slots, one per allocation site, allocated
  /// on first use and kept until the session ends, not counted in the peak
  /// or the memory limit (docs/memory.md: the memory model leaves stack
  /// buffers out). Sets `*device`; returns 0, or a status code after
  /// `error`.
  int32_t (*device_scratch)(void *self, int64_t site, int64_t bytes,
                            void **device);
  /// Parallel loop (ABI v5, docs/runtime-abi.md, "Threads"): runs
  /// `body(env, lo, hi)` over disjoint chunks [lo, hi) that cover [0, n)
  /// exactly once, on the session's threads, each chunk at least
  /// `min_chunk` iterations (or all of [0, n)); returns when every chunk has
  /// run. `body` must not allocate through the context, report errors or
  /// unwind. NULL: the model runs `body(env, 0, n)` itself.
  void (*parallel_for)(void *self,
                       void (*body)(void *env, int64_t lo, int64_t hi),
                       void *env, int64_t n, int64_t min_chunk);
  /// Trace point (ABI v6, docs/memory.md, "Timeline"): compiled code calls
  /// it with `phase` 0 right before and 1 right after kernel or library
  /// call `id` (an index into the signature's "trace_points"). NULL unless
  /// the session records a trace: the model's wrapper then tests it and
  /// returns (one call and one test per trace point).
  void (*trace_op)(void *self, int32_t id, int32_t phase);
} disc_ral_context;

/// Library call ids (`disc_ral_context.library_call`).
/// C[b] = op(A[b]) x op(B[b]): operands A [Ba, M, K], B [Bb, K, N], C
/// [B, M, N] (any strides; Ba, Bb in {1, B}); attrs {transA, transB}, where
/// a transposed operand is given as [B, K, M] / [B, N, K].
#define DISC_LIB_MATMUL 1
/// ONNX Conv without bias: operands X [N, C, D...], W [OC, C/G, K...],
/// Y [N, OC, O...] with k = 1..3 spatial dims; attrs {G, weights_constant,
/// strides[k], dilations[k], pads_begin[k], pads_end[k]} (ONNX meaning:
/// dilation 1 is dense). `weights_constant` != 0 promises that W's data at
/// that address never changes, so the runtime may keep it reordered.
#define DISC_LIB_CONV 2
/// ONNX ConvTranspose without bias: operands X [N, C, D...], W [C, OC/G,
/// K...], Y [N, OC, O...]; attrs {G, weights_constant, strides[k],
/// dilations[k], pads_begin[k], pads_end[k]} with pads_end = the ONNX end
/// pad minus output_padding (negative when output_padding is larger), so
/// O = (D-1)*s + (K-1)*d + 1 - begin - end.
#define DISC_LIB_CONV_TRANSPOSE 3
/// Filter gradient of a one-group convolution (CPU: oneDNN's backward
/// weights): operands X [N, C, D...], dY [N, OC, O...], dW [OC, C, K...];
/// attrs {strides[k], dilations[k], pads_begin[k], pads_end[k]} of the
/// forward Conv (as DISC_LIB_CONV's), so O = floor((D + begin + end -
/// (K-1)*d - 1) / s) + 1. No post-ops.
#define DISC_LIB_CONV_BACKWARD_FILTER 4
/// Integer Conv of 8-bit data centered on its zero points (ONNX
/// ConvInteger as imported: `(x - x_zero_point) * (w - w_zero_point)`
/// summed in int32): operands X [N, C, D...], W [OC, C/G, K...], Y [N, OC,
/// O...], all int32, with the attributes of DISC_LIB_CONV (no post-ops).
/// Exact for any int32 data; it runs as oneDNN's u8 x s8 -> s32
/// convolution when X spans at most 256 values and each output channel of
/// W at most 256 (what 8-bit data minus zero points give), else as a
/// direct loop.
#define DISC_LIB_CONV_INT 5
/// ONNX MaxPool / AveragePool (f32, no dilation): operands X [N, C, D...],
/// Y [N, C, O...] with k = 1..3 spatial dims; attrs {kind, window[k],
/// strides[k], pads_begin[k], flags}: kind 0 max, 1 average counting the
/// padding, 2 average not counting it; the end pads follow from the sizes
/// (O = floor((D + begin + end - K) / s) + 1, any ceil_mode windows
/// included), and `flags` holds the NHWC bits of a Conv (64: Y, 128: X).
#define DISC_LIB_POOL 6
/// Post-ops (MatMul and Conv): one more attribute after the ones above,
/// `flags` (bit 0: bias, bit 1: residual add, bit 2: Relu, applied in
/// that order), and one more operand after the output per bit 0/1: the
/// bias B [channels] (N for MatMul, OC for Conv), then the residual R
/// (the output's shape).

/// The functions compiled code calls for these primitives, through the C
/// interface (model.so's hidden `_mlir_ciface_<name>`, which forward to
/// `library_call`): DISC_LIB_MATMUL_SYMBOL, and DISC_LIB_CONV_SYMBOL or
/// DISC_LIB_CONV_TRANSPOSE_SYMBOL followed by "<k>d" for k spatial dims;
/// with post-ops (or a ConvTranspose's flags) the name ends in
/// "_post<flags & 3>", plus "c" when clip bounds follow `flags`.
#define DISC_LIB_MATMUL_SYMBOL "disc_lib_matmul"
#define DISC_LIB_CONV_SYMBOL "disc_lib_conv"
#define DISC_LIB_CONV_TRANSPOSE_SYMBOL "disc_lib_conv_transpose"
#define DISC_LIB_CONV_BACKWARD_FILTER_SYMBOL "disc_lib_conv_backward_filter"
#define DISC_LIB_CONV_INT_SYMBOL "disc_lib_conv_int"
#define DISC_LIB_POOL_SYMBOL "disc_lib_pool"

/// The device error word of a cubin with run-time checks
/// (`device_check`).
#define DISC_CHECK_ERROR_SYMBOL "disc_check_error"
/// `device_check` images: every loaded module's word, after waiting for the
/// stream (before the host reads device data); the same at the end of a
/// run, without a wait when no loaded module has a word.
#define DISC_CHECK_ALL_MODULES ((const void *)0)
#define DISC_CHECK_END_OF_RUN ((const void *)1)

/// The functions model.so exports, of the types below.
#define DISC_MODEL_ABI_VERSION_SYMBOL "disc_model_abi_version"
#define DISC_MODEL_SIGNATURE_SYMBOL "disc_model_signature"
#define DISC_MODEL_RUN_SYMBOL "disc_model_run"

typedef int32_t (*disc_model_abi_version_fn)(void);
typedef const char *(*disc_model_signature_fn)(void);
/// inputs[i] / outputs[i] point to memref descriptors of 3 + 2*rank int64
/// words: allocated ptr, aligned ptr, offset, sizes[rank], strides[rank].
typedef int32_t (*disc_model_run_fn)(disc_ral_context *ctx, void **inputs,
                                     void **outputs);

#ifdef __cplusplus
}
#endif

#endif // DISC_RUNTIME_ABI_H
