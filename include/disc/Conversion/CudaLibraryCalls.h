//===- CudaLibraryCalls.h - MatMul/Conv through cuBLAS/cuDNN on CUDA -----===//
//
// On `--target=cuda` (`--library-calls=cuda`, what disc-compile picks there
// for the default `onednn`) the ops below become the same runtime library
// calls as on the CPU (`disc_lib_matmul`, `disc_lib_conv{1,2,3}d`, with the
// bias / residual add / Relu post-ops: DiscToLinalg/LibraryCalls.h). They
// run on the host of the compiled code, which passes device memref
// descriptors; the runtime runs them with cuBLAS and cuDNN on the
// session's stream (runtime/lib/cuda/LibraryCalls.h, docs/cuda.md).
//
// Taken: f32 dot_general in the forms of the CPU path (MatMul, Gemm with
// either operand transposed, N-D x 2-D, batched with equal batch dims), and
// f32 Conv and ConvTranspose (cuDNN backward data) with 1-3 spatial dims,
// any groups, strides and dilations and symmetric pads (for ConvTranspose:
// the end pad less output_padding equal to the begin pad). Everything else
// (other element types, asymmetric pads) keeps the generated loops;
// `cudaLibraryCallMiss` says why and `disc-compile --report-codegen` prints
// it per ONNX node.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_CONVERSION_CUDALIBRARYCALLS_H
#define DISC_CONVERSION_CUDALIBRARYCALLS_H

#include "mlir/IR/Operation.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir {
namespace func {
class FuncOp;
}
} // namespace mlir

namespace mlir::disc {

/// True when `op` becomes a cuBLAS/cuDNN library call on the CUDA target.
bool fitsCudaLibraryCall(Operation *op);

/// For a MatMul/Gemm (dot_general), Conv or ConvTranspose that does not fit:
/// why it keeps the generated loops. Empty for an op that fits or is of
/// another kind.
std::string cudaLibraryCallMiss(Operation *op);

/// "ONNX node 'conv1' (Conv)" from the importer's location NameLoc(node,
/// NameLoc(op type, ...)); the quoted op name when there is none. For the
/// CUDA target's diagnostics and reports.
std::string describeOnnxNode(Operation *op);

/// markLibraryCalls (DiscToLinalg/LibraryCalls.h) with `fitsCudaLibraryCall`.
void markCudaLibraryCalls(func::FuncOp func);

/// Prints one line per dot_general / conv / conv_transpose of `func`: the
/// ONNX node and "cuBLAS", "cuDNN" or "generated loops (<why>)", then a
/// summary line (`disc-compile --target=cuda --report-codegen`). Reads the
/// marks of markCudaLibraryCalls.
void reportCudaLibraryCalls(func::FuncOp func, llvm::raw_ostream &os);

} // namespace mlir::disc

#endif // DISC_CONVERSION_CUDALIBRARYCALLS_H
