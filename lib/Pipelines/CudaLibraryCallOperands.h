//===- CudaLibraryCallOperands.h - device copies for library calls -------===//
#ifndef DISC_LIB_PIPELINES_CUDALIBRARYCALLOPERANDS_H
#define DISC_LIB_PIPELINES_CUDALIBRARYCALLOPERANDS_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::disc {

/// `disc-gpu-upload-library-call-operands`: a library call of the CUDA
/// target (`disc_lib_*`: cuBLAS/cuDNN, CudaLibraryCalls.h) runs on device
/// memory, so each constant of model.so a call reads (Conv weights, a bias)
/// gets one device copy per run, as disc-gpu-upload-constants does for
/// kernels: allocated through the runtime at the start of the function,
/// filled with gpu.memcpy on the session stream, freed before it returns.
/// Their bytes and buffers are added to `disc.device_constant_bytes` /
/// `disc.device_constant_allocs` on the function (the predicted peak).
std::unique_ptr<Pass> createUploadLibraryCallOperandsPass();

/// Registers the pass for disc-opt.
void registerUploadLibraryCallOperandsPass();

} // namespace mlir::disc

#endif // DISC_LIB_PIPELINES_CUDALIBRARYCALLOPERANDS_H
