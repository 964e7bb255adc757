//===- fuzz_onnx_importer.cpp - fuzz target: the ONNX importer ------------===//
//
// Feeds mutated ONNX ModelProto bytes to disc::importOnnxModel (protobuf
// parse, unsupported-op scan, ONNX checker, import into the disc dialect),
// the path `disc-compile MODEL.onnx` takes first. The bytes are handed over
// as an in-memory file (memfd), so the importer runs exactly as for a model
// on disk. Property: the importer returns a module that verifies, or null
// with a diagnostic; it never crashes. Seeds: the ONNX backend test models
// (scripts/fuzz.sh copies them from /usr/share/libonnx-testdata).
//
//===----------------------------------------------------------------------===//
#include "disc/Frontend/Onnx/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("disc-fuzz-model", 0);
  if (fd < 0)
    std::abort();
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0)
      std::abort();
    done += static_cast<size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);

  // A fresh context per input: no state carries over between inputs. The
  // importer loads the dialects it builds.
  MLIRContext context(MLIRContext::Threading::DISABLED);
  unsigned errors = 0;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    return success();
  });
  {
    disc::OnnxImportOptions options;
    options.entryName = "disc_entry";
    options.forceDynamicInputs = size % 2 == 1;
    OwningOpRef<ModuleOp> module =
        disc::importOnnxModel(context, path, options);
    if (module) {
      if (failed(verify(*module)))
        std::abort(); // The importer built invalid IR.
    } else if (errors == 0) {
      std::abort(); // Rejected without saying why.
    }
  }
  close(fd);
  return 0;
}
