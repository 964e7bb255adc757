//===- OpTable.cpp - the ONNX ops the importer accepts --------------------===//
//
// One row per ONNX op (or per opset range of an op whose defaults change):
// the checks its import starts with and the import function in its family
// file. Importer::dispatch looks a node up here and runs the checks once;
// Importer::scanUnsupported lists every node without a row.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::disc::onnx_import {

namespace {
using I = Importer;
using T = InputType;
} // namespace

ArrayRef<OpDef> Importer::opTable() {
  static const OpDef table[] = {
      // Elementwise and math (Elementwise.cpp).
      OpDef("Add", &I::importElementwiseBinary).inputs(2).type(T::NoBool),
      OpDef("Sub", &I::importElementwiseBinary).inputs(2).type(T::NoBool),
      OpDef("Mul", &I::importElementwiseBinary).inputs(2).type(T::NoBool),
      OpDef("Div", &I::importElementwiseBinary).inputs(2).type(T::NoBool),
      OpDef("Pow", &I::importElementwiseBinary).inputs(2).type(T::NoBool),
      OpDef("And", &I::importElementwiseBinary).inputs(2).type(T::Bool),
      OpDef("Or", &I::importElementwiseBinary).inputs(2).type(T::Bool),
      OpDef("Xor", &I::importElementwiseBinary).inputs(2).type(T::Bool),
      OpDef("Max", &I::importVariadic).inputs(1, "at least one input"),
      OpDef("Min", &I::importVariadic).inputs(1, "at least one input"),
      OpDef("Sum", &I::importVariadic).inputs(1, "at least one input"),
      OpDef("Mean", &I::importVariadic).inputs(1, "at least one input"),
      OpDef("Mod", &I::importMod).inputs(2),
      OpDef("BitShift", &I::importBitShift).inputs(2),
      OpDef("Abs", &I::importUnary).inputs(1).type(T::NoBool),
      OpDef("Neg", &I::importUnary).inputs(1).type(T::NoBool),
      OpDef("Exp", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Log", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Sqrt", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Reciprocal", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Tanh", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Sigmoid", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Erf", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Floor", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Ceil", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Round", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Sin", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Cos", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Tan", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Asin", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Acos", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Atan", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Sinh", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Cosh", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Asinh", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Acosh", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Atanh", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Sign", &I::importUnary).inputs(1).type(T::NoBool),
      OpDef("Not", &I::importUnary).inputs(1).type(T::Bool),
      OpDef("IsNaN", &I::importUnary).inputs(1).type(T::Float),
      OpDef("IsInf", &I::importUnary).inputs(1).type(T::Float),
      OpDef("Relu", &I::importActivation).inputs(1).type(T::SignedNumeric),
      OpDef("LeakyRelu", &I::importActivation).inputs(1),
      OpDef("Elu", &I::importActivation).inputs(1),
      OpDef("Selu", &I::importActivation).inputs(1),
      OpDef("Celu", &I::importActivation).inputs(1),
      OpDef("Softplus", &I::importActivation).inputs(1),
      OpDef("Softsign", &I::importActivation).inputs(1),
      OpDef("HardSigmoid", &I::importActivation).inputs(1),
      OpDef("HardSwish", &I::importActivation).inputs(1),
      OpDef("Mish", &I::importActivation).inputs(1),
      OpDef("ThresholdedRelu", &I::importActivation).inputs(1),
      OpDef("PRelu", &I::importActivation).inputs(2),
      OpDef("Clip", &I::importClip).inputs(1).type(T::SignedNumeric),
      OpDef("Shrink", &I::importShrink).inputs(1).type(T::SignedNumeric),
      OpDef("Equal", &I::importCompare).inputs(2),
      OpDef("Less", &I::importCompare).inputs(2),
      OpDef("LessOrEqual", &I::importCompare).inputs(2),
      OpDef("Greater", &I::importCompare).inputs(2),
      OpDef("GreaterOrEqual", &I::importCompare).inputs(2),
      OpDef("Where", &I::importWhere).inputs(3),
      OpDef("Cast", &I::importCast).inputs(1),
      OpDef("CastLike", &I::importCast).inputs(2),
      OpDef("Identity", &I::importIdentity).inputs(1),
      OpDef("Dropout", &I::importDropout).inputs(1),

      // MatMul, Gemm, convolution and pooling (ConvPool.cpp).
      OpDef("MatMul", &I::importMatMul).inputs(2),
      OpDef("Gemm", &I::importGemm).inputs(2, "at least two inputs"),
      OpDef("Conv", &I::importConv)
          .inputs(2, "at least two inputs")
          .type(T::Float),
      OpDef("ConvTranspose", &I::importConvTranspose)
          .inputs(2, "at least two inputs")
          .type(T::Float),
      // MaxPool also takes integers (ConvPool.cpp).
      OpDef("MaxPool", &I::importPool).inputs(1).type(T::NoBool).minRank(3),
      // MaxUnpool (Unpool.cpp).
      OpDef("MaxUnpool", &I::importMaxUnpool)
          .opsets(9, kMaxOpset)
          .inputs(2, "X and I")
          .type(T::NoBool)
          .minRank(3),
      OpDef("AveragePool", &I::importPool).inputs(1).type(T::Float).minRank(3),
      OpDef("GlobalMaxPool", &I::importPool)
          .inputs(1)
          .type(T::Float)
          .minRank(3),
      OpDef("GlobalAveragePool", &I::importPool)
          .inputs(1)
          .type(T::Float)
          .minRank(3),

      // Normalization, softmax and losses (Normalization.cpp).
      OpDef("BatchNormalization", &I::importBatchNorm).inputs(5).type(T::Float),
      OpDef("InstanceNormalization", &I::importInstanceNorm)
          .inputs(3)
          .type(T::Float)
          .minRank(3),
      OpDef("LayerNormalization", &I::importLayerNorm)
          .inputs(2, "at least two inputs")
          .type(T::Float)
          .axis(-1),
      OpDef("LRN", &I::importLrn).inputs(1).type(T::Float).minRank(3),
      OpDef("MeanVarianceNormalization", &I::importMvn)
          .inputs(1)
          .type(T::Float),
      OpDef("Softmax", &I::importSoftmax).inputs(1).type(T::Float),
      OpDef("LogSoftmax", &I::importSoftmax).inputs(1).type(T::Float),
      // Hardmax coerces its input to 2-D before opset 13.
      OpDef("Hardmax", &I::importHardmax)
          .opsets(kMinOpset, 12)
          .inputs(1)
          .type(T::SignedNumeric)
          .minRank(1)
          .axis(1),
      OpDef("Hardmax", &I::importHardmax)
          .opsets(13, kMaxOpset)
          .inputs(1)
          .type(T::SignedNumeric)
          .minRank(1)
          .axis(-1),
      OpDef("NegativeLogLikelihoodLoss", &I::importNllLoss)
          .inputs(2, "input and target")
          .type(T::Float),
      OpDef("SoftmaxCrossEntropyLoss", &I::importSoftmaxCrossEntropy)
          .inputs(2, "scores and labels")
          .type(T::Float)
          .minRank(2),

      // Reductions, CumSum, TopK, Einsum (Reductions.cpp).
      OpDef("ReduceSum", &I::importReduce).inputs(1).type(T::NoBool),
      OpDef("ReduceProd", &I::importReduce).inputs(1).type(T::NoBool),
      OpDef("ReduceSumSquare", &I::importReduce).inputs(1).type(T::NoBool),
      OpDef("ReduceMax", &I::importReduce).inputs(1).type(T::SignedNumeric),
      OpDef("ReduceMin", &I::importReduce).inputs(1).type(T::SignedNumeric),
      OpDef("ReduceL1", &I::importReduce).inputs(1).type(T::SignedNumeric),
      OpDef("ReduceMean", &I::importReduce).inputs(1).type(T::Float),
      OpDef("ReduceL2", &I::importReduce).inputs(1).type(T::Float),
      OpDef("ReduceLogSum", &I::importReduce).inputs(1).type(T::Float),
      OpDef("ReduceLogSumExp", &I::importReduce).inputs(1).type(T::Float),
      OpDef("ArgMax", &I::importArgReduce)
          .inputs(1)
          .type(T::SignedNumeric)
          .minRank(1)
          .axis(0),
      OpDef("ArgMin", &I::importArgReduce)
          .inputs(1)
          .type(T::SignedNumeric)
          .minRank(1)
          .axis(0),
      OpDef("CumSum", &I::importCumSum)
          .inputs(2, "x and axis")
          .type(T::NoBool)
          .minRank(1),
      OpDef("TopK", &I::importTopK)
          .inputs(1)
          .type(T::SignedNumeric)
          .minRank(1)
          .axis(-1),
      OpDef("Einsum", &I::importEinsum),

      // Shape and data movement (TensorShape.cpp).
      OpDef("Shape", &I::importShape).inputs(1),
      OpDef("Size", &I::importSize).inputs(1),
      OpDef("Reshape", &I::importReshape).inputs(1, "two inputs"),
      OpDef("Flatten", &I::importFlatten).inputs(1),
      OpDef("Squeeze", &I::importSqueeze).inputs(1),
      OpDef("Unsqueeze", &I::importSqueeze).inputs(1),
      OpDef("Transpose", &I::importTranspose).inputs(1),
      OpDef("Concat", &I::importConcat)
          .inputs(1, "at least one input")
          .minRank(1),
      OpDef("Split", &I::importSplit).inputs(1).axis(0),
      OpDef("Slice", &I::importSlice).inputs(1),
      OpDef("Expand", &I::importExpand).inputs(2),
      // Tile-1 took `tiles` and `axis` inputs.
      OpDef("Tile", &I::importTile).opsets(6, kMaxOpset).inputs(2),
      OpDef("Pad", &I::importPad).inputs(1),
      OpDef("DepthToSpace", &I::importDepthSpace).inputs(1).exactlyRank(4),
      OpDef("SpaceToDepth", &I::importDepthSpace).inputs(1).exactlyRank(4),

      // Gather, scatter and masks (Indexing.cpp).
      OpDef("Gather", &I::importGather).inputs(2).minRank(1).axis(0),
      OpDef("GatherElements", &I::importGatherElements)
          .inputs(2)
          .minRank(1)
          .axis(0),
      OpDef("GatherND", &I::importGatherNd).inputs(2),
      OpDef("ScatterElements", &I::importScatterElements)
          .inputs(3)
          .minRank(1)
          .axis(0),
      OpDef("Scatter", &I::importScatterElements).inputs(3).minRank(1).axis(0),
      OpDef("ScatterND", &I::importScatterNd).inputs(3),
      OpDef("OneHot", &I::importOneHot).inputs(3, "indices, depth and values"),
      OpDef("Trilu", &I::importTrilu).inputs(1).minRank(2),
      OpDef("EyeLike", &I::importEyeLike).inputs(1).exactlyRank(2),
      OpDef("ReverseSequence", &I::importReverseSequence)
          .inputs(2, "input and sequence_lens")
          .type(T::NoBool)
          .minRank(2),

      // Quantization (Quantization.cpp).
      OpDef("QuantizeLinear", &I::importQuantizeLinear)
          .inputs(2, "x and y_scale"),
      OpDef("DequantizeLinear", &I::importDequantizeLinear)
          .inputs(2, "x and x_scale"),
      OpDef("DynamicQuantizeLinear", &I::importDynamicQuantizeLinear)
          .inputs(1)
          .type(T::Float),
      OpDef("MatMulInteger", &I::importMatMulInteger).inputs(2, "A and B"),
      OpDef("ConvInteger", &I::importConvInteger)
          .inputs(2, "x and w")
          .minRank(3),
      OpDef("QLinearMatMul", &I::importQLinearMatMul).inputs(8),
      OpDef("QLinearConv", &I::importQLinearConv)
          .inputs(8, "at least eight inputs")
          .minRank(3),

      // Recurrent layers (Recurrent.cpp).
      OpDef("RNN", &I::importRnn).inputs(3, "inputs X, W and R"),
      OpDef("GRU", &I::importRnn).inputs(3, "inputs X, W and R"),
      OpDef("LSTM", &I::importRnn).inputs(3, "inputs X, W and R"),

      // Sequences (Sequences.cpp): inputs may be sequences, checked there.
      OpDef("SequenceEmpty", &I::importSequence),
      OpDef("SequenceConstruct", &I::importSequence),
      OpDef("SequenceInsert", &I::importSequence),
      OpDef("SequenceErase", &I::importSequence),
      OpDef("SequenceAt", &I::importSequence),
      OpDef("SequenceLength", &I::importSequence),
      OpDef("ConcatFromSequence", &I::importSequence),
      OpDef("SplitToSequence", &I::importSequence),
      OpDef("OptionalHasElement", &I::importOptionalInput)
          .opsets(15, kMaxOpset)
          .inputs(1),
      OpDef("OptionalGetElement", &I::importOptionalInput)
          .opsets(15, kMaxOpset)
          .inputs(1),

      // Control flow (ControlFlow.cpp): subgraphs become scf regions.
      OpDef("If", &I::importIf).inputs(1, "a condition input"),
      OpDef("Loop", &I::importLoop),
      OpDef("Scan", &I::importScan).opsets(8, kMaxOpset),

      // Optimizer steps of ai.onnx.preview.training (Optimizers.cpp).
      OpDef("Adagrad", &I::importOptimizer)
          .inDomain("ai.onnx.preview.training")
          .opsets(1, 1),
      OpDef("Adam", &I::importOptimizer)
          .inDomain("ai.onnx.preview.training")
          .opsets(1, 1),
      OpDef("Momentum", &I::importOptimizer)
          .inDomain("ai.onnx.preview.training")
          .opsets(1, 1),

      // Data-dependent output sizes (DataDependent.cpp, RoiAlign.cpp).
      OpDef("NonZero", &I::importNonZero).opsets(9, kMaxOpset).inputs(1),
      OpDef("Compress", &I::importCompress)
          .opsets(9, kMaxOpset)
          .inputs(2, "input and condition"),
      OpDef("Unique", &I::importUnique).opsets(11, kMaxOpset).inputs(1),
      OpDef("NonMaxSuppression", &I::importNonMaxSuppression)
          .opsets(10, kMaxOpset)
          .inputs(2, "boxes and scores")
          .type(T::Float)
          .exactlyRank(3),
      OpDef("RoiAlign", &I::importRoiAlign)
          .opsets(10, kMaxOpset)
          .inputs(3, "X, rois and batch_indices")
          .type(T::Float)
          .exactlyRank(4),

      // Linear algebra (LinearAlgebra.cpp).
      OpDef("Det", &I::importDet)
          .opsets(11, kMaxOpset)
          .inputs(1)
          .type(T::Float)
          .minRank(2),

      // Signal processing (Signal.cpp).
      OpDef("DFT", &I::importDft)
          .opsets(17, kMaxOpset)
          .inputs(1)
          .type(T::Float)
          .minRank(2),
      OpDef("STFT", &I::importStft)
          .opsets(17, kMaxOpset)
          .inputs(2, "signal and frame_step")
          .type(T::Float),
      OpDef("MelWeightMatrix", &I::importMelWeightMatrix)
          .opsets(17, kMaxOpset)
          .inputs(5),

      // Constants, ranges, windows, Resize, GridSample (Misc.cpp).
      OpDef("Constant", &I::importConstant),
      OpDef("ConstantOfShape", &I::importConstantOfShape).inputs(1),
      OpDef("Range", &I::importRange).inputs(3),
      OpDef("Bernoulli", &I::importRandom).opsets(15, kMaxOpset).inputs(1),
      OpDef("RandomUniform", &I::importRandom),
      OpDef("RandomUniformLike", &I::importRandom).inputs(1),
      OpDef("HannWindow", &I::importWindow).inputs(1, "a size input"),
      OpDef("HammingWindow", &I::importWindow).inputs(1, "a size input"),
      OpDef("BlackmanWindow", &I::importWindow).inputs(1, "a size input"),
      OpDef("Resize", &I::importResize).inputs(1),
      OpDef("Upsample", &I::importResize).inputs(1),
      OpDef("GridSample", &I::importGridSample).inputs(2).type(T::Float),
  };
  return table;
}

const OpDef *Importer::findOp(StringRef name, int64_t opset, StringRef domain) {
  static const llvm::StringMap<SmallVector<const OpDef *, 1>> byName = [] {
    llvm::StringMap<SmallVector<const OpDef *, 1>> m;
    for (const OpDef &d : opTable())
      m[d.name].push_back(&d);
    return m;
  }();
  auto it = byName.find(name);
  if (it == byName.end())
    return nullptr;
  for (const OpDef *d : it->second)
    if (domain == d->domain && opset >= d->minOpset && opset <= d->maxOpset)
      return d;
  return nullptr;
}

} // namespace mlir::disc::onnx_import
