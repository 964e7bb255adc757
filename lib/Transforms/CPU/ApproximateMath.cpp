//===- ApproximateMath.cpp - disc-approximate-math ------------------------===//
//
// Replaces f32 exp, tanh and erf by MLIR's polynomial approximations
// (`populateMathPolynomialApproximationPatterns`: Cephes-style range
// reduction and minimax polynomials, a few ulp), so they are inline
// arithmetic that LLVM vectorizes instead of scalar libm calls.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCAPPROXIMATEMATH
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// The math ops replaced by their polynomial approximation.
static bool isApproximated(StringRef name) {
  return name == math::ExpOp::getOperationName() ||
         name == math::TanhOp::getOperationName() ||
         name == math::ErfOp::getOperationName();
}

namespace {
struct ApproximateMathPass
    : public disc::impl::DiscApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
