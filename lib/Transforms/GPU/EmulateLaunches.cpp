//===- EmulateLaunches.cpp - disc-gpu-emulate-launches --------------------===//
//
// `disc-compile --target=cuda-emulate` (docs/cuda.md, "Emulation"): the
// IR after the GPU mapping (`--emit=gpu`) with every gpu.launch turned into
// host loops over the block ids (z, y, x) and, inside, the thread ids
// (z, y, x): the kernel body runs once per (block, thread), with the ids
// and extents the launch would give it. Device copies become host copies;
// the device error word of the run-time checks (disc-gpu-device-checks) is
// read after each launch as the runtime does after a real one. The result
// continues with the CPU pipeline's tail.
//
// A kernel that synchronizes its threads (gpu.barrier, gpu.shuffle) or
// uses shared or private memory runs as work-item loops (the loop fission
// of POCL, Jääskeläinen et al., "pocl: A Performance-Portable OpenCL
// Implementation", IJPP 2015, and of CuPBoP, Han et al., "CuPBoP: CUDA for
// Parallelized and Broad-range Processors", 2022): per block, the body is
// cut at every synchronization point into segments, each a loop nest over
// all threads of the block; a block-uniform scf.for/scf.if around a
// barrier stays a host loop/branch with the segments of its body inside.
// Per-thread values that live across a cut are kept in host arrays indexed
// by the linear thread id; a shuffle stores every thread's value in an
// exchange array before the cut and reads its source lane's after it.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "disc/Target/RuntimeSymbols.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUEMULATELAUNCHES
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Threads per warp (gpu.shuffle, gpu.lane_id) on NVIDIA GPUs.
static constexpr int64_t kWarpSize = 32;

/// After a launch: when the kernel recorded a failed check, clear the
/// word and report it as the host-side check would.
static void readErrorWord(OpBuilder &b, Location loc, memref::GlobalOp word,
                          func::FuncOp fail) {
  Value g =
      memref::GetGlobalOp::create(b, loc, word.getType(), word.getSymName());
  auto idx = [&](int64_t i) {
    return arith::ConstantIndexOp::create(b, loc, i).getResult();
  };
  Value code = memref::LoadOp::create(b, loc, g, ValueRange{idx(0)});
  Value zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
  Value failed =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, code, zero);
  scf::IfOp::create(b, loc, failed, [&](OpBuilder &tb, Location tl) {
    SmallVector<Value> args;
    args.push_back(arith::SubIOp::create(
        tb, tl, code,
        arith::ConstantOp::create(tb, tl, tb.getI64IntegerAttr(1))));
    for (int64_t i = 1; i < 5; ++i)
      args.push_back(memref::LoadOp::create(
          tb, tl, g, ValueRange{arith::ConstantIndexOp::create(tb, tl, i)}));
    memref::StoreOp::create(
        tb, tl, arith::ConstantOp::create(tb, tl, tb.getI64IntegerAttr(0)), g,
        ValueRange{arith::ConstantIndexOp::create(tb, tl, 0)});
    func::CallOp::create(tb, tl, fail, args);
    scf::YieldOp::create(tb, tl);
  });
}

//===----------------------------------------------------------------------===//
// Kernels that synchronize their threads: work-item loops between barriers.
//===----------------------------------------------------------------------===//

/// Whether `op` is a point where the threads of a block (gpu.barrier) or of
/// a warp (gpu.shuffle) exchange data.
static bool isSyncOp(Operation *op) {
  return isa<gpu::BarrierOp, gpu::ShuffleOp>(op);
}

/// Whether `op` is or contains a synchronization point.
static Operation *findSync(Operation *op) {
  Operation *found = nullptr;
  op->walk([&](Operation *inner) {
    if (!isSyncOp(inner))
      return WalkResult::advance();
    found = inner;
    return WalkResult::interrupt();
  });
  return found;
}

