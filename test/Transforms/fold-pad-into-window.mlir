// disc-fold-pad-into-window: a constant-0 Pad of the spatial dims in front
// of a Conv or of an average pooling without padding or ceil_mode becomes
// the op's padding (the pooling then counts it); other Pads stay.
// RUN: disc-opt --disc-fold-pad-into-window %s | FileCheck %s

// CHECK-LABEL: func.func @conv
// CHECK-NOT: disc.pad
// CHECK: disc.conv %arg0, {{.*}}padding = array<i64: 2, 1, 3, 1>
// CHECK: return
func.func @conv(%x: tensor<?x4x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %p = disc.constant dense<[0, 0, 1, 0, 0, 0, 2, 0]> : tensor<8xi64>
  %z = disc.constant dense<0.0> : tensor<f32>
  %xp = disc.pad constant, %x, %p, %z : (tensor<?x4x?x?xf32>, tensor<8xi64>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %w = disc.constant dense<0.5> : tensor<8x4x3x3xf32>
  %c = disc.conv %xp, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x?x?xf32>
  return %c : tensor<?x8x?x?xf32>
}

// The pooling counts the folded padding.
// CHECK-LABEL: func.func @avg_pool
// CHECK-NOT: disc.pad
// CHECK: disc.pool avg, %arg0 {count_include_pad = true, {{.*}}padding = array<i64: 1, 1, 1, 1>
func.func @avg_pool(%x: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  %p = disc.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  %z = disc.constant dense<0.0> : tensor<f32>
  %xp = disc.pad constant, %x, %p, %z : (tensor<?x4x?x?xf32>, tensor<8xi64>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %a = disc.pool avg, %xp {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %a : tensor<?x4x?x?xf32>
}

// The Pad is also read by a loop nest: folding the pooling alone would keep
// both %x and the padded copy live, so neither reader changes.
// CHECK-LABEL: func.func @partial
// CHECK: %[[P:.+]] = disc.pad
// CHECK: disc.pool avg, %[[P]]
// CHECK: disc.add %[[P]], %[[P]]
func.func @partial(%x: tensor<?x4x?x?xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) {
  %p = disc.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  %z = disc.constant dense<0.0> : tensor<f32>
  %xp = disc.pad constant, %x, %p, %z : (tensor<?x4x?x?xf32>, tensor<8xi64>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %a = disc.pool avg, %xp {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %s = disc.add %xp, %xp : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %a, %s : tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>
}

// Kept: a non-zero pad value, a pad of the channels, a max pooling, an
// average pooling with ceil_mode or padding of its own, an edge-mode Pad,
// a -0 pad value, a pad as wide as the pooling window.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: {{conv %arg0|, %arg0 \{}}
// CHECK: return
func.func @kept(%x: tensor<?x4x?x?xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x4x?x?xf32>) {
  %p = disc.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  %pc = disc.constant dense<[0, 1, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  %z = disc.constant dense<0.0> : tensor<f32>
  %one = disc.constant dense<1.0> : tensor<f32>
  %w = disc.constant dense<0.5> : tensor<8x4x3x3xf32>
  %w5 = disc.constant dense<0.5> : tensor<8x5x3x3xf32>
  %x1 = disc.pad constant, %x, %p, %one : (tensor<?x4x?x?xf32>, tensor<8xi64>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %c1 = disc.conv %x1, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x?x?xf32>
  %x2 = disc.pad constant, %x, %pc, %z : (tensor<?x4x?x?xf32>, tensor<8xi64>, tensor<f32>) -> tensor<?x5x?x?xf32>
  %c2 = disc.conv %x2, %w5 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x5x?x?xf32>, tensor<8x5x3x3xf32>) -> tensor<?x8x?x?xf32>
  %x3 = disc.pad constant, %x, %p, %z : (tensor<?x4x?x?xf32>, tensor<8xi64>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %m = disc.pool max, %x3 {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %x4 = disc.pad constant, %x, %p, %z : (tensor<?x4x?x?xf32>, tensor<8xi64>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %a1 = disc.pool avg, %x4 {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, ceil_mode = true} : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %x5 = disc.pad constant, %x, %p, %z : (tensor<?x4x?x?xf32>, tensor<8xi64>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %a2 = disc.pool avg, %x5 {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %x6 = disc.pad edge, %x, %p, %z : (tensor<?x4x?x?xf32>, tensor<8xi64>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %c6 = disc.conv %x6, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x?x?xf32>
  %nz = disc.constant dense<-0.0> : tensor<f32>
  %x7 = disc.pad constant, %x, %p, %nz : (tensor<?x4x?x?xf32>, tensor<8xi64>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %c7 = disc.conv %x7, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x?x?xf32>
  %p2 = disc.constant dense<[0, 0, 2, 0, 0, 0, 0, 0]> : tensor<8xi64>
  %x8 = disc.pad constant, %x, %p2, %z : (tensor<?x4x?x?xf32>, tensor<8xi64>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %a8 = disc.pool avg, %x8 {window = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %c1, %c2, %m, %a1, %a2, %c6, %c7, %a8 : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x4x?x?xf32>
}
