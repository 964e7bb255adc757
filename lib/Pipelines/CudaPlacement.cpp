//===- CudaPlacement.cpp - Host shape tensors and host/device copies ------===//
//
// On the CUDA target every runtime allocation is device memory. Shape
// tensors (Shape, shape arithmetic feeding Reshape/Expand/Slice, Range
// bounds) are small buffers the host reads to size allocations and
// launches: disc-gpu-place-host-buffers keeps them on the host stack and
// computes them with host loops. A small buffer that both a kernel and the
// host touch stays a device buffer with a host copy
// (disc-gpu-mirror-host-buffers). Small means static and at most
// disc::kMaxStackBufferBytes, the memory model's stack rule, so the buffers
// moved to the stack are exactly those the model already leaves out of the
// peak (docs/memory.md).
//
//===----------------------------------------------------------------------===//
#include "CudaPasses.h"

#include "disc/Transforms/MemoryModel.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

/// The buffer a view is taken of (through subview, reshape, cast ...).
Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  return v;
}

bool inDeviceCode(Operation *op) {
  return op->getParentOfType<scf::ParallelOp>() ||
         op->getParentOfType<gpu::LaunchOp>();
}

int64_t elementBytes(Type t) {
  if (t.isIntOrFloat())
    return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
  if (t.isIndex())
    return 8;
  return -1;
}

/// A static buffer of at most kMaxStackBufferBytes with the identity layout.
bool isSmallStatic(MemRefType type) {
  int64_t elt = elementBytes(type.getElementType());
  return type.hasStaticShape() && type.getLayout().isIdentity() && elt > 0 &&
         type.getNumElements() * elt <= disc::kMaxStackBufferBytes;
}

/// A host access of buffer data: a load or store outside kernels, or the
/// shape operand of memref.reshape (read when the reshape is lowered).
bool isHostAccess(Operation *user, Value v) {
  if (inDeviceCode(user))
    return false;
  if (isa<memref::LoadOp, memref::StoreOp>(user))
    return true;
  if (auto reshape = dyn_cast<memref::ReshapeOp>(user))
    return reshape.getShape() == v;
  return false;
}

/// Every use of `root` through views: host accesses, linalg ops, and
/// whether some other use (a kernel, a call, a return, a yield) exists.
struct BufferUses {
  SmallVector<OpOperand *> host;
  SmallVector<linalg::LinalgOp> linalg;
  SmallVector<gpu::LaunchOp> launches;
  /// func.return ops that return the buffer (or a view): also in `other`.
  SmallVector<Operation *> returns;
  bool other = false;
};

