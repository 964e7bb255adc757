//===- InitAll.cpp - one registration point for DISC dialects and passes --===//
#include "disc/InitAll.h"

#include "disc/Conversion/Passes.h"
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Pipelines/CpuPipeline.h"

void mlir::disc::registerAllDiscDialects(DialectRegistry &registry) {
  registry.insert<DiscDialect>();
}

void mlir::disc::registerAllDiscPasses() {
  registerDiscConversionPasses();
  registerDiscPipelines();
}
