// RUN: disc-opt %s -split-input-file --disc-shape-propagate --disc-shape-simplify --disc-remat | FileCheck %s
// RUN: disc-opt %s -split-input-file --disc-shape-propagate --disc-shape-simplify --disc-remat=remarks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: disc-opt %s -split-input-file --disc-shape-propagate --disc-shape-simplify --disc-remat="max-ops=1 remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MAXOPS

// %a = exp(x) is used by the next op and again five ops later, where the
// input x is still available: a candidate. Its size stays symbolic
// (S0*S1*4 payload bytes + 64 of allocator padding). Evict call after its
// last use before the gap, regenerate point (a fresh buffer and an scf.if
// that recomputes exp(x) into it) before the next use, which reads the
// regenerated value. The recompute's elementwise op writes that buffer
// itself (disc-regenerate-in-place), so it adds nothing on top (peak +0).
// REMARK: remark: remat candidate 0: bytes S0*S1*4 + 64, evict after #1, regenerate before #6, recompute 1 ops, flops S0*S1, peak +0
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

// -----

// Nested regeneration: the recompute of %a = neg(%b) reads %b, itself a
// candidate whose gap (#1 to #7) covers %a's regenerate point (#6). Both
// keep their own points; inside %a's recompute, %b is regenerated first
// (the runtime hands its block back when it kept it, else it is recomputed)
// and handed back to the runtime right after %a's recompute (a second
// evict call: kept until its own point, or given up again). Each recompute
// ends in an elementwise op that writes the regenerated buffer itself.
// REMARK: remark: remat candidate 0: bytes S0*S1*4 + 64, evict after #1, regenerate before #7, recompute 1 ops
// REMARK: remark: remat candidate 1: bytes S0*S1*4 + 64, evict after #2, regenerate before #6, recompute 1 ops
// CHECK-LABEL: func.func @nested
// CHECK: %[[B:.*]] = disc.exp %arg0
// CHECK: %[[A:.*]] = disc.neg %[[B]]
// CHECK: call @disc_remat_evict_0(%{{.*}}, %[[B]])
// CHECK: call @disc_remat_evict_1(%{{.*}}, %[[A]])
// CHECK: call @disc_remat_regenerate(
// CHECK: %[[BUFA:.*]] = bufferization.alloc_tensor
// CHECK: %[[RA:.*]] = scf.if
// CHECK: } else {
// CHECK: call @disc_remat_regenerate(
// CHECK: %[[BUFB:.*]] = bufferization.alloc_tensor
// CHECK: %[[NB:.*]] = scf.if
// CHECK: } else {
// CHECK-NEXT: %[[EB:.*]] = disc.exp %arg0
// CHECK-NEXT: bufferization.materialize_in_destination %[[EB]] in %[[BUFB]] {disc.regenerate_in_place}
// CHECK: %[[NA:.*]] = disc.neg %[[NB]]
// CHECK: call @disc_remat_evict_0(%{{.*}}, %[[NB]])
// CHECK-NEXT: bufferization.materialize_in_destination %[[NA]] in %[[BUFA]] {disc.regenerate_in_place}
// CHECK: %[[S:.*]] = disc.add %[[RA]],
// CHECK: call @disc_remat_regenerate(
// CHECK: %[[RB:.*]] = scf.if
// CHECK: } else {
// CHECK-NEXT: disc.exp %arg0
// CHECK: disc.add %[[S]], %[[RB]]
func.func @nested(%x: tensor<?x?xf32> {disc.dims = ["S0", "S1"]}) -> tensor<?x?xf32> {
  %b = disc.exp %x : tensor<?x?xf32>
  %a = disc.neg %b : tensor<?x?xf32>
  %c = disc.exp %a : tensor<?x?xf32>
  %d = disc.exp %c : tensor<?x?xf32>
  %e = disc.exp %d : tensor<?x?xf32>
  %f = disc.exp %e : tensor<?x?xf32>
  %s = disc.add %a, %f : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %t = disc.add %s, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %t : tensor<?x?xf32>
}

// -----

// The same, but %b waits much longer (gap #1 to #12): both are
// candidates with their own gaps (nested regeneration no longer moves a
// regenerate point, so a short gap cannot give a long one away).
// REMARK: remark: remat candidate 0: bytes S0*S1*4 + 64, evict after #1, regenerate before #12
// REMARK: remark: remat candidate 1: bytes S0*S1*4 + 64, evict after #2, regenerate before #6
// CHECK-LABEL: func.func @nested_too_early
// CHECK: call @disc_remat_evict_0
// CHECK: call @disc_remat_evict_1
// CHECK: return
func.func @nested_too_early(%x: tensor<?x?xf32> {disc.dims = ["S0", "S1"]}) -> tensor<?x?xf32> {
  %b = disc.exp %x : tensor<?x?xf32>
  %a = disc.neg %b : tensor<?x?xf32>
  %c = disc.exp %a : tensor<?x?xf32>
  %d = disc.exp %c : tensor<?x?xf32>
  %e = disc.exp %d : tensor<?x?xf32>
  %f = disc.exp %e : tensor<?x?xf32>
  %s = disc.add %a, %f : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s1 = disc.exp %s : tensor<?x?xf32>
  %s2 = disc.exp %s1 : tensor<?x?xf32>
  %s3 = disc.exp %s2 : tensor<?x?xf32>
  %s4 = disc.exp %s3 : tensor<?x?xf32>
  %s5 = disc.exp %s4 : tensor<?x?xf32>
  %t = disc.add %s5, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %t : tensor<?x?xf32>
}

// -----

// A value made long before its only use (the definition counts as a use):
// evicted right after it is made, regenerated before the use.
// REMARK: remark: remat candidate 0: bytes S0*S1*4 + 64, evict after #0, regenerate before #5
// CHECK-LABEL: func.func @def_gap
// CHECK: %[[A:.*]] = disc.exp %arg0
// CHECK: call @disc_remat_evict_0(%{{.*}}, %[[A]])
// CHECK-NEXT: disc.neg %arg0
func.func @def_gap(%x: tensor<?x?xf32> {disc.dims = ["S0", "S1"]}) -> tensor<?x?xf32> {
  %a = disc.exp %x : tensor<?x?xf32>
  %b = disc.neg %x : tensor<?x?xf32>
  %c = disc.exp %b : tensor<?x?xf32>
  %d = disc.exp %c : tensor<?x?xf32>
  %e = disc.exp %d : tensor<?x?xf32>
  %s = disc.add %a, %e : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}
