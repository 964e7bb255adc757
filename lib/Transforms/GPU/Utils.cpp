//===- Utils.cpp - Helpers shared by the CUDA passes ----------------------===//
#include "Utils.h"

#include "disc/Target/RuntimeSymbols.h"
#include "disc/Transforms/MemoryModel.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value mlir::disc::cuda::viewRoot(Value v, SmallVectorImpl<Operation *> *chain) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    if (chain)
      chain->push_back(def);
    v = view.getViewSource();
  }
  return v;
}

memref::GetGlobalOp mlir::disc::cuda::viewedConstant(Value v) {
  if (!isa<MemRefType>(v.getType()))
    return {};
  return viewRoot(v).getDefiningOp<memref::GetGlobalOp>();
}

Value mlir::disc::cuda::retakeViews(OpBuilder &b, Value v, Value root,
                                    Value replacement) {
  SmallVector<Operation *> chain;
  for (Value cur = v; cur != root;) {
    Operation *def = cur.getDefiningOp();
    chain.push_back(def);
    cur = cast<ViewLikeOpInterface>(def).getViewSource();
  }
  IRMapping map;
  map.map(root, replacement);
  Value mapped = replacement;
  for (Operation *def : llvm::reverse(chain))
    mapped = b.clone(*def, map)->getResult(0);
  return mapped;
}

SmallVector<gpu::LaunchOp> mlir::disc::cuda::collectLaunches(Operation *root) {
  SmallVector<gpu::LaunchOp> launches;
  root->walk([&](gpu::LaunchOp op) { launches.push_back(op); });
  return launches;
}

void mlir::disc::cuda::copyOnStream(OpBuilder &b, Location loc, Value dst,
                                    Value src, bool wait) {
  Value token = gpu::WaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                                    ValueRange{})
                    .getAsyncToken();
  token = gpu::MemcpyOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                                ValueRange{token}, dst, src)
              .getAsyncToken();
  if (wait)
    gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

void mlir::disc::cuda::replaceAllocation(memref::AllocOp alloc,
                                         Value replacement) {
  SmallVector<Operation *> deallocs;
  for (Operation *user : alloc->getUsers())
    if (isa<memref::DeallocOp>(user))
      deallocs.push_back(user);
  for (Operation *d : deallocs)
    d->erase();
  alloc.replaceAllUsesWith(replacement);
  alloc.erase();
}

bool mlir::disc::cuda::inDeviceCode(Operation *op) {
  return op->getParentOfType<scf::ParallelOp>() ||
         op->getParentOfType<gpu::LaunchOp>();
}

int64_t mlir::disc::cuda::elementBytes(Type t) {
  if (t.isIntOrFloat())
    return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
  if (t.isIndex())
    return 8;
  return -1;
}

bool mlir::disc::cuda::isSmallStatic(MemRefType type) {
  int64_t elt = elementBytes(type.getElementType());
  return type.hasStaticShape() && type.getLayout().isIdentity() && elt > 0 &&
         type.getNumElements() * elt <= disc::kMaxStackBufferBytes;
}

namespace {
/// A host access of buffer data: a load or store outside kernels, or the
/// shape operand of memref.reshape (read when the reshape is lowered).
bool isHostAccess(Operation *user, Value v) {
  if (disc::cuda::inDeviceCode(user))
    return false;
  if (isa<memref::LoadOp, memref::StoreOp>(user))
    return true;
  if (auto reshape = dyn_cast<memref::ReshapeOp>(user))
    return reshape.getShape() == v;
  return false;
}
} // namespace

disc::cuda::BufferUses mlir::disc::cuda::collectUses(Value root) {
  BufferUses uses;
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() == v) {
          for (Value r : user->getResults())
            if (isa<MemRefType>(r.getType()))
              work.push_back(r);
          continue;
        }
      }
      if (isa<memref::DeallocOp, memref::DimOp,
              memref::ExtractStridedMetadataOp>(user))
        continue;
      if (isHostAccess(user, v)) {
        uses.host.push_back(&use);
        continue;
      }
      if (auto op = dyn_cast<linalg::LinalgOp>(user);
          op && !inDeviceCode(user)) {
        uses.linalg.push_back(op);
        continue;
      }
      if (auto launch = user->getParentOfType<gpu::LaunchOp>()) {
        uses.launches.push_back(launch);
        continue;
      }
      if (isa<func::ReturnOp>(user))
        uses.returns.push_back(user);
      uses.other = true;
    }
  }
  return uses;
}

bool mlir::disc::cuda::isHoistableBetweenKernels(Operation *op) {
  if (isa<memref::AllocOp>(op))
    return true;
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (ifOp.getNumResults() != 0)
      return false;
    WalkResult r = ifOp->walk([&](Operation *inner) {
      if (inner == ifOp.getOperation() || isa<scf::YieldOp>(inner))
        return WalkResult::advance();
      if (auto call = dyn_cast<func::CallOp>(inner))
        return call.getCallee() == "disc_check_failed"
                   ? WalkResult::advance()
                   : WalkResult::interrupt();
      return isMemoryEffectFree(inner) && inner->getNumRegions() == 0
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    });
    return !r.wasInterrupted();
  }
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

bool mlir::disc::cuda::isSinkableBetweenKernels(Operation *op) {
  if (isa<memref::DeallocOp>(op))
    return true;
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getNumResults() == 0 &&
         call.getCallee().starts_with(disc::kRematEvictPrefix);
}

func::FuncOp mlir::disc::cuda::getOrCreateConstantUploadFn(ModuleOp module,
                                                           MemRefType type) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  FunctionType fnType = b.getFunctionType({type, b.getI64Type()}, {type});
  int64_t count = 0;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (!fn.getSymName().starts_with(kDeviceConstantPrefix))
      continue;
    if (fn.getFunctionType() == fnType)
      return fn;
    ++count;
  }
  std::string name = kDeviceConstantPrefix.str() +
                     std::to_string(type.getRank()) + "_" +
                     std::to_string(count);
  auto fn = func::FuncOp::create(b, module.getLoc(), name, fnType);
  fn.setPrivate();
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return fn;
}