/// Whether `launch` needs the work-item loops: a barrier, a shuffle, a lane
/// or subgroup id, or shared or private memory.
static bool needsFission(gpu::LaunchOp launch) {
  if (!launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty() ||
      launch.getDynamicSharedMemorySize())
    return true;
  return launch.getBody()
      .walk([](Operation *op) {
        return isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::LaneIdOp,
                   gpu::SubgroupIdOp, gpu::NumSubgroupsOp, gpu::SubgroupSizeOp,
                   gpu::DynamicSharedMemoryOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether a per-thread value of type `t` can be kept in a host array.
static bool isSpillable(Type t) {
  return isa<IntegerType, IndexType, FloatType, VectorType>(t);
}

/// `t` without a gpu address space (workgroup and private buffers live on
/// the host stack).
static Type stripAddressSpace(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (!m || !isa_and_nonnull<gpu::AddressSpaceAttr>(m.getMemorySpace()))
    return t;
  return MemRefType::get(m.getShape(), m.getElementType(), m.getLayout());
}

namespace {
/// The threads of one synchronization interval: shuffles whose results it
/// starts with, the ops it runs, and the stores it ends with (value, host
/// array indexed by the linear thread id).
struct Segment {
  SmallVector<gpu::ShuffleOp> reads;
  SmallVector<Operation *> ops;
  SmallVector<std::pair<Value, Value>> stores;
  /// Uses of values of this segment that its stores serve.
  DenseSet<OpOperand *> covered;
};

/// One loop nest over the threads of a block (z, y, x).
struct ThreadLoops {
  OpBuilder b;
  Value lin; // (tz * ny + ty) * nx + tx
  IRMapping map;
};

/// Emits one gpu.launch as work-item loops (the file comment). Host arrays
/// are `memref<?xT>` of the block's thread count, indexed by the linear
/// thread id `(tz * ny + ty) * nx + tx`, stack buffers allocated once per
/// launch before the block loops (between llvm.intr.stacksave and
/// stackrestore).
class BlockFission {
public:
  explicit BlockFission(gpu::LaunchOp launch)
      : launch(launch), body(launch.getBody().front()), loc(launch.getLoc()),
        allocB(launch.getContext()) {}

  /// Emits the loops for `launch` at `b` (before the launch, which the
  /// caller erases); emits an error naming the op and fails for what
  /// cannot be emulated exactly (the pass description). Rewrites the
  /// launch body in place first (ids as block arguments).
  LogicalResult run(OpBuilder &b);

private:
  LogicalResult normalize();
  void computeVarying();
  LogicalResult emitLevel(Block &blk, OpBuilder &hb,
                          ArrayRef<std::pair<Value, Value>> finalStores);
  LogicalResult flush(Segment &seg, OpBuilder &hb, Block &blk, bool last);
  LogicalResult emitFor(scf::ForOp f, Operation *sync, Segment &cur,
                        OpBuilder &hb, Block &blk);
  LogicalResult emitIf(scf::IfOp f, Operation *sync, Segment &cur,
                       OpBuilder &hb, Block &blk);
  ThreadLoops openThreadLoops(OpBuilder &hb);
  void emitShuffleRead(ThreadLoops &t, gpu::ShuffleOp s);
  Value materialize(ThreadLoops &t, Value v);
  Value materializeHost(OpBuilder &hb, Value v, IRMapping &local);
  bool isRemat(Value v);
  bool isInKernel(Value v) {
    return launch.getBody().isAncestor(v.getParentRegion());
  }
  Value newSlot(Type t);
  InFlightDiagnostic threadDependent(Operation *ctl, Operation *sync,
                                     StringRef what);

  gpu::LaunchOp launch;
  Block &body;
  Location loc;
  OpBuilder allocB; // before the block loops: the host arrays
  Value c0, c1, numThreads;
  Value blockSize[3]; // z, y, x
  Value threadArgs[3];
  IRMapping host; // kernel values with one host value for the whole block
  DenseMap<Value, Value> slots;          // per-thread values: host arrays
  DenseMap<Operation *, Value> exchange; // shuffle: its exchange array
  /// Private attribution: (i8 buffer of all threads, bytes per thread).
  DenseMap<Value, std::pair<Value, int64_t>> privateBufs;
  DenseSet<Value> varying; // depends on the thread id
  DenseMap<Value, bool> rematCache;
};
} // namespace

/// The error for `sync` under `ctl`, whose `what` (bounds, condition)
/// depends on the thread id.
InFlightDiagnostic
BlockFission::threadDependent(Operation *ctl, Operation *sync, StringRef what) {
  bool shuffle = isa<gpu::ShuffleOp>(sync);
  InFlightDiagnostic diag =
      ctl->emitError("cannot emulate '")
      << sync->getName() << "' under thread-dependent control flow: " << what
      << " on the thread id ("
      << (shuffle ? "every lane of a warp must reach the same shuffle"
                  : "every thread of a block must reach the same barrier")
      << ")";
  diag.attachNote(sync->getLoc()) << "the " << sync->getName() << " is here";
  return diag;
}

/// Ids, extents and lane/subgroup ids as the launch's block arguments and
/// arithmetic on them; one gpu.dynamic_shared_memory at the top; any other
/// gpu op is refused.
LogicalResult BlockFission::normalize() {
  gpu::KernelDim3 tid = launch.getThreadIds(), bid = launch.getBlockIds();
  gpu::KernelDim3 grid = launch.getGridSize(), blk = launch.getBlockSize();
  auto pick = [](gpu::KernelDim3 d, gpu::Dimension dim) -> Value {
    return dim == gpu::Dimension::x   ? d.x
           : dim == gpu::Dimension::y ? d.y
                                      : d.z;
  };
  SmallVector<Operation *> ops;
  body.walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "gpu")
      ops.push_back(op);
  });
  gpu::DynamicSharedMemoryOp dsm;
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location l = op->getLoc();
    auto linear = [&]() -> Value {
      Value zy = arith::AddIOp::create(
          b, l, arith::MulIOp::create(b, l, tid.z, blk.y), tid.y);
      return arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, zy, blk.x),
                                   tid.x);
    };
    auto idx = [&](int64_t i) -> Value {
      return arith::ConstantIndexOp::create(b, l, i);
    };
    Value repl;
    if (auto o = dyn_cast<gpu::ThreadIdOp>(op))
      repl = pick(tid, o.getDimension());
    else if (auto o = dyn_cast<gpu::BlockIdOp>(op))
      repl = pick(bid, o.getDimension());
    else if (auto o = dyn_cast<gpu::GridDimOp>(op))
      repl = pick(grid, o.getDimension());
    else if (auto o = dyn_cast<gpu::BlockDimOp>(op))
      repl = pick(blk, o.getDimension());
    else if (auto o = dyn_cast<gpu::GlobalIdOp>(op))
      repl = arith::AddIOp::create(
          b, l,
          arith::MulIOp::create(b, l, pick(bid, o.getDimension()),
                                pick(blk, o.getDimension())),
          pick(tid, o.getDimension()));
    else if (isa<gpu::LaneIdOp>(op))
      repl = arith::RemUIOp::create(b, l, linear(), idx(kWarpSize));
    else if (isa<gpu::SubgroupIdOp>(op))
      repl = arith::DivUIOp::create(b, l, linear(), idx(kWarpSize));
    else if (isa<gpu::SubgroupSizeOp>(op))
      repl = idx(kWarpSize);
    else if (isa<gpu::NumSubgroupsOp>(op))
      repl = arith::CeilDivUIOp::create(
          b, l,
          arith::MulIOp::create(b, l, arith::MulIOp::create(b, l, blk.x, blk.y),
                                blk.z),
          idx(kWarpSize));
    else if (auto o = dyn_cast<gpu::DynamicSharedMemoryOp>(op)) {
      if (!dsm) {
        OpBuilder top = OpBuilder::atBlockBegin(&body);
        dsm = gpu::DynamicSharedMemoryOp::create(top, l, o.getType());
      }
      if (o.getType() != dsm.getType())
        return o.emitError("cannot emulate gpu.dynamic_shared_memory "
                           "of two types");
      repl = dsm;
    } else if (isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::TerminatorOp>(op))
      continue;
    else
      return op->emitError("cannot emulate '")
             << op->getName() << "' (barriers, shuffles and shared memory "
             << "are emulated; reductions across threads only through "
             << "gpu.shuffle)";
    op->getResult(0).replaceAllUsesWith(repl);
    op->erase();
  }
  WalkResult bad = body.walk([&](memref::GetGlobalOp g) {
    if (!isa_and_nonnull<gpu::AddressSpaceAttr>(g.getType().getMemorySpace()))
      return WalkResult::advance();
    g.emitError("cannot emulate a global in a gpu address space (use a "
                "workgroup attribution)");
    return WalkResult::interrupt();
  });
  return failure(bad.wasInterrupted());
}

