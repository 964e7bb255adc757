//===- ModelEmitter.h - LLVM IR, object and model.so emission ---*- C++ -*-===//
#ifndef DISC_TARGET_MODELEMITTER_H
#define DISC_TARGET_MODELEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>

namespace mlir::disc {

/// What `emitModelArtifact` writes.
enum class EmitKind { LLVM, Object, Library };

/// Writes the artifact of a module already lowered to the LLVM dialect:
/// LLVM IR text, `model.so` (object + generated C wrapper with the ABI
/// entry points and signature JSON, linked with the system `cc -shared`),
/// or the same two as one relocatable object (`cc -r`) that needs only libc
/// and libm. The signature JSON embedded as `disc_model_signature()` is
/// serialized from the module's `disc.signature`, `disc.memory` and
/// `disc.remat` attributes (disc/Target/Signature.h), which are removed.
/// `sanitize` is a comma-separated list of sanitizers ("address", "undefined";
/// empty = none, docs/reliability.md): "address" instruments the compiled code
/// with LLVM's AddressSanitizer pass, and both go to the C wrapper's compiler
/// (`-fsanitize=`); such a model.so loads only into a process that carries the
/// sanitizer runtimes. Errors are reported on the module and failure() is
/// returned. The module is consumed: its body is erased once it is translated
/// to LLVM IR (that memory goes to LLVM's optimization and code generation).
/// With `timing`, the phases (translation to LLVM IR, LLVM
/// optimization, machine code emission, linking) are timed as nested scopes of
/// it (`disc-compile --timing`). A `model.so` is compiled on `jobs` threads
/// (0: one per hardware thread; 1: one object), in one part per thread or,
/// for a large module, in parts of about 50,000 LLVM instructions each. With
/// `codegenReport`, one line per loop-nest kernel (an op's loop nest that
/// got no library call) says whether LLVM's loop vectorizer vectorized it,
/// with the op's location, then a summary (`disc-compile --report-codegen`).
/// `progress`, when set, is called with each phase ("translate to LLVM IR",
/// "LLVM optimization", "code generation", "link") and, in code generation,
/// the kernels (`disc_kernel_<n>`) whose machine code is emitted so far
/// and their total, from the threads of the parallel parts. An entry
/// function of more than `fastEntryAbove` LLVM instructions (< 0: never)
/// is a part of its own, optimized at O1 and compiled with
/// CodeGenOptLevel::None (fast instruction selection and register
/// allocation); the kernels stay at O3.
using EmitProgressFn =
    std::function<void(llvm::StringRef phase, int64_t done, int64_t total)>;
LogicalResult emitModelArtifact(
    ModuleOp module, llvm::StringRef entryName, llvm::StringRef outputPath,
    EmitKind kind, llvm::StringRef sanitize = {}, TimingScope *timing = nullptr,
    unsigned jobs = 0, llvm::raw_ostream *codegenReport = nullptr,
    const EmitProgressFn &progress = {}, int64_t fastEntryAbove = 50000);

} // namespace mlir::disc

#endif // DISC_TARGET_MODELEMITTER_H
