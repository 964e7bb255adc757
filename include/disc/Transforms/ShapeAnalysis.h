//===- ShapeAnalysis.h - symbolic dims of every value -----------*- C++ -*-===//
//
// The analysis behind disc-shape-propagate / disc-shape-simplify and
// `disc-compile --emit=shapes`: every dim of every value of one function as
// an AffineExpr over root symbols (input dims and data-dependent sizes).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TRANSFORMS_SHAPEANALYSIS_H
#define DISC_TRANSFORMS_SHAPEANALYSIS_H

#include "disc/Analysis/ShapeConstraintSolver.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::disc {

class ShapeRuleContext;

/// A user-given range for a named input dim.
struct DimRange {
  int64_t min = 0;
  std::optional<int64_t> max;
  std::optional<int64_t> likely;
};

class ShapeAnalysis {
public:
  /// `ranges`: facts for root symbols by user-facing name.
  ShapeAnalysis(func::FuncOp func, const llvm::StringMap<DimRange> &ranges);

  /// Analyzes the function body. Never fails: a dim the rules cannot
  /// derive gets a fresh symbol marked unknown.
  void run();

  /// Asks the solver whether symbols involved in relations the
  /// substitution could not absorb (`S0*S1 == S2`, `S2 == S3*S1`) are equal
  /// (`S0 == S3`), and merges them. Returns the number of merges.
  unsigned mergeEqualSymbols();

  /// Dims of a ranked tensor value (normalized), empty for other values.
  SmallVector<AffineExpr> getDims(Value v);
  /// Normal form of an expression after the recorded equalities.
  AffineExpr normalize(AffineExpr e);

  ShapeConstraintSolver &getSolver() { return solver; }
  unsigned getNumSymbols() const { return symbols.size(); }
  StringRef getSymbolName(unsigned i) const { return symbols[i].name; }
  bool isRootSymbol(unsigned i) const { return symbols[i].isRoot; }
  bool isUnknownSymbol(unsigned i) const { return symbols[i].unknown; }
  /// Representative symbol for `i` after merging (itself when not merged).
  std::optional<unsigned> getMergedInto(unsigned i) const;
  /// An upper bound of symbol `i`, a size known only at run time, as an
  /// expression of other symbols (normalized), when a shape rule recorded
  /// one (SymbolicShapeContext::boundAbove); null otherwise.
  AffineExpr getUpperBound(unsigned i);
  /// Does `e` involve a symbol created for a dim the rules could not derive?
  bool hasUnknown(AffineExpr e);
  /// Dim `i` of `a` equals dim `j` of `b` for every input the model
  /// accepts (equal normal forms; the analysis records only equalities
  /// that hold for every valid input, never a broadcast assumption).
  bool isProvenEqual(Value a, unsigned i, Value b, unsigned j);
  /// Entry `i` of the 1-D integer tensor `v` (a shape) is >= 0 for every
  /// valid input: its value is known as an expression of dims built with
  /// +, *, floordiv, ceildiv and non-negative constants only.
  bool isValueNonNegative(Value v, unsigned i);
  /// The value of the one-element integer or bool tensor `v` when the
  /// analysis proves it constant (a shape computation: `Shape(x)[1] == 0`
  /// is false when the dim's range excludes 0).
  std::optional<int64_t> getConstantElement(Value v);
  /// A `disc.dynamic_reshape` whose element counts agree for every valid
  /// input from the shape values alone (before the analysis equates them):
  /// its run-time reshape checks are redundant.
  bool isReshapeProven(Operation *op) const {
    return provenReshapes.contains(op);
  }
  /// For a proven `disc.dynamic_reshape` that only splits dims (and adds
  /// dims of size 1): for each operand dim, the consecutive result dims it
  /// becomes, whose product is that dim (`[B, T, 64] -> [B, T, 4, 16]`:
  /// [[0], [1], [2, 3]]), with the types agreeing (a static operand dim
  /// splits into static dims only, a dynamic one has a dynamic dim in its
  /// group). Such a reshape is a view of any strided operand
  /// (`tensor.expand_shape`); none otherwise.
  std::optional<SmallVector<SmallVector<int64_t, 2>>>
  getExpansion(Operation *reshape);
  /// Casts (`disc.convert`) of integers to f32 or f64 whose values the
  /// analysis carries as integers without proving them exactly
  /// representable (an input dim without a maximum): per cast, the element
  /// indices whose magnitude must be at most exactIntegerLimit of the
  /// result type, which the lowering checks at run time.
  const llvm::DenseMap<Operation *, SmallVector<int64_t>> &
  getExactCastChecks() const {
    return exactCastChecks;
  }
  /// Recorded relations (lhs == rhs), normalized, for the constraint ops.
  ArrayRef<std::pair<AffineExpr, AffineExpr>> getEqualities() const {
    return equalities;
  }
  /// Renders `e` with user-facing names (`batch*seq*4`).
  std::string render(AffineExpr e);

private:
  /// How a disc op's rule sees the analysis (ShapeRules.cpp).
  friend class ShapeRuleContext;
  llvm::DenseSet<Operation *> provenReshapes;
  llvm::DenseMap<Operation *, SmallVector<int64_t>> exactCastChecks;
  struct Sym {
    std::string name;
    bool isRoot = false;
    bool unknown = false;
  };
  AffineExpr newSymbol(StringRef name, bool root, bool unknown,
                       const DimRange *range = nullptr);
  void equate(AffineExpr a, AffineExpr b);
  void visit(Operation *op);
  SmallVector<AffineExpr> dimsOrFresh(Value v);
  std::optional<SmallVector<AffineExpr>> valuesOf(Value v);
  void setDims(Value v, SmallVector<AffineExpr> dims, Operation *op);
  AffineExpr fresh(Operation *op, bool unknown);
  AffineExpr cst(int64_t c);
  std::optional<int64_t> constOf(AffineExpr e);
  AffineExpr exactDiv(AffineExpr num, AffineExpr den);
  /// NumPy broadcast of `shapes`; `op` names the fresh symbol of a result
  /// dim that depends on which dynamic side is 1 at run time.
  SmallVector<AffineExpr> broadcast(ArrayRef<SmallVector<AffineExpr>> shapes,
                                    Operation *op);

