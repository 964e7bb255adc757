//===- InitAll.h - one registration point for DISC dialects and passes ----===//
#ifndef DISC_INITALL_H
#define DISC_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::disc {
/// Registers the DISC dialects (and the upstream dialects DISC lowers to).
void registerAllDiscDialects(DialectRegistry &registry);
/// Registers every `disc-*` pass and pipeline with the global registry.
void registerAllDiscPasses();
} // namespace mlir::disc

#endif // DISC_INITALL_H
