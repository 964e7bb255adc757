//===- KernelCost.h - bytes and FLOPs of CUDA kernels ------------*- C++
//-*-===//
//
// The roofline cost of each kernel (`gpu.launch` after the GPU mapping) and
// each cuBLAS/cuDNN call (`disc_lib_*`) of the CUDA target's entry
// function, as expressions of the model's input dims (docs/cuda.md,
// "Roofline"):
//
//  * bytes: the compulsory global-memory traffic: every distinct device
//    buffer the kernel reads counted once at its full size, plus every one
//    it writes (a buffer both read and written counts twice); shared
//    (workgroup) and private memory are not counted;
//  * FLOPs: the floating-point operations all threads execute: per op of
//    the body times the (thread, iteration) instances that reach it. A
//    loop multiplies by its trip count; a block-stride loop
//    (`for j = tid.x; j < D; j += blockDim.x`) and a grid-stride loop
//    (`for r = block.x; r < R; r += gridDim.x`) run D (R) iterations over
//    all threads of the dim together; a bound guard
//    (`block.x * blockDim.x + tid.x < N` with gridDim.x = ceil(N /
//    blockDim.x)) keeps N threads, a `tid.x == 0` branch one per block; the
//    failure path of a run-time check (it writes `@disc_check_error`) is not
//    taken in a successful run. Arith float ops and `math.*` functions
//    count 1 each, an FMA 2, a vector op once per lane; shuffles, loads,
//    stores and conversions count 0.
//
// An expression is an integer, an input dim name, or [OP, A, B] with OP one
// of "+", "*", "floordiv", "ceildiv", "mod" (the signature's size
// expressions, docs/runtime-abi.md) or "max", "min" (launch sizes such as a
// row kernel's block size). A cost that cannot be expressed that way (a
// size read from device or host memory, a FLOP under a data-dependent
// branch) is unknown, with the reason.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TRANSFORMS_GPU_KERNELCOST_H
#define DISC_TRANSFORMS_GPU_KERNELCOST_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::disc {

/// Module attribute holding the costs (an array of dictionaries, one per
/// kernel and library call, the JSON of kernelCostToJson as attributes).
inline constexpr llvm::StringLiteral kKernelsAttrName = "disc.kernels";
/// On the `scf.if` that disc-gpu-tile-parallel-loops puts around the
/// unguarded copies of a nest with several elements per thread: the number
/// of elements (the FLOP count recognizes the form by it).
inline constexpr llvm::StringLiteral kElementsPerThreadAttr =
    "disc.elements_per_thread";
/// On the main loop of an unrolled strided loop of a row kernel
/// (disc-gpu-stitch-rows): `for base = 0; base < (D / (T * U)) * T * U;
/// base += T * U` with U copies of the body at `base + tid + k * T`. Its
/// remainder loop, `for j = mainEnd + tid; j < D; j += T` marked with
/// kStridedRestAttr, holds one copy: the FLOP count takes the remainder
/// loop for all D elements and skips the main loop.
inline constexpr llvm::StringLiteral kStridedMainAttr = "disc.strided_main";
inline constexpr llvm::StringLiteral kStridedRestAttr = "disc.strided_rest";
/// On the `scf.if (tid < D)` of a row kernel phase that computes the phase's
/// values that do not depend on the element (loads at the row's broadcast
/// index, a LayerNorm's rsqrt(var + eps)) once per row and thread before
/// the strided loop: counted once per row.
inline constexpr llvm::StringLiteral kRowInvariantAttr = "disc.row_invariant";
/// On the `scf.if` nodes of the dispatch that disc-gpu-fuse-independent-loops
/// builds over the linear index `i` of a nest made of several: `if (i <
/// bound) {lower segments} else {upper segments}`, each segment one former
/// nest. The FLOP count splits the index range at `bound`.
inline constexpr llvm::StringLiteral kSegmentSplitAttr = "disc.segment_split";

/// The cost of one kernel or library call.
struct KernelCost {
  /// The kernel's name after `gpu-kernel-outlining` (`disc_entry_kernel`,
  /// `disc_entry_kernel_0`, ...), or the library function's name.
  std::string name;
  /// The ONNX nodes of the op's location, comma-separated ("" if none).
  std::string nodes;
  /// A cuBLAS/cuDNN call rather than a generated kernel.
  bool library = false;
  /// A `gpu.memcpy` (name "memcpy"): "host-to-device" (a constant's
  /// per-run device copy, a mirrored host buffer), "device-to-host" or
  /// "device-to-device"; empty for kernels and library calls. Its bytes are
  /// the copied buffer's, its FLOPs 0.
  std::string copy;
  /// When it runs in a run: "always"; "conditional" (under a host branch);
  /// "loop" (in a host loop: once per iteration); "recompute" (only when
  /// the runtime recomputes an evicted buffer under a memory limit).
  std::string runs = "always";
  /// Bytes and FLOPs as expressions (see the file comment); nullopt when
  /// unknown, with the reason in bytesUnknown / flopsUnknown.
  std::optional<llvm::json::Value> bytes, flops;
  /// The expressions rendered with the dim names (`batch*seq*512 + 64`).
  std::string bytesText, flopsText;
  std::string bytesUnknown, flopsUnknown;
};

/// Computes the cost of every `gpu.launch`, `disc_lib_*` call and
/// `gpu.memcpy` of `entry` (after the GPU mapping), in program order. Dynamic
/// dims of the entry's arguments are named by their `disc.dims` attribute.
std::vector<KernelCost> computeKernelCosts(func::FuncOp entry);

/// {"name", "node", "library", "runs", "bytes", "flops", "bytes_text",
///  "flops_text"} plus "copy" for a copy and "bytes_unknown" /
/// "flops_unknown" (the reason, with a null expression) for an unknown
/// cost.
llvm::json::Object kernelCostToJson(const KernelCost &cost);

} // namespace mlir::disc

#endif // DISC_TRANSFORMS_GPU_KERNELCOST_H
