//===- DiscBase.td - disc dialect definition and enums ------*- tablegen -*-===//
#ifndef DISC_DIALECT_DISC_BASE_TD
#define DISC_DIALECT_DISC_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Disc_Dialect : Dialect {
  let name = "disc";
  let cppNamespace = "::mlir::disc";
  let summary = "Tensor-level ops with dynamic shapes, imported from ONNX";
  let description = [{
    The `disc` dialect holds tensor-level operations on ranked tensors whose
    dims may be dynamic (`tensor<?x128xf32>`). Elementwise binary ops follow
    NumPy broadcasting (ranks aligned from the right, a dim of size 1
    stretches). Shape-like operands (reshape targets, slice bounds, pads) are
    1-D `i64` tensors computed at run time. Later passes (symbolic shapes,
    memory scheduling, rematerialization) reason on this level.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

// An elementwise op: its result element at index i is a function of the
// operand elements at i, operands broadcast (NumPy: ranks aligned from the
// right, a dim of size 1 stretches) to the result, whose shape is the
// broadcast of the operands' shapes. disc-lower-to-linalg lowers it to one
// `linalg.generic` around the op's scalar body (DiscToLinalg/Elementwise.cpp);
// disc-fusion fuses it into its consumer; the shape analysis gives binary
// ones the broadcast of their operands' dims. These ask the trait and keep
// no list of the ops. MLIR's own `Elementwise` trait does not fit: it
// verifies that all operands have the result's shape.
def Disc_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::mlir::OpTrait::disc";
}

def Disc_CompareDirection : I32EnumAttr<"CompareDirection",
    "comparison direction", [
      I32EnumAttrCase<"EQ", 0, "eq">, I32EnumAttrCase<"NE", 1, "ne">,
      I32EnumAttrCase<"LT", 2, "lt">, I32EnumAttrCase<"LE", 3, "le">,
      I32EnumAttrCase<"GT", 4, "gt">, I32EnumAttrCase<"GE", 5, "ge">]> {
  let cppNamespace = "::mlir::disc";
  let genSpecializedAttr = 0;
}
def Disc_CompareDirectionAttr
    : EnumAttr<Disc_Dialect, Disc_CompareDirection, "compare_direction">;

def Disc_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
      I32EnumAttrCase<"Sum", 0, "sum">, I32EnumAttrCase<"Mean", 1, "mean">,
      I32EnumAttrCase<"Max", 2, "max">, I32EnumAttrCase<"Min", 3, "min">,
      I32EnumAttrCase<"Prod", 4, "prod">]> {
  let cppNamespace = "::mlir::disc";
  let genSpecializedAttr = 0;
}
def Disc_ReduceKindAttr : EnumAttr<Disc_Dialect, Disc_ReduceKind, "reduce_kind">;

def Disc_PoolKind : I32EnumAttr<"PoolKind", "pooling kind", [
      I32EnumAttrCase<"Max", 0, "max">, I32EnumAttrCase<"Avg", 1, "avg">]> {
  let cppNamespace = "::mlir::disc";
  let genSpecializedAttr = 0;
}
def Disc_PoolKindAttr : EnumAttr<Disc_Dialect, Disc_PoolKind, "pool_kind">;

def Disc_PadMode : I32EnumAttr<"PadMode", "padding mode", [
      I32EnumAttrCase<"Constant", 0, "constant">,
      I32EnumAttrCase<"Reflect", 1, "reflect">,
      I32EnumAttrCase<"Edge", 2, "edge">]> {
  let cppNamespace = "::mlir::disc";
  let genSpecializedAttr = 0;
}
def Disc_PadModeAttr : EnumAttr<Disc_Dialect, Disc_PadMode, "pad_mode">;

def Disc_LoweringFamily : I32EnumAttr<"LoweringFamily",
    "the disc-lower-to-linalg family that lowers an op", [
      I32EnumAttrCase<"Elementwise", 0, "elementwise">,
      I32EnumAttrCase<"Linear", 1, "linear">,
      I32EnumAttrCase<"Pooling", 2, "pooling">,
      I32EnumAttrCase<"Reduction", 3, "reduction">,
      I32EnumAttrCase<"DataMovement", 4, "data_movement">,
      I32EnumAttrCase<"IndirectDataMovement", 5, "indirect_data_movement">]> {
  let cppNamespace = "::mlir::disc";
  let genSpecializedAttr = 0;
}

#endif // DISC_DIALECT_DISC_BASE_TD
