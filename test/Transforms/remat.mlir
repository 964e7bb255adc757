// RUN: disc-opt %s -split-input-file --disc-shape-propagate --disc-shape-simplify --disc-remat | FileCheck %s
// RUN: disc-opt %s -split-input-file --disc-shape-propagate --disc-shape-simplify --disc-remat=remarks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: disc-opt %s -split-input-file --disc-shape-propagate --disc-shape-simplify --disc-remat="max-ops=1 remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MAXOPS

// %a = exp(x) is used by the next op and again five ops later, where the
// input x is still available: a candidate. Its size stays symbolic
// (S0*S1*4 payload bytes + 64 of allocator padding). Evict call after its
// last use before the gap, regenerate point (a fresh buffer and an scf.if
// that recomputes exp(x) into it) before the next use, which reads the
// regenerated value.
// REMARK: remark: remat candidate 0: bytes S0*S1*4 + 64, evict after #1, regenerate before #6, recompute 1 ops, flops S0*S1, peak +S0*S1*4 + 64
// CHECK-LABEL: func.func private @disc_remat_evict_0(i64, tensor<?x?xf32>)
// CHECK-SAME: llvm.emit_c_interface
// CHECK-LABEL: func.func @long_gap
// CHECK: %[[A:.*]] = disc.exp %arg0
// CHECK-NEXT: %[[B:.*]] = disc.neg %[[A]]
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[A]], %c0
// CHECK-DAG: %[[D1:.*]] = tensor.dim %[[A]], %c1
// CHECK: call @disc_remat_evict_0(%{{.*}}, %[[A]])
// CHECK: disc.exp
// CHECK: %[[ST:.*]] = call @disc_remat_regenerate(
// CHECK: %[[KEPT:.*]] = arith.cmpi ne, %[[ST]]
// CHECK: %[[BUF:.*]] = bufferization.alloc_tensor(%[[D0]], %[[D1]])
// CHECK: %[[R:.*]] = scf.if %[[KEPT]]
// CHECK-NEXT: scf.yield %[[BUF]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[X:.*]] = disc.exp %arg0
// CHECK-NEXT: bufferization.materialize_in_destination %[[X]] in %[[BUF]]
// CHECK-NEXT: func.call @disc_remat_regenerated(
// CHECK: disc.add %[[R]],
func.func @long_gap(%x: tensor<?x?xf32> {disc.dims = ["S0", "S1"]}) -> tensor<?x?xf32> {
  %a = disc.exp %x : tensor<?x?xf32>
  %b = disc.neg %a : tensor<?x?xf32>
  %c = disc.exp %b : tensor<?x?xf32>
  %d = disc.exp %c : tensor<?x?xf32>
  %e = disc.exp %d : tensor<?x?xf32>
  %f = disc.exp %e : tensor<?x?xf32>
  %s = disc.add %a, %f : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}

// -----

// Two ops between the uses of %a (min-gap is 3): no candidate.
// REMARK-NOT: remat candidate
// CHECK-LABEL: func.func @short_gap
// CHECK-NOT: disc_remat
// CHECK: return
func.func @short_gap(%x: tensor<?x?xf32> {disc.dims = ["S0", "S1"]}) -> tensor<?x?xf32> {
  %a = disc.exp %x : tensor<?x?xf32>
  %b = disc.neg %a : tensor<?x?xf32>
  %c = disc.exp %b : tensor<?x?xf32>
  %d = disc.exp %c : tensor<?x?xf32>
  %s = disc.add %a, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}

// -----

// %m = x . w contracts over K, which has no range: 2*S0*K*64 FLOPs are not
// provably within 512 per payload byte (S0*256), so recomputing it may
// cost more than the bound allows: no candidate.
// REMARK: remark: remat rejected: recompute FLOPs S0*K*128 not proven <= S0*131072
// CHECK-LABEL: func.func @too_expensive
// CHECK-NOT: disc_remat
// CHECK: return
func.func @too_expensive(%x: tensor<?x?xf32> {disc.dims = ["S0", "K"]}, %w: tensor<?x64xf32> {disc.dims = ["K", 64]}) -> tensor<?x64xf32> {
  %m = disc.dot_general %x, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x?xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %b = disc.neg %m : tensor<?x64xf32>
  %c = disc.exp %b : tensor<?x64xf32>
  %d = disc.exp %c : tensor<?x64xf32>
  %e = disc.exp %d : tensor<?x64xf32>
  %f = disc.exp %e : tensor<?x64xf32>
  %s = disc.add %m, %f : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  return %s : tensor<?x64xf32>
}

// -----

// The same product with K in [1, 256]: 2*S0*K*64 <= 512*S0*256 is proven,
// so it is a candidate; recomputing it reads x and w, both inputs.
// REMARK: remark: remat candidate 0: bytes S0*256 + 64, evict after #1, regenerate before #6, recompute 1 ops, flops S0*K*128
// CHECK-LABEL: func.func @bounded_k
// CHECK: call @disc_remat_evict_0
// CHECK: scf.if
// CHECK: disc.dot_general %arg0, %arg1
disc_shape.symbolic_dim @user_k {name = "K", min = 1, max = 256}
func.func @bounded_k(%x: tensor<?x?xf32> {disc.dims = ["S0", "K"]}, %w: tensor<?x64xf32> {disc.dims = ["K", 64]}) -> tensor<?x64xf32> {
  %m = disc.dot_general %x, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x?xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %b = disc.neg %m : tensor<?x64xf32>
  %c = disc.exp %b : tensor<?x64xf32>
  %d = disc.exp %c : tensor<?x64xf32>
  %e = disc.exp %d : tensor<?x64xf32>
  %f = disc.exp %e : tensor<?x64xf32>
  %s = disc.add %m, %f : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  return %s : tensor<?x64xf32>
}

// -----

// A value read by the long-gap tensor's producer is itself freed before the
// regenerate point (%t's last use is %a): the recompute goes back through
// %t to the input (2 ops). With max-ops 1 it cannot.
// MAXOPS: remark: remat rejected: recompute needs more than 1 ops
// REMARK: remark: remat candidate 0: bytes S0*S1*4 + 64, evict after #2, regenerate before #7, recompute 2 ops
// CHECK-LABEL: func.func @chain
// CHECK: } else {
// CHECK-NEXT: %[[T:.*]] = disc.exp %arg0
// CHECK-NEXT: %[[A:.*]] = disc.neg %[[T]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[A]]
func.func @chain(%x: tensor<?x?xf32> {disc.dims = ["S0", "S1"]}) -> tensor<?x?xf32> {
  %t = disc.exp %x : tensor<?x?xf32>
  %a = disc.neg %t : tensor<?x?xf32>
  %b = disc.neg %a : tensor<?x?xf32>
  %c = disc.exp %b : tensor<?x?xf32>
  %d = disc.exp %c : tensor<?x?xf32>
  %e = disc.exp %d : tensor<?x?xf32>
  %f = disc.exp %e : tensor<?x?xf32>
  %s = disc.add %a, %f : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}
