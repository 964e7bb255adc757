//===- DiscOps.td - disc dialect operations ------------------*- tablegen -*-===//
//
// Tensor-level ops of DISC. Every op works on ranked tensors whose dims may
// be dynamic. Result shapes are reified through
// ReifyRankedShapedTypeOpInterface (lib/Dialect/Disc/IR/DiscShapeReify.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_DIALECT_DISC_OPS_TD
#define DISC_DIALECT_DISC_OPS_TD

include "disc/Dialect/Disc/IR/DiscBase.td"
include "disc/Dialect/Disc/IR/DiscOpInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

// Every op but the constant: `traits` names its lowering family
// (Disc_LoweredBy) and, for an elementwise op, Disc_Elementwise; `methods`
// names the DiscOpInterface methods the op implements instead of taking the
// default (its symbolic shape rule `inferSymbolicShapes` and, for an
// elementwise op on shapes, `foldSymbolicElement`, both in
// lib/Dialect/Disc/IR/DiscShapeRules.cpp); the result shape is reified in
// lib/Dialect/Disc/IR/DiscShapeReify.cpp.
class Disc_Op<string mnemonic, list<Trait> traits = [],
              list<string> methods = []>
    : Op<Disc_Dialect, mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<Disc_OpInterface, methods>,
        DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
            ["reifyResultShapes"]>])>;

// The symbolic shape rule of an op: Disc_Op's `methods`.
defvar Disc_ShapeRule = ["inferSymbolicShapes"];
// The symbolic value rule of an elementwise op on shapes.
defvar Disc_ValueRule = ["foldSymbolicElement"];
// The gradient rule of a differentiable op (reverse mode, for training;
// lib/Dialect/Disc/IR/DiscGradients.cpp).
defvar Disc_GradientRule = ["buildGradient"];

// The traits of an elementwise op.
defvar Disc_ElementwiseTraits = [Disc_Elementwise,
                                 Disc_LoweredBy<"Elementwise">];

// 1-D i64 tensors that carry shapes, indices or bounds.
def Disc_I64Vector : 1DTensorOf<[I64]>;
def Disc_Scalar : 0DTensorOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

def Disc_ConstantOp : Op<Disc_Dialect, "constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "Tensor constant (ONNX initializers and Constant nodes)";
  let description = [{
    A static-shaped tensor constant. Large weights are kept as
    `DenseResourceElementsAttr` blobs.

    ```mlir
    %0 = disc.constant dense<1.0> : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// The elementwise ops: every op of this section, and only those, carries
// Disc_Elementwise (DiscBase.td). The passes ask the trait instead of
// keeping their own lists.

class Disc_UnaryOp<string mnemonic, Type type = AnyRankedTensor,
                   list<string> methods = []>
    : Disc_Op<mnemonic,
        !listconcat(Disc_ElementwiseTraits, [SameOperandsAndResultType]),
        methods> {
  let summary = "Elementwise " # mnemonic;
  let description = [{
    Applies `}] # mnemonic # [{` to every element.

    ```mlir
    %1 = disc.}] # mnemonic # [{ %0 : tensor<?x4xf32>
    ```
  }];
  let arguments = (ins type:$operand);
  let results = (outs type:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::reifyResultShapes(::mlir::OpBuilder &b,
        ::mlir::ReifiedRankedShapedTypeDims &out) {
      return ::mlir::disc::detail::reifySameShape(getOperation(), b, out);
    }
  }];
}

def Disc_AbsOp : Disc_UnaryOp<"abs", AnyRankedTensor, Disc_GradientRule>;
def Disc_NegOp : Disc_UnaryOp<"neg", AnyRankedTensor,
    !listconcat(Disc_ValueRule, Disc_GradientRule)>;
