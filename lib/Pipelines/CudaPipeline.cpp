//===- CudaPipeline.cpp - disc dialect to host code plus CUDA kernels -----===//
//
// The CUDA target (docs/cuda.md). The front is the CPU pipeline's (disc →
// linalg → bufferization); then every linalg op becomes an scf.parallel
// nest, collapsed to one dimension and tiled by the block size, so that a
// launch covers any shape: blocks = ceil(elements / blockSize), threads =
// blockSize, guarded by `index < elements`. A reduction keeps its reduced
// dims as a sequential loop inside each thread. Upstream MLIR does the rest:
// gpu-map-parallel-loops, convert-parallel-loops-to-gpu, gpu-kernel-outlining,
// convert-gpu-to-nvvm, gpu-module-to-binary (PTX, then ptxas into a cubin).
//
//===----------------------------------------------------------------------===//
#include "disc/Pipelines/CudaPipeline.h"

#include "CudaLibraryCallOperands.h"
#include "CudaPasses.h"

#include "disc/Conversion/CudaLibraryCalls.h"
#include "disc/Pipelines/CpuPipeline.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;

namespace {

using disc::describeOnnxNode;
using disc::cuda::viewRoot;

/// Host memory in the compiled code: constants and stack buffers. Every
/// other buffer (entry arguments, memref.alloc through the runtime) is
/// device memory on the CUDA target.
bool isHostMemory(Value memref) {
  Operation *def = viewRoot(memref).getDefiningOp();
  return def && isa<memref::GetGlobalOp, memref::AllocaOp>(def);
}

bool insideDeviceCode(Operation *op) {
  return op->getParentOfType<scf::ParallelOp>() ||
         op->getParentOfType<gpu::LaunchOp>();
}

/// Prepares linalg ops for the GPU mapping: a generic op whose reduction
/// dims come before parallel ones (a reduction over a middle axis) gets its
/// parallel dims moved outermost, so that all of them map to threads (the
/// order in which each output element is accumulated is unchanged); an op
/// without a parallel dim (a full reduction, a rank-0 elementwise op) is
/// wrapped in a one-iteration scf.parallel, so that it, too, runs as a
/// (one-thread) kernel instead of on the host.
struct PrepareLinalgPass
    : public PassWrapper<PrepareLinalgPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrepareLinalgPass)
  StringRef getArgument() const final { return "disc-gpu-prepare-linalg"; }
  StringRef getDescription() const final {
    return "Move parallel dims of linalg.generic outermost; wrap linalg ops "
           "without parallel dims in a one-iteration scf.parallel";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<scf::SCFDialect, arith::ArithDialect>();
  }
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!insideDeviceCode(op))
        generics.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
      SmallVector<unsigned> perm;
      for (unsigned i = 0; i < iters.size(); ++i)
        if (iters[i] == utils::IteratorType::parallel)
          perm.push_back(i);
      for (unsigned i = 0; i < iters.size(); ++i)
        if (iters[i] != utils::IteratorType::parallel)
          perm.push_back(i);
      bool identity = true;
      for (unsigned i = 0; i < perm.size(); ++i)
        identity &= perm[i] == i;
      if (identity)
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, perm))) {
        op.emitError("cannot move the parallel dims outermost");
        return signalPassFailure();
      }
    }
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.getNumParallelLoops() == 0 && !insideDeviceCode(op))
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
      Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
      auto par = scf::ParallelOp::create(b, loc, ValueRange{c0}, ValueRange{c1},
                                         ValueRange{c1});
      op->moveBefore(par.getBody()->getTerminator());
    }
  }
};

