//===- PromoteSmallBuffers.cpp - disc-promote-small-buffers ---------------===//
//
// Moves small static buffers of the function's entry block that do not
// escape (shape tensors, index shapes of reshapes) to the stack, so they
// never reach the runtime's allocator whatever canonicalization folded
// (docs/memory.md). Runs after bufferization, before deallocation. The
// size rule is the memory model's (disc::kMaxStackBufferBytes); only the
// entry block, so no alloca sits in a loop.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "disc/Transforms/MemoryModel.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCPROMOTESMALLBUFFERS
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Bytes of one element of `t`; -1 for a type that is neither an integer,
/// a float nor index.
static int64_t elementBytes(Type t) {
  if (t.isIntOrFloat())
    return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
  if (t.isIndex())
    return 8;
  return -1;
}

/// The memory model's stack rule: a static buffer with the identity layout
/// of at most kMaxStackBufferBytes.
static bool isStackSized(MemRefType type) {
  int64_t elt = elementBytes(type.getElementType());
  return type.hasStaticShape() && type.getLayout().isIdentity() && elt >= 0 &&
         type.getNumElements() * elt <= disc::kMaxStackBufferBytes;
}

namespace {
struct PromoteSmallBuffersPass
    : public disc::impl::DiscPromoteSmallBuffersBase<PromoteSmallBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    BufferViewFlowAnalysis aliases(func);
    SmallVector<Value> returned;
    func.walk([&](func::ReturnOp r) {
      llvm::append_range(returned, r.getOperands());
    });
    SmallVector<memref::AllocOp> allocs;
    for (Operation &op : func.getBody().front())
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(alloc);
    for (memref::AllocOp alloc : allocs) {
      if (!isStackSized(alloc.getType()))
        continue;
      auto aliasSet = aliases.resolve(alloc.getResult());
      if (llvm::any_of(returned, [&](Value v) { return aliasSet.contains(v); }))
        continue;
      OpBuilder b(alloc);
      auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                             alloc.getAlignmentAttr());
      alloc.replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
  }
};
} // namespace
