//===- OnnxChecker.h - exception-free wrappers around the ONNX library ---===//
//
// The ONNX C++ library reports errors by throwing. Every call into it lives in
// OnnxChecker.cpp (the only translation unit built with -fexceptions); these
// wrappers turn exceptions into error strings.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_FRONTEND_ONNX_ONNXCHECKER_H
#define DISC_LIB_FRONTEND_ONNX_ONNXCHECKER_H

#include <onnx/onnx_pb.h>

#include <string>

namespace mlir::disc::onnx_checker {

/// Reads the protobuf ModelProto at `path` into `model`. Returns false and
/// sets `error` when the file cannot be opened or parsed.
bool loadOnnxModel(const std::string &path, onnx::ModelProto &model,
                   std::string &error);

/// Runs `onnx::checker::check_model` on `model`. Returns false and sets
/// `error` (the checker's message) when the model is invalid.
bool checkOnnxModel(const onnx::ModelProto &model, std::string &error);

/// Loads and checks the model in one step.
bool loadAndCheckOnnxModel(const std::string &path, onnx::ModelProto &model,
                           std::string &error);

/// Runs ONNX shape inference on `model` in place (adds value_info). Returns
/// false and sets `error` on failure; `model` may then be partially updated.
bool inferOnnxShapes(onnx::ModelProto &model, std::string &error);

} // namespace mlir::disc::onnx_checker

#endif // DISC_LIB_FRONTEND_ONNX_ONNXCHECKER_H