def Disc_ExpOp : Disc_UnaryOp<"exp", AnyRankedTensor, Disc_GradientRule>;
def Disc_LogOp : Disc_UnaryOp<"log", AnyRankedTensor, Disc_GradientRule>;
def Disc_SqrtOp : Disc_UnaryOp<"sqrt", AnyRankedTensor, Disc_GradientRule>;
def Disc_RsqrtOp : Disc_UnaryOp<"rsqrt", AnyRankedTensor, Disc_GradientRule>;
def Disc_TanhOp : Disc_UnaryOp<"tanh", AnyRankedTensor, Disc_GradientRule>;
def Disc_ErfOp : Disc_UnaryOp<"erf", AnyRankedTensor, Disc_GradientRule>;
def Disc_FloorOp : Disc_UnaryOp<"floor", AnyRankedTensor, Disc_GradientRule>;
def Disc_CeilOp : Disc_UnaryOp<"ceil", AnyRankedTensor, Disc_GradientRule>;
/// Rounds half to even (ONNX Round).
def Disc_RoundOp : Disc_UnaryOp<"round", AnyRankedTensor, Disc_GradientRule>;
def Disc_SinOp : Disc_UnaryOp<"sin", AnyRankedTensor, Disc_GradientRule>;
def Disc_CosOp : Disc_UnaryOp<"cos", AnyRankedTensor, Disc_GradientRule>;
def Disc_TanOp : Disc_UnaryOp<"tan">;
def Disc_AsinOp : Disc_UnaryOp<"asin">;
def Disc_AcosOp : Disc_UnaryOp<"acos">;
def Disc_AtanOp : Disc_UnaryOp<"atan">;
def Disc_SinhOp : Disc_UnaryOp<"sinh">;
def Disc_CoshOp : Disc_UnaryOp<"cosh">;
def Disc_AsinhOp : Disc_UnaryOp<"asinh">;
def Disc_AcoshOp : Disc_UnaryOp<"acosh">;
def Disc_AtanhOp : Disc_UnaryOp<"atanh">;
/// -1, 0 or 1 by the sign of the element.
def Disc_SignOp : Disc_UnaryOp<"sign", AnyRankedTensor, Disc_GradientRule>;
/// Logical not on i1, bitwise not on other integers.
def Disc_NotOp : Disc_UnaryOp<"not">;
/// 1 / (1 + exp(-x)).
def Disc_LogisticOp : Disc_UnaryOp<"logistic", AnyRankedTensor, Disc_GradientRule>;
def Disc_ReciprocalOp : Disc_UnaryOp<"reciprocal", AnyRankedTensor, Disc_GradientRule>;

class Disc_PredicateOp<string mnemonic>
    : Disc_Op<mnemonic, Disc_ElementwiseTraits> {
  let summary = "Elementwise floating-point predicate " # mnemonic;
  let arguments = (ins AnyRankedTensor:$operand);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat =
      "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::disc::detail::verifyPredicateOp(getOperation());
    }
    ::llvm::LogicalResult $cppClass::reifyResultShapes(::mlir::OpBuilder &b,
        ::mlir::ReifiedRankedShapedTypeDims &out) {
      return ::mlir::disc::detail::reifySameShape(getOperation(), b, out);
    }
  }];
}
def Disc_IsNanOp : Disc_PredicateOp<"is_nan">;
/// Infinity test; `detect_positive` / `detect_negative` select the signs.
def Disc_IsInfOp : Disc_PredicateOp<"is_inf"> {
  let arguments = (ins AnyRankedTensor:$operand,
                   DefaultValuedAttr<BoolAttr, "true">:$detect_positive,
                   DefaultValuedAttr<BoolAttr, "true">:$detect_negative);
}

