//===- Passes.td - DISC transformation passes ---------------*- tablegen -*-===//
#ifndef DISC_TRANSFORMS_PASSES_TD
#define DISC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DiscShapePropagate : Pass<"disc-shape-propagate", "ModuleOp"> {
  let summary = "Give every dynamic dim a symbolic expression (disc_shape)";
  let description = [{
    Creates one `disc_shape.symbolic_dim` per distinct input dim name
    (`disc.dims` argument attributes), then walks each function and assigns
    every dim of every value an affine expression over root symbols, seeing
    through shape computations (shape_of, gather, concatenate,
    dynamic_reshape with 0/-1, slice, expand, range, select/compare, i64
    arithmetic). Data-dependent sizes get fresh symbols. Writes the
    `disc_shape.dims` annotations and `disc_shape.constraint` ops.
  }];
  let dependentDialects = ["::mlir::disc_shape::DiscShapeDialect"];
}

def DiscShapeSimplify : Pass<"disc-shape-simplify", "ModuleOp"> {
  let summary = "Merge equal symbolic dims, make provably static dims static";
  let description = [{
    Runs the shape analysis with the solver, merges provably equal symbols,
    rewrites result types whose dims are provably constant into static dims
    (and the function signature consistently), folds `disc.shape_of` whose
    entries are all constant into `disc.constant`, and re-annotates.
  }];
  let dependentDialects = ["::mlir::disc_shape::DiscShapeDialect"];
}

def DiscStripShapeAnnotations : Pass<"disc-strip-shape-annotations", "ModuleOp"> {
  let summary = "Remove disc_shape annotations, symbols and constraints";
  let dependentDialects = ["::mlir::disc_shape::DiscShapeDialect"];
}

#endif // DISC_TRANSFORMS_PASSES_TD
