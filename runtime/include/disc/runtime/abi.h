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

#define DISC_MODEL_ABI_VERSION 2

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
} disc_ral_context;

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