/// Collapses every outermost scf.parallel to one dimension and tiles it by
/// `blockSize` with a constant inner bound and an in-bounds guard, so that
/// gpu-map-parallel-loops maps the outer loop to blocks and the inner one to
/// threads. Bounds stay run-time values: one kernel serves every shape.
struct TileParallelLoopsPass
    : public PassWrapper<TileParallelLoopsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TileParallelLoopsPass)
  TileParallelLoopsPass() = default;
  TileParallelLoopsPass(const TileParallelLoopsPass &other)
      : PassWrapper(other) {}
  explicit TileParallelLoopsPass(int64_t size) { blockSize = size; }
  StringRef getArgument() const final { return "disc-gpu-tile-parallel-loops"; }
  StringRef getDescription() const final {
    return "Collapse outermost scf.parallel nests to 1-D and tile them by "
           "the GPU block size";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<scf::SCFDialect, arith::ArithDialect>();
  }
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block"),
                            llvm::cl::init(256)};

  SmallVector<scf::ParallelOp> outermost() {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>() &&
          !op->getParentOfType<gpu::LaunchOp>())
        loops.push_back(op);
    });
    return loops;
  }

  void runOnOperation() override {
    if (blockSize <= 0 || blockSize > 1024) {
      getOperation().emitError("block-size must be in [1, 1024]");
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp op : outermost()) {
      unsigned n = op.getNumLoops();
      if (n <= 1)
        continue;
      std::vector<unsigned> all(n);
      for (unsigned i = 0; i < n; ++i)
        all[i] = i;
      rewriter.setInsertionPoint(op);
      collapseParallelLoops(rewriter, op, {all});
    }
    for (scf::ParallelOp op : outermost()) {
      // A one-iteration loop (disc-gpu-prepare-linalg) stays one thread.
      if (auto ub = getConstantIntValue(op.getUpperBound()[0]))
        if (auto lb = getConstantIntValue(op.getLowerBound()[0]))
          if (*ub - *lb <= 1)
            continue;
      scf::tileParallelLoop(op, {blockSize}, /*noMinMaxBounds=*/true);
    }
  }
};

/// Constants live in model.so's host memory. A kernel that reads one gets
/// the runtime's device copy of it: `func.call @disc_device_constant_<rank>_<k>
/// (%global, %bytes)` (a C-interface function of the model wrapper over
/// `disc_ral_context.device_constant`), which uploads the constant on the
/// session's first request and keeps it, outside the tracked peak, like
/// model.so's constants on the CPU (docs/memory.md).
struct UploadConstantsPass
    : public PassWrapper<UploadConstantsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(UploadConstantsPass)
  StringRef getArgument() const final { return "disc-gpu-upload-constants"; }
  StringRef getDescription() const final {
    return "Copy the constants a gpu.launch reads to device buffers";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect, memref::MemRefDialect, func::FuncDialect,
                    arith::ArithDialect>();
  }
  /// `disc_device_constant_<rank>_<k>(memref<T>, i64 bytes) -> memref<T>`.
  func::FuncOp getOrCreateUploadFn(MemRefType type) {
    auto it = uploadFns.find(type);
    if (it != uploadFns.end())
      return it->second;
    ModuleOp module = getOperation();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    std::string name = "disc_device_constant_" +
                       std::to_string(type.getRank()) + "_" +
                       std::to_string(uploadFns.size());
    auto fn =
        func::FuncOp::create(b, module.getLoc(), name,
                             b.getFunctionType({type, b.getI64Type()}, {type}));
    fn.setPrivate();
    fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    uploadFns[type] = fn;
    return fn;
  }
  llvm::DenseMap<Type, func::FuncOp> uploadFns;

  void runOnOperation() override {
    uploadFns.clear();
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches) {
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(launch.getBody(), captured);
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      llvm::DenseMap<Value, Value> uploaded; // global -> device copy
      for (Value v : captured) {
        if (!isa<MemRefType>(v.getType()))
          continue;
        Value root = viewRoot(v);
        auto global = root.getDefiningOp<memref::GetGlobalOp>();
        if (!global)
          continue;
        Value dev = uploaded.lookup(root);
        if (!dev) {
          auto type = cast<MemRefType>(root.getType());
          int64_t eltBits = type.getElementType().isIndex()
                                ? 64
                                : type.getElementTypeBitWidth();
          if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
            launch.emitError("a kernel reads a constant of type ")
                << type << " that has no device copy";
            return signalPassFailure();
          }
          Value bytes = arith::ConstantOp::create(
              b, loc,
              b.getI64IntegerAttr(type.getNumElements() *
                                  std::max<int64_t>(1, (eltBits + 7) / 8)));
          dev = func::CallOp::create(b, loc, getOrCreateUploadFn(type),
                                     ValueRange{root, bytes})
                    .getResult(0);
          uploaded[root] = dev;
        }
        // Re-take the view chain on the device copy.
        SmallVector<Operation *> chain;
        for (Value cur = v; cur != root;) {
          Operation *def = cur.getDefiningOp();
          chain.push_back(def);
          cur = cast<ViewLikeOpInterface>(def).getViewSource();
        }
        IRMapping map;
        map.map(root, dev);
        Value mapped = dev;
        for (Operation *def : llvm::reverse(chain))
          mapped = b.clone(*def, map)->getResult(0);
        v.replaceUsesWithIf(mapped, [&](OpOperand &use) {
          return launch->isProperAncestor(use.getOwner());
        });
      }
    }
  }
};

