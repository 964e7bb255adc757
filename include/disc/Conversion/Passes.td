//===- Passes.td - DISC conversion passes ------------------*- tablegen -*-===//
#ifndef DISC_CONVERSION_PASSES_TD
#define DISC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def DiscLowerToLinalg : Pass<"disc-lower-to-linalg", "ModuleOp"> {
  let summary = "Lower disc ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Rewrites every `disc` op into upstream tensor-level IR: `linalg.generic`
    and named linalg ops, `tensor.empty` destinations sized from
    `ReifyRankedShapedTypeOpInterface`, `tensor.pad`, `tensor.reshape`,
    `tensor.extract`. Dynamic dims that may broadcast at run time (size 1)
    are handled with run-time index selection. An op that cannot be lowered
    is reported with its name and location and the pass fails.

    With `library-calls=onednn`, f32 MatMul/Gemm/Conv become calls into the
    runtime's library module (LibraryCalls.h, docs/runtime-abi.md) on an
    output allocated with `memref.alloc`.
  }];
  let options = [
    Option<"libraryCallsOption", "library-calls", "std::string",
           /*default=*/"\"none\"",
           "Library used for MatMul/Gemm/Conv: onednn, cuda (the calls "
           "of the ops disc-mark-cuda-library-calls marks) or none (linalg)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def DiscMarkLibraryCalls
    : Pass<"disc-mark-library-calls", "::mlir::func::FuncOp"> {
  let summary = "Mark the oneDNN library calls and the post-ops fused into them";
  let description = [{
    For `--library-calls=onednn`: marks each op that `disc-lower-to-linalg`
    turns into a library call (`disc.library_call`) and the bias add,
    residual add and Relu right after it that the call runs as oneDNN
    post-ops (`disc.post_ops` on the call, `disc.fused_into_call` on the
    fused ops; DiscToLinalg/LibraryCalls.h). Runs on the scheduled function
    before the memory model is taken, so the model sees the fused ops as
    in-place and knows where the library calls run.
  }];
}

def DiscMarkCudaLibraryCalls
    : Pass<"disc-mark-cuda-library-calls", "::mlir::func::FuncOp"> {
  let summary = "Mark the cuBLAS/cuDNN library calls of the CUDA target";
  let description = [{
    `disc-mark-library-calls` for `--target=cuda` (`library-calls=cuda`):
    marks the f32 MatMul/Gemm forms and the f32 Conv with symmetric pads
    that run through cuBLAS/cuDNN, and their bias / residual add / Relu
    post-ops (disc/Conversion/CudaLibraryCalls.h). Other MatMul/Conv ops
    keep the generated loops.
  }];
}

def DiscCheckAllocations : Pass<"disc-check-allocations", "ModuleOp"> {
  let summary = "Check the byte size of every dynamic allocation at run time";
  let description = [{
    Runs after bufferization. Before each `memref.alloc` with dynamic sizes,
    emits a run-time check (see RuntimeChecks.h) that every size is
    non-negative and that the element count times the element size fits in
    int64, so an overflowing size (a run-time shape such as [2^32, 2^32])
    stops the run with an error naming the node and the sizes instead of
    allocating a wrapped-around size.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect"
  ];
}

#endif // DISC_CONVERSION_PASSES_TD