/// The values that depend on the thread id: thread ids, shuffle results,
/// atomics, per-thread memory, and what is computed from them (data flow
/// and the control flow of scf.for/scf.if). A load from an address that
/// does not depend on the thread id is the same for every thread (a
/// race-free kernel).
void BlockFission::computeVarying() {
  for (Value v : threadArgs)
    varying.insert(v);
  for (BlockArgument a : launch.getPrivateAttributions())
    varying.insert(a);
  bool changed = true;
  auto mark = [&](Value v) {
    if (varying.insert(v).second)
      changed = true;
  };
  auto isVarying = [&](Value v) { return varying.contains(v); };
  while (changed) {
    changed = false;
    body.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::ShuffleOp, memref::AllocaOp, memref::AllocOp,
              memref::AtomicRMWOp, memref::GenericAtomicRMWOp>(op)) {
        for (Value r : op->getResults())
          mark(r);
        return;
      }
      if (auto f = dyn_cast<scf::ForOp>(op)) {
        bool ctl = isVarying(f.getLowerBound()) ||
                   isVarying(f.getUpperBound()) || isVarying(f.getStep());
        if (ctl)
          mark(f.getInductionVar());
        auto yield = cast<scf::YieldOp>(f.getBody()->getTerminator());
        for (unsigned i = 0; i < f.getNumResults(); ++i)
          if (ctl || isVarying(f.getInitArgs()[i]) ||
              isVarying(yield.getOperand(i))) {
            mark(f.getRegionIterArgs()[i]);
            mark(f.getResult(i));
          }
        return;
      }
      if (auto i = dyn_cast<scf::IfOp>(op)) {
        bool ctl = isVarying(i.getCondition());
        for (unsigned k = 0; k < i.getNumResults(); ++k)
          if (ctl || isVarying(i.thenYield().getOperand(k)) ||
              isVarying(i.elseYield().getOperand(k)))
            mark(i.getResult(k));
        return;
      }
      if (op->getNumRegions() != 0) {
        bool any = llvm::any_of(op->getOperands(), isVarying);
        op->walk([&](Operation *inner) {
          any = any || llvm::any_of(inner->getOperands(), isVarying) ||
                llvm::any_of(inner->getResults(), isVarying);
        });
        if (!any)
          return;
        for (Value r : op->getResults())
          mark(r);
        for (Region &r : op->getRegions())
          for (Block &b : r)
            for (BlockArgument a : b.getArguments())
              mark(a);
        return;
      }
      if (llvm::any_of(op->getOperands(), isVarying))
        for (Value r : op->getResults())
          mark(r);
    });
  }
}