class Disc_BinaryOp<string mnemonic, list<string> methods = []>
    : Disc_Op<mnemonic, Disc_ElementwiseTraits, methods> {
  let summary = "Elementwise " # mnemonic # " with NumPy broadcasting";
  let description = [{
    Ranks are aligned from the right; a dim of size 1 (static or at run
    time) stretches to the other operand's size. Both operands have the
    result's element type.

    ```mlir
    %2 = disc.}] # mnemonic # [{ %0, %1
        : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::disc::detail::verifyBinaryOp(getOperation());
    }
    ::llvm::LogicalResult $cppClass::reifyResultShapes(::mlir::OpBuilder &b,
        ::mlir::ReifiedRankedShapedTypeDims &out) {
      return ::mlir::disc::detail::reifyBroadcast(getOperation(),
                                                  getOperands(), b, out);
    }
  }];
}

def Disc_AddOp : Disc_BinaryOp<"add",
    !listconcat(Disc_ValueRule, Disc_GradientRule)>;
def Disc_SubOp : Disc_BinaryOp<"sub",
    !listconcat(Disc_ValueRule, Disc_GradientRule)>;
def Disc_MulOp : Disc_BinaryOp<"mul",
    !listconcat(Disc_ValueRule, Disc_GradientRule)>;
/// Integer division truncates toward zero (C semantics, as ONNX Div).
def Disc_DivOp : Disc_BinaryOp<"div",
    !listconcat(Disc_ValueRule, Disc_GradientRule)>;
/// Remainder with the sign of the dividend (C fmod / ONNX Mod fmod=1).
def Disc_RemOp : Disc_BinaryOp<"rem", Disc_ValueRule>;
def Disc_PowOp : Disc_BinaryOp<"pow", Disc_GradientRule>;
def Disc_MaxOp : Disc_BinaryOp<"max",
    !listconcat(Disc_ValueRule, Disc_GradientRule)>;
def Disc_MinOp : Disc_BinaryOp<"min",
    !listconcat(Disc_ValueRule, Disc_GradientRule)>;
def Disc_AndOp : Disc_BinaryOp<"and", Disc_ValueRule>;
def Disc_OrOp : Disc_BinaryOp<"or", Disc_ValueRule>;
def Disc_XorOp : Disc_BinaryOp<"xor", Disc_ValueRule>;
/// Integer shift left (ONNX BitShift LEFT). A shift amount of at least the
/// bit width (or negative) gives 0.
def Disc_ShiftLeftOp : Disc_BinaryOp<"shift_left">;
/// Logical (unsigned) integer shift right (ONNX BitShift RIGHT). A shift
/// amount of at least the bit width (or negative) gives 0.
def Disc_ShiftRightOp : Disc_BinaryOp<"shift_right">;

def Disc_CompareOp : Disc_Op<"compare", Disc_ElementwiseTraits,
    Disc_ValueRule> {
  let summary = "Elementwise comparison with NumPy broadcasting";
  let description = [{
    ```mlir
    %2 = disc.compare lt, %0, %1
        : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>
    ```
  }];
  let arguments = (ins Disc_CompareDirectionAttr:$direction,
                   AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat = "$direction `,` $lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_SelectOp : Disc_Op<"select", Disc_ElementwiseTraits,
    !listconcat(Disc_ValueRule, Disc_GradientRule)> {
  let summary = "Elementwise select (ONNX Where) with NumPy broadcasting";
  let description = [{
    `result = pred ? on_true : on_false`, all three operands broadcast.

    ```mlir
    %3 = disc.select %p, %a, %b
        : (tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I1]>:$pred, AnyRankedTensor:$on_true,
                   AnyRankedTensor:$on_false);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$pred `,` $on_true `,` $on_false attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_ConvertOp : Disc_Op<"convert", Disc_ElementwiseTraits,
    !listconcat(Disc_ValueRule, Disc_GradientRule)> {
  let summary = "Elementwise element type conversion (ONNX Cast)";
  let description = [{
    Float to integer truncates toward zero; to i1 means `!= 0`.
    Unsigned integer element types are given by the `unsigned_source` and
    `unsigned_result` flags (signless integers otherwise).

    ```mlir
    %1 = disc.convert %0 : (tensor<?xf32>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand,
                   DefaultValuedAttr<BoolAttr, "false">:$unsigned_source,
                   DefaultValuedAttr<BoolAttr, "false">:$unsigned_result);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$operand attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling, reduction
//===----------------------------------------------------------------------===//

def Disc_DotGeneralOp : Disc_Op<"dot_general", [Disc_LoweredBy<"Linear">],
    !listconcat(Disc_ShapeRule, Disc_GradientRule)> {
  let summary = "Batched matrix product with explicit batch/contracting dims";
  let description = [{
    As StableHLO `dot_general`: result dims are the batch dims (in the
    order of `lhs_batching_dimensions`), then the free dims of `lhs`, then
    the free dims of `rhs`. Batch dims must have equal sizes (the frontend
    broadcasts them first).

    ```mlir
    %2 = disc.dot_general %a, %b {lhs_batching_dimensions = array<i64: 0>,
        rhs_batching_dimensions = array<i64: 0>,
        lhs_contracting_dimensions = array<i64: 2>,
        rhs_contracting_dimensions = array<i64: 1>}
        : (tensor<?x?x64xf32>, tensor<?x64x?xf32>) -> tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                   DenseI64ArrayAttr:$lhs_batching_dimensions,
                   DenseI64ArrayAttr:$rhs_batching_dimensions,
                   DenseI64ArrayAttr:$lhs_contracting_dimensions,
                   DenseI64ArrayAttr:$rhs_contracting_dimensions);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_ConvOp : Disc_Op<"conv", [Disc_LoweredBy<"Linear">],
    !listconcat(Disc_ShapeRule, Disc_GradientRule)> {
  let summary = "N-d grouped convolution (ONNX Conv layout)";
  let description = [{
    `input`: [N, C, D1..Dk], `filter`: [OC, C / groups, K1..Kk], result:
    [N, OC, O1..Ok] with
    `Oi = (Di + pad_lo_i + pad_hi_i - dilation_i * (Ki - 1) - 1) floordiv
    stride_i + 1` (ONNX Conv spec). `padding` is `[lo_1..lo_k, hi_1..hi_k]`
    (ONNX `pads` order); zero padding.

    ```mlir
    %2 = disc.conv %x, %w {strides = array<i64: 2, 2>,
        dilations = array<i64: 1, 1>, padding = array<i64: 3, 3, 3, 3>,
        feature_group_count = 1 : i64}
        : (tensor<?x3x?x?xf32>, tensor<64x3x7x7xf32>) -> tensor<?x64x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$filter,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$padding, I64Attr:$feature_group_count);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$input `,` $filter attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// A depthwise convolution: `feature_group_count` > 1 groups of one
    /// input and one output channel each (filter [groups, 1, K1..Kk], both
    /// dims static). Where disc-fusion's `depthwise` option chooses it as
    /// loops (CUDA targets), it reads its input in place, with the zero
    /// padding as a bounds test (no padded copy), and an elementwise
    /// producer of its input is fused into that read.
    bool isDepthwise();
  }];
}

def Disc_ConvTransposeOp
    : Disc_Op<"conv_transpose", [Disc_LoweredBy<"Linear">],
    Disc_ShapeRule> {
  let summary = "N-d grouped transposed convolution (ONNX ConvTranspose)";
  let description = [{
    `input`: [N, C, D1..Dk], `filter`: [C, OC / groups, K1..Kk], result:
    [N, OC, O1..Ok] with (ONNX ConvTranspose spec)
    `Oi = stride_i * (Di - 1) + output_padding_i + (Ki - 1) * dilation_i + 1
    - pad_lo_i - pad_hi_i`.
    Input element `x[n, c, i]` contributes `x * w[c, m, k]` to output
    position `i * stride + k * dilation - pad_lo` of the channels `m` of
    its group. `padding` is `[lo_1..lo_k, hi_1..hi_k]`; a negative entry
    extends the output on that side (positions no input reaches are 0).

    ```mlir
    %2 = disc.conv_transpose %x, %w {strides = array<i64: 2, 2>,
        dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>,
        output_padding = array<i64: 1, 1>, feature_group_count = 1 : i64}
        : (tensor<?x64x?x?xf32>, tensor<64x32x3x3xf32>) -> tensor<?x32x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$filter,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$padding,
                   DenseI64ArrayAttr:$output_padding,
                   I64Attr:$feature_group_count);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$input `,` $filter attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_ConvBackwardFilterOp
    : Disc_Op<"conv_backward_filter", [Disc_LoweredBy<"Linear">],
    Disc_ShapeRule> {
  let summary = "Filter gradient of an N-d convolution (one group)";
  let description = [{
    The gradient of the loss with respect to the filter of the convolution
    `y = conv(input, filter)` (disc.conv with these `strides`, `dilations`
    and `padding`, one group), given `grad_output` = dL/dy: `input` [N, C,
    D1..Dk], `grad_output` [N, OC, O1..Ok], result [OC, C, K1..Kk] (static:
    a parameter's shape), with
    `result[o, c, k] = sum over n, i of grad_output[n, o, i] *
    input[n, c, i * stride + k * dilation - pad_lo]` (0 outside the input).
    oneDNN's convolution backward-weights primitive computes it in one call;
    it exists only as a library call (disc-form-conv-backward-filter makes
    it on the oneDNN CPU target from the gradient rule of disc.conv).

    ```mlir
    %dw = disc.conv_backward_filter %x, %dy {strides = array<i64: 2, 2>,
        dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>}
        : (tensor<?x64x?x?xf32>, tensor<?x128x?x?xf32>) -> tensor<128x64x3x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$grad_output,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$padding);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$input `,` $grad_output attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_PoolOp : Disc_Op<"pool", [Disc_LoweredBy<"Pooling">],
    !listconcat(Disc_ShapeRule, Disc_GradientRule)> {
  let summary = "N-d max or average pooling (ONNX MaxPool/AveragePool)";
  let description = [{
    `input`: [N, C, D1..Dk], windows over the k spatial dims. Output size as
    ONNX: `floor` (or `ceil` when `ceil_mode`) of
    `(Di + pad_lo + pad_hi - dilation * (Ki - 1) - 1) / stride + 1`.
    Max pooling ignores padding; average pooling divides by the window size
    when `count_include_pad`, else by the number of non-padding elements.

    ```mlir
    %1 = disc.pool max, %x {window = array<i64: 3, 3>,
        strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
        padding = array<i64: 1, 1, 1, 1>}
        : (tensor<?x64x?x?xf32>) -> tensor<?x64x?x?xf32>
    ```
  }];
  let arguments = (ins Disc_PoolKindAttr:$kind, AnyRankedTensor:$input,
                   DenseI64ArrayAttr:$window, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$padding,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$kind `,` $input attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_ReduceOp : Disc_Op<"reduce", [Disc_LoweredBy<"Reduction">],
    !listconcat(Disc_ShapeRule, Disc_GradientRule)> {
  let summary = "Reduction (sum, mean, max, min, prod) over dims";
  let description = [{
    Reduces `dimensions` (sorted, unique, non-negative). With `keep_dims`
    reduced dims stay as size 1. An empty reduction gives the identity
    (0, 1, -inf, +inf); mean of an empty set is NaN.

    ```mlir
    %1 = disc.reduce sum, %x {dimensions = array<i64: 1>, keep_dims = true}
        : (tensor<?x?xf32>) -> tensor<?x1xf32>
    ```
  }];
  let arguments = (ins Disc_ReduceKindAttr:$kind, AnyRankedTensor:$input,
                   DenseI64ArrayAttr:$dimensions,
                   DefaultValuedAttr<BoolAttr, "false">:$keep_dims);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$kind `,` $input attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_CumSumOp : Disc_Op<"cumsum", [Disc_LoweredBy<"Reduction">],
    Disc_GradientRule> {
  let summary = "Cumulative sum along one dim (ONNX CumSum)";
  let description = [{
    `result[.., i, ..] = sum(operand[.., j, ..])` over `j <= i` (`j < i`
    when `exclusive`); with `reverse` the sum runs from the end (`j >= i`,
    or `j > i`). The result has the operand's shape and element type.

    ```mlir
    %1 = disc.cumsum %x {dimension = 1 : i64, exclusive = false,
        reverse = true} : (tensor<?x?xf32>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand, I64Attr:$dimension,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$operand attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_ArgReduceOp : Disc_Op<"arg_reduce", [Disc_LoweredBy<"Reduction">],
    Disc_ShapeRule> {
  let summary = "Index of the max (or min) along one dim (ONNX ArgMax/ArgMin)";
  let description = [{
    Result element type is i64. Ties pick the first index, or the last when
    `select_last_index`.

    ```mlir
    %1 = disc.arg_reduce %x {dimension = 1 : i64, is_max = true,
        keep_dims = false} : (tensor<?x10xf32>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$dimension,
                   BoolAttr:$is_max,
                   DefaultValuedAttr<BoolAttr, "false">:$keep_dims,
                   DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat =
      "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement and shape ops
//===----------------------------------------------------------------------===//

def Disc_ShapeOfOp : Disc_Op<"shape_of", [Disc_LoweredBy<"DataMovement">],
    Disc_ShapeRule> {
  let summary = "The dims of a tensor as a 1-D i64 tensor (ONNX Shape)";
  let description = [{
    ```mlir
    %s = disc.shape_of %x : tensor<?x3x?xf32> -> tensor<3xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand);
  let results = (outs Disc_I64Vector:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Disc_ExpandOp : Disc_Op<"expand", [Disc_LoweredBy<"Elementwise">],
    !listconcat(Disc_ShapeRule, Disc_GradientRule)> {
  let summary = "Broadcast to a run-time shape (ONNX Expand)";
  let description = [{
    The result shape is the NumPy broadcast of the operand's shape and the
    values of `shape` (1-D i64). Also used for ConstantOfShape (a 0-d operand).

    ```mlir
    %1 = disc.expand %x, %s : (tensor<?x1xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand, Disc_I64Vector:$shape);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$operand `,` $shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_DynamicReshapeOp
    : Disc_Op<"dynamic_reshape", [Disc_LoweredBy<"DataMovement">],
    !listconcat(Disc_ShapeRule, Disc_GradientRule)> {
  let summary = "Reshape to a run-time shape (ONNX Reshape semantics)";
  let description = [{
    `shape` is a 1-D i64 tensor with one entry per result dim. An entry 0
    copies the operand's dim at the same index (unless `allow_zero`), and
    at most one entry -1 is inferred from the element count. The element
    count must not change; row-major order is kept.

    ```mlir
    %1 = disc.dynamic_reshape %x, %s
        : (tensor<?x?x128xf32>, tensor<4xi64>) -> tensor<?x?x4x32xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand, Disc_I64Vector:$shape,
                   DefaultValuedAttr<BoolAttr, "false">:$allow_zero);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$operand `,` $shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_TransposeOp : Disc_Op<"transpose", [Disc_LoweredBy<"DataMovement">],
    !listconcat(Disc_ShapeRule, Disc_GradientRule)> {
  let summary = "Permutes dims: result dim i is operand dim permutation[i]";
  let description = [{
    ```mlir
    %1 = disc.transpose %x {permutation = array<i64: 0, 2, 1>}
        : (tensor<?x?x4xf32>) -> tensor<?x4x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand,
                   DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$operand attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_ConcatenateOp
    : Disc_Op<"concatenate", [Disc_LoweredBy<"DataMovement">],
    !listconcat(Disc_ShapeRule, Disc_GradientRule)> {
  let summary = "Concatenates tensors along one dim";
  let description = [{
    ```mlir
    %2 = disc.concatenate %a, %b {dimension = 0 : i64}
        : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$dimension);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_SliceOp : Disc_Op<"slice", [Disc_LoweredBy<"DataMovement">],
    !listconcat(Disc_ShapeRule, Disc_GradientRule)> {
  let summary = "Strided slice with run-time bounds (ONNX Slice semantics)";
  let description = [{
    `starts`, `ends`, `steps` are 1-D i64 tensors with one entry per axis in
    `axes` (non-negative, unique). Negative starts/ends count from the end;
    bounds are clamped as the ONNX spec says (to [0, dim] for positive
    steps, [-1, dim-1] for negative steps). Steps must be non-zero.

    Bounds fixed by another op's contract (TopK `k`, Split sizes) must not
    be clamped: the discardable string attribute `disc.bounds_message`
    requires `0 <= start <= end <= dim` on every axis, `disc.end_message`
    requires `end == dim`; the lowering checks them at run time and stops
    the run with the template's message (`{0}` start, `{1}` end, `{2}` dim,
    `{3}` end - start).

    ```mlir
    %1 = disc.slice %x, %st, %en, %sp {axes = array<i64: 1>}
        : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>)
        -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand, Disc_I64Vector:$starts,
                   Disc_I64Vector:$ends, Disc_I64Vector:$steps,
                   DenseI64ArrayAttr:$axes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$operand `,` $starts `,` $ends `,` $steps attr-dict "
                       "`:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_GatherOp
    : Disc_Op<"gather", [Disc_LoweredBy<"IndirectDataMovement">],
    !listconcat(Disc_ShapeRule, Disc_GradientRule)> {
  let summary = "Gathers slices along one axis (ONNX Gather semantics)";
  let description = [{
    Result shape: `data.shape[:axis] + indices.shape + data.shape[axis+1:]`.
    Negative indices count from the end of `axis`. Indices are i32 or i64.

    ```mlir
    %1 = disc.gather %emb, %tok {axis = 0 : i64}
        : (tensor<1000x128xf32>, tensor<?x?xi64>) -> tensor<?x?x128xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_PadOp : Disc_Op<"pad", [Disc_LoweredBy<"DataMovement">],
    !listconcat(Disc_ShapeRule, Disc_GradientRule)> {
  let summary = "Pads with a constant, by reflection or by edge values";
  let description = [{
    `pads` is a 1-D i64 tensor `[begin_1..begin_r, end_1..end_r]` (ONNX
    order), non-negative; `value` a 0-d tensor used in `constant` mode.

    ```mlir
    %1 = disc.pad constant, %x, %p, %v
        : (tensor<?x?xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Disc_PadModeAttr:$mode, AnyRankedTensor:$operand,
                   Disc_I64Vector:$pads, Disc_Scalar:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$mode `,` $operand `,` $pads `,` $value attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_RangeOp : Disc_Op<"range", [Disc_LoweredBy<"DataMovement">],
    Disc_ShapeRule> {
  let summary = "1-D arithmetic progression (ONNX Range; iota)";
  let description = [{
    `max(ceil((limit - start) / delta), 0)` elements
    `start + i * delta`. Operands are 0-d tensors of the result element type.

    ```mlir
    %r = disc.range %s, %l, %d
        : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins Disc_Scalar:$start, Disc_Scalar:$limit,
                   Disc_Scalar:$delta);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$start `,` $limit `,` $delta attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Interpolation, element-wise gather/scatter and sorting
//===----------------------------------------------------------------------===//

def Disc_ResizeOp
    : Disc_Op<"resize", [Disc_LoweredBy<"IndirectDataMovement">],
    Disc_ShapeRule> {
  let summary = "N-d nearest / linear / cubic resampling (ONNX Resize)";
  let description = [{
    Output element `y` reads the operand around the source coordinate
    `x_ori[d]` of every dim `d` in `axes` (other dims are copied:
    `x_ori[d] = y[d]`, legal only where the output dim equals the input dim).
    `sizes` (1-D i64, one entry per dim) is the result shape; `scales`
    (1-D f64) the per-dim scale factors of the coordinate transformation;
    `roi` (1-D f64, `[start_1..start_r, end_1..end_r]`) is read only by
    `tf_crop_and_resize`. With `w = scale * in` (the ONNX reference's
    output width, not the rounded size):

    - `half_pixel`: `(y + 0.5) / scale - 0.5`; `pytorch_half_pixel`: the
      same, or -0.5 when `w == 1`; `align_corners`: `y * (in - 1) / (w - 1)`,
      or 0 when `w == 1`; `asymmetric`: `y / scale`;
      `tf_half_pixel_for_nn`: `(y + 0.5) / scale`; `tf_crop_and_resize`:
      `roi` window scaled by `in - 1`, `extrapolation_value` outside
      `[0, in - 1]`.
    - `nearest`: the index picked by `nearest_mode` (`round_prefer_floor`,
      `round_prefer_ceil`, `floor`, `ceil`, or `simple`: floor when
      upsampling, ceil when downsampling, as Upsample / Resize-10),
      clamped to the input.
    - `linear` (2 taps) and `cubic` (4 taps, Keys kernel with
      `cubic_coeff_a`) use the taps `i0 - 1 .. i0 + 2` with
      `i0 = ceil(x_ori) - 1`, clamped to the input (edge padding); with
      `exclude_outside` the weights of taps outside the input are dropped
      and the rest renormalized. Multi-dim interpolation is the tensor
      product of the per-dim weights.

    ```mlir
    %y = disc.resize "linear", %x, %sizes, %scales
        {coordinate_transformation_mode = "half_pixel",
         axes = array<i64: 2, 3>}
        : (tensor<?x3x?x?xf32>, tensor<4xi64>, tensor<4xf64>)
        -> tensor<?x3x?x?xf32>
    ```
  }];
  let arguments = (ins StrAttr:$mode, AnyRankedTensor:$operand,
      Disc_I64Vector:$sizes, 1DTensorOf<[F64]>:$scales,
      Optional<1DTensorOf<[F64]>>:$roi,
      StrAttr:$coordinate_transformation_mode,
      DefaultValuedAttr<StrAttr, "\"round_prefer_floor\"">:$nearest_mode,
      DefaultValuedAttr<F64Attr, "-0.75">:$cubic_coeff_a,
      DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
      DefaultValuedAttr<F64Attr, "0.0">:$extrapolation_value,
      DenseI64ArrayAttr:$axes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$mode `,` $operand `,` $sizes `,` $scales "
                       "(`,` $roi^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_GatherElementsOp
    : Disc_Op<"gather_elements", [Disc_LoweredBy<"IndirectDataMovement">],
    Disc_ShapeRule> {
  let summary = "Gathers single elements along one dim (ONNX GatherElements)";
  let description = [{
    `result[i] = data[i with i[axis] replaced by indices[i]]`; the result has
    the shape of `indices` (same rank as `data`). Negative indices count
    from the end of `axis`. Indices are i32 or i64.

    ```mlir
    %1 = disc.gather_elements %x, %idx {axis = 1 : i64}
        : (tensor<?x?xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_GatherNdOp
    : Disc_Op<"gather_nd", [Disc_LoweredBy<"IndirectDataMovement">],
    Disc_ShapeRule> {
  let summary = "Gathers slices by index tuples (ONNX GatherND)";
  let description = [{
    The last dim of `indices` (size `k`) holds an index tuple into the dims
    `[batch_dims, batch_dims + k)` of `data`; the first `batch_dims` dims
    are shared. Result shape:
    `indices.shape[:-1] + data.shape[batch_dims + k:]`, so
    `k = rank(indices) - 1 + rank(data) - batch_dims - rank(result)`.
    Negative indices count from the end of their dim.

    ```mlir
    %1 = disc.gather_nd %x, %idx {batch_dims = 0 : i64}
        : (tensor<?x?x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   I64Attr:$batch_dims);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_ScatterElementsOp
    : Disc_Op<"scatter_elements", [Disc_LoweredBy<"IndirectDataMovement">],
    Disc_ShapeRule> {
  let summary = "Scatters updates element-wise along one dim "
                "(ONNX ScatterElements)";
  let description = [{
    The result is `data` with, for every index `i` of `updates`,
    `result[i with i[axis] replaced by indices[i]] (op)= updates[i]`, in
    row-major order of `i`; `reduction` is `none` (assign), `add` or `mul`.
    `indices` and `updates` have the same shape. Negative indices count
    from the end of `axis`.

    ```mlir
    %1 = disc.scatter_elements %x, %idx, %upd {axis = 0 : i64,
        reduction = "add"}
        : (tensor<?x?xf32>, tensor<?x?xi64>, tensor<?x?xf32>)
        -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   AnyRankedTensor:$updates, I64Attr:$axis,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_ScatterNdOp
    : Disc_Op<"scatter_nd", [Disc_LoweredBy<"IndirectDataMovement">],
    Disc_ShapeRule> {
  let summary = "Scatters slices by index tuples (ONNX ScatterND)";
  let description = [{
    The last dim of `indices` (size `k`) holds an index tuple into the
    first `k` dims of `data`; `updates` has the shape
    `indices.shape[:-1] + data.shape[k:]`, so
    `k = rank(data) - rank(updates) + rank(indices) - 1`. The result is
    `data` with each addressed slice assigned (`none`), added to (`add`) or
    multiplied by (`mul`) its update, in row-major order. Negative indices
    count from the end of their dim.

    ```mlir
    %1 = disc.scatter_nd %x, %idx, %upd {reduction = "none"}
        : (tensor<?x4xf32>, tensor<?x1xi64>, tensor<?x4xf32>)
        -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   AnyRankedTensor:$updates,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_ArgSortOp : Disc_Op<"arg_sort", [Disc_LoweredBy<"Reduction">],
    Disc_ShapeRule> {
  let summary = "Stable sorting permutation along one dim (for ONNX TopK)";
  let description = [{
    `result[..., p, ...]` (p along `dimension`) is the index of the element
    of rank `p` in its row: descending order when `descending`, else
    ascending; equal elements keep their index order (the lower index
    first), as ONNX TopK requires. The result is i64 with the operand's
    shape.

    ```mlir
    %1 = disc.arg_sort %x {dimension = 1 : i64, descending = true}
        : (tensor<?x?xf32>) -> tensor<?x?xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand, I64Attr:$dimension,
                   BoolAttr:$descending);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat =
      "$operand attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_RandomUniformOp
    : Disc_Op<"random_uniform", [Disc_LoweredBy<"Reduction">],
    Disc_ShapeRule> {
  let summary = "Uniform f64 draws in [0, 1) from a seeded MT19937 stream";
  let description = [{
    The result (f64) has the dims given by `shape` (1-D i64). Its elements,
    in row-major order, are consecutive draws of the 32-bit Mersenne
    Twister MT19937 (Matsumoto and Nishimura, 1998) initialized with
    `seed` (`init_genrand`, as C++ `std::mt19937(seed)` and NumPy's
    `RandomState(seed)`), two 32-bit words per double as NumPy's
    `random_sample`: `((a >> 5) * 2^26 + (b >> 6)) / 2^53`. The same seed
    gives the same values in every run, so a seeded ONNX Dropout or
    Bernoulli reproduces the ONNX reference (which draws with NumPy). The
    draws are sequential (one scalar loop).

    ```mlir
    %u = disc.random_uniform %s {seed = 0 : i64}
        : (tensor<3xi64>) -> tensor<?x?x?xf64>
    ```
  }];
  let arguments = (ins Disc_I64Vector:$shape, I64Attr:$seed);
  let results = (outs RankedTensorOf<[F64]>:$result);
  let assemblyFormat =
      "$shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Disc_GridSampleOp
    : Disc_Op<"grid_sample", [Disc_LoweredBy<"IndirectDataMovement">],
    Disc_ShapeRule> {
  let summary = "Samples a 4-d input at grid locations (ONNX GridSample)";
  let description = [{
    `input`: [N, C, H, W]; `grid`: [N, Ho, Wo, 2] with (x, y) in [-1, 1]
    (-1 is the left/top edge: the first pixel's center with
    `align_corners`, else its outer border); result: [N, C, Ho, Wo].
    `mode`: `bilinear`, `nearest` (round half to even) or `bicubic` (A =
    -0.75); `padding_mode`: `zeros` (taps outside the input read 0),
    `border` (coordinates clamped) or `reflection` (coordinates reflected at
    the borders), as PyTorch's `grid_sample`.

    ```mlir
    %y = disc.grid_sample %x, %g {mode = "bilinear",
        padding_mode = "zeros", align_corners = false}
        : (tensor<?x?x?x?xf32>, tensor<?x?x?x2xf32>) -> tensor<?x?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$grid,
                   StrAttr:$mode, StrAttr:$padding_mode,
                   BoolAttr:$align_corners);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$input `,` $grid attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // DISC_DIALECT_DISC_OPS_TD
