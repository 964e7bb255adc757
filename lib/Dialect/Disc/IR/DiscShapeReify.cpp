//===- DiscShapeReify.cpp - result shape reification of disc ops ----------===//
//
// Implements ReifyRankedShapedTypeOpInterface: for every result dim, an
// index-typed value (or static size) computed from the operands at run time.
// The CPU lowering builds its `tensor.empty` destinations from these.
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"

using namespace mlir;
using namespace mlir::disc;

// TODO(lowering): replace the stubs with real reification.
#define DISC_REIFY_STUB(OP)                                                    \
  LogicalResult OP::reifyResultShapes(                                         \
      OpBuilder &, ReifiedRankedShapedTypeDims &) {                            \
    return failure();                                                          \
  }
DISC_REIFY_STUB(AbsOp)
DISC_REIFY_STUB(NegOp)
DISC_REIFY_STUB(ExpOp)
DISC_REIFY_STUB(LogOp)
DISC_REIFY_STUB(SqrtOp)
DISC_REIFY_STUB(RsqrtOp)
DISC_REIFY_STUB(TanhOp)
DISC_REIFY_STUB(ErfOp)
DISC_REIFY_STUB(FloorOp)
DISC_REIFY_STUB(CeilOp)
DISC_REIFY_STUB(RoundOp)
DISC_REIFY_STUB(SinOp)
DISC_REIFY_STUB(CosOp)
DISC_REIFY_STUB(TanOp)
DISC_REIFY_STUB(AsinOp)
DISC_REIFY_STUB(AcosOp)
DISC_REIFY_STUB(AtanOp)
DISC_REIFY_STUB(SinhOp)
DISC_REIFY_STUB(CoshOp)
DISC_REIFY_STUB(AsinhOp)
DISC_REIFY_STUB(AcoshOp)
DISC_REIFY_STUB(AtanhOp)
DISC_REIFY_STUB(SignOp)
DISC_REIFY_STUB(NotOp)
DISC_REIFY_STUB(LogisticOp)
DISC_REIFY_STUB(ReciprocalOp)
DISC_REIFY_STUB(IsNanOp)
DISC_REIFY_STUB(IsInfOp)
DISC_REIFY_STUB(AddOp)
DISC_REIFY_STUB(SubOp)
DISC_REIFY_STUB(MulOp)
DISC_REIFY_STUB(DivOp)
DISC_REIFY_STUB(RemOp)
DISC_REIFY_STUB(PowOp)
DISC_REIFY_STUB(MaxOp)
DISC_REIFY_STUB(MinOp)
DISC_REIFY_STUB(AndOp)
DISC_REIFY_STUB(OrOp)
DISC_REIFY_STUB(XorOp)
DISC_REIFY_STUB(CompareOp)
DISC_REIFY_STUB(SelectOp)
DISC_REIFY_STUB(ConvertOp)
DISC_REIFY_STUB(DotGeneralOp)
DISC_REIFY_STUB(ConvOp)
DISC_REIFY_STUB(PoolOp)
DISC_REIFY_STUB(ReduceOp)
DISC_REIFY_STUB(ArgReduceOp)
DISC_REIFY_STUB(ShapeOfOp)
DISC_REIFY_STUB(ExpandOp)
DISC_REIFY_STUB(DynamicReshapeOp)
DISC_REIFY_STUB(TransposeOp)
DISC_REIFY_STUB(ConcatenateOp)
DISC_REIFY_STUB(SliceOp)
DISC_REIFY_STUB(GatherOp)
DISC_REIFY_STUB(PadOp)
DISC_REIFY_STUB(RangeOp)
