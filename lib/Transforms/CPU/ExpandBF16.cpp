//===- ExpandBF16.cpp - disc-expand-bf16 ----------------------------------===//
//
// bf16 on CPU: arith ops on bf16 compute in f32 (extf/truncf around each,
// upstream EmulateUnsupportedFloats), then bf16 extf/truncf become integer
// bit operations (upstream ExpandBFloat16: truncf rounds to nearest even),
// so no conversion reaches LLVM as a library call.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCEXPANDBF16
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

namespace {

struct ExpandBF16Pass : disc::impl::DiscExpandBF16Base<ExpandBF16Pass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    bool any = false;
    module.walk([&](Operation *op) {
      auto isBF16 = [](Type t) { return getElementTypeOrSelf(t).isBF16(); };
      if (llvm::any_of(op->getOperandTypes(), isBF16) ||
          llvm::any_of(op->getResultTypes(), isBF16)) {
        any = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (!any)
      return;
    Type bf16 = BFloat16Type::get(ctx), f32 = Float32Type::get(ctx);
    TypeConverter converter;
    arith::populateEmulateUnsupportedFloatsConversions(converter, {bf16}, f32);
    ConversionTarget target(*ctx);
    arith::populateEmulateUnsupportedFloatsLegality(target, converter);
    RewritePatternSet emulate(ctx);
    arith::populateEmulateUnsupportedFloatsPatterns(emulate, converter);
    if (failed(applyPartialConversion(module, target, std::move(emulate))))
      return signalPassFailure();
    RewritePatternSet expand(ctx);
    arith::populateExpandBFloat16Patterns(expand);
    // No folding: arith.extf(arith.truncf(x)) folds to x, which would drop
    // the rounding to bf16 between two emulated ops.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(applyPatternsGreedily(module, std::move(expand), config)))
      return signalPassFailure();
  }
};

} // namespace