BufferUses collectUses(Value root) {
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

struct PlaceHostBuffersPass
    : public PassWrapper<PlaceHostBuffersPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PlaceHostBuffersPass)
  StringRef getArgument() const final { return "disc-gpu-place-host-buffers"; }
  StringRef getDescription() const final {
    return "Keep small buffers only the host needs (shape tensors) on the "
           "host stack and compute them with host loops";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<scf::SCFDialect, memref::MemRefDialect>();
  }
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Candidates: small static allocations touched only by host accesses
    // and linalg ops. Then, to a fixpoint, drop a candidate one of whose
    // linalg ops also touches a buffer that is neither a candidate nor a
    // constant: that op runs as a kernel, so the buffer is device memory.
    llvm::MapVector<Value, SmallVector<linalg::LinalgOp>> host;
    func.walk([&](memref::AllocOp alloc) {
      if (inDeviceCode(alloc) || !isSmallStatic(alloc.getType()))
        return;
      BufferUses uses = collectUses(alloc.getResult());
      if (!uses.other && uses.launches.empty())
        host[alloc.getResult()] = std::move(uses.linalg);
    });
    auto onHost = [&](Value operand) {
      Value root = rootOf(operand);
      return host.count(root) || root.getDefiningOp<memref::GetGlobalOp>();
    };
    auto allHost = [&](linalg::LinalgOp op) {
      return llvm::all_of(op->getOperands(), [&](Value v) {
        return !isa<MemRefType>(v.getType()) || onHost(v);
      });
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = host.begin(); it != host.end(); ++it) {
        if (llvm::all_of(it->second, allHost))
          continue;
        host.erase(it);
        changed = true;
        break;
      }
    }
    // Linalg ops over host buffers only: host loops.
    SmallVector<linalg::LinalgOp> hostOps;
    func.walk([&](linalg::LinalgOp op) {
      if (!inDeviceCode(op) && allHost(op) &&
          llvm::any_of(op->getOperands(), [&](Value v) {
            return isa<MemRefType>(v.getType()) && host.count(rootOf(v));
          }))
        hostOps.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : hostOps) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::linalgOpToLoops(rewriter, op))) {
        op.emitError("cannot lower a host-side shape computation to loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
    // Host buffers: the stack of the entry block (static sizes, so a buffer
    // allocated in a loop body reuses one slot).
    Block &entry = func.getBody().front();
    for (auto &[value, ops] : host) {
      auto alloc = value.getDefiningOp<memref::AllocOp>();
      OpBuilder b(&entry, entry.begin());
      auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                             alloc.getAlignmentAttr());
      SmallVector<Operation *> deallocs;
      for (Operation *user : alloc->getUsers())
        if (isa<memref::DeallocOp>(user))
          deallocs.push_back(user);
      for (Operation *d : deallocs)
        d->erase();
      alloc.replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
  }
};

/// Clones the view chain from `root` to `v` onto `replacement` at `b`.
Value retakeViews(OpBuilder &b, Value v, Value root, Value replacement) {
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

void copyOnStream(OpBuilder &b, Location loc, Value dst, Value src) {
  Value token = gpu::WaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                                    ValueRange{})
                    .getAsyncToken();
  token = gpu::MemcpyOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                                ValueRange{token}, dst, src)
              .getAsyncToken();
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

struct MirrorHostBuffersPass
    : public PassWrapper<MirrorHostBuffersPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MirrorHostBuffersPass)
  StringRef getArgument() const final { return "disc-gpu-mirror-host-buffers"; }
  StringRef getDescription() const final {
    return "Give small device buffers that the host also reads or writes a "
           "host copy, synchronized around each launch that uses them";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect, memref::MemRefDialect>();
  }
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Small device buffers: allocations, and entry arguments (inputs such
    // as a Reshape's shape or TopK's k, copied to the device by the
    // runtime).
    SmallVector<Value> roots;
    Block &entry = func.getBody().front();
    for (BlockArgument arg : entry.getArguments())
      if (auto type = dyn_cast<MemRefType>(arg.getType());
          type && isSmallStatic(type))
        roots.push_back(arg);
    func.walk([&](memref::AllocOp alloc) {
      if (!inDeviceCode(alloc) && isSmallStatic(alloc.getType()))
        roots.push_back(alloc.getResult());
    });
    for (Value root : roots) {
      BufferUses uses = collectUses(root);
      bool isArg = isa<BlockArgument>(root);
      if (uses.host.empty() ||
          (!isArg && uses.launches.empty() && uses.returns.empty()))
        continue;
      bool hostWrites = llvm::any_of(uses.host, [](OpOperand *use) {
        return isa<memref::StoreOp>(use->getOwner());
      });
      OpBuilder b(&entry, entry.begin());
      Location loc = root.getLoc();
      auto type = cast<MemRefType>(root.getType());
      IntegerAttr align;
      if (auto alloc = root.getDefiningOp<memref::AllocOp>())
        align = alloc.getAlignmentAttr();
      Value twin = memref::AllocaOp::create(b, loc, type, align);
      if (isArg)
        copyOnStream(b, loc, twin, root);
      for (OpOperand *use : uses.host) {
        b.setInsertionPoint(use->getOwner());
        use->set(retakeViews(b, use->get(), root, twin));
      }
      llvm::SetVector<Operation *> launches(uses.launches.begin(),
                                            uses.launches.end());
      for (Operation *launch : launches) {
        b.setInsertionPoint(launch);
        if (hostWrites)
          copyOnStream(b, loc, root, twin);
        b.setInsertionPointAfter(launch);
        copyOnStream(b, loc, twin, root);
      }
      // A returned buffer the host wrote: its device copy before the return.
      if (hostWrites)
        for (Operation *ret : llvm::SetVector<Operation *>(
                 uses.returns.begin(), uses.returns.end())) {
          b.setInsertionPoint(ret);
          copyOnStream(b, loc, root, twin);
        }
    }
  }
};

