//===- Signature.h - the signature of a compiled model ----------*- C++ -*-===//
//
// The signature JSON a model.so returns from `disc_model_signature()`
// (docs/runtime-abi.md) is assembled from module attributes that the
// disc-attach-* passes (disc/Target/Passes.td) put on the disc-level module,
// and serialized once, when the model is emitted.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TARGET_SIGNATURE_H
#define DISC_TARGET_SIGNATURE_H

#include "disc/Transforms/ShapeAnalysis.h"
#include "disc/Transforms/TrainingStep.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace mlir::disc {

/// Module attribute names of the signature parts.
inline constexpr llvm::StringLiteral kSignatureAttrName = "disc.signature";
inline constexpr llvm::StringLiteral kMemoryAttrName = "disc.memory";
inline constexpr llvm::StringLiteral kRematAttrName = "disc.remat";

/// One `--dim` entry: the range of the input dim called `name`.
struct NamedDimRange {
  std::string name;
  DimRange range;
};

/// Parses `NAME=MIN:MAX[:LIKELY]` or `NAME=VALUE` (a specialized dim: MIN =
/// MAX = VALUE). Values are element counts >= 0. On a malformed entry the
/// error says "bad --dim 'SPEC' (expected NAME=MIN:MAX[:LIKELY] or
/// NAME=VALUE)"; on MAX < MIN or LIKELY outside [MIN, MAX] "bad --dim
/// 'SPEC': empty range or likely value outside it" (`disc-compile` prints it
/// and exits with 2).
llvm::Expected<NamedDimRange> parseDimRange(llvm::StringRef spec);

/// The dim names of the `disc.dims` argument attributes of `entry` (none
/// when it is null), in order of first appearance.
SmallVector<std::string> getEntryDimNames(func::FuncOp entry);

/// The ranges of the `--dim` entries `specs` by dim name (a later entry for
/// a name replaces an earlier one), or the first error: a malformed entry
/// (parseDimRange) or "unknown dim name 'NAME' in --dim; known: ..." for a
/// name that no dim of `entry` has.
llvm::Expected<llvm::StringMap<DimRange>>
parseEntryDimRanges(func::FuncOp entry, llvm::ArrayRef<std::string> specs);

/// The JSON value `value` as an attribute: null as a unit attribute, a
/// boolean as BoolAttr, an integer as i64, a number as f64, a string, an
/// array or an object as a dictionary (keys sorted, as the JSON writer
/// prints them).
Attribute jsonToAttribute(MLIRContext *ctx, const llvm::json::Value &value);

/// The inverse of jsonToAttribute; any other attribute is printed as a
/// string.
llvm::json::Value attributeToJson(Attribute attr);

/// The signature object of `entry` (docs/runtime-abi.md): ABI version,
/// model name, inputs and outputs (from the `disc.name` / `disc.dims` /
/// `disc.unsigned` argument and result attributes) and symbols (the dims
/// named by the inputs with the `disc_shape.symbolic_dim` ranges of its
/// module). Must run on the disc-level module. Errors (an unranked tensor,
/// an element type without an ABI dtype) are reported on `entry`.
FailureOr<llvm::json::Object> buildSignature(func::FuncOp entry,
                                             llvm::StringRef modelName);

/// The signature JSON text of a module lowered for emission: the
/// `disc.signature` attribute with `disc.memory` and `disc.remat` as its
/// "memory" and "remat" members, and "runtime_checks" with `checksKept`
/// and `checksDropped`. Fails when the module has no `disc.signature`.
FailureOr<std::string> serializeSignature(ModuleOp module,
                                          llvm::StringRef entryName,
                                          int64_t checksKept,
                                          int64_t checksDropped);

/// Ranks of the entry's inputs and outputs as the `disc.signature`
/// attribute records them (empty when there is none).
void getSignatureRanks(ModuleOp module, SmallVectorImpl<int64_t> &inRanks,
                       SmallVectorImpl<int64_t> &outRanks);

/// True when `disc.signature` says `target` "cuda".
bool isCudaSignature(ModuleOp module);

} // namespace mlir::disc

#endif // DISC_TARGET_SIGNATURE_H
