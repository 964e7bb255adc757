//===- DiscShapeOps.td - disc_shape dialect ------------------*- tablegen -*-===//
//
// Symbolic dims: module-level symbols with facts (name, range, likely value,
// flags), symbolic expressions over them, and relations between them.
// See docs/symbolic-shapes.md ("Symbolic dims and passes").
//
//===----------------------------------------------------------------------===//
#ifndef DISC_DIALECT_DISCSHAPE_OPS_TD
#define DISC_DIALECT_DISCSHAPE_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/SymbolInterfaces.td"

def DiscShape_Dialect : Dialect {
  let name = "disc_shape";
  let cppNamespace = "::mlir::disc_shape";
  let summary = "Symbolic dims and the relations between them";
  let description = [{
    A symbolic dim is a module-level symbol (`disc_shape.symbolic_dim @S0`).
    Every value's dims are annotated with the discardable attribute
    `disc_shape.dims` on its defining op (one list per result) or on the
    function argument (one list): each dim entry is an integer (static),
    a symbol reference (`@S0`) or an expression
    `#disc_shape.expr<()[s0, s1] -> (s0 * s1), [@S0, @S1]>` whose affine
    symbols `s<i>` stand for the listed symbolic dims. Relations between
    symbols are `disc_shape.constraint` ops.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the per-value dims annotation.
    static constexpr ::llvm::StringLiteral getDimsAttrName() {
      return ::llvm::StringLiteral("disc_shape.dims");
    }
  }];
}

def DiscShape_ExprAttr : AttrDef<DiscShape_Dialect, "Expr"> {
  let mnemonic = "expr";
  let summary = "An affine expression over symbolic dims";
  let description = [{
    `#disc_shape.expr<()[s0, s1] -> ((s0 - 1) floordiv 2 + s1), [@S0, @S1]>`:
    a one-result, zero-dim affine map whose symbol `s<i>` is the i-th
    symbolic dim in the list.
  }];
  let parameters = (ins "::mlir::AffineMap":$map, "::mlir::ArrayAttr":$symbols);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

class DiscShape_Op<string mnemonic, list<Trait> traits = []>
    : Op<DiscShape_Dialect, mnemonic, traits>;

def DiscShape_SymbolicDimOp : DiscShape_Op<"symbolic_dim", [Symbol]> {
  let summary = "A module-level symbolic dim with known facts";
  let description = [{
    ```mlir
    disc_shape.symbolic_dim @S0 {name = "seq", min = 1 : i64, max = 512 : i64,
                                 likely = 128 : i64, knownNonNegative,
                                 knownNonOne}
    ```
    `name` is the user-facing name (ONNX `dim_param`, `--dim NAME=...`);
    `[min, max]` the inclusive range (max absent: unbounded); `likely` a
    tie-breaker only.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                   OptionalAttr<StrAttr>:$name,
                   DefaultValuedAttr<I64Attr, "0">:$min,
                   OptionalAttr<I64Attr>:$max,
                   OptionalAttr<I64Attr>:$likely,
                   UnitAttr:$knownNonNegative,
                   UnitAttr:$knownNonOne);
  let assemblyFormat = "$sym_name attr-dict";
  let hasVerifier = 1;
}

def DiscShape_ConstraintOp : DiscShape_Op<"constraint"> {
  let summary = "A relation between symbolic dim expressions";
  let description = [{
    `kind` is `eq` (`lhs == rhs`) or `ge` (`lhs >= rhs`); both sides are dim
    entries (integer, `@S`, or `#disc_shape.expr`).

    ```mlir
    disc_shape.constraint "eq", @S3, #disc_shape.expr<()[s0, s1] -> (s0 * s1), [@S0, @S1]>
    ```
  }];
  let arguments = (ins StrAttr:$kind, AnyAttr:$lhs, AnyAttr:$rhs);
  let assemblyFormat = "$kind `,` $lhs `,` $rhs attr-dict";
  let hasVerifier = 1;
}

#endif // DISC_DIALECT_DISCSHAPE_OPS_TD
