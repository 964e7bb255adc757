//===- LibraryCalls.h - disc ops lowered to runtime library calls ---------===//
//
// With `--library-calls=onednn`, f32 MatMul/Gemm (disc.dot_general in the
// forms below) and Conv (1-3 spatial dims, any groups, dilations, padding)
// are not lowered to linalg loops: the output is allocated (`memref.alloc`,
// so it stays a buffer of the runtime's tracked allocator after
// bufferization), and a `func.call` of a private function
// (`disc_lib_matmul`, `disc_lib_conv{1,2,3}d`, C interface) receives the
// operands as strided memrefs; the generated model wrapper forwards it to
// `disc_ral_context.library_call` (docs/runtime-abi.md). Other element
// types (integers, f64, f16) keep the linalg lowering.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_CONVERSION_LIBRARYCALLS_H
#define DISC_LIB_CONVERSION_LIBRARYCALLS_H

#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include <optional>

namespace mlir::disc {

/// Name prefix of the functions compiled code calls for library calls.
inline constexpr llvm::StringLiteral kLibraryCallPrefix = "disc_lib_";

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

} // namespace mlir::disc

#endif // DISC_LIB_CONVERSION_LIBRARYCALLS_H
