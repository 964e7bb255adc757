// A residual add that reads a depthwise convolution's epilogue (written in
// place, disc.in_place_operand) and that the cuDNN call of another
// convolution takes as its "add" post-op: markLibraryCalls drops the
// in-place mark, so the call writes it into its own buffer and the memory
// model counts it there only.
// RUN: disc-opt %s --disc-fusion="depthwise=cuda" --disc-mark-cuda-library-calls | FileCheck %s
// RUN: not disc-opt %s --disc-fusion="depthwise=bogus" 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: disc.min {{.*}}{disc.fused}
// CHECK: disc.conv {{.*}}disc.depthwise_loops
// CHECK: disc.add {{.*}}{disc.in_place_operand = 0 : i64}
// CHECK: disc.conv {{.*}}disc.post_ops = ["add"]
// CHECK: disc.add {{.*}}{disc.fused_into_call = 0 : i64} :
// BAD: disc-fusion: depthwise must be 'off', 'all' or 'cuda', got 'bogus'

func.func @f(%x: tensor<?x8x?x?xf32> {disc.dims = ["N", 8, "H", "W"], disc.name = "x"},
             %w2: tensor<8x1x3x3xf32> {disc.name = "w2"},
             %w3: tensor<8x8x1x1xf32> {disc.name = "w3"}) -> (tensor<?x8x?x?xf32> {disc.name = "y"}) {
  %b = disc.constant dense<0.5> : tensor<8x1x1xf32>
  %six = disc.constant dense<6.0> : tensor<f32>
  %m = disc.min %x, %six : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %dw = disc.conv %m, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 8 : i64} : (tensor<?x8x?x?xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x?x?xf32>
  %a = disc.add %dw, %b : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %c = disc.conv %x, %w3 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %s = disc.add %c, %a : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  return %s : tensor<?x8x?x?xf32>
}
