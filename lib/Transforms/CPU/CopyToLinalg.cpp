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

namespace {
struct CopyToLinalgPass
    : public disc::impl::DiscCopyToLinalgBase<CopyToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp op : copies) {
      OpBuilder b(op);
      linalg::CopyOp::create(b, op.getLoc(), op.getSource(), op.getTarget());
      op.erase();
    }
  }
};
} // namespace
