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
    `tensor.extract`.

    NumPy broadcasting of dynamic dims that may be 1 at run time is
    versioned: an `scf.if` picks identity indexing maps when the dims agree,
    or a `tensor.extract` path with `select(dim == 1, 0, i)` otherwise; dims
    the symbolic shape analysis (re-run by the pass, with the user ranges
    still in the module) proves equal to the result dim need no version
    (docs/symbolic-shapes.md, "Run-time shape checks"). The pass also emits
    the run-time contract checks of the ONNX ops (index ranges,
    broadcasting, Reshape counts, zero steps and divisors, sizes;
    docs/runtime-abi.md, "Run-time checks"), leaving out those proven at
    compile time. A producer marked by `disc-fusion` gets its
    `linalg.generic` tagged for `disc-fuse-marked-producers`.

    An op that cannot be lowered is reported with its name and location
    (`cannot be lowered to linalg yet: ...`) and the pass fails.

    With `library-calls=onednn` (the default of `disc-compile`, not of the
    pass), f32 MatMul/Gemm/Conv/ConvTranspose become a `memref.alloc` of the
    output plus a `func.call` of `disc_lib_matmul` / `disc_lib_conv{1,2,3}d`
    / `disc_lib_conv_transpose{1,2,3}d` into the runtime's library module on
    strided memrefs (LibraryCalls.h; docs/runtime-abi.md, "Library calls"),
    with the post-ops marked by `disc-mark-library-calls` (run first when no
    op is marked yet) passed to the call and their ops lowered to the call's
    buffer. With `library-calls=cuda`, the same for the ops
    `disc-mark-cuda-library-calls` marks.
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
    For `--library-calls=onednn`, on the disc dialect: marks each op that
    `disc-lower-to-linalg` turns into a library call (`disc.library_call`)
    and the bias add, residual add (operand dims proven equal, defined
    before the call) and Relu right after a Conv/MatMul that the call runs
    as oneDNN post-ops (`disc.post_ops = ["bias", "add", "relu"]` on the
    call, `disc.fused_into_call = <chain operand>` on each fused op;
    DiscToLinalg/LibraryCalls.h). Runs on the scheduled function before the
    memory model is taken (`disc-compile` runs it), so the model sees the
    fused ops as in-place and knows where the library calls run
    (docs/memory.md). Reports no errors.
  }];
}

def DiscMarkCudaLibraryCalls
    : Pass<"disc-mark-cuda-library-calls", "::mlir::func::FuncOp"> {
  let summary = "Mark the cuBLAS/cuDNN library calls of the CUDA target";
  let description = [{
    `disc-mark-library-calls` for `--target=cuda` (`library-calls=cuda`):
    marks the f32 MatMul/Gemm forms and the f32 Conv with symmetric pads
    that run through cuBLAS/cuDNN, and their bias / residual add / Relu
    post-ops (disc/Conversion/CudaLibraryCalls.h), on the disc dialect.
    Other MatMul/Conv ops keep the generated loops. Reports no errors.
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
    allocating a wrapped-around size (docs/runtime-abi.md, "Run-time
    checks"). Reports no compile-time errors.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect"
  ];
}

#endif // DISC_CONVERSION_PASSES_TD
