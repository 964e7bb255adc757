// Depthwise convolutions as loops with their producer and epilogue fused
// (disc-fusion's `depthwise` option, docs/cuda.md "Depthwise
// convolutions"): the Clip after the 1x1 convolution is computed where the
// depthwise convolution reads its input (never stored), and the bias add
// and the Clip after it write the convolution's buffer in place. With
// `depthwise=cuda` the convolution is chosen because a cuDNN call would
// leave the Clip's upper bound to kernels of their own; `off` (oneDNN)
// changes nothing. The memory model counts what the run allocates, and the
// result matches NumPy on the emulated CUDA kernels (the fused form), and
// on the CPU loops and oneDNN (no depthwise fusion on the CPU).
// RUN: disc-opt %s --disc-fusion="depthwise=cuda" | FileCheck %s --check-prefix=CUDA
// RUN: disc-opt %s --disc-fusion="depthwise=off" | FileCheck %s --check-prefix=OFF
// RUN: disc-opt %s --disc-fusion="depthwise=all" --disc-lower-to-linalg --disc-fuse-marked-producers | FileCheck %s --check-prefix=LINALG
// RUN: rm -rf %t && %python %S/Inputs/depthwise_fusion_ref.py %t
// RUN: disc-compile %s --library-calls=none -o %t/loops.so
// RUN: disc-run %t/loops.so --input x=%t/x.pb --input w1=%t/w1.pb --input w2=%t/w2.pb --compare '#0=%t/y.pb' --rtol 1e-5 --atol 1e-5 | FileCheck %s --check-prefix=RESULT
// RUN: disc-compile %s --target=cuda-emulate -o %t/emulate.so
// RUN: disc-run %t/emulate.so --input x=%t/x.pb --input w1=%t/w1.pb --input w2=%t/w2.pb --compare '#0=%t/y.pb' --rtol 1e-5 --atol 1e-5 | FileCheck %s --check-prefix=RESULT
// RUN: disc-compile %s -o %t/onednn.so
// RUN: disc-run %t/onednn.so --input x=%t/x.pb --input w1=%t/w1.pb --input w2=%t/w2.pb --compare '#0=%t/y.pb' --rtol 1e-5 --atol 1e-5 | FileCheck %s --check-prefix=RESULT

// CUDA: disc.min {{.*}}disc.fused
// CUDA-NEXT: disc.conv {{.*}}disc.depthwise_loops
// CUDA-NEXT: disc.add {{.*}}disc.in_place_operand = 0
// CUDA-NEXT: disc.max {{.*}}disc.in_place_operand = 0
// CUDA-NEXT: disc.min {{.*}}disc.in_place_operand = 0
// OFF-NOT: disc.depthwise_loops
// OFF-NOT: disc.in_place_operand

// Without library calls the whole chain after the 1x1 convolution (bias,
// ReLU, upper bound) is computed where the depthwise convolution reads
// each element of its result; the epilogue's nests write the depthwise
// convolution's result.
// LINALG: %[[C1:.*]] = linalg.conv_2d_nchw_fchw
// LINALG: %[[DW:.*]] = linalg.generic
// LINALG: tensor.extract %[[C1]]
// LINALG: arith.addf
// LINALG: arith.maximumf
// LINALG: arith.minimumf
// LINALG-NEXT: arith.select
// LINALG: %[[B:.*]] = linalg.generic {{.*}} outs(%[[DW]] :
// LINALG: linalg.generic {{.*}} outs(%[[B]] :

// RESULT: peak_bytes: [[PEAK:[0-9]+]]  predicted_peak_bytes: [[PEAK]]
// RESULT: PASSED

func.func @f(%x: tensor<?x8x?x?xf32> {disc.dims = ["N", 8, "H", "W"], disc.name = "x"},
             %w1: tensor<8x8x1x1xf32> {disc.name = "w1"},
             %w2: tensor<8x1x3x3xf32> {disc.name = "w2"}) -> (tensor<?x8x?x?xf32> {disc.name = "y"}) {
  %b1 = disc.constant dense<[[[2.041]], [[-2.556]], [[0.418]], [[-0.568]], [[-0.453]], [[-0.216]], [[-2.02]], [[-0.232]]]> : tensor<8x1x1xf32>
  %b2 = disc.constant dense<[[[-0.865]], [[3.323]], [[0.226]], [[-0.353]], [[-0.281]], [[-0.668]], [[-1.055]], [[-0.391]]]> : tensor<8x1x1xf32>
  %zero = disc.constant dense<0.0> : tensor<f32>
  %six = disc.constant dense<6.0> : tensor<f32>
  %c1 = disc.conv %x, %w1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %a1 = disc.add %c1, %b1 : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %r1 = disc.max %a1, %zero : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %m1 = disc.min %r1, %six : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %dw = disc.conv %m1, %w2 {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 8 : i64} : (tensor<?x8x?x?xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x?x?xf32>
  %a2 = disc.add %dw, %b2 : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %r2 = disc.max %a2, %zero : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %y = disc.min %r2, %six : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  return %y : tensor<?x8x?x?xf32>
}
