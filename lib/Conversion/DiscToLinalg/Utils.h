//===- Utils.h - shared helpers of the DiscToLinalg op families --------===//
//
// The builders every op family of disc-lower-to-linalg uses (constants,
// `tensor.empty` destinations sized from the reified shapes, index
// arithmetic, element type conversion, spatial padding), what the pass
// knows when it lowers one op (LoweringState), and the entry of each
// family (Elementwise.cpp, Linear.cpp, Pooling.cpp, Reduction.cpp,
// DataMovement.cpp, IndirectDataMovement.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_CONVERSION_DISCTOLINALG_UTILS_H
#define DISC_LIB_CONVERSION_DISCTOLINALG_UTILS_H

#include "RuntimeChecks.h"
#include "disc/Dialect/Disc/IR/DiscDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::disc::lowering {

using IterType = utils::IteratorType;

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

RankedTensorType tensorType(Value v);

Value cstIndex(OpBuilder &b, Location loc, int64_t v);

/// A scalar constant of element type `t` (float or integer).
Value cstScalar(OpBuilder &b, Location loc, Type t, double v);

/// The smallest (`negative`) or largest value of `t`: +-inf for floats,
/// the signed extremes for integers.
Value extremeScalar(OpBuilder &b, Location loc, Type t, bool negative);

Value toValue(OpBuilder &b, Location loc, OpFoldResult ofr);

/// Dim `i` of the ranked tensor `v` as an index value (a constant when it
/// is static).
Value dimValue(OpBuilder &b, Location loc, Value v, int64_t i);

/// Sizes usable to build a value of `type`: static dims as attributes,
/// dynamic dims as values.
SmallVector<OpFoldResult> sizesForType(OpBuilder &b, Location loc,
                                       RankedTensorType type,
                                       ArrayRef<OpFoldResult> dims);

/// `tensor.empty` of `type` whose dynamic dims come from `dims`.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<OpFoldResult> dims);

Value fill(OpBuilder &b, Location loc, Value scalar, Value dest);

Value castTo(OpBuilder &b, Location loc, Value v, Type type);

/// The element at `i` of a 1-D integer tensor as an index value.
Value elementAsIndex(OpBuilder &b, Location loc, Value tensor, int64_t i);

/// The element at `i` of a 1-D integer tensor as an index value, folded:
/// a constant when the tensor is one, the original index when the tensor
/// was built from index casts (`disc.shape_of`).
Value foldedElementAsIndex(OpBuilder &b, Location loc, Value tensor, int64_t i);

/// True when `v` (index or integer) is >= 0 for every run: a dim, a
/// non-negative constant, or sums, products, maxima and selections of such.
bool isKnownNonNegative(Value v, int depth = 0);

/// The type and the reified shape of an op's single result: what a lowering
/// sizes its destinations from.
struct ReifiedResult {
  RankedTensorType type;
  SmallVector<OpFoldResult> dims;

  /// A `tensor.empty` of the result's type and shape.
  Value empty(OpBuilder &b, Location loc) const {
    return emptyTensor(b, loc, type, dims);
  }
};

/// The result of `op` (a single ranked tensor) with its shape reified;
/// fails with the diagnostic when the shape cannot be reified.
FailureOr<ReifiedResult> reifyResult(OpBuilder &b, Operation *op);

/// reifyResult for a lowering that takes float and integer element types
/// only: the unsupportedElementType diagnostic when `elt` is neither.
FailureOr<ReifiedResult> reifyFloatOrIntResult(OpBuilder &b, Operation *op,
                                               Type elt);

