//===- Utils.cpp - Helpers shared by the CPU passes -----------------------===//
#include "Utils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value mlir::disc::bufferRoot(Value v) {
  while (true) {
    if (isa<BlockArgument>(v))
      return v;
    Operation *def = v.getDefiningOp();
    if (isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp>(def))
      return v;
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
      continue;
    }
    if (isa<memref::CastOp, memref::ReinterpretCastOp, memref::CollapseShapeOp,
            memref::ExpandShapeOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    return Value();
  }
}
