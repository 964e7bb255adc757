//===- CudaLibraryCalls.cpp - which ops run through cuBLAS/cuDNN on CUDA --===//
//
// See disc/Conversion/CudaLibraryCalls.h.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/CudaLibraryCalls.h"

#include "LibraryCalls.h"
#include "disc/Conversion/Passes.h"
#include "disc/Transforms/Fusion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"

using namespace mlir;
using namespace mlir::disc;

static std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// The first operand or result that is not f32, as text; empty if none.
static std::string nonF32(Operation *op) {
  for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (t && !t.getElementType().isF32())
      return "element type " + typeText(t.getElementType()) +
             " (the cuBLAS/cuDNN calls take f32)";
  }
  return "";
}

/// Why the Conv or ConvTranspose `op` with `k` spatial dims is no cuDNN
/// call by its element types or rank; empty if it may be one.
static std::string convMiss(Operation *op, int64_t k) {
  if (std::string e = nonF32(op); !e.empty())
    return e;
  if (k < 1 || k > 3)
    return std::to_string(k) + " spatial dims (cuDNN calls take 1 to 3)";
  return "";
}

std::string mlir::disc::cudaLibraryCallMiss(Operation *op) {
  if (auto t = dyn_cast<ConvTransposeOp>(op)) {
    int64_t k = t.getType().getRank() - 2;
    if (std::string e = convMiss(op, k); !e.empty())
      return e;
    // The call's end pad is the ONNX one minus output_padding
    // (DISC_LIB_CONV_TRANSPOSE); cuDNN's backward data takes one pad.
    ArrayRef<int64_t> pad = t.getPadding(), outPad = t.getOutputPadding();
    for (int64_t i = 0; i < k; ++i) {
      int64_t end = pad[k + i] - (i < (int64_t)outPad.size() ? outPad[i] : 0);
      if (pad[i] != end)
        return "pads " + std::to_string(pad[i]) + " and " +
               std::to_string(end) + " (after output_padding) on spatial dim " +
               std::to_string(i) + " (cuDNN takes symmetric pads)";
    }
    if (!fitsLibraryCall(op))
      return "a transposed convolution the library call does not take";
    return "";
  }
  if (auto conv = dyn_cast<ConvOp>(op)) {
    int64_t k = conv.getType().getRank() - 2;
    if (std::string e = convMiss(op, k); !e.empty())
      return e;
    // Chosen by disc-fusion: a generated kernel that reads the input in
    // place, with the elementwise producer of the input and the ops after
    // it fused, where a cuDNN call would leave an activation it does not
    // take (a Clip) to a kernel of its own (docs/cuda.md, "Depthwise
    // convolutions").
    if (conv->hasAttr(kDepthwiseLoopsAttrName))
      return "a depthwise convolution with an activation cuDNN does not "
             "take (one generated kernel with its elementwise producer and "
             "consumers)";
    ArrayRef<int64_t> pad = conv.getPadding();
    for (int64_t i = 0; i < k; ++i)
      if (pad[i] != pad[k + i])
        return "asymmetric pads " + std::to_string(pad[i]) + " and " +
               std::to_string(pad[k + i]) + " on spatial dim " +
               std::to_string(i) + " (cuDNN takes symmetric pads)";
    if (!fitsLibraryCall(op))
      return "a grouped convolution with dynamic channel counts";
    return "";
  }
  if (isa<DotGeneralOp>(op)) {
    if (std::string t = nonF32(op); !t.empty())
      return t;
    if (!fitsLibraryCall(op))
      return "a dot_general form the cuBLAS call does not take (batch dims "
             "not leading, or several contracting dims)";
    return "";
  }
  return "";
}

bool mlir::disc::fitsCudaLibraryCall(Operation *op) {
  if (!isa<DotGeneralOp, ConvOp, ConvTransposeOp>(op))
    return false;
  return cudaLibraryCallMiss(op).empty();
}

void mlir::disc::markCudaLibraryCalls(func::FuncOp func) {
  markLibraryCalls(func, fitsCudaLibraryCall, /*clipAndEltwise=*/false,
                   /*nhwc=*/false, /*scaledResidual=*/false,
                   /*transposePostOps=*/true);
}

std::string mlir::disc::describeOnnxNode(Operation *op) {
  SmallVector<std::string, 2> names;
  Location loc = op->getLoc();
  while (true) {
    if (auto fused = dyn_cast<FusedLoc>(loc)) {
      if (fused.getLocations().empty())
        break;
      loc = fused.getLocations().front();
      continue;
    }
    auto named = dyn_cast<NameLoc>(loc);
    if (!named)
      break;
    names.push_back(named.getName().str());
    loc = named.getChildLoc();
  }
  if (names.empty())
    return "'" + op->getName().getStringRef().str() + "'";
  std::string text = "ONNX node '" + names[0] + "'";
  if (names.size() > 1)
    text += " (" + names[1] + ")";
  return text;
}

void mlir::disc::reportCudaLibraryCalls(func::FuncOp func,
                                        llvm::raw_ostream &os) {
  int64_t blas = 0, dnn = 0, loops = 0;
  func.walk([&](Operation *op) {
    if (!isa<DotGeneralOp, ConvOp, ConvTransposeOp>(op))
      return;
    os << "library call: " << describeOnnxNode(op) << ": ";
    if (op->hasAttr(kLibraryCallAttr)) {
      bool isConv = isa<ConvOp, ConvTransposeOp>(op);
      (isConv ? dnn : blas) += 1;
      os << (isConv ? "cuDNN" : "cuBLAS");
      if (auto post = op->getAttrOfType<ArrayAttr>(kPostOpsAttr)) {
        os << " with post-ops";
        for (Attribute a : post)
          os << " " << cast<StringAttr>(a).getValue();
      }
      os << "\n";
      return;
    }
    ++loops;
    std::string why = cudaLibraryCallMiss(op);
    os << "generated loops (" << (why.empty() ? "library calls off" : why)
       << ")\n";
  });
  os << "library calls: " << blas << " cuBLAS, " << dnn << " cuDNN, " << loops
     << " MatMul/Conv as generated loops\n";
}

namespace mlir::disc {
#define GEN_PASS_DEF_DISCMARKCUDALIBRARYCALLS
#include "disc/Conversion/Passes.h.inc"
} // namespace mlir::disc

namespace {
struct DiscMarkCudaLibraryCallsPass
    : public disc::impl::DiscMarkCudaLibraryCallsBase<
          DiscMarkCudaLibraryCallsPass> {
  void runOnOperation() override { markCudaLibraryCalls(getOperation()); }
};
} // namespace
