//===- LibraryCallAttrs.h - marks of library-call ops ---------*- C++ -*-===//
//
// The attributes `markLibraryCalls` (lib/Conversion/DiscToLinalg/
// LibraryCalls.h) sets on the scheduled function, for the passes that must
// treat a library call and the post-ops fused into it as one unit (the
// memory model, rematerialization).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_CONVERSION_LIBRARYCALLATTRS_H
#define DISC_CONVERSION_LIBRARYCALLATTRS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::disc {

/// Unit attribute of an op lowered to a runtime library call.
inline constexpr llvm::StringLiteral kLibraryCallAttr = "disc.library_call";
/// On such a call: the post-ops fused into it, one entry per step of the
/// chain (nextPostOp) in order: "bias", "add", then one activation
/// ("relu"; "max" and/or "min" by a scalar, a Clip; "sigmoid"; "tanh";
/// "silu"; "hardswish"; "gelu" then "gelu_half"); or, on a MatMul,
/// "scale" (a multiplication by a constant) then "add" or "sub" (the
/// residual minus the scaled product).
inline constexpr llvm::StringLiteral kPostOpsAttr = "disc.post_ops";
/// On a call with post-ops or NHWC operands: the trailing attributes the
/// runtime call takes (docs/runtime-abi.md, *Post-ops*): `flags` (bit 0
/// bias, 1 residual add, 2 Relu, 3 clip, 4 logistic, 5 tanh, at most one
/// of bits 2-5 and 9-11; Conv on oneDNN: 6 output, 7 input, 8 residual is
/// NHWC;
/// MatMul on oneDNN: kMatmulScaleFlag, kMatmulAccumulateFlag), then for a
/// clip its lower and upper bound as f32 bit patterns, then a MatMul's
/// scale as an f32 bit pattern.
inline constexpr llvm::StringLiteral kPostOpAttrsAttr = "disc.post_op_attrs";
/// MatMul flags bit 6: the product is scaled (a negative scale for a
/// "sub" post-op) before the residual add.
inline constexpr int64_t kMatmulScaleFlag = 64;
/// MatMul flags bit 7, set by disc-mark-in-place-state in place of bit 1
/// (residual) when the residual is the state input the chain updates: the
/// call writes the state's buffer, which holds the addend when it starts
/// (`C = alpha * A x B + C`), and takes no residual operand.
inline constexpr int64_t kMatmulAccumulateFlag = 128;
/// MatMul flags bit 12 (oneDNN): the weights (B) are a constant of the
/// model; the runtime packs them into the kernel's layout once and keeps
/// them.
inline constexpr int64_t kMatmulConstWeightsFlag = 4096;
/// On a fused post-op: the index of its operand that carries the chain.
inline constexpr llvm::StringLiteral kFusedIntoCallAttr =
    "disc.fused_into_call";

/// Unit attribute of a `disc.transpose` between channels-last and
/// channels-first order next to a Conv or ConvTranspose call that reads or
/// writes NHWC (flags bits 7 / 6): its result has the bytes of its operand
/// (a dense buffer holding NHWC data viewed with the NCHW shape, or the
/// reverse), so it lowers to a reshape view, not a copy.
inline constexpr llvm::StringLiteral kNhwcViewAttr = "disc.nhwc_view";

/// Unit attribute of a `disc.concatenate` along the channels (dim 1)
/// whose operands are all written NHWC by Conv, ConvTranspose or pooling
/// calls (or by other such concatenations) and whose readers all read it
/// NHWC: every operand and the result hold NHWC data viewed with the NCHW
/// shape, so the copies run along the last (channels) dim of NHWC views and
/// the calls around it need no reorders.
inline constexpr llvm::StringLiteral kNhwcConcatAttr = "disc.nhwc_concat";

/// Activation flags past the Conv layout bits (docs/runtime-abi.md,
/// *Post-ops*), one activation per call like bits 2-5: SiLU
/// (`x * sigmoid(x)`), HardSwish (`x * clip(x / 6 + 0.5, 0, 1)`) and
/// GELU (`x * (1 + erf(x / sqrt(2))) / 2`), each fused from the group of
/// ops the importer or exporter makes of it.
inline constexpr int64_t kSwishFlag = 512;
inline constexpr int64_t kHardSwishFlag = 1024;
inline constexpr int64_t kGeluErfFlag = 2048;

/// The op after `v` in the post-op chain of a library call: of the fused
/// ops (kFusedIntoCallAttr) that read `v` as their chain operand, the last
/// in the block. A post-op is one op, or a group that reads the chain
/// value twice (SiLU's Sigmoid and Mul) and ends with the last of them.
/// Null at the end of the chain.
inline Operation *nextPostOp(Value v) {
  Operation *next = nullptr;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    auto idx = user->getAttrOfType<IntegerAttr>(kFusedIntoCallAttr);
    if (idx && idx.getInt() == use.getOperandNumber() &&
        (!next || next->isBeforeInBlock(user)))
      next = user;
  }
  return next;
}

/// True when `op` runs as (part of) a library call: the call itself, a call
/// with post-ops, or a post-op fused into one. Such ops lower as one unit
/// with the call and cannot be cloned on their own.
inline bool isLibraryCallUnit(Operation *op) {
  return op->hasAttr(kLibraryCallAttr) || op->hasAttr(kPostOpsAttr) ||
         op->hasAttr(kFusedIntoCallAttr);
}

} // namespace mlir::disc

#endif // DISC_CONVERSION_LIBRARYCALLATTRS_H
