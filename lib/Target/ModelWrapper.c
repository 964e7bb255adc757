/*===- ModelWrapper.c - the C wrapper linked into every model.so ----------===*
 *
 * The ABI entry points of docs/runtime-abi.md and the functions the compiled
 * code calls (allocation, run-time checks, library calls, remat points,
 * parallel loops, trace points), over the runtime context of the current
 * run. disc-compile embeds this file and ModelWrapperCuda.c (the CUDA
 * target) and compiles them into each model.so through a generated wrapper.c
 * (lib/Target/ModelEmitter.cpp), which
 *
 * - before including this file defines the model's data: `disc_signature`
 *   (the signature JSON), `disc_check_messages` (the message templates of
 *   the run-time checks by id, then 0) and, for the CUDA target,
 *   DISC_MODEL_CUDA;
 * - after it defines `disc_run_entry` (calls the compiled entry and copies
 *   its result descriptors to `outputs`) and the entry points that vary with
 *   the model or are generated from a table: `_mlir_ciface_disc_lib_*` over
 *   disc_library_call, `_mlir_ciface_disc_remat_evict_<id>` over
 *   disc_remat_evict and `_mlir_ciface_disc_device_constant_<rank>_<k>`
 *   over disc_device_constant_memref (CUDA).
 *
 * Only the three DISC_EXPORT functions are exported from model.so; the
 * functions the compiled code calls are hidden.
 *
 *===----------------------------------------------------------------------===*/
#include "disc/runtime/abi.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DISC_HIDDEN __attribute__((visibility("hidden")))
#define DISC_EXPORT __attribute__((visibility("default")))

static __thread disc_ral_context *disc_ctx;
static __thread jmp_buf *disc_jmp;

/* Defined by the generated wrapper.c after this file. */
static void disc_run_entry(void **inputs, void **outputs);
#ifdef DISC_MODEL_CUDA
/* ModelWrapperCuda.c: the run's last wait for the device error words. */
static void disc_cuda_end_of_run(void);
#endif

/* Unwinds to disc_model_run, which returns `status`. Compiled frames hold
   no resources: the runtime frees every buffer still allocated. */
static void disc_unwind(int32_t status) { longjmp(*disc_jmp, (int)status); }

/* Unwinds with status `st` of a context call that failed (the runtime has
   recorded the reason). */
static void disc_check_status(int32_t st) {
  if (st != 0)
    disc_unwind(st);
}

/* Reports `message` to the runtime and unwinds to disc_model_run, which
   returns `status`. */
static void disc_fail(int32_t status, const char *message) {
  disc_ctx->error(disc_ctx->self, status, message);
  disc_unwind(status);
}

static void *disc_alloc(uint64_t n, int64_t align) {
  char msg[128];
  if (n > (uint64_t)INT64_MAX) {
    snprintf(msg, sizeof msg,
             "allocation of %llu bytes exceeds the int64 range",
             (unsigned long long)n);
    disc_fail(1, msg);
  }
  void *p = disc_ctx->alloc(disc_ctx->self, (int64_t)n, align);
  if (!p && n) {
    snprintf(msg, sizeof msg, "out of memory: allocation of %llu bytes failed",
             (unsigned long long)n);
    disc_fail(2, msg);
  }
  return p;
}

DISC_HIDDEN void *_mlir_memref_to_llvm_alloc(uint64_t n) {
  return disc_alloc(n, 64);
}
DISC_HIDDEN void *_mlir_memref_to_llvm_aligned_alloc(uint64_t a, uint64_t n) {
  return disc_alloc(n, a < 64 ? 64 : (int64_t)a);
}
DISC_HIDDEN void _mlir_memref_to_llvm_free(void *p) {
  disc_ctx->free(disc_ctx->self, p);
}

/* Kernels with a parallel outer loop (disc-parallelize-kernels): the body
   runs on the session's threads, or inline without them. */
DISC_HIDDEN void disc_parallel_for(void (*body)(void *, int64_t, int64_t),
                                   void *env, int64_t n, int64_t min_chunk) {
  if (disc_ctx->parallel_for)
    disc_ctx->parallel_for(disc_ctx->self, body, env, n, min_chunk);
  else if (n > 0)
    body(env, 0, n);
}

