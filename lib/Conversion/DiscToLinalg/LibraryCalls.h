//===- LibraryCalls.h - disc ops lowered to runtime library calls ---------===//
//
// With `--library-calls=onednn`, f32 MatMul/Gemm (disc.dot_general in the
// forms below) and Conv (1-3 spatial dims, any groups, dilations, padding)
// are not lowered to linalg loops: the output is allocated (`memref.alloc`,
// so it stays a buffer of the runtime's tracked allocator after
// bufferization), and a `func.call` of a private function
// (`disc_lib_matmul`, `disc_lib_conv{1,2,3}d`,
// `disc_lib_conv_transpose{1,2,3}d`, C interface) receives the
// operands as strided memrefs; the generated model wrapper forwards it to
// `disc_ral_context.library_call` (docs/runtime-abi.md).
//
// Integer Conv: an i32 Conv whose input is 8-bit data widened and
// centered on its zero point and whose filter is computed from constants
// the same way (ONNX ConvInteger and QLinearConv as imported) becomes
// `disc_lib_conv_int{1,2,3}d` (DISC_LIB_CONV_INT: int32 operands, the
// attributes of the f32 Conv, no post-ops), which runs oneDNN's u8 x s8 ->
// s32 convolution with the input's zero point as a run-time zero-point
// attribute and exact corrections for the weights. It keeps the linalg
// lowering when the weights are not computed from constants, the input is
// not centered 8-bit data, or it has dynamic channel dims with groups.
// Other element types (f64, f16, other integer products such as
// MatMulInteger's) keep the linalg lowering.
//
// Post-ops: `markLibraryCalls` (run on the scheduled function, before the
// memory model is taken) marks each op that becomes a library call with
// `disc.library_call` and, where the ops right after it in the order form
// a chain bias add -> residual add -> activation on its result (Relu; a
// Clip/ReLU6 as max and/or min by scalar constants; Sigmoid; Tanh), marks
// the call with `disc.post_ops` (one entry per fused op, see
// LibraryCallAttrs.h) and `disc.post_op_attrs` (the call's trailing
// attributes), and each fused op with `disc.fused_into_call` (the index of
// its operand that carries the chain). The call then writes the final
// value (oneDNN bias and post-op chain) and the fused ops lower to that
// buffer (MemoryModel: in-place).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_CONVERSION_LIBRARYCALLS_H
#define DISC_LIB_CONVERSION_LIBRARYCALLS_H

#include "disc/Conversion/LibraryCallAttrs.h"
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Target/RuntimeSymbols.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include <optional>

namespace mlir {
namespace func {
class FuncOp;
}
} // namespace mlir

namespace mlir::disc {

// kLibraryCallAttr, kPostOpsAttr, kFusedIntoCallAttr: LibraryCallAttrs.h.

/// True when `op` (dot_general, conv, conv_transpose, conv_backward_filter
/// or pool) is lowered to a library call with `--library-calls=onednn`.
bool fitsLibraryCall(Operation *op);

/// Marks the library calls of `func` and their post-ops (see above),
/// replacing earlier marks. Bias and residual operands must be defined
/// before the call (constants anywhere); fused ops must follow the call in
/// block order with only constants in between, so liveness is unchanged.
/// `fits` picks the ops that become calls (default: fitsLibraryCall, the
/// oneDNN forms; the CUDA target passes its own, CudaLibraryCalls.h).
/// `clipAndEltwise` false keeps Relu as the only activation post-op (no
/// Clip, Sigmoid or Tanh: the cuDNN calls do not take them yet).
/// `nhwc` (oneDNN only: the CUDA runtime does not take the bits) marks
/// chains of Conv calls whose buffers between them hold NHWC data: a Conv
/// whose final value (after its post-ops) is read only by Conv calls, as
/// their input or residual, writes it NHWC and they read it NHWC (flags
/// bits 64, 128, 256 of `disc.post_op_attrs`, which a Conv call without
/// post-ops then carries alone; docs/runtime-abi.md). The buffers keep the
/// byte size and the NCHW type; only their contents are permuted.
/// `scaledResidual` (oneDNN only) fuses a MatMul's product scaled by a
/// constant and added to or subtracted from a residual (`w - lr * dW`, an
/// SGD step; flags bit 6 and the scale, docs/runtime-abi.md).
/// `transposePostOps` (CUDA only: oneDNN's deconvolution call takes the
/// NHWC bits alone) gives ConvTranspose calls the post-ops of a Conv (its
/// bias, a residual add, Relu), which the CUDA runtime applies after the
/// transposed convolution as it does after a Conv.
void markLibraryCalls(func::FuncOp func,
                      llvm::function_ref<bool(Operation *)> fits = nullptr,
                      bool clipAndEltwise = true, bool nhwc = true,
                      bool scaledResidual = true,
                      bool transposePostOps = false);

// kLibraryCallPrefix, the name prefix of the functions compiled code calls
// for library calls: disc/Target/RuntimeSymbols.h.

/// A library call for `op` (result dims `dims`), or std::nullopt when the
/// op is not in a supported form (the caller lowers it to linalg). Handled:
/// 2-D x 2-D with either operand transposed (Gemm), N-D x 2-D contracting
/// the last lhs dim (nn.Linear on N-D tensors), and batched forms with
/// leading batch dims and either operand transposed.
std::optional<Value> lowerDotGeneralToLibraryCall(OpBuilder &b, DotGeneralOp op,
                                                  ArrayRef<OpFoldResult> dims);

/// A library call for the f32 convolution `op` with 1-3 spatial dims, or
/// std::nullopt.
std::optional<Value> lowerConvToLibraryCall(OpBuilder &b, ConvOp op,
                                            ArrayRef<OpFoldResult> dims);

/// The library call (oneDNN backward weights) computing the filter
/// gradient `op` (f32, 1-3 spatial dims), or std::nullopt.
std::optional<Value>
lowerConvBackwardFilterToLibraryCall(OpBuilder &b, ConvBackwardFilterOp op,
                                     ArrayRef<OpFoldResult> dims);

/// A library call (oneDNN deconvolution) for the f32 transposed
/// convolution `op`, or std::nullopt (a negative begin pad: the linalg
/// lowering; an output_padding larger than the end pad is a negative end
/// pad, which oneDNN takes).
std::optional<Value>
lowerConvTransposeToLibraryCall(OpBuilder &b, ConvTransposeOp op,
                                ArrayRef<OpFoldResult> dims);

/// The library call (oneDNN pooling, DISC_LIB_POOL) of the MaxPool or
/// AveragePool `op`, which markLibraryCalls marked (f32, no dilation, pads
/// below the window; see fitsLibraryCall): the input and output buffers,
/// then {kind, window, strides, begin pads, NHWC flags}.
Value lowerPoolToLibraryCall(OpBuilder &b, PoolOp op,
                             ArrayRef<OpFoldResult> dims);

} // namespace mlir::disc

#endif // DISC_LIB_CONVERSION_LIBRARYCALLS_H
