// The memory model on the default build (oneDNN library calls,
// docs/memory.md): post-ops fused into the calls are in-place, a library
// conv has no padded copy, and the runtime adds each call's temporaries
// (scratchpad, blocked copies) for the actual shapes, so the measured peak
// equals the prediction at every shape.
// RUN: disc-compile %s --schedule=none --emit=memory -o - | FileCheck %s
// RUN: disc-compile %s --schedule=none -o %t.so
// RUN: disc-run %t.so --input x=1x8x16x16:random | FileCheck %s --check-prefix=EXEC
// RUN: disc-run %t.so --input x=2x8x5x7:random | FileCheck %s --check-prefix=EXEC
// RUN: disc-run %t.so --input x=1x8x1x1:random --threads 1 | FileCheck %s --check-prefix=EXEC
// RUN: disc-run %t.so --input x=3x8x33x9:random --threads 2 | FileCheck %s --check-prefix=EXEC

// CHECK: #1 disc.conv (line [[#]])  alloc=N*H*W*32 + 64
// CHECK-NOT: pre-scratch
// CHECK: disc.add (line [[#]])  in-place(operand 0)
// CHECK: disc.add (line [[#]])  in-place(operand 0)
// CHECK: disc.max (line [[#]])  in-place(operand 0)
// CHECK: disc.conv_transpose (line [[#]])  alloc=

// EXEC: peak_bytes: [[PEAK:[0-9]+]]  predicted_peak_bytes: [[PEAK]]

func.func @block(%x: tensor<?x8x?x?xf32> {disc.dims = ["N", 8, "H", "W"], disc.name = "x"}) -> (tensor<?x8x?x?xf32> {disc.name = "y"}, tensor<?x4x?x?xf32> {disc.name = "u"}) {
  %w = disc.constant dense<0.05> : tensor<8x8x3x3xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
  %b = disc.constant dense<0.25> : tensor<8x1x1xf32>
  %a = disc.add %c, %b : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %s = disc.add %a, %x : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %z = disc.constant dense<0.0> : tensor<f32>
  %y = disc.max %s, %z : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %wt = disc.constant dense<0.5> : tensor<8x4x3x3xf32>
  %u = disc.conv_transpose %y, %wt {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x4x3x3xf32>) -> tensor<?x4x?x?xf32>
  return %y, %u : tensor<?x8x?x?xf32>, tensor<?x4x?x?xf32>
}