/// After the GPU mapping, the host code may only compute sizes and launch
/// kernels. An op that still reads or writes device memory on the host, a
/// library call, or a call inside a kernel (a run-time check) is not
/// supported on the CUDA target yet: the error names the ONNX node.
struct CheckHostAccessPass
    : public PassWrapper<CheckHostAccessPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckHostAccessPass)
  StringRef getArgument() const final { return "disc-gpu-check-host-access"; }
  StringRef getDescription() const final {
    return "Reject host code that touches device memory after GPU mapping";
  }
  CheckHostAccessPass() = default;
  explicit CheckHostAccessPass(bool emulate) : emulate(emulate) {}
  bool emulate = false;
  void runOnOperation() override {
    bool failedAny = false;
    auto reject = [&](Operation *op, const Twine &why) {
      op->emitError() << describeOnnxNode(op)
                      << " is not supported on --target=cuda yet: " << why;
      failedAny = true;
    };
    getOperation().walk([&](func::FuncOp func) {
      func.walk([&](Operation *op) {
        bool inKernel = op->getParentOfType<gpu::LaunchOp>() != nullptr;
        if (inKernel) {
          if (isa<func::CallOp>(op))
            reject(op, "a call inside a kernel (" +
                           cast<func::CallOp>(op).getCallee() +
                           "; run-time checks and library calls run on the "
                           "host)");
          else if (isa<memref::AllocOp>(op))
            reject(op, "an allocation inside a kernel");
          return;
        }
        if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
          llvm::SetVector<Value> captured;
          getUsedValuesDefinedAbove(launch.getBody(), captured);
          for (Value v : captured) {
            if (!isa<MemRefType>(v.getType()) || !isHostMemory(v))
              continue;
            // Emulated kernels run on the host: host memory is readable.
            if (emulate)
              continue;
            reject(launch, "a kernel reads a host stack buffer");
          }
          return;
        }
        if (auto call = dyn_cast<func::CallOp>(op)) {
          // cuBLAS/cuDNN calls run on the host and launch device work on
          // device buffers (CudaLibraryCalls.h).
          if (call.getCallee().starts_with("disc_lib_")) {
            if (llvm::any_of(call.getOperands(), [](Value v) {
                  return isa<MemRefType>(v.getType()) && isHostMemory(v);
                }))
              reject(op, "library call '" + call.getCallee() +
                             "' reads host memory");
            return;
          }
          // Run-time check failures, device copies and slots, and the
          // rematerialization points (evict, regenerate: host-side runtime
          // calls around launches).
          if (call.getCallee() != "disc_check_failed" &&
              call.getCallee() != "disc_device_scratch" &&
              !call.getCallee().starts_with("disc_device_constant_") &&
              !call.getCallee().starts_with("disc_remat_"))
            reject(op, "a call to '" + call.getCallee() +
                           "' (no CUDA lowering for it)");
          return;
        }
        auto touches = [&](Value m) { return !isHostMemory(m); };
        if (auto load = dyn_cast<memref::LoadOp>(op)) {
          if (touches(load.getMemRef()))
            reject(op, "it reads tensor data on the host (" +
                           op->getName().getStringRef() + ")");
        } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
          if (touches(store.getMemRef()))
            reject(op, "it writes tensor data on the host (" +
                           op->getName().getStringRef() + ")");
        } else if (isa<linalg::LinalgOp, memref::CopyOp>(op)) {
          reject(op, "it was not mapped to a kernel (" +
                         op->getName().getStringRef() + ")");
        }
      });
    });
    if (failedAny) {
      // disc-compile exits 2 (unsupported input) rather than 1.
      getOperation()->setAttr("disc.cuda_unsupported",
                              UnitAttr::get(&getContext()));
      signalPassFailure();
    }
  }
};

} // namespace

