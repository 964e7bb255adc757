//===- LowerParallelCalls.cpp - disc-lower-parallel-calls -----------------===//
//
// After the lowering to the LLVM dialect: each call of a kernel that
// disc-parallelize-kernels marked `disc.parallel` becomes a call of the
// model's `disc_parallel_for(body, env, n, min_chunk)` (ModelEmitter's
// wrapper, forwarding to `disc_ral_context.parallel_for`): the call's
// arguments go into a stack struct `env`, and the body
// `disc_parallel_body_<n>(env, lo, hi)` loads them and calls the kernel on
// [lo, hi). A chunk computes its elements exactly as the whole loop does
// (same inner loops), so results do not depend on the number of threads;
// nothing is allocated in a chunk.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "Utils.h"

#include "disc/Target/RuntimeSymbols.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCLOWERPARALLELCALLS
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// The body of `kernel` for `disc_parallel_for`, created at `mb`:
/// `disc_parallel_body_<n>(env, lo, hi)` loads the arguments from `env`
/// (`envType`) and runs the kernel on [lo, hi).
static LLVM::LLVMFuncOp createParallelBody(OpBuilder &mb,
                                           LLVM::LLVMFuncOp kernel,
                                           LLVM::LLVMStructType envType) {
  MLIRContext *ctx = mb.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  Location loc = kernel.getLoc();
  std::string name =
      "disc_parallel_body_" +
      kernel.getName().drop_front(disc::kKernelPrefix.size()).str();
  auto thunk = LLVM::LLVMFuncOp::create(
      mb, loc, name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                  {ptr, i64, i64}),
      LLVM::Linkage::Internal);
  Block *entry = thunk.addEntryBlock(mb);
  OpBuilder tb = OpBuilder::atBlockEnd(entry);
  SmallVector<Value> args;
  for (auto [i, t] : llvm::enumerate(envType.getBody())) {
    Value field =
        LLVM::GEPOp::create(tb, loc, ptr, envType, entry->getArgument(0),
                            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    args.push_back(LLVM::LoadOp::create(tb, loc, t, field));
  }
  args.push_back(entry->getArgument(1));
  args.push_back(entry->getArgument(2));
  args.push_back(LLVM::ConstantOp::create(tb, loc, i64, 0)); // unread
  LLVM::CallOp::create(tb, loc, kernel, args);
  LLVM::ReturnOp::create(tb, loc, ValueRange());
  return thunk;
}

/// Replaces `call` of a parallel kernel by a call of `parallelFor` with
/// `thunk`, the call's arguments stored in a stack struct of `envType`, its
/// trip count and its smallest chunk; `loc` is the kernel's.
static void callThroughParallelFor(LLVM::CallOp call, Location loc,
                                   LLVM::LLVMFuncOp thunk,
                                   LLVM::LLVMFuncOp parallelFor,
                                   LLVM::LLVMStructType envType) {
  auto ptr = LLVM::LLVMPointerType::get(call.getContext());
  auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
  OpBuilder ab = OpBuilder::atBlockBegin(&caller.getBody().front());
  Value one = LLVM::ConstantOp::create(ab, loc, ab.getI64Type(), 1);
  Value env = LLVM::AllocaOp::create(ab, loc, ptr, envType, one);
  OpBuilder cb(call);
  ValueRange operands = call.getArgOperands();
  for (auto [i, v] : llvm::enumerate(operands.drop_back(3))) {
    Value field =
        LLVM::GEPOp::create(cb, loc, ptr, envType, env,
                            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    LLVM::StoreOp::create(cb, loc, v, field);
  }
  Value fn = LLVM::AddressOfOp::create(cb, loc, ptr, thunk.getName());
  Value n = operands[operands.size() - 2];
  LLVM::CallOp::create(cb, loc, parallelFor,
                       ValueRange{fn, env, n, operands.back()});
  call->erase();
}

namespace {
struct LowerParallelCallsPass
    : public disc::impl::DiscLowerParallelCallsBase<LowerParallelCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto f : module.getOps<LLVM::LLVMFuncOp>())
      if (f->hasAttr(disc::kParallelAttr) && !f.isExternal())
        kernels.push_back(f);
    if (kernels.empty())
      return;
    // disc::kParallelForFn: the model wrapper's entry (ModelEmitter.cpp)
    // that forwards to `disc_ral_context.parallel_for`.
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto parallelFor =
        module.lookupSymbol<LLVM::LLVMFuncOp>(disc::kParallelForFn);
    if (!parallelFor) {
      auto ptr = LLVM::LLVMPointerType::get(&getContext());
      auto i64 = mb.getI64Type();
      parallelFor = LLVM::LLVMFuncOp::create(
          mb, module.getLoc(), disc::kParallelForFn,
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(&getContext()),
                                      {ptr, ptr, i64, i64}));
    }
    SymbolTableCollection tables;
    SymbolUserMap users(tables, module);
    for (LLVM::LLVMFuncOp kernel : kernels) {
      ArrayRef<Type> params = kernel.getFunctionType().getParams();
      assert(params.size() >= 3 &&
             "a parallel kernel takes lo, hi and the smallest chunk last");
      auto envType = LLVM::LLVMStructType::getLiteral(
          &getContext(), SmallVector<Type>(params.drop_back(3)));
      LLVM::LLVMFuncOp thunk = createParallelBody(mb, kernel, envType);
      for (Operation *user : llvm::to_vector(users.getUsers(kernel)))
        if (auto call = dyn_cast<LLVM::CallOp>(user))
          callThroughParallelFor(call, kernel.getLoc(), thunk, parallelFor,
                                 envType);
    }
  }
};
} // namespace