/* Library calls (docs/runtime-abi.md): the generated
   `_mlir_ciface_disc_lib_*` that the compiled code calls pass their `n`
   operands (inputs, the output, then the post-op bias and residual) and
   attributes here. On failure the runtime has recorded the reason; the run
   stops with its status. */
static void disc_library_call(int32_t id, int32_t n, void *const *ops,
                              const int32_t *ranks, int32_t nattrs,
                              const int64_t *attrs) {
  if (!disc_ctx->library_call)
    disc_fail(4, "the runtime has no library calls");
  disc_check_status(
      disc_ctx->library_call(disc_ctx->self, id, n, ops, ranks, nattrs, attrs));
}

/* Run-time checks (RuntimeChecks.h): formats template `id` of
   disc_check_messages, where "{k}" stands for the k-th value. */
DISC_HIDDEN void disc_check_failed(int64_t id, int64_t v0, int64_t v1,
                                   int64_t v2, int64_t v3) {
  int64_t v[4] = {v0, v1, v2, v3};
  char msg[1024];
  size_t n = 0;
  /* The templates end with a 0. */
  const int64_t count =
      (int64_t)(sizeof disc_check_messages / sizeof *disc_check_messages) - 1;
  const char *t =
      id >= 0 && id < count ? disc_check_messages[id] : "run-time check failed";
  for (; *t && n + 24 < sizeof msg; ++t) {
    if (t[0] == '{' && t[1] >= '0' && t[1] <= '3' && t[2] == '}') {
      n += (size_t)snprintf(msg + n, sizeof msg - n, "%lld",
                            (long long)v[t[1] - '0']);
      t += 2;
      continue;
    }
    msg[n++] = *t;
  }
  msg[n] = 0;
  disc_fail(1, msg);
}

/* Rematerialization points (disc-remat). */
DISC_HIDDEN int32_t disc_remat_regenerate(int64_t id) {
  if (!disc_ctx->remat_regenerate)
    return 0; /* recompute */
  int32_t st = disc_ctx->remat_regenerate(disc_ctx->self, (int32_t)id);
  if (st < 0)
    disc_unwind(-st);
  return st;
}
DISC_HIDDEN void disc_remat_regenerated(int64_t id) {
  if (disc_ctx->remat_regenerated)
    disc_ctx->remat_regenerated(disc_ctx->self, (int32_t)id);
}
/* The evict point of candidate `id` (the generated
   `_mlir_ciface_disc_remat_evict_<id>`) passes its memref descriptor; the
   block's base pointer comes first. */
static void disc_remat_evict(int64_t id, void *const *desc) {
  if (!disc_ctx->remat_evict)
    return;
  disc_check_status(
      disc_ctx->remat_evict(disc_ctx->self, (int32_t)id, desc[0]));
}

/* Trace points (disc-insert-trace-points): kernel or library call `id`
   begins (phase 0) or ends (1). Without a recording session the context
   entry is NULL and this is one branch. */
DISC_HIDDEN void disc_trace_op(int64_t id, int64_t phase) {
  if (disc_ctx->trace_op)
    disc_ctx->trace_op(disc_ctx->self, (int32_t)id, (int32_t)phase);
}

DISC_EXPORT int32_t disc_model_abi_version(void) {
  return DISC_MODEL_ABI_VERSION;
}

DISC_EXPORT const char *disc_model_signature(void) { return disc_signature; }

DISC_EXPORT int32_t disc_model_run(disc_ral_context *ctx, void **inputs,
                                   void **outputs) {
  disc_ral_context *saved = disc_ctx;
  jmp_buf *savedJmp = disc_jmp;
  jmp_buf jmp;
  disc_ctx = ctx;
  disc_jmp = &jmp;
  int status = setjmp(jmp);
  if (status != 0) {
    disc_ctx = saved;
    disc_jmp = savedJmp;
    return (int32_t)status;
  }
  disc_run_entry(inputs, outputs);
#ifdef DISC_MODEL_CUDA
  disc_cuda_end_of_run();
#endif
  disc_ctx = saved;
  disc_jmp = savedJmp;
  return 0;
}

#ifdef DISC_MODEL_CUDA
#include "ModelWrapperCuda.c"
#endif
