//===- Passes.td - what a model.so carries -----------------*- tablegen -*-===//
//
// The signature of a compiled model (docs/runtime-abi.md) is built from
// module attributes that these passes attach on the disc-level module; the
// model emitter serializes them once, as the JSON `disc_model_signature()`
// returns.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TARGET_PASSES_TD
#define DISC_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

def DiscAttachDimRanges : Pass<"disc-attach-dim-ranges", "ModuleOp"> {
  let summary = "Record the ranges of named input dims as symbolic dims";
  let description = [{
    Every `dims` entry, `NAME=MIN:MAX[:LIKELY]` or `NAME=VALUE`
    (`disc-compile --dim`), becomes a `disc_shape.symbolic_dim` op that the
    shape passes, the memory model and the signature read. `NAME` must be a
    dim name of the entry function's `disc.dims` argument attributes. With
    `force-dynamic` (`disc-compile --force-dynamic`), every other named
    input dim gets a symbolic dim with minimum 0: any stored input, empty
    tensors included, runs through one artifact (docs/symbolic-shapes.md).
    A malformed entry, an unknown name or an empty range fails the pass
    with the message `disc-compile` prints for it.
  }];
  let options = [
    ListOption<"dims", "dims", "std::string",
               "Ranges NAME=MIN:MAX[:LIKELY] or NAME=VALUE">,
    Option<"forceDynamic", "force-dynamic", "bool", /*default=*/"false",
           "Named input dims without a range may be 0">,
    Option<"entry", "entry", "std::string", /*default=*/"\"disc_entry\"",
           "Entry function">,
  ];
  let dependentDialects = ["::mlir::disc_shape::DiscShapeDialect"];
}

def DiscAttachMemoryModel : Pass<"disc-attach-memory-model", "ModuleOp"> {
  let summary = "Attach the entry's predicted memory as `disc.memory`";
  let description = [{
    Runs on the final op order, after disc-memory-schedule and the marking
    of library calls. The module gets `disc.memory`: the signature's
    "memory" object (docs/memory.md: symbolic peak bytes, allocation count,
    live bytes per program point) as a dictionary attribute, JSON values
    mapped one to one (a JSON null is a unit attribute). Each top-level op
    of the entry gets its index in that order as `disc.op` metadata of a
    FusedLoc in its location (inside the frontend's NameLoc), which the
    lowering keeps, so disc-insert-trace-points knows the program point of
    each kernel. Fails when the model cannot be built.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"disc_entry\"",
           "Entry function">,
    Option<"libraryTemporaries", "library-temporaries", "bool",
           /*default=*/"true",
           "Add the library calls' temporaries (oneDNN's, asked by the "
           "runtime at the actual shapes); false for cuBLAS/cuDNN calls, "
           "whose workspaces the runtime takes only where the allocator "
           "grants them">,
  ];
}

def DiscAttachRemat : Pass<"disc-attach-remat", "ModuleOp"> {
  let summary = "Insert the entry's remat points and attach `disc.remat`";
  let description = [{
    Runs after disc-attach-memory-model, whose model describes the run with
    nothing evicted. Finds the rematerialization candidates of the entry in
    its current op order, inserts their evict/regenerate points (as
    disc-remat does) and attaches the signature's "remat" object
    (docs/memory.md, "Rematerialization") as `disc.remat`.
  }];
  let options = [
    Option<"maxOps", "max-ops", "unsigned", /*default=*/"12",
           "Most ops recomputed for one candidate">,
    Option<"entry", "entry", "std::string", /*default=*/"\"disc_entry\"",
           "Entry function">,
    Option<"libraryTemporaries", "library-temporaries", "bool",
           /*default=*/"true",
           "As disc-attach-memory-model's option">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DiscAttachSignature : Pass<"disc-attach-signature", "ModuleOp"> {
  let summary = "Attach the entry's signature as `disc.signature`";
  let description = [{
    Builds the signature (docs/runtime-abi.md) from the entry function's
    `disc.name` / `disc.dims` argument and result attributes and the
    `disc_shape.symbolic_dim` ranges: ABI version, model name, inputs,
    outputs, symbols, and on `target=cuda` the target and GPU architecture.
    It becomes the module's `disc.signature` dictionary attribute. The
    entry then keeps only its `disc.dims` argument attributes (the
    lowering's shape analysis matches dim names with them) and gets
    `llvm.emit_c_interface`. Fails (bad input) on an element type the ABI
    has no dtype for.
  }];
  let options = [
    Option<"modelName", "model-name", "std::string", /*default=*/"\"model\"",
           "Model name in the signature (disc-compile: the input file's stem)">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "cpu, cuda or cuda-emulate; cuda records target and gpu-arch">,
    Option<"gpuArch", "gpu-arch", "std::string", /*default=*/"\"sm_80\"",
           "GPU architecture recorded for target=cuda">,
    Option<"entry", "entry", "std::string", /*default=*/"\"disc_entry\"",
           "Entry function">,
  ];
}

def DiscReportLibraryCalls : Pass<"disc-report-library-calls", "ModuleOp"> {
  let summary = "Print the entry's cuBLAS/cuDNN choices to stderr";
  let description = [{
    After disc-mark-cuda-library-calls: one line per MatMul/Gemm/Conv of
    the entry naming the library or why it keeps generated loops, then a
    summary (`disc-compile --target=cuda --report-codegen`). Changes no IR.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"disc_entry\"",
           "Entry function">,
  ];
}

#endif // DISC_TARGET_PASSES_TD
