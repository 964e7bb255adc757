//===- LibraryCalls.h - CUDA library calls (cuBLAS, cuDNN) ----*- C++ -*-===//
//
// Runs the DISC_LIB_MATMUL and DISC_LIB_CONV primitives of abi.h on a
// session's device, on its stream, with the vendor libraries loaded at run
// time (VendorLibs.h). Operands are memref descriptors of device memory.
//
// MatMul: cublasSgemmStridedBatched. Row-major operands are handed to the
// column-major library as their transposes (C^T = B^T A^T), so any operand
// with a unit stride in one of its two matrix dims passes without a copy
// (a transposed view flips the op); a broadcast batch (size 1 against B)
// gets batch stride 0. Post-ops (bias, residual add, Relu) run after the
// GEMM as cudnnAddTensor / cudnnActivationForward on the output.
//
// Conv: cuDNN's convolution forward (NCHW or NCDHW, 1-D promoted to 2-D),
// groups, strides, dilations, symmetric pads; the input may be strided, the
// weights must be dense. The algorithm comes from cuDNN's heuristics
// (cudnnGetConvolutionForwardAlgorithm_v7, FMA math: no TF32, so results
// match the f32 references) and is cached per (shapes, strides, attrs) in a
// least-recently-used cache of bounded size. Bias, residual add and Relu
// follow as for MatMul.
//
// Memory: every workspace comes from the session's tracked allocator
// (`DeviceScratch`), so the session peak counts it; cuBLAS gets a
// workspace of at most 4 MiB per call (none when the allocator refuses),
// cuDNN the chosen algorithm's (the next algorithm needing less when the
// allocator refuses). The handles' own small internal state is allocated by
// the libraries when the first call creates them.
//
// Thread safety: one object per session; `call` takes an internal mutex.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CUDA_LIBRARYCALLS_H
#define DISC_RUNTIME_LIB_CUDA_LIBRARYCALLS_H

#include "../core/CallOperands.h"
#include "VendorLibs.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#pragma GCC visibility push(hidden)
namespace disc::runtime::cuda {

class Device;

/// Allocation hooks for per-call device workspaces (CallOperands.h):
/// `alloc` returns device memory; `free` releases it after the stream has
/// drained.
using DeviceScratch = runtime::ScratchAllocator;

class LibraryCalls final : public LibraryModule {
public:
  /// Calls on `device` (which must outlive this object); the libraries are
  /// loaded from `blasNames` / `dnnNames` on first use. `maxPlans`: capacity
  /// of the convolution cache (entries).
  explicit LibraryCalls(Device &device,
                        std::vector<std::string> blasNames = blasLibraryNames(),
                        std::vector<std::string> dnnNames = dnnLibraryNames(),
                        size_t maxPlans = 256);
  ~LibraryCalls() override;

  /// Returns 0, or a status code with `error` set: 1 for operands that do
  /// not fit the call (ranks, dims, strides cuBLAS/cuDNN cannot take,
  /// asymmetric pads, an unknown call id such as ConvTranspose), 2 when a
  /// workspace cannot be allocated, 3 when cuBLAS or cuDNN is not available
  /// (the message names the library), 4 when the library fails.
  int32_t call(int32_t callId, int32_t numOperands, void *const *operands,
               const int32_t *ranks, int32_t numAttrs, const int64_t *attrs,
               const DeviceScratch &scratch, std::string &error) override;

  /// The name a traced run gives call `callId` ("cuBLAS matmul", "cuDNN
  /// conv", "cuDNN conv_transpose"; docs/cuda.md, "Kernel times").
  static const char *libraryCallName(int32_t callId);

  /// Convolution plans created so far / cached now (for tests).
  CacheCounts counts() const;
  int64_t numPlansCreated() const { return counts().created; }
  int64_t numPlansCached() const { return counts().cached; }

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace disc::runtime::cuda
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CUDA_LIBRARYCALLS_H