struct SmallDeviceBuffersPass
    : public PassWrapper<SmallDeviceBuffersPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SmallDeviceBuffersPass)
  SmallDeviceBuffersPass() = default;
  SmallDeviceBuffersPass(const SmallDeviceBuffersPass &other)
      : PassWrapper(other) {}
  explicit SmallDeviceBuffersPass(bool emulateOnHost) {
    emulate = emulateOnHost;
  }
  StringRef getArgument() const final {
    return "disc-gpu-small-device-buffers";
  }
  StringRef getDescription() const final {
    return "Small static non-escaping device buffers in per-session device "
           "slots (the CPU's stack rule)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<memref::MemRefDialect, func::FuncDialect,
                    arith::ArithDialect>();
  }
  Option<bool> emulate{*this, "emulate",
                       llvm::cl::desc("Use the host stack (CPU emulation)"),
                       llvm::cl::init(false)};

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp scratchFn;
    int64_t site = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &entry = func.getBody().front();
      SmallVector<memref::AllocOp> allocs;
      for (Operation &op : entry)
        if (auto alloc = dyn_cast<memref::AllocOp>(op))
          if (isSmallStatic(alloc.getType()) &&
              !collectUses(alloc.getResult()).other)
            allocs.push_back(alloc);
      for (memref::AllocOp alloc : allocs) {
        OpBuilder b(alloc);
        Location loc = alloc.getLoc();
        MemRefType type = alloc.getType();
        Value replacement;
        if (emulate) {
          replacement =
              memref::AllocaOp::create(b, loc, type, alloc.getAlignmentAttr());
        } else {
          if (!scratchFn) {
            OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
            auto raw = MemRefType::get({ShapedType::kDynamic}, mb.getI8Type());
            scratchFn = func::FuncOp::create(
                mb, module.getLoc(), "disc_device_scratch",
                mb.getFunctionType({mb.getI64Type(), mb.getI64Type()}, {raw}));
            scratchFn.setPrivate();
            scratchFn->setAttr("llvm.emit_c_interface", mb.getUnitAttr());
          }
          int64_t bytes =
              type.getNumElements() * elementBytes(type.getElementType());
          Value id =
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(site++));
          Value size =
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(bytes));
          Value raw =
              func::CallOp::create(b, loc, scratchFn, ValueRange{id, size})
                  .getResult(0);
          Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
          replacement =
              memref::ViewOp::create(b, loc, type, raw, c0, ValueRange{});
        }
        SmallVector<Operation *> deallocs;
        for (Operation *user : alloc->getUsers())
          if (isa<memref::DeallocOp>(user))
            deallocs.push_back(user);
        for (Operation *d : deallocs)
          d->erase();
        alloc.replaceAllUsesWith(replacement);
        alloc.erase();
      }
    }
  }
};

} // namespace

std::unique_ptr<Pass>
mlir::disc::cuda::createSmallDeviceBuffersPass(bool emulate) {
  return std::make_unique<SmallDeviceBuffersPass>(emulate);
}

std::unique_ptr<Pass> mlir::disc::cuda::createPlaceHostBuffersPass() {
  return std::make_unique<PlaceHostBuffersPass>();
}
std::unique_ptr<Pass> mlir::disc::cuda::createMirrorHostBuffersPass() {
  return std::make_unique<MirrorHostBuffersPass>();
}
