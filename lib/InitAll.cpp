//===- InitAll.cpp - one registration point for DISC dialects and passes --===//
#include "disc/InitAll.h"

#include "disc/Dialect/Disc/IR/DiscDialect.h"

void mlir::disc::registerAllDiscDialects(DialectRegistry &registry) {
  registry.insert<DiscDialect>();
}

void mlir::disc::registerAllDiscPasses() {}
