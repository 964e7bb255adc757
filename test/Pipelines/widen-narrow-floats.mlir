// RUN: disc-opt %s --disc-widen-narrow-floats | FileCheck %s

// A reduction on f16 computes in f32 and converts its result back; an
// elementwise op on f16 and a reduction on f32 are left alone.
// CHECK-LABEL: func.func @reduce_f16
// CHECK: %[[W:.*]] = disc.convert %arg0 : (tensor<?x4096xf16>) -> tensor<?x4096xf32>
// CHECK: %[[R:.*]] = disc.reduce sum, %[[W]] {{.*}} -> tensor<?xf32>
// CHECK: %[[N:.*]] = disc.convert %[[R]] : (tensor<?xf32>) -> tensor<?xf16>
// CHECK: disc.add %[[N]], %[[N]] : (tensor<?xf16>, tensor<?xf16>) -> tensor<?xf16>
func.func @reduce_f16(%x: tensor<?x4096xf16>) -> tensor<?xf16> {
  %0 = disc.reduce sum, %x {dimensions = array<i64: 1>} : (tensor<?x4096xf16>) -> tensor<?xf16>
  %1 = disc.add %0, %0 : (tensor<?xf16>, tensor<?xf16>) -> tensor<?xf16>
  return %1 : tensor<?xf16>
}

// CHECK-LABEL: func.func @dot_bf16
// CHECK-COUNT-2: disc.convert %{{.*}} : (tensor<{{.*}}xbf16>) -> tensor<{{.*}}xf32>
// CHECK: disc.dot_general {{.*}} -> tensor<?x8xf32>
// CHECK: disc.convert %{{.*}} : (tensor<?x8xf32>) -> tensor<?x8xbf16>
func.func @dot_bf16(%a: tensor<?x16xbf16>, %b: tensor<16x8xbf16>) -> tensor<?x8xbf16> {
  %0 = disc.dot_general %a, %b {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x16xbf16>, tensor<16x8xbf16>) -> tensor<?x8xbf16>
  return %0 : tensor<?x8xbf16>
}

// CHECK-LABEL: func.func @reduce_f32
// CHECK-NOT: disc.convert
// CHECK: disc.reduce
func.func @reduce_f32(%x: tensor<?x8xf32>) -> tensor<?xf32> {
  %0 = disc.reduce sum, %x {dimensions = array<i64: 1>} : (tensor<?x8xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
