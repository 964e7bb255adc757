//===- DiscDialect.h - disc dialect declarations ----------------*- C++ -*-===//
#ifndef DISC_DIALECT_DISC_IR_DISCDIALECT_H
#define DISC_DIALECT_DISC_IR_DISCDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::OpTrait::disc {
/// An elementwise op (Disc_Elementwise in DiscBase.td): the result element
/// at index i is a function of the operand elements at i, the operands
/// broadcast (NumPy) to the result.
template <typename ConcreteType>
class Elementwise : public TraitBase<ConcreteType, Elementwise> {};
} // namespace mlir::OpTrait::disc

#include "disc/Dialect/Disc/IR/DiscEnums.h.inc"

namespace mlir::OpTrait::disc {
/// The family of disc-lower-to-linalg that lowers the op
/// (Disc_LoweredBy in DiscOpInterfaces.td): DiscOpInterface's
/// getLoweringFamily.
template <::mlir::disc::LoweringFamily Family>
struct LoweredBy {
  template <typename ConcreteType>
  class Impl : public TraitBase<ConcreteType, Impl> {
  public:
    static constexpr ::mlir::disc::LoweringFamily kLoweringFamily = Family;
  };
};
} // namespace mlir::OpTrait::disc

#include "disc/Dialect/Disc/IR/SymbolicShapeContext.h"

#include "disc/Dialect/Disc/IR/DiscOpInterfaces.h.inc"
#include "disc/Dialect/Disc/IR/DiscOpsDialect.h.inc"
#define GET_ATTRDEF_CLASSES
#include "disc/Dialect/Disc/IR/DiscAttrs.h.inc"
#define GET_OP_CLASSES
#include "disc/Dialect/Disc/IR/DiscOps.h.inc"

namespace mlir::disc {
/// Discardable attributes of `disc.slice` for bounds that an op's contract
/// fixes (TopK `k`, Split sizes; see the op's description): message
/// templates of the run-time checks, `{0}` start, `{1}` end, `{2}` dim,
/// `{3}` end - start.
inline constexpr llvm::StringLiteral kSliceBoundsMessageAttr =
    "disc.bounds_message";
inline constexpr llvm::StringLiteral kSliceEndMessageAttr = "disc.end_message";

/// Whether the broadcast proofs of the shape analysis are applied to
/// elementwise op `op`: disc-lower-to-linalg drops the run-time versions of
/// its operand dims proven equal to the result dims, and disc-fusion may
/// fuse it into its consumer. Every elementwise op but shift_left and
/// shift_right, which came after both and are still lowered with a version
/// on every dynamic dim and not fused.
bool takesBroadcastProofs(Operation *op);

/// A softmax or log-softmax over `axes` of `input` as the ONNX importer
/// builds it (Softmax/LogSoftmax, ONNX operators spec, opset 13):
///   m = reduce_max(x, axes, keep), z = x - m, e = exp(z),
///   s = reduce_sum(e, axes, keep), y = e / s  (log: y = z - log(s)).
struct SoftmaxPattern {
  Value input;
  SmallVector<int64_t> axes;
  bool log = false;
};
/// The softmax pattern whose result `y` is computed by `root` (the div, or
/// the sub of a log-softmax); nullopt when `root` is not one.
std::optional<SoftmaxPattern> matchSoftmax(Operation *root);
/// The gradient of the pattern's input given the gradient `g` of its
/// result `y` (same shape as the input), built at `b`'s insertion point.
/// It reads `y` only, as PyTorch's fused softmax backward does, so the
/// backward pass keeps one tensor of the input's size for it, not the
/// input, the exponentials and the result:
///   softmax:     dx = y * (g - sum(g * y, axes, keep));
///   log-softmax: dx = g - exp(y) * sum(g, axes, keep).
/// The max subtracted for range has no gradient (the result does not
/// depend on it).
Value buildSoftmaxGradient(OpBuilder &b, Location loc,
                           const SoftmaxPattern &pattern, Value y, Value g);

namespace detail {
/// The verifiers and shape reifications that the op classes of DiscOps.td
/// share (Disc_PredicateOp, Disc_BinaryOp, Disc_UnaryOp and the single ops
/// of the same forms); DiscOps.cpp and DiscShapeReify.cpp.
LogicalResult verifyBinaryOp(Operation *op);
LogicalResult verifyPredicateOp(Operation *op);
/// Result shape of an op whose result has the shape of operand 0.
LogicalResult reifySameShape(Operation *op, OpBuilder &b,
                             ReifiedRankedShapedTypeDims &out);
/// NumPy broadcast of `operands` (ranks aligned from the right). Dynamic
/// dims are combined pairwise with `select(a == 1, b, a)`.
LogicalResult reifyBroadcast(Operation *op, ValueRange operands, OpBuilder &b,
                             ReifiedRankedShapedTypeDims &out);
} // namespace detail
} // namespace mlir::disc

#endif // DISC_DIALECT_DISC_IR_DISCDIALECT_H
