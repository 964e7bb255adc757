//===- CudaLibraryCallOperands.h - device copies for library calls -------===//
#ifndef DISC_LIB_PIPELINES_CUDALIBRARYCALLOPERANDS_H
#define DISC_LIB_PIPELINES_CUDALIBRARYCALLOPERANDS_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::disc {

/// `disc-gpu-upload-library-call-operands`: a library call of the CUDA
/// target (`disc_lib_*`: cuBLAS/cuDNN, CudaLibraryCalls.h) runs on device
/// memory, so an operand in host memory (a constant of model.so: Conv
/// weights, a bias) gets a device copy, allocated through the runtime right
/// before the call, filled with gpu.memcpy on the session stream and freed
/// right after, as disc-gpu-upload-constants does for kernels.
std::unique_ptr<Pass> createUploadLibraryCallOperandsPass();

/// Registers the pass for disc-opt.
void registerUploadLibraryCallOperandsPass();

} // namespace mlir::disc

#endif // DISC_LIB_PIPELINES_CUDALIBRARYCALLOPERANDS_H
