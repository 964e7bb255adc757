//===- OnnxImporter.h - ONNX ModelProto to the disc dialect ----*- C++ -*-===//
#ifndef DISC_FRONTEND_ONNX_ONNXIMPORTER_H
#define DISC_FRONTEND_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::disc {

struct OnnxImportOptions {
  /// Name of the entry function of the imported module.
  std::string entryName = "main";
  /// Makes every dim of every graph input dynamic, named `<input>_d<i>`,
  /// whatever the model declares (static sizes and `dim_param` names alike);
  /// the dynamic mode of the conformance runner (`disc-compile
  /// --force-dynamic`). Initializers keep their shapes, and so does the
  /// length of a 1-D input used only as a rank-determining operand (a
  /// shape, axes, pads, repeats, split or slice bounds vector).
  bool forceDynamicInputs = false;
  /// Marks every constant made from a float initializer with the
  /// initializer's name (`disc.param`, disc/Transforms/TrainingStep.h) and
  /// keeps initializers unfolded (no reshaped copies, no BatchNormalization
  /// folded into a Conv), so that disc-build-training-step can train them.
  bool markParameters = false;
};

/// Parses the ONNX model at `path` (protobuf, checked with ONNX's own
/// checker) and builds a module holding one public `func.func` named
/// `options.entryName` whose body uses `disc` ops.
///
/// Signature metadata on the entry function (read by the emitter):
///  - arg/result attribute `disc.name`: the ONNX value name (StringAttr);
///  - arg/result attribute `disc.dims`: ArrayAttr with one entry per dim,
///    an IntegerAttr (i64) for a static dim, a StringAttr for a named
///    dynamic dim (ONNX `dim_param`, or `<input>_d<i>` when unnamed); for
///    results a dynamic dim without a known name is the string "?";
///  - arg/result attribute `disc.unsigned` (UnitAttr) for uint element types.
///
/// Errors (user input): unreadable or malformed file, checker failure, an
/// unsupported op (one error listing every unsupported op with node name,
/// op type and opset), unsupported element types. They are reported through
/// the context's diagnostic engine and a null module is returned.
OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &context,
                                      llvm::StringRef path,
                                      const OnnxImportOptions &options = {});

} // namespace mlir::disc

#endif // DISC_FRONTEND_ONNX_ONNXIMPORTER_H
