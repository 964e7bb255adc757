//===- TrainingStep.h - a training step from a forward model ---*- C++ -*-===//
//
// disc-build-training-step (Passes.td, lib/Transforms/TrainingStep.cpp)
// turns a forward model with a scalar loss into one training step: the
// trainable parameters become inputs that the runtime session holds (state),
// the gradients come from the ops' gradient rules (DiscOpInterface's
// buildGradient, reverse mode), and an optimizer step writes the new state
// as outputs. docs/training.md is the user's description.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TRANSFORMS_TRAININGSTEP_H
#define DISC_TRANSFORMS_TRAININGSTEP_H

#include "llvm/ADT/StringRef.h"

namespace mlir::disc {

/// Discardable attribute of a `disc.constant` made from a float ONNX
/// initializer when the importer is asked to mark parameters: the
/// initializer's name (a StringAttr).
inline constexpr llvm::StringLiteral kParamAttrName = "disc.param";
/// Discardable attribute of the op computing the new value of an
/// initializer that is not trained but updated by each run (the running
/// statistics of a BatchNormalization in training mode): the initializer's
/// name (a StringAttr).
inline constexpr llvm::StringLiteral kStateUpdateOfAttrName =
    "disc.state_update_of";
/// Argument attribute of an input that the session holds (a UnitAttr).
inline constexpr llvm::StringLiteral kStateAttrName = "disc.state";
/// Argument attribute of a state input: the public `memref.global` with its
/// initial value (a FlatSymbolRefAttr); without it the state starts at 0.
inline constexpr llvm::StringLiteral kStateInitAttrName = "disc.state_init";
/// Result attribute of an output that replaces a state input after the run:
/// the state's name (a StringAttr).
inline constexpr llvm::StringLiteral kStateUpdateAttrName = "disc.state_update";
/// Function attribute: the name of the loss output (a StringAttr).
inline constexpr llvm::StringLiteral kLossAttrName = "disc.loss";

} // namespace mlir::disc

#endif // DISC_TRANSFORMS_TRAININGSTEP_H