/// Whether `v` is recomputed where it is used rather than kept per thread:
/// ids, constants and side-effect-free ops without regions on such values.
bool BlockFission::isRemat(Value v) {
  if (!isInKernel(v) || host.contains(v) || llvm::is_contained(threadArgs, v) ||
      privateBufs.count(v))
    return true;
  auto it = rematCache.find(v);
  if (it != rematCache.end())
    return it->second;
  Operation *op = v.getDefiningOp();
  bool remat =
      op && op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
      !isa<gpu::ShuffleOp>(op) &&
      llvm::all_of(op->getOperands(), [&](Value o) { return isRemat(o); });
  rematCache[v] = remat;
  return remat;
}

/// A new host array of `t` per thread (before the block loops).
Value BlockFission::newSlot(Type t) {
  return memref::AllocaOp::create(allocB, loc,
                                  MemRefType::get({ShapedType::kDynamic}, t),
                                  ValueRange{numThreads});
}

/// A loop nest over the threads of a block at `hb` (z, y, x); thread ids
/// map to its induction variables.
ThreadLoops BlockFission::openThreadLoops(OpBuilder &hb) {
  ThreadLoops t{hb, Value(), IRMapping()};
  Value ivs[3];
  for (int i = 0; i < 3; ++i) {
    auto loop = scf::ForOp::create(t.b, loc, c0, blockSize[i], c1);
    ivs[i] = loop.getInductionVar();
    t.b.setInsertionPoint(loop.getBody()->getTerminator());
    t.map.map(threadArgs[i], ivs[i]);
  }
  Value zy = arith::AddIOp::create(
      t.b, loc, arith::MulIOp::create(t.b, loc, ivs[0], blockSize[1]), ivs[1]);
  t.lin = arith::AddIOp::create(
      t.b, loc, arith::MulIOp::create(t.b, loc, zy, blockSize[2]), ivs[2]);
  return t;
}

/// `v` in the thread of `t`: mapped, a host value, this thread's slice of
/// a private attribution, a load of its host array, or recomputed.
Value BlockFission::materialize(ThreadLoops &t, Value v) {
  if (Value m = t.map.lookupOrNull(v))
    return m;
  if (Value h = host.lookupOrNull(v))
    return h;
  if (!isInKernel(v))
    return v;
  auto priv = privateBufs.find(v);
  if (priv != privateBufs.end()) {
    Value shift = arith::MulIOp::create(
        t.b, loc, t.lin,
        arith::ConstantIndexOp::create(t.b, loc, priv->second.second));
    Value view =
        memref::ViewOp::create(t.b, loc, stripAddressSpace(v.getType()),
                               priv->second.first, shift, ValueRange{});
    t.map.map(v, view);
    return view;
  }
  auto slot = slots.find(v);
  if (slot != slots.end()) {
    Value l = memref::LoadOp::create(t.b, loc, slot->second, t.lin);
    t.map.map(v, l);
    return l;
  }
  assert(isRemat(v) && "a per-thread value without a host array");
  Operation *op = v.getDefiningOp();
  for (Value o : op->getOperands())
    t.map.map(o, materialize(t, o));
  t.b.clone(*op, t.map);
  return t.map.lookup(v);
}

/// `v`, which does not depend on the thread id, at the host level `hb`
/// (bounds and conditions of block-uniform control flow).
Value BlockFission::materializeHost(OpBuilder &hb, Value v, IRMapping &local) {
  if (Value m = local.lookupOrNull(v))
    return m;
  if (Value h = host.lookupOrNull(v))
    return h;
  if (!isInKernel(v))
    return v;
  assert(!varying.contains(v) && "a thread-dependent value on the host");
  auto slot = slots.find(v);
  if (slot != slots.end()) {
    // The same in every thread: thread 0's.
    Value l = memref::LoadOp::create(hb, loc, slot->second, c0);
    local.map(v, l);
    return l;
  }
  assert(isRemat(v) && "a block-uniform value without a host array");
  Operation *op = v.getDefiningOp();
  for (Value o : op->getOperands())
    local.map(o, materializeHost(hb, o, local));
  hb.clone(*op, local);
  return local.lookup(v);
}