  func::FuncOp func;
  MLIRContext *ctx;
  const llvm::StringMap<DimRange> &ranges;
  ShapeConstraintSolver solver;
  SmallVector<Sym> symbols;
  SmallVector<AffineExpr> subst; // symbol i -> replacement (itself if none)
  llvm::DenseMap<Value, SmallVector<AffineExpr>> shapes;
  llvm::DenseMap<Value, SmallVector<AffineExpr>> values;
  llvm::DenseMap<unsigned, AffineExpr> upperBounds;
  SmallVector<std::pair<AffineExpr, AffineExpr>> equalities;
  llvm::StringMap<AffineExpr> rootByName;
};

/// True when `reshape` (a `disc.dynamic_reshape`) lowers to a view of its
/// operand whatever the operand's layout: it only splits dims
/// (ShapeAnalysis::getExpansion, at most one dynamic dim per group) and
/// no reader needs a dense buffer (a library call, the function's return).
/// The lowering and the memory model both ask this.
bool isSplitReshapeView(ShapeAnalysis &sa, Operation *reshape);

/// Bytes one element of `t` takes in a buffer (at least 1; index: 8); 0 for
/// a type that is neither an integer, a float nor index.
int64_t elementByteWidth(Type t);

/// Collects the user ranges recorded as `disc_shape.symbolic_dim` ops with a
/// `name` in `module`.
llvm::StringMap<DimRange> collectDimRanges(ModuleOp module);

/// Runs the analysis and writes the annotations (symbolic_dim ops,
/// constraint ops, `disc_shape.dims`); with `simplify`, also makes provably
/// static dims static and folds constant `disc.shape_of`.
LogicalResult annotateShapes(ModuleOp module, bool simplify);

/// `--emit=shapes`: one line per tensor value of the entry function and a
/// summary line.
LogicalResult printShapes(ModuleOp module, StringRef entry,
                          llvm::raw_ostream &os);

} // namespace mlir::disc

#endif // DISC_TRANSFORMS_SHAPEANALYSIS_H
