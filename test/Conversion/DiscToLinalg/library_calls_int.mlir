// RUN: disc-opt --disc-mark-library-calls --disc-lower-to-linalg=library-calls=onednn -cse %s | FileCheck %s
// RUN: disc-opt --disc-lower-to-linalg=library-calls=none -cse %s | FileCheck %s --check-prefix=NONE

// ConvInteger as imported: uint8 input minus its zero point, weights
// computed from constants minus theirs, an int32 Conv. It becomes the
// integer Conv call (int32 operands, the f32 Conv's attributes, no
// post-ops).
// CHECK-LABEL: func.func @conv_integer
// CHECK: call @disc_lib_conv_int2d({{.*}}) : (memref<?x?x?x?xi32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xi32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xi32, strided<[?, ?, ?, ?], offset: ?>>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
// CHECK-NOT: disc_lib_conv2d
// NONE-LABEL: func.func @conv_integer
// NONE-NOT: disc_lib
func.func @conv_integer(%x: tensor<1x4x8x8xi8>, %zp: tensor<i8>) -> tensor<1x6x4x4xi32> {
  %w = disc.constant dense<3> : tensor<6x4x3x3xi8>
  %wzp = disc.constant dense<7> : tensor<i8>
  %x32 = disc.convert %x {unsigned_source = true} : (tensor<1x4x8x8xi8>) -> tensor<1x4x8x8xi32>
  %z32 = disc.convert %zp {unsigned_source = true} : (tensor<i8>) -> tensor<i32>
  %xc = disc.sub %x32, %z32 : (tensor<1x4x8x8xi32>, tensor<i32>) -> tensor<1x4x8x8xi32>
  %w32 = disc.convert %w {unsigned_source = true} : (tensor<6x4x3x3xi8>) -> tensor<6x4x3x3xi32>
  %wz32 = disc.convert %wzp {unsigned_source = true} : (tensor<i8>) -> tensor<i32>
  %wc = disc.sub %w32, %wz32 : (tensor<6x4x3x3xi32>, tensor<i32>) -> tensor<6x4x3x3xi32>
  %y = disc.conv %xc, %wc {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<1x4x8x8xi32>, tensor<6x4x3x3xi32>) -> tensor<1x6x4x4xi32>
  return %y : tensor<1x6x4x4xi32>
}

// Weights that are a graph input (not computed from constants) keep the
// generated loops.
// CHECK-LABEL: func.func @conv_integer_dynamic_weights
// CHECK-NOT: disc_lib
// CHECK: linalg
func.func @conv_integer_dynamic_weights(%x: tensor<1x4x8x8xi8>, %zp: tensor<i8>, %w: tensor<6x4x3x3xi8>) -> tensor<1x6x6x6xi32> {
  %x32 = disc.convert %x {unsigned_source = true} : (tensor<1x4x8x8xi8>) -> tensor<1x4x8x8xi32>
  %z32 = disc.convert %zp {unsigned_source = true} : (tensor<i8>) -> tensor<i32>
  %xc = disc.sub %x32, %z32 : (tensor<1x4x8x8xi32>, tensor<i32>) -> tensor<1x4x8x8xi32>
  %w32 = disc.convert %w : (tensor<6x4x3x3xi8>) -> tensor<6x4x3x3xi32>
  %y = disc.conv %xc, %w32 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<1x4x8x8xi32>, tensor<6x4x3x3xi32>) -> tensor<1x6x6x6xi32>
  return %y : tensor<1x6x6x6xi32>
}