/// The result of `s` in the thread of `t`, as the NVVM lowering of
/// gpu.shuffle executes it (shfl.sync with member mask
/// `0xffffffff >> (32 - width)` and clamp `width - 1`, or `32 - width` for
/// `up`, no segment mask; PTX ISA, shfl.sync): source lane j = lane ^ off,
/// lane + off, lane - off or off (mod 32); valid when j <= clamp (j >=
/// clamp for up). A lane or source outside the member mask (>= width) or
/// past the end of the block (undefined on the GPU) is invalid too; an
/// invalid lane gets its own value.
void BlockFission::emitShuffleRead(ThreadLoops &t, gpu::ShuffleOp s) {
  OpBuilder &b = t.b;
  Type i32 = b.getI32Type();
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  Value off = materialize(t, s.getOffset());
  Value width = materialize(t, s.getWidth());
  Value laneIdx = arith::RemUIOp::create(
      b, loc, t.lin, arith::ConstantIndexOp::create(b, loc, kWarpSize));
  Value base = arith::SubIOp::create(b, loc, t.lin, laneIdx);
  Value lane = arith::IndexCastOp::create(b, loc, i32, laneIdx);
  Value bval = arith::AndIOp::create(b, loc, off, cst(31));
  bool up = s.getMode() == gpu::ShuffleMode::UP;
  Value clamp = up ? arith::SubIOp::create(b, loc, cst(32), width)
                   : arith::SubIOp::create(b, loc, width, cst(1));
  clamp = arith::AndIOp::create(b, loc, clamp, cst(31));
  Value j;
  switch (s.getMode()) {
  case gpu::ShuffleMode::XOR:
    j = arith::XOrIOp::create(b, loc, lane, bval);
    break;
  case gpu::ShuffleMode::DOWN:
    j = arith::AddIOp::create(b, loc, lane, bval);
    break;
  case gpu::ShuffleMode::UP:
    j = arith::SubIOp::create(b, loc, lane, bval);
    break;
  case gpu::ShuffleMode::IDX:
    j = bval;
    break;
  }
  using P = arith::CmpIPredicate;
  auto cmp = [&](P p, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  Value valid = up ? cmp(P::sge, j, clamp) : cmp(P::sle, j, clamp);
  // Member mask: lanes [0, width).
  valid = arith::AndIOp::create(b, loc, valid, cmp(P::slt, j, width));
  valid = arith::AndIOp::create(b, loc, valid, cmp(P::slt, lane, width));
  Value srcIdx = arith::AddIOp::create(
      b, loc, base, arith::IndexCastOp::create(b, loc, b.getIndexType(), j));
  valid = arith::AndIOp::create(b, loc, valid, cmp(P::ult, srcIdx, numThreads));
  Value src = arith::SelectOp::create(b, loc, valid, srcIdx, t.lin);
  Value r = memref::LoadOp::create(b, loc, exchange.lookup(s), src);
  t.map.map(s.getShuffleResult(), r);
  t.map.map(s.getValid(), valid);
}

/// One thread loop nest for `seg`; the values it defines that a later
/// segment (or an op of `blk` outside `seg`) uses are stored in host
/// arrays, except those recomputed where used.
LogicalResult BlockFission::flush(Segment &seg, OpBuilder &hb, Block &blk,
                                  bool last) {
  if (seg.reads.empty() && seg.ops.empty() && seg.stores.empty())
    return success();
  ThreadLoops t = openThreadLoops(hb);
  for (gpu::ShuffleOp s : seg.reads)
    emitShuffleRead(t, s);
  for (Operation *op : seg.ops) {
    SetVector<Value> used;
    getUsedValuesDefinedAbove(op->getRegions(), used);
    used.insert(op->operand_begin(), op->operand_end());
    for (Value v : used)
      t.map.map(v, materialize(t, v));
    t.b.clone(*op, t.map);
  }
  SmallVector<Value> values;
  for (auto [v, slot] : seg.stores)
    values.push_back(materialize(t, v));
  for (auto [value, store] : llvm::zip(values, seg.stores))
    memref::StoreOp::create(t.b, loc, value, store.second, t.lin);
  // Per-thread values that outlive the segment.
  DenseSet<Operation *> inSeg(seg.ops.begin(), seg.ops.end());
  SmallVector<Value> defined;
  for (gpu::ShuffleOp s : seg.reads)
    defined.append(s->result_begin(), s->result_end());
  for (Operation *op : seg.ops)
    defined.append(op->result_begin(), op->result_end());
  for (Value r : defined) {
    if (isRemat(r) || slots.count(r))
      continue;
    bool escapes = llvm::any_of(r.getUses(), [&](OpOperand &use) {
      Operation *anc = blk.findAncestorOpInBlock(*use.getOwner());
      if (!anc)
        return true;
      if (anc == blk.getTerminator())
        return !last;
      if (seg.covered.contains(&use))
        return false;
      return !inSeg.contains(anc);
    });
    if (!escapes)
      continue;
    if (!isSpillable(r.getType()))
      return r.getDefiningOp()->emitError("cannot emulate: a value of type ")
             << r.getType()
             << " is used across a gpu.barrier or gpu.shuffle (only "
                "integers, floats and vectors are kept per thread)";
    Value slot = newSlot(r.getType());
    slots[r] = slot;
    memref::StoreOp::create(t.b, loc, t.map.lookup(r), slot, t.lin);
  }
  return success();
}

/// A block-uniform scf.for around a barrier or shuffle: a host loop around
/// the segments of its body; iteration values in host arrays.
LogicalResult BlockFission::emitFor(scf::ForOp f, Operation *sync, Segment &cur,
                                    OpBuilder &hb, Block &blk) {
  for (Value v : {f.getLowerBound(), f.getUpperBound(), f.getStep()})
    if (varying.contains(v))
      return threadDependent(f, sync, "the bounds of this 'scf.for' depend");
  auto yield = cast<scf::YieldOp>(f.getBody()->getTerminator());
  SmallVector<std::pair<Value, Value>> yields;
  for (unsigned i = 0; i < f.getNumResults(); ++i) {
    Type t = f.getResult(i).getType();
    if (!isSpillable(t))
      return f.emitError("cannot emulate an scf.for with a barrier or "
                         "shuffle that carries a value of type ")
             << t;
    Value slot = newSlot(t);
    cur.stores.push_back({f.getInitArgs()[i], slot});
    cur.covered.insert(&f.getInitArgsMutable()[i]);
    slots[f.getRegionIterArgs()[i]] = slot;
    slots[f.getResult(i)] = slot;
    yields.push_back({yield.getOperand(i), slot});
  }
  if (failed(flush(cur, hb, blk, /*last=*/false)))
    return failure();
  cur = Segment();
  IRMapping local;
  Value lb = materializeHost(hb, f.getLowerBound(), local);
  Value ub = materializeHost(hb, f.getUpperBound(), local);
  Value step = materializeHost(hb, f.getStep(), local);
  auto loop = scf::ForOp::create(hb, f.getLoc(), lb, ub, step);
  host.map(f.getInductionVar(), loop.getInductionVar());
  OpBuilder inner(loop.getBody()->getTerminator());
  return emitLevel(*f.getBody(), inner, yields);
}

/// A block-uniform scf.if around a barrier or shuffle: a host branch
/// around the segments of each region; results in host arrays.
LogicalResult BlockFission::emitIf(scf::IfOp op, Operation *sync, Segment &cur,
                                   OpBuilder &hb, Block &blk) {
  if (varying.contains(op.getCondition()))
    return threadDependent(op, sync, "the condition of this 'scf.if' depends");
  SmallVector<std::pair<Value, Value>> thenYields, elseYields;
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    Type t = op.getResult(i).getType();
    if (!isSpillable(t))
      return op.emitError("cannot emulate an scf.if with a barrier or "
                          "shuffle that yields a value of type ")
             << t;
    Value slot = newSlot(t);
    slots[op.getResult(i)] = slot;
    thenYields.push_back({op.thenYield().getOperand(i), slot});
    elseYields.push_back({op.elseYield().getOperand(i), slot});
  }
  if (failed(flush(cur, hb, blk, /*last=*/false)))
    return failure();
  cur = Segment();
  IRMapping local;
  Value cond = materializeHost(hb, op.getCondition(), local);
  bool hasElse = !op.getElseRegion().empty();
  auto hostIf = scf::IfOp::create(hb, op.getLoc(), cond, hasElse);
  OpBuilder thenB(hostIf.thenBlock()->getTerminator());
  if (failed(emitLevel(*op.thenBlock(), thenB, thenYields)))
    return failure();
  if (!hasElse)
    return success();
  OpBuilder elseB(hostIf.elseBlock()->getTerminator());
  return emitLevel(*op.elseBlock(), elseB, elseYields);
}

