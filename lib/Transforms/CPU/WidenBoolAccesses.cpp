//===- WidenBoolAccesses.cpp - disc-widen-bool-accesses -------------------===//
//
// On the LLVM dialect: scalar loads and stores of `i1` become byte loads
// and stores (`i8` with `llvm.trunc` / `llvm.zext`), so that LLVM's loop
// vectorizer loads boolean masks as `<N x i8>` instead of byte by byte (a
// vector of `i1` in memory is bit-packed, so an `i1` load does not widen).
// The bytes read and written are the same: a memref of `i1` has one byte per
// element and every boolean stored is 0 or 1.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCWIDENBOOLACCESSES
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

namespace {

struct WidenBoolAccessesPass
    : disc::impl::DiscWidenBoolAccessesBase<WidenBoolAccessesPass> {
  void runOnOperation() override {
    SmallVector<LLVM::LoadOp> loads;
    SmallVector<LLVM::StoreOp> stores;
    getOperation().walk([&](Operation *op) {
      if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
        if (load.getType().isInteger(1))
          loads.push_back(load);
      } else if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
        if (store.getValue().getType().isInteger(1))
          stores.push_back(store);
      }
    });
    for (LLVM::LoadOp load : loads) {
      OpBuilder b(load);
      Operation *wide = b.clone(*load.getOperation());
      wide->getResult(0).setType(b.getI8Type());
      Value bit = LLVM::TruncOp::create(b, load.getLoc(), b.getI1Type(),
                                        wide->getResult(0));
      load.getResult().replaceAllUsesWith(bit);
      load.erase();
    }
    for (LLVM::StoreOp store : stores) {
      OpBuilder b(store);
      Value byte = LLVM::ZExtOp::create(b, store.getLoc(), b.getI8Type(),
                                        store.getValue());
      store.getValueMutable().assign(byte);
    }
  }
};

} // namespace
