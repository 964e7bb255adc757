//===- InitAll.cpp - one registration point for DISC dialects and passes --===//
#include "disc/InitAll.h"

#include "disc/Conversion/Passes.h"
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Dialect/DiscShape/IR/DiscShapeDialect.h"
#include "disc/Pipelines/CompilePipeline.h"
#include "disc/Pipelines/CpuPipeline.h"
#include "disc/Pipelines/CudaPipeline.h"
#include "disc/Transforms/CPU/Passes.h"
#include "disc/Transforms/GPU/Passes.h"
#include "disc/Transforms/Passes.h"

void mlir::disc::registerAllDiscDialects(DialectRegistry &registry) {
  registry.insert<DiscDialect>();
  registry.insert<disc_shape::DiscShapeDialect>();
  registerDiscCudaExtensions(registry);
}

void mlir::disc::registerAllDiscPasses() {
  registerDiscConversionPasses();
  registerDiscTransformsPasses();
  registerDiscCpuTransformsPasses();
  registerDiscGpuTransformsPasses();
  registerDiscPipelines();
  registerDiscCudaPipeline();
  registerDiscCompilePipeline();
}