/// The ops of `blk` (the kernel body or the body of a block-uniform
/// scf.for/scf.if) at `hb`: thread loop nests between synchronization
/// points; `finalStores` end the last one (the values `blk` yields).
LogicalResult
BlockFission::emitLevel(Block &blk, OpBuilder &hb,
                        ArrayRef<std::pair<Value, Value>> finalStores) {
  Segment cur;
  SmallVector<Operation *> ops;
  for (Operation &op : blk.without_terminator())
    ops.push_back(&op);
  for (size_t i = 0; i < ops.size(); ++i) {
    Operation *op = ops[i];
    if (isa<gpu::DynamicSharedMemoryOp>(op))
      continue;
    if (isa<gpu::BarrierOp>(op)) {
      if (failed(flush(cur, hb, blk, /*last=*/false)))
        return failure();
      cur = Segment();
      continue;
    }
    if (auto s = dyn_cast<gpu::ShuffleOp>(op)) {
      // Adjacent independent shuffles (and barriers) share one exchange.
      SmallVector<gpu::ShuffleOp> group{s};
      DenseSet<Value> results(s->result_begin(), s->result_end());
      size_t j = i + 1;
      for (; j < ops.size(); ++j) {
        if (isa<gpu::BarrierOp>(ops[j]))
          continue;
        auto next = dyn_cast<gpu::ShuffleOp>(ops[j]);
        if (!next || llvm::any_of(next->getOperands(),
                                  [&](Value v) { return results.contains(v); }))
          break;
        group.push_back(next);
        results.insert(next->result_begin(), next->result_end());
      }
      i = j - 1;
      for (gpu::ShuffleOp g : group) {
        Value x = newSlot(g.getValue().getType());
        exchange[g] = x;
        // The exchange array holds every thread's value: a value of this
        // segment used later needs no other array.
        if (!slots.count(g.getValue()) && !isRemat(g.getValue()))
          slots[g.getValue()] = x;
        cur.stores.push_back({g.getValue(), x});
        cur.covered.insert(&g->getOpOperand(0));
      }
      if (failed(flush(cur, hb, blk, /*last=*/false)))
        return failure();
      cur = Segment();
      cur.reads = group;
      continue;
    }
    if (Operation *sync = findSync(op)) {
      LogicalResult r =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case(
                  [&](scf::ForOp f) { return emitFor(f, sync, cur, hb, blk); })
              .Case([&](scf::IfOp f) { return emitIf(f, sync, cur, hb, blk); })
              .Default([&](Operation *) {
                InFlightDiagnostic d =
                    op->emitError("cannot emulate '")
                    << sync->getName() << "' inside '" << op->getName()
                    << "' (only block-uniform scf.for and scf.if)";
                d.attachNote(sync->getLoc())
                    << "the " << sync->getName() << " is here";
                return d;
              });
      if (failed(r))
        return failure();
      continue;
    }
    cur.ops.push_back(op);
  }
  cur.stores.append(finalStores.begin(), finalStores.end());
  return flush(cur, hb, blk, /*last=*/true);
}