void mlir::disc::buildDiscCudaPipeline(OpPassManager &pm,
                                       const CudaPipelineOptions &options) {
  CpuPipelineOptions front;
  front.shapePasses = options.shapePasses;
  front.memorySchedule = options.memorySchedule;
  front.fusion = options.fusion;
  // MatMul/Conv through cuBLAS/cuDNN ("cuda"), or generated loops ("none").
  front.libraryCalls = options.libraryCalls;
  buildDiscBufferizedLinalgPipeline(pm, front, /*promoteSmallBuffers=*/false);

  // Shape tensors stay on the host (CudaPlacement.cpp).
  pm.addNestedPass<func::FuncOp>(cuda::createPlaceHostBuffersPass());
  // GPU mapping.
  pm.addNestedPass<func::FuncOp>(std::make_unique<PrepareLinalgPass>());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(
      std::make_unique<TileParallelLoopsPass>(options.blockSize));
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(cuda::createDeviceChecksPass());
  // Emulated kernels read the constants in place.
  if (options.stop != CudaPipelineOptions::Stop::Emulate)
    pm.addPass(std::make_unique<UploadConstantsPass>());
  pm.addNestedPass<func::FuncOp>(createUploadLibraryCallOperandsPass());
  pm.addNestedPass<func::FuncOp>(cuda::createMirrorHostBuffersPass());
  pm.addPass(cuda::createSmallDeviceBuffersPass(
      options.stop == CudaPipelineOptions::Stop::Emulate));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(std::make_unique<CheckHostAccessPass>(
      options.stop == CudaPipelineOptions::Stop::Emulate));
  if (options.stop == CudaPipelineOptions::Stop::AfterMapping)
    return;
  if (options.stop == CudaPipelineOptions::Stop::Emulate) {
    // The mapped kernels as host loops, then the CPU tail (CudaEmulate.cpp).
    pm.addPass(cuda::createEmulateLaunchesPass());
    pm.addPass(createCanonicalizerPass());
    buildDiscCpuLoopsToLLVMPipeline(pm);
    return;
  }

  // Kernels: outline, NVVM, cubin.
  pm.addPass(createConvertMathToFuncs()); // math.ipowi and friends
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createGpuKernelOutliningPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.gpuArch;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(nvvm));
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "bin"; // PTX through ptxas into a cubin
  // The toolkit gives ptxas and libdevice (math functions); without it,
  // MLIR looks for ptxas on PATH.
  binary.toolkitPath = options.cudaPath;
  if (binary.toolkitPath.empty())
    if (const char *env = std::getenv("CUDA_PATH"))
      binary.toolkitPath = env;
  if (binary.toolkitPath.empty() &&
      llvm::sys::fs::exists("/usr/local/cuda/bin/ptxas"))
    binary.toolkitPath = "/usr/local/cuda";
  pm.addPass(createGpuModuleToBinaryPass(binary));

  // Host code: as on CPU, plus gpu.launch_func → runtime calls.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  // Allocations first, through the generic `_mlir_memref_to_llvm_*`
  // functions that the model wrapper routes to the session's (device)
  // allocator: gpu-to-llvm also converts the memref ops it finds, to
  // plain malloc/free, which would put every buffer in host memory.
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::disc::registerDiscCudaPasses() {
  PassRegistration<PrepareLinalgPass>();
  PassRegistration<TileParallelLoopsPass>();
  PassRegistration<UploadConstantsPass>();
  PassRegistration<CheckHostAccessPass>();
  registerUploadLibraryCallOperandsPass();
  registerPass([] { return cuda::createPlaceHostBuffersPass(); });
  registerPass([] { return cuda::createMirrorHostBuffersPass(); });
  registerPass([] { return cuda::createDeviceChecksPass(); });
  registerPass([] { return cuda::createEmulateLaunchesPass(); });
  registerPass([] { return cuda::createSmallDeviceBuffersPass(); });
  PassPipelineRegistration<>(
      "disc-cuda-pipeline",
      "Lower the disc dialect to host LLVM dialect with sm_80 cubins",
      [](OpPassManager &pm) { buildDiscCudaPipeline(pm); });
}

void mlir::disc::registerDiscCudaExtensions(DialectRegistry &registry) {
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}
