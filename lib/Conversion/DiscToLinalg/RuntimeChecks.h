//===- RuntimeChecks.h - Run-time contract checks emitted by the lowering -===//
//
// An ONNX op whose contract depends on run-time values (an index range, a
// divisor, shapes that must broadcast, an element count that must fit in
// int64) gets a check: `scf.if (!ok) { func.call @disc_check_failed(id,
// v0, v1, v2, v3) }`. `id` selects a message template kept on the module
// (attribute `disc.check_messages`, placeholders `{0}`..`{3}` for the
// values); the model wrapper formats it, reports it through the runtime
// context's `error` entry and stops the run (docs/runtime-abi.md). A check
// whose condition folds to true is not emitted and is counted as dropped.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_CONVERSION_RUNTIMECHECKS_H
#define DISC_LIB_CONVERSION_RUNTIMECHECKS_H

#include "disc/Target/RuntimeSymbols.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::disc {

// kCheckFailedFn (`void disc_check_failed(int64_t id, int64_t v0, int64_t
// v1, int64_t v2, int64_t v3)`, does not return), kCheckMessagesAttr and
// kChecksDroppedAttr: disc/Target/RuntimeSymbols.h.
/// Module attribute from `disc-lower-to-linalg` for
/// `disc-check-allocations` (the shape annotations are gone by then): the
/// valid range of every input dim, `{func name: [per argument: array<i64:
/// min0, max0, min1, max1, ...>]}`, max -1 when unbounded. Written only when
/// some input dim has a maximum; removed by `disc-check-allocations`.
inline constexpr llvm::StringLiteral kInputDimRangesAttr =
    "disc.input_dim_ranges";
/// At most this many run-time values are printed in a message.
inline constexpr unsigned kMaxCheckValues = 4;

/// Emits run-time checks into one module and records their messages.
class RuntimeChecks {
public:
  explicit RuntimeChecks(ModuleOp module);

  /// At the insertion point of `b`: when `ok` (an i1) is false at run time,
  /// stop the run with "<op type> node '<name>': <what>", `{k}` in `what`
  /// replaced by `values[k]` (index or integer values, at most
  /// kMaxCheckValues). The node name and ONNX op type come from the
  /// importer's location `NameLoc(name, NameLoc(op type, file))`; `onnxOp`
  /// is used when `loc` carries no op type.
  /// A constant-true `ok` emits nothing and counts as dropped.
  void check(OpBuilder &b, Location loc, Value ok, StringRef onnxOp,
             StringRef what, ValueRange values = {});
  /// Counts `n` checks proven by the symbolic shape analysis (not emitted).
  void countProven(int64_t n = 1) { dropped += n; }
  /// Stores the messages and the dropped count on the module.
  void finish();

private:
  ModuleOp module;
  SmallVector<Attribute> messages;
  int64_t dropped = 0;
};

/// The ONNX node name carried by `loc` (the importer's NameLoc), or "".
std::string nodeNameOf(Location loc);

} // namespace mlir::disc

#endif // DISC_LIB_CONVERSION_RUNTIMECHECKS_H
