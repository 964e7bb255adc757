//===- DiscOpInterfaces.td - what the passes ask a disc op -*- tablegen -*-===//
//
// DiscOpInterface: what the compiler asks every disc op (Disc_Op in
// DiscOps.td) instead of keeping a switch over the ops: its symbolic shape
// rule, the family of disc-lower-to-linalg that lowers it and, for
// training, its gradient rule. docs/adding_an_op.md lists what an op
// declares.
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
      /*methodName=*/"getLoweringFamily",
      /*args=*/(ins),
      /*methodBody=*/[{}],
      // The op's Disc_LoweredBy trait: an op without one does not compile.
      /*defaultImplementation=*/[{ return ConcreteOp::kLoweringFamily; }]>,
    InterfaceMethod<
      /*desc=*/[{
        The symbolic shape rule of this op (docs/symbolic-shapes.md): records
        through `context` the dims of every result, and the element values
        of a small integer result (a shape), as expressions of the dims and
        values of the operands. The shape analysis
        (disc-shape-propagate, `--emit=shapes`) calls it once per op in
        program order. An op declares it in DiscOps.td (the `methods` of
        Disc_Op) and implements it in lib/Dialect/Disc/IR/DiscShapeRules.cpp;
        the default (detail::inferSymbolicShapesByDefault) gives an
        elementwise op the broadcast of its operands' dims and the values of
        foldSymbolicElement, an op with one operand of the result's type
        that operand's dims, and any other op fresh dims (sizes known only
        at run time).
      }],
      /*retTy=*/"void",
      /*methodName=*/"inferSymbolicShapes",
      /*args=*/(ins "::mlir::disc::SymbolicShapeContext &":$context),
      /*methodBody=*/[{}],
      /*defaultImplementation=*/[{
        ::mlir::disc::detail::inferSymbolicShapesByDefault(
            $_op.getOperation(), context);
      }]>,
    InterfaceMethod<
      /*desc=*/[{
        For an elementwise op on small integer tensors (shapes): one element
        of the result from the same element of each operand (`operands`, in
        operand order), as a symbolic expression, or null when the op has
        no symbolic counterpart for these values (the default).
      }],
      /*retTy=*/"::mlir::AffineExpr",
      /*methodName=*/"foldSymbolicElement",
      /*args=*/(ins "::llvm::ArrayRef<::mlir::AffineExpr>":$operands,
                    "::mlir::disc::SymbolicShapeContext &":$context),
      /*methodBody=*/[{}],
      /*defaultImplementation=*/[{ return ::mlir::AffineExpr(); }]>,
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
