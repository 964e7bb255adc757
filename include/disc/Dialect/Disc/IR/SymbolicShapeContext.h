//===- SymbolicShapeContext.h - what a symbolic shape rule sees -*- C++ -*-===//
//
// The symbolic shape rule of a disc op (DiscOpInterface's
// inferSymbolicShapes, lib/Dialect/Disc/IR/DiscShapeRules.cpp) derives the
// dims of the op's results, and for small integer (and float) tensors their
// values, from those of its operands. It sees the shape analysis
// (include/disc/Transforms/ShapeAnalysis.h) through this interface, so that
// the dialect does not depend on the analysis or its solver.
//
// Dims and values are AffineExprs over the analysis' symbols (input dims and
// sizes known only at run time; docs/symbolic-shapes.md). A null AffineExpr
// is a dim or value the rule does not know.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_DIALECT_DISC_IR_SYMBOLICSHAPECONTEXT_H
#define DISC_DIALECT_DISC_IR_SYMBOLICSHAPECONTEXT_H

#include "disc/Analysis/ShapeConstraintSolver.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir::disc {

/// The shape analysis as one op's rule sees it. Created by the analysis for
/// each op it visits (`getOp()`).
class SymbolicShapeContext {
public:
  explicit SymbolicShapeContext(Operation *op) : op(op) {}
  virtual ~SymbolicShapeContext();

  /// The op whose rule runs.
  Operation *getOp() const { return op; }

  /// Dims of ranked tensor `v`, one per dim (a dim nobody derived is a fresh
  /// symbol marked unknown); empty for other values.
  virtual SmallVector<AffineExpr> dims(Value v) = 0;
  /// Element values of the small tensor `v` (isShapeLike; flattened; a
  /// null entry is unknown), if the analysis tracks them.
  virtual std::optional<SmallVector<AffineExpr>> values(Value v) = 0;
  /// Records the dims of `result`, one of the op's results. A null or
  /// missing entry becomes a fresh symbol marked unknown; static dims of the
  /// result type win.
  virtual void setDims(Value result, ArrayRef<AffineExpr> dims) = 0;
  /// Records the element values of the op's only result when it is a small
  /// static tensor (isShapeLike) with exactly `vals.size()` elements;
  /// otherwise does nothing. For a float result, a value the float type may
  /// not represent exactly is dropped (unknown), except for the cast of an
  /// integer to f32 or f64, which keeps it under a run-time check
  /// (ShapeAnalysis::getExactCastChecks).
  virtual void setValues(ArrayRef<AffineExpr> vals) = 0;

  /// A new symbol named after the op: a size known only at run time (the
  /// count of a `disc.range`, a resize by scales), never marked unknown.
  virtual AffineExpr fresh() = 0;
  /// Records that `size`, a symbol this rule created with fresh(), is at
  /// most `bound` for every input (a slice's count never exceeds the sliced
  /// dim): the memory model evaluates a data-dependent size at its bound to
  /// give an upper bound of the peak (docs/memory.md, "Upper bounds").
  /// Ignored when `size` is not such a symbol.
  virtual void boundAbove(AffineExpr size, AffineExpr bound) = 0;
  /// Records `a == b` for every input the model accepts: the shapes the op
  /// requires to be equal (contracting dims, concatenated dims).
  virtual void equate(AffineExpr a, AffineExpr b) = 0;
  /// Normal form of `e` after the recorded equalities.
  virtual AffineExpr normalize(AffineExpr e) = 0;
  /// `num / den` when the division is exact as polynomials; null otherwise.
  virtual AffineExpr exactDiv(AffineExpr num, AffineExpr den) = 0;
  /// NumPy broadcast of `shapes` (ranks aligned from the right); a dim that
  /// depends on which dynamic side is 1 at run time is a fresh symbol.
  virtual SmallVector<AffineExpr>
  broadcast(ArrayRef<SmallVector<AffineExpr>> shapes) = 0;
  /// Order of `a` and `b` for every input the model accepts (the solver's
  /// answer, ShapeConstraintSolver::compare).
  virtual CompareResult compare(AffineExpr a, AffineExpr b) = 0;
  /// Whether `e` involves a symbol marked unknown.
  virtual bool hasUnknown(AffineExpr e) = 0;
  /// The op is a `disc.dynamic_reshape` whose element counts agree for every
  /// valid input: its run-time reshape checks are redundant.
  virtual void markReshapeProven() = 0;

  /// The integer constant `c`.
  virtual AffineExpr constant(int64_t c) = 0;
  /// The value of `e` when it normalizes to a constant.
  virtual std::optional<int64_t> constantOf(AffineExpr e) = 0;

  // Built on the above (DiscShapeRules.cpp).

  /// Whether `v` is a small static integer or float tensor, whose element
  /// values the analysis tracks (the values of a float tensor are integers
  /// it represents exactly, see exactIntegerLimit).
  static bool isShapeLike(Value v);
  /// For a float (element) type, 2^p with p its precision in bits: every
  /// integer of magnitude at most this is exactly representable (f32:
  /// 2^24, f64: 2^53, f16: 2^11, bf16: 2^8). None for other types.
  static std::optional<int64_t> exactIntegerLimit(Type t);
  /// Element values of the op's only result from those of `operands`
  /// (broadcast: an operand of one element stands for every element) by
  /// `fn`, which sees one element of each operand and returns the result
  /// element or null. Does nothing unless every operand has values.
  void mapValues(ArrayRef<Value> operands,
                 llvm::function_ref<AffineExpr(ArrayRef<AffineExpr>)> fn);

private:
  Operation *op;
};

namespace detail {
/// DiscOpInterface's default symbolic shape rule: an elementwise op has the
/// broadcast of its operands' dims and, element by element, the values of
/// its foldSymbolicElement; another op with one operand of the result's
/// type has that operand's dims; any other result gets fresh dims.
void inferSymbolicShapesByDefault(Operation *op, SymbolicShapeContext &ctx);
} // namespace detail

} // namespace mlir::disc

#endif // DISC_DIALECT_DISC_IR_SYMBOLICSHAPECONTEXT_H
