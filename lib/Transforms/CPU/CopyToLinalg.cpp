//===- CopyToLinalg.cpp - disc-copy-to-linalg -----------------------------===//
//
// Rewrites `memref.copy` into `linalg.copy`, so copies become plain loops
// instead of calls into MLIR's C runner utilities (which a model.so does not
// link).
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCCOPYTOLINALG
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Replaces `op` by a linalg.copy of the same operands.
static void convertToLinalgCopy(memref::CopyOp op) {
  OpBuilder b(op);
  linalg::CopyOp::create(b, op.getLoc(), op.getSource(), op.getTarget());
  op.erase();
}

namespace {
struct CopyToLinalgPass
    : public disc::impl::DiscCopyToLinalgBase<CopyToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    llvm::for_each(copies, convertToLinalgCopy);
  }
};
} // namespace
