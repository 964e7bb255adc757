// Activations written as several ops that read the call's value twice,
// fused into the Conv or MatMul call as one post-op (DiscToLinalg/
// LibraryCalls.h, docs/runtime-abi.md *Post-ops*): SiLU (x * sigmoid(x),
// flag 512), HardSwish as the importer writes ONNX HardSwish (flag 1024)
// and GELU as torch.onnx exports nn.GELU (flag 2048).
// RUN: disc-opt --disc-mark-library-calls %s | FileCheck %s --check-prefix=MARK
// RUN: disc-opt --disc-lower-to-linalg=library-calls=onednn -cse %s | FileCheck %s

// MARK-LABEL: func.func @silu
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 513>, disc.post_ops = ["bias", "silu"]
// MARK: disc.add {{.*}}disc.fused_into_call = 0
// MARK: disc.logistic {{.*}}disc.fused_into_call = 0
// MARK: disc.mul {{.*}}disc.fused_into_call = 0
// CHECK-LABEL: func.func @silu
// CHECK: %[[F:.+]] = arith.constant 513 : i64
// CHECK: call @disc_lib_conv2d_post1({{.*}}, %[[F]])
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @silu(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %w = disc.constant dense<0.5> : tensor<8x8x3x3xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
  %b = disc.constant dense<0.25> : tensor<8x1x1xf32>
  %a = disc.add %c, %b : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %s = disc.logistic %a : tensor<?x8x?x?xf32>
  %m = disc.mul %a, %s : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  return %m : tensor<?x8x?x?xf32>
}

// MARK-LABEL: func.func @hardswish
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 1024>, disc.post_ops = ["hardswish"]
// MARK-COUNT-5: disc.fused_into_call
// CHECK-LABEL: func.func @hardswish
// CHECK: %[[F:.+]] = arith.constant 1024 : i64
// CHECK: call @disc_lib_conv2d_post0({{.*}}, %[[F]])
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @hardswish(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %w = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %sixth = disc.constant dense<0.166666672> : tensor<f32>
  %half = disc.constant dense<0.5> : tensor<f32>
  %one = disc.constant dense<1.0> : tensor<f32>
  %zero = disc.constant dense<0.0> : tensor<f32>
  %0 = disc.mul %c, %sixth : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %1 = disc.add %0, %half : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %2 = disc.min %1, %one : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %3 = disc.max %2, %zero : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %4 = disc.mul %c, %3 : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  return %4 : tensor<?x8x?x?xf32>
}

// MatMul + bias + GELU, as torch.onnx exports nn.GELU (flags 1 | 2048, and
// 4096: constant weights).
// MARK-LABEL: func.func @gelu
// MARK: disc.dot_general {{.*}}disc.post_op_attrs = array<i64: 6145>, disc.post_ops = ["bias", "gelu", "gelu_half"]
// CHECK-LABEL: func.func @gelu
// CHECK: %[[F:.+]] = arith.constant 6145 : i64
// CHECK: call @disc_lib_matmul_post1({{.*}}, %[[F]])
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @gelu(%x: tensor<?x?x64xf32>) -> tensor<?x?x32xf32> {
  %w = disc.constant dense<0.5> : tensor<64x32xf32>
  %d = disc.dot_general %x, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %b = disc.constant dense<0.25> : tensor<32xf32>
  %a = disc.add %b, %d : (tensor<32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %sqrt2 = disc.constant dense<1.41421354> : tensor<f32>
  %one = disc.constant dense<1.0> : tensor<f32>
  %half = disc.constant dense<0.5> : tensor<f32>
  %0 = disc.div %a, %sqrt2 : (tensor<?x?x32xf32>, tensor<f32>) -> tensor<?x?x32xf32>
  %1 = disc.erf %0 : tensor<?x?x32xf32>
  %2 = disc.add %1, %one : (tensor<?x?x32xf32>, tensor<f32>) -> tensor<?x?x32xf32>
  %3 = disc.mul %a, %2 : (tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %4 = disc.mul %3, %half : (tensor<?x?x32xf32>, tensor<f32>) -> tensor<?x?x32xf32>
  return %4 : tensor<?x?x32xf32>
}

// Not fused: the Sigmoid is also returned; a HardSwish with another slope;
// GELU with the wrong divisor. Only the plain calls, and the loops remain.
// MARK-LABEL: func.func @not_groups
// MARK-NOT: disc.fused_into_call
// MARK: return
// CHECK-LABEL: func.func @not_groups
// CHECK-COUNT-3: call @disc_lib_conv2d(
// CHECK: return
func.func @not_groups(%x: tensor<?x8x?x?xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) {
  %w = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %s = disc.logistic %c : tensor<?x8x?x?xf32>
  %m = disc.mul %c, %s : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %c2 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %fifth = disc.constant dense<0.2> : tensor<f32>
  %half = disc.constant dense<0.5> : tensor<f32>
  %one = disc.constant dense<1.0> : tensor<f32>
  %zero = disc.constant dense<0.0> : tensor<f32>
  %0 = disc.mul %c2, %fifth : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %1 = disc.add %0, %half : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %2 = disc.min %1, %one : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %3 = disc.max %2, %zero : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %4 = disc.mul %c2, %3 : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %c3 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %two = disc.constant dense<2.0> : tensor<f32>
  %5 = disc.div %c3, %two : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %6 = disc.erf %5 : tensor<?x8x?x?xf32>
  %7 = disc.add %6, %one : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %8 = disc.mul %c3, %7 : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %9 = disc.mul %8, %half : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  return %m, %s, %4, %9 : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>
}
