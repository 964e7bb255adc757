// disc-recompute-elementwise=near-window=8 (the CUDA targets): an
// elementwise value read only by elementwise ops and reductions a few ops
// later, whose chain reads one tensor of its size plus broadcast ones, is
// recomputed at each read. Softmax's exp(x - max) (read by the sum and the
// division) and LayerNorm's x - mean (read twice by the variance's square
// and once by the normalization) get a copy per read and no buffer; the
// residual sum a + b reads two full-size tensors and stays.
// RUN: disc-opt %s --disc-recompute-elementwise=near-window=8 | FileCheck %s
// RUN: disc-opt %s --disc-recompute-elementwise | FileCheck %s --check-prefix=OFF
// RUN: disc-opt %s --disc-recompute-elementwise=near-window=8 --disc-fusion | FileCheck %s --check-prefix=FUSED

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>)
// CHECK: %[[M:.+]] = disc.reduce max, %[[X]]
// CHECK: %[[S1:.+]] = disc.sub %[[X]], %[[M]] {disc.recompute_copy}
// CHECK-NEXT: %[[E1:.+]] = disc.exp %[[S1]] {disc.recompute_copy}
// CHECK-NEXT: %[[SUM:.+]] = disc.reduce sum, %[[E1]]
// CHECK-NEXT: %[[S2:.+]] = disc.sub %[[X]], %[[M]] {disc.recompute_copy}
// CHECK-NEXT: %[[E2:.+]] = disc.exp %[[S2]] {disc.recompute_copy}
// CHECK-NEXT: %[[Y:.+]] = disc.div %[[E2]], %[[SUM]]
// CHECK-NEXT: return %[[Y]]
// OFF-LABEL: func.func @softmax
// OFF: disc.exp
// OFF-NOT: disc.exp
// FUSED-LABEL: func.func @softmax
// FUSED: disc.reduce max
// FUSED: disc.sub {{.+}} {disc.fused, disc.recompute_copy}
// FUSED: disc.exp {{.+}} {disc.fused, disc.recompute_copy}
// FUSED: disc.reduce sum
// FUSED: disc.sub {{.+}} {disc.fused, disc.recompute_copy}
// FUSED: disc.exp {{.+}} {disc.fused, disc.recompute_copy}
// FUSED: disc.div
func.func @softmax(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %m = disc.reduce max, %x {dimensions = array<i64: 1>, keep_dims = true} : (tensor<?x?xf32>) -> tensor<?x1xf32>
  %d = disc.sub %x, %m : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %e = disc.exp %d : tensor<?x?xf32>
  %s = disc.reduce sum, %e {dimensions = array<i64: 1>, keep_dims = true} : (tensor<?x?xf32>) -> tensor<?x1xf32>
  %y = disc.div %e, %s : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// The square reads x - mean twice: one copy per operand read.
// CHECK-LABEL: func.func @centered
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[MEAN:.+]]: tensor<?x1xf32>)
// CHECK: %[[D1:.+]] = disc.sub %[[X]], %[[MEAN]] {disc.recompute_copy}
// CHECK-NEXT: %[[D2:.+]] = disc.sub %[[X]], %[[MEAN]] {disc.recompute_copy}
// CHECK-NEXT: %[[SQ:.+]] = disc.mul %[[D2]], %[[D1]]
// CHECK: %[[D3:.+]] = disc.sub %[[X]], %[[MEAN]] {disc.recompute_copy}
// CHECK-NEXT: disc.mul %[[D3]], %{{.+}}
func.func @centered(%x: tensor<?x64xf32>, %mean: tensor<?x1xf32>) -> tensor<?x64xf32> {
  %d = disc.sub %x, %mean : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
  %sq = disc.mul %d, %d : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %v = disc.reduce sum, %sq {dimensions = array<i64: 1>, keep_dims = true} : (tensor<?x64xf32>) -> tensor<?x1xf32>
  %r = disc.rsqrt %v : tensor<?x1xf32>
  %y = disc.mul %d, %r : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// Two full-size leaves: kept.
// CHECK-LABEL: func.func @residual
// CHECK: %[[H:.+]] = disc.add
// CHECK-NOT: disc.add
// CHECK: disc.reduce sum, %[[H]]
func.func @residual(%a: tensor<?x64xf32>, %b: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %h = disc.add %a, %b : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %s = disc.reduce sum, %h {dimensions = array<i64: 1>, keep_dims = true} : (tensor<?x64xf32>) -> tensor<?x1xf32>
  %y = disc.sub %h, %s : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