LogicalResult BlockFission::run(OpBuilder &b) {
  if (!launch.getBody().hasOneBlock())
    return launch.emitError("cannot emulate a kernel with more than one "
                            "block in its body");
  gpu::KernelDim3 tids = launch.getThreadIds();
  threadArgs[0] = tids.z;
  threadArgs[1] = tids.y;
  threadArgs[2] = tids.x;
  if (failed(normalize()))
    return failure();
  computeVarying();

  c0 = arith::ConstantIndexOp::create(b, loc, 0);
  c1 = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  gpu::KernelDim3 gridArgs = launch.getGridSize();
  gpu::KernelDim3 blockArgs = launch.getBlockSize();
  gpu::KernelDim3 bids = launch.getBlockIds();
  host.map(gridArgs.x, grid.x);
  host.map(gridArgs.y, grid.y);
  host.map(gridArgs.z, grid.z);
  host.map(blockArgs.x, block.x);
  host.map(blockArgs.y, block.y);
  host.map(blockArgs.z, block.z);
  blockSize[0] = block.z;
  blockSize[1] = block.y;
  blockSize[2] = block.x;
  numThreads = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, block.x, block.y), block.z);
  // The host arrays live on the stack of the host function for the
  // launch only.
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value stack = LLVM::StackSaveOp::create(b, loc, ptr);

  // Block loops, z to x; the host arrays go before them.
  Value bounds[3] = {grid.z, grid.y, grid.x};
  Value ids[3] = {bids.z, bids.y, bids.x};
  OpBuilder inner = b;
  Operation *outer = nullptr;
  for (int i = 0; i < 3; ++i) {
    auto loop = scf::ForOp::create(inner, loc, c0, bounds[i], c1);
    if (!outer)
      outer = loop;
    host.map(ids[i], loop.getInductionVar());
    inner.setInsertionPoint(loop.getBody()->getTerminator());
  }
  allocB.setInsertionPoint(outer);

  for (BlockArgument a : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(stripAddressSpace(a.getType()));
    if (!type.hasStaticShape())
      return launch.emitError("cannot emulate a workgroup attribution of "
                              "dynamic shape ")
             << a.getType();
    host.map(a, memref::AllocaOp::create(allocB, loc, type,
                                         allocB.getI64IntegerAttr(16)));
  }
  for (BlockArgument a : launch.getPrivateAttributions()) {
    auto type = cast<MemRefType>(stripAddressSpace(a.getType()));
    Type elem = type.getElementType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !elem.isIntOrFloat() || elem.getIntOrFloatBitWidth() % 8 != 0)
      return launch.emitError("cannot emulate a private attribution of "
                              "type ")
             << a.getType();
    int64_t bytes = std::max<int64_t>(
        type.getNumElements() * elem.getIntOrFloatBitWidth() / 8, 1);
    bytes = (bytes + 15) / 16 * 16;
    Value total = arith::MulIOp::create(
        allocB, loc, numThreads,
        arith::ConstantIndexOp::create(allocB, loc, bytes));
    Value buf = memref::AllocaOp::create(
        allocB, loc,
        MemRefType::get({ShapedType::kDynamic}, allocB.getI8Type()),
        ValueRange{total}, allocB.getI64IntegerAttr(16));
    privateBufs[a] = {buf, bytes};
  }
  if (!body.empty())
    if (auto dsm = dyn_cast<gpu::DynamicSharedMemoryOp>(body.front())) {
      Value size = launch.getDynamicSharedMemorySize();
      Value bytes = size ? arith::IndexCastUIOp::create(
                               allocB, loc, allocB.getIndexType(), size)
                               .getResult()
                         : c0;
      host.map(dsm.getResult(),
               memref::AllocaOp::create(
                   allocB, loc,
                   cast<MemRefType>(stripAddressSpace(dsm.getType())),
                   ValueRange{bytes}, allocB.getI64IntegerAttr(16)));
    }

  if (failed(emitLevel(body, inner, {})))
    return failure();
  b.setInsertionPointAfter(outer);
  LLVM::StackRestoreOp::create(b, loc, stack);

  // Workgroup and private buffers are host memory now.
  WalkResult left = outer->walk([&](Operation *op) {
    for (Value r : op->getResults())
      r.setType(stripAddressSpace(r.getType()));
    for (Region &region : op->getRegions())
      for (Block &blk : region)
        for (BlockArgument a : blk.getArguments())
          a.setType(stripAddressSpace(a.getType()));
    if (op->getDialect() && op->getDialect()->getNamespace() == "gpu") {
      op->emitError("cannot emulate '") << op->getName() << "'";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(left.wasInterrupted());
}

/// Replaces `launch` by host loops over its blocks and threads; with a
/// device error word, reads it after the loops.
static LogicalResult emulate(gpu::LaunchOp launch, memref::GlobalOp word,
                             func::FuncOp fail) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.hasClusterSize())
    return launch.emitError("cannot emulate an asynchronous launch or a "
                            "cluster");
  if (needsFission(launch)) {
    OpBuilder b(launch);
    BlockFission fission(launch);
    if (failed(fission.run(b)))
      return failure();
    if (word) {
      b.setInsertionPointAfter(launch);
      readErrorWord(b, launch.getLoc(), word, fail);
    }
    launch.erase();
    return success();
  }
  // Without synchronization: one loop nest, the body cloned once.
  Region &body = launch.getBody();
  if (!body.hasOneBlock())
    return launch.emitError("cannot emulate a kernel with more than one "
                            "block in its body");
  WalkResult refused = body.walk([&](Operation *op) {
    if (op->getName().getStringRef().starts_with("gpu.subgroup") ||
        isa<gpu::AllReduceOp>(op)) {
      op->emitError("cannot emulate '")
          << op->getName()
          << "' (barriers, shuffles and shared memory are emulated; "
             "reductions across threads only through gpu.shuffle)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (refused.wasInterrupted())
    return failure();
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  gpu::KernelDim3 gridArgs = launch.getGridSize();
  gpu::KernelDim3 blockArgs = launch.getBlockSize();
  IRMapping map;
  map.map(gridArgs.x, grid.x);
  map.map(gridArgs.y, grid.y);
  map.map(gridArgs.z, grid.z);
  map.map(blockArgs.x, block.x);
  map.map(blockArgs.y, block.y);
  map.map(blockArgs.z, block.z);
  // Loops outermost first: block z, y, x, then thread z, y, x.
  Value bounds[6] = {grid.z, grid.y, grid.x, block.z, block.y, block.x};
  Value ids[6] = {blockIds.z,  blockIds.y,  blockIds.x,
                  threadIds.z, threadIds.y, threadIds.x};
  OpBuilder inner = b;
  for (int i = 0; i < 6; ++i) {
    auto loop = scf::ForOp::create(inner, loc, c0, bounds[i], c1);
    map.map(ids[i], loop.getInductionVar());
    inner.setInsertionPoint(loop.getBody()->getTerminator());
  }
  Block &kernel = body.front();
  for (Operation &op : kernel.without_terminator())
    inner.clone(op, map);
  // Ids and extents read through ops rather than block arguments.
  Operation *firstLoop = c1.getDefiningOp()->getNextNode();
  WalkResult bad = firstLoop->walk([&](Operation *op) {
    auto dimOf = [](gpu::Dimension d) { return static_cast<int>(d); };
    Value repl;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      repl = map.lookup(ids[2 - dimOf(id.getDimension())]);
    else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      repl = map.lookup(ids[5 - dimOf(id.getDimension())]);
    else if (auto d = dyn_cast<gpu::GridDimOp>(op))
      repl = bounds[2 - dimOf(d.getDimension())];
    else if (auto d = dyn_cast<gpu::BlockDimOp>(op))
      repl = bounds[5 - dimOf(d.getDimension())];
    else if (op->getDialect() && op->getDialect()->getNamespace() == "gpu" &&
             !isa<gpu::TerminatorOp>(op)) {
      op->emitError("cannot emulate '") << op->getName() << "'";
      return WalkResult::interrupt();
    }
    if (repl) {
      op->getResult(0).replaceAllUsesWith(repl);
      op->erase();
    }
    return WalkResult::advance();
  });
  if (bad.wasInterrupted())
    return failure();
  if (word) {
    b.setInsertionPointAfter(launch);
    readErrorWord(b, loc, word, fail);
  }
  launch.erase();
  return success();
}

/// The declaration of `disc_check_failed(id, v0, v1, v2, v3)` in `module`.
static func::FuncOp getOrCreateCheckFailedFn(ModuleOp module) {
  if (auto fail = module.lookupSymbol<func::FuncOp>(disc::kCheckFailedFn))
    return fail;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  SmallVector<Type> args(5, b.getI64Type());
  auto fail = func::FuncOp::create(b, module.getLoc(), disc::kCheckFailedFn,
                                   b.getFunctionType(args, {}));
  fail.setPrivate();
  return fail;
}

/// Device copies become host copies; the stream waits around them vanish.
static void replaceDeviceCopies(ModuleOp module) {
  SmallVector<Operation *> gpuOps;
  module.walk([&](Operation *op) {
    if (isa<gpu::MemcpyOp, gpu::WaitOp>(op))
      gpuOps.push_back(op);
  });
  for (Operation *op : gpuOps) {
    if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
      OpBuilder b(copy);
      memref::CopyOp::create(b, copy.getLoc(), copy.getSrc(), copy.getDst());
    }
  }
  // Erase in reverse so token users go before their producers.
  for (Operation *op : llvm::reverse(gpuOps)) {
    for (Value r : op->getResults())
      r.dropAllUses();
    op->erase();
  }
}

namespace {
struct EmulateLaunchesPass
    : public disc::impl::DiscGpuEmulateLaunchesBase<EmulateLaunchesPass> {
  void runOnOperation() override {
    auto word = getOperation().lookupSymbol<memref::GlobalOp>(
        disc::cuda::kCheckErrorGlobal);
    func::FuncOp fail =
        word ? getOrCreateCheckFailedFn(getOperation()) : nullptr;
    for (gpu::LaunchOp launch : disc::cuda::collectLaunches(getOperation()))
      if (failed(emulate(launch, word, fail)))
        return signalPassFailure();
    replaceDeviceCopies(getOperation());
  }
};
} // namespace
