// disc-regenerate-in-place (docs/memory.md, "Rematerialization"): the
// recompute of a regenerate point marked by disc-remat writes the
// regenerated buffer itself: the loop nest's destination is that buffer
// (no tensor.empty of its own), so bufferization needs no extra buffer.
// RUN: disc-opt %s --disc-shape-propagate --disc-shape-simplify --disc-remat --disc-lower-to-linalg --disc-regenerate-in-place | FileCheck %s
// A marked copy whose source is not a fresh loop nest is an error.
// RUN: not disc-opt %s --disc-shape-propagate --disc-shape-simplify --disc-remat --disc-regenerate-in-place 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @long_gap
// CHECK: %[[BUF:.*]] = bufferization.alloc_tensor
// CHECK: scf.if
// CHECK: } else {
// CHECK-NOT: tensor.empty
// CHECK: %[[E:.*]] = linalg.generic {{.*}} outs(%[[BUF]] : tensor<?x?xf32>)
// CHECK: bufferization.materialize_in_destination %[[E]] in %[[BUF]] :
// ERR: error: disc-regenerate-in-place: the recomputed value is not computed by one loop nest
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
