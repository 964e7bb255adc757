//===- OnnxChecker.cpp - ONNX checker calls, the only TU with exceptions --===//
//
// Built with -fexceptions (see CMakeLists.txt). Nothing thrown here escapes:
// every entry point catches and converts to an error string.
//
//===----------------------------------------------------------------------===//
#include "OnnxChecker.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>
#include <fstream>
#include <new>

namespace mlir::disc::onnx_checker {

namespace {
/// Runs `fn`, converting any exception into `error`.
template <typename Fn>
bool guarded(const char *what, std::string &error, Fn &&fn) {
  try {
    return fn();
  } catch (const onnx::checker::ValidationError &e) {
    error = std::string(what) + ": " + e.what();
  } catch (const std::bad_alloc &) {
    error = std::string(what) + ": out of memory";
  } catch (const std::exception &e) {
    error = std::string(what) + ": " + e.what();
  } catch (...) {
    error = std::string(what) + ": unknown error";
  }
  return false;
}
} // namespace

bool loadOnnxModel(const std::string &path, onnx::ModelProto &model,
                   std::string &error) {
  return guarded("cannot load ONNX model", error, [&] {
    std::ifstream in(path, std::ios::in | std::ios::binary);
    if (!in) {
      error = "cannot open '" + path + "'";
      return false;
    }
    if (!model.ParseFromIstream(&in)) {
      error = "'" + path +
              "' is not a valid ONNX model (protobuf parse failed; truncated "
              "or corrupt file?)";
      return false;
    }
    if (!model.has_graph()) {
      error = "'" + path + "' has no graph";
      return false;
    }
    return true;
  });
}

bool checkOnnxModel(const onnx::ModelProto &model, std::string &error) {
  return guarded("ONNX checker failed", error, [&] {
    onnx::checker::check_model(model);
    return true;
  });
}

bool loadAndCheckOnnxModel(const std::string &path, onnx::ModelProto &model,
                           std::string &error) {
  return loadOnnxModel(path, model, error) && checkOnnxModel(model, error);
}

bool inferOnnxShapes(onnx::ModelProto &model, std::string &error) {
  return guarded("ONNX shape inference failed", error, [&] {
    onnx::ShapeInferenceOptions options;
    options.check_type = false;
    options.error_mode = 0;
    options.enable_data_propagation = true;
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
    return true;
  });
}

} // namespace mlir::disc::onnx_checker
