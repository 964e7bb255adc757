//===- DiscOpInterfaces.td - what the passes ask a disc op -*- tablegen -*-===//
//
// DiscOpInterface: what the compiler asks every disc op (Disc_Op in
// DiscOps.td) instead of keeping a switch over the ops: the family of
// disc-lower-to-linalg that lowers it and, for training, its gradient rule.
// docs/adding_an_op.md lists what an op declares.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_DIALECT_DISC_OP_INTERFACES_TD
#define DISC_DIALECT_DISC_OP_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Disc_OpInterface : OpInterface<"DiscOpInterface"> {
  let description = [{
    Implemented by every disc op except `disc.constant`. The lowering
    family comes from the op's `Disc_LoweredBy` trait; an op without one
    does not compile.
  }];
  let cppNamespace = "::mlir::disc";
  let methods = [
    StaticInterfaceMethod<
      /*desc=*/[{
        The family of disc-lower-to-linalg that lowers this op: the file
        lib/Conversion/DiscToLinalg/<Family>.cpp and its
        `lower<Family>Family` entry.
      }],
      /*retTy=*/"::mlir::disc::LoweringFamily",
      /*methodName=*/"getLoweringFamily">,
    InterfaceMethod<
      /*desc=*/[{
        The gradient rule of this op, for training (reverse mode): given
        the gradients of the op's results (`resultGradients`, one per
        result, a null Value where a result has none), builds at the
        builder's insertion point the gradients of its operands and
        appends them to `operandGradients`, one per operand, a null Value
        for an operand that has none (shape operands, indices). Fails when
        the op has no gradient rule, which is the default: no op has one
        yet.
      }],
      /*retTy=*/"::llvm::LogicalResult",
      /*methodName=*/"buildGradient",
      /*args=*/(ins
          "::mlir::OpBuilder &":$builder,
          "::mlir::ValueRange":$resultGradients,
          "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients),
      /*methodBody=*/[{}],
      /*defaultImplementation=*/[{ return ::mlir::failure(); }]>,
  ];
}

// The family of disc-lower-to-linalg that lowers the op (a
// Disc_LoweringFamily case, DiscBase.td): DiscOpInterface's
// getLoweringFamily.
class Disc_LoweredBy<string family>
    : ParamNativeOpTrait<"LoweredBy",
                         "::mlir::disc::LoweringFamily::" # family> {
  let cppNamespace = "::mlir::OpTrait::disc";
}

#endif // DISC_DIALECT_DISC_OP_INTERFACES_TD
