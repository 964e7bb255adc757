//===- Passes.td - DISC conversion passes ------------------*- tablegen -*-===//
#ifndef DISC_CONVERSION_PASSES_TD
#define DISC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def DiscLowerToLinalg : Pass<"disc-lower-to-linalg", "ModuleOp"> {
  let summary = "Lower disc ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Rewrites every `disc` op into upstream tensor-level IR: `linalg.generic`
    and named linalg ops, `tensor.empty` destinations sized from
    `ReifyRankedShapedTypeOpInterface`, `tensor.pad`, `tensor.reshape`,
    `tensor.extract`. Dynamic dims that may broadcast at run time (size 1)
    are handled with run-time index selection. An op that cannot be lowered
    is reported with its name and location and the pass fails.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect"
  ];
}

#endif // DISC_CONVERSION_PASSES_TD
