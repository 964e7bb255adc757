//===- StateInPlace.cpp - disc-write/return-state-in-place ----------------===//
//
// The CPU lowering of the state updates that disc-mark-in-place-state
// marked (disc/Transforms/InPlaceState.h): the loop nest computing the
// update writes the state input's buffer (disc-write-state-in-place, on
// tensors), and the function returns that buffer rather than a copy of it
// (disc-return-state-in-place, after deallocation). The memory model
// counts neither a buffer nor a copy for such a result, so a marked result
// that cannot be rewritten is an error, never a silent difference between
// the predicted and the measured peak.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "disc/Transforms/InPlaceState.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCWRITESTATEINPLACE
#define GEN_PASS_DEF_DISCRETURNSTATEINPLACE
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

namespace {

/// The marked results of `func`: (result index, state input index).
SmallVector<std::pair<unsigned, unsigned>> inPlaceResults(func::FuncOp func) {
  SmallVector<std::pair<unsigned, unsigned>> out;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (auto arg = func.getResultAttrOfType<IntegerAttr>(
            i, disc::kInPlaceResultAttrName))
      out.push_back({i, static_cast<unsigned>(arg.getInt())});
  return out;
}

/// Makes the loop nest computing result `result` write state input `arg`.
LogicalResult writeInPlace(func::FuncOp func, unsigned result, unsigned arg) {
  Operation *ret = func.getBody().front().getTerminator();
  auto fail = [&](const Twine &why) {
    return ret->emitError("disc-write-state-in-place: result ")
           << result << ": " << why;
  };
  Value v = ret->getOperand(result);
  Value state = func.getArgument(arg);
  // A MatMul library call that accumulated into the state's buffer
  // (kMatmulAccumulateFlag) is in place already.
  if (auto t = v.getDefiningOp<bufferization::ToTensorOp>())
    if (auto buf = t.getBuffer().getDefiningOp<bufferization::ToBufferOp>();
        buf && buf.getTensor() == state)
      return success();
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic->getNumResults() != 1 ||
      generic->getBlock() != ret->getBlock())
    return fail("the update is not computed by one loop nest");
  OpOperand *init = generic.getDpsInitOperand(0);
  auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
  if (!empty || !empty->hasOneUse())
    return fail("the loop nest does not write a fresh destination");
  if (state.getType() != empty.getType())
    return fail("the state's type differs from the loop nest's");
  if (generic.payloadUsesValueFromOperand(init))
    return fail("the loop nest reads its destination");
  // Every read of the state in the loop nest is of the element it writes.
  for (OpOperand *in : generic.getDpsInputOperands())
    if (in->get() == state && !generic.getMatchingIndexingMap(in).isIdentity())
      return fail("the loop nest reads the state at another element");
  init->set(state);
  empty->erase();
  return success();
}

/// Returns state input `arg` itself as result `result`, in place of the
/// copy the deallocation made of it.
LogicalResult returnInPlace(func::FuncOp func, unsigned result, unsigned arg) {
  Operation *ret = func.getBody().front().getTerminator();
  Value state = func.getArgument(arg);
  Value v = ret->getOperand(result);
  if (v == state)
    return success();
  auto clone = v.getDefiningOp<bufferization::CloneOp>();
  if (!clone || clone.getInput() != state)
    return ret->emitError("disc-return-state-in-place: result ")
           << result << " is not the state input's buffer";
  clone.getOutput().replaceAllUsesWith(state);
  clone->erase();
  return success();
}

struct WriteStateInPlacePass
    : public disc::impl::DiscWriteStateInPlaceBase<WriteStateInPlacePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // The caller's buffers are read-only but for the states written in
    // place: an op whose destination is an argument (a scatter's data)
    // works on a copy.
    llvm::DenseSet<unsigned> written;
    for (auto [result, arg] : inPlaceResults(func)) {
      if (failed(writeInPlace(func, result, arg)))
        return signalPassFailure();
      written.insert(arg);
    }
    auto no = BoolAttr::get(func.getContext(), false);
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (!written.contains(i) &&
          isa<TensorType>(func.getArgument(i).getType()))
        func.setArgAttr(
            i, bufferization::BufferizationDialect::kWritableAttrName, no);
  }
};

struct ReturnStateInPlacePass
    : public disc::impl::DiscReturnStateInPlaceBase<ReturnStateInPlacePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    for (auto [result, arg] : inPlaceResults(func))
      if (failed(returnInPlace(func, result, arg)))
        return signalPassFailure();
  }
};

} // namespace