/// Index arithmetic that folds constants.
struct IMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return cstIndex(b, loc, v); }
  Value add(Value x, Value y) {
    return b.createOrFold<arith::AddIOp>(loc, x, y);
  }
  Value sub(Value x, Value y) {
    return b.createOrFold<arith::SubIOp>(loc, x, y);
  }
  Value mul(Value x, Value y) {
    return b.createOrFold<arith::MulIOp>(loc, x, y);
  }
  Value max(Value x, Value y) {
    return b.createOrFold<arith::MaxSIOp>(loc, x, y);
  }
  Value min(Value x, Value y) {
    return b.createOrFold<arith::MinSIOp>(loc, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return b.createOrFold<arith::CmpIOp>(loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return b.createOrFold<arith::SelectOp>(loc, cond, x, y);
  }
};

/// An integer index element as an index value; negative values count from
/// the end of a dim of size `dim`. With `checks`, an index outside
/// [-dim, dim) stops the run (ONNX: out-of-range indices are an error).
Value wrapIndex(OpBuilder &b, Location loc, Value raw, Value dim,
                RuntimeChecks *checks = nullptr);

/// Element type conversion as ONNX Cast: float to integer truncates toward
/// zero, to i1 is `!= 0`, from i1 is unsigned.
Value convertScalar(OpBuilder &b, Location loc, Value x, Type to,
                    bool unsignedSrc, bool unsignedDst);

bool isFloatOrInt(Type t);

/// The "cannot be lowered" diagnostic of `op` for an element type its
/// lowering does not take.
InFlightDiagnostic unsupportedElementType(Operation *op, Type elt);

/// A `linalg.generic` with parallel loops and no inputs that writes every
/// element of `dest` (identity map) with the value `body` yields; returns
/// its result. `body` reads its indices with `linalg.index`.
Value generateTensor(
    OpBuilder &b, Location loc, Value dest,
    function_ref<void(OpBuilder &, Location, ValueRange)> body);

/// A `linalg.generic` with parallel loops that writes every element of
/// `dest` (identity map) with `src` read at the indices `index` returns.
/// `index` reads the position with `linalg.index`, and gets the elements of
/// `inputs` (read through `inputMaps`).
Value extractEach(
    OpBuilder &b, Location loc, Value dest, Value src,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> index,
    ValueRange inputs = {}, ArrayRef<AffineMap> inputMaps = {});

/// Pads the spatial dims (from dim 2) of `input` with `padValue`: `lo`
/// static, `hi` static or dynamic.
Value padSpatial(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> lo,
                 ArrayRef<OpFoldResult> hi, Value padValue);

/// In the body of a `linalg.generic` over [lead dims..., O_1..O_k,
/// K_1..K_k] (k = `sizes.size()`): `input` [lead dims..., D_1..D_k] at
/// [i..., o * stride + k * dilation - lo], read with `tensor.extract` at
/// that position clamped into the input, or `outside` where the position
/// is outside it (the padding). `sizes` are the D_i, taken before the
/// generic. A window op that reads its input this way needs no padded copy.
Value extractWindowElement(OpBuilder &b, Location loc, Value input,
                           int64_t lead, ArrayRef<Value> sizes,
                           ArrayRef<int64_t> lo, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations, Value outside);

//===----------------------------------------------------------------------===//
// Op families
//===----------------------------------------------------------------------===//

/// Per broadcasting op: per operand, per operand dim, whether that dim is
/// proven equal to the result dim it is aligned with.
using BroadcastFacts =
    llvm::DenseMap<Operation *, SmallVector<SmallVector<bool>>>;
/// Reshapes whose element counts the shape analysis proves to agree, and
/// Expands whose shape entries it proves non-negative; for a reshape that
/// only splits dims, its groups (ShapeAnalysis::getExpansion), else empty.
using ProvenReshapes =
    llvm::DenseMap<Operation *, SmallVector<SmallVector<int64_t, 2>>>;
/// Casts of integers to floats whose element values the shape analysis
/// assumes exactly representable without proving it: the element indices
/// to check at run time (ShapeAnalysis::getExactCastChecks).
using ExactCastChecks = llvm::DenseMap<Operation *, SmallVector<int64_t>>;

/// What the pass knows when it lowers one op: the shape analysis' facts,
/// the module's run-time checks, and whether the op may become a library
/// call.
struct LoweringState {
  const BroadcastFacts *facts;
  const ProvenReshapes &provenReshapes;
  const ExactCastChecks &exactCastChecks;
  RuntimeChecks &checks;
  bool libraryCalls;
};

/// The diagnostic for an op that its family has no lowering for.
InFlightDiagnostic noLowering(Operation *op);

/// The lowering of `op` to tensor-level IR in destination passing style, by
/// the family that owns it (the op's DiscOpInterface::getLoweringFamily).
using FamilyLowering = FailureOr<Value>(OpBuilder &b, Operation *op,
                                        LoweringState &state);
FamilyLowering lowerElementwiseFamily;
FamilyLowering lowerLinearFamily;
FamilyLowering lowerPoolingFamily;
FamilyLowering lowerReductionFamily;
FamilyLowering lowerDataMovementFamily;
FamilyLowering lowerIndirectDataMovementFamily;

} // namespace mlir::disc::lowering

#endif // DISC_LIB_CONVERSION_DISCTOLINALG_UTILS_H
