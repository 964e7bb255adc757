// disc-fusion (docs/memory.md, "Fusion"): `x - max` fuses into the exp and
// the exp into the sum (one loop nest for the softmax denominator); the
// div/erf/add/mul chain of a GELU factor fuses into one loop nest. The
// memory model gives the fused results no buffer, the run allocates
// exactly what it predicts, and the result matches NumPy with and
// without fusion.
// RUN: disc-compile %s --schedule=none --library-calls=none --emit=memory -o - | FileCheck %s
// RUN: disc-opt %s --disc-fusion --disc-lower-to-linalg --disc-fuse-marked-producers | FileCheck %s --check-prefix=LINALG
// RUN: rm -rf %t && %python %S/Inputs/fusion_ref.py %t
// RUN: disc-compile %s --library-calls=none -o %t/fused.so
// RUN: disc-run %t/fused.so --input x=%t/x.pb --compare '#0=%t/y.pb' --rtol 1e-5 --atol 1e-5 | FileCheck %s --check-prefix=FUSED
// RUN: disc-compile %s --library-calls=none --fusion=false -o %t/loops.so
// RUN: disc-run %t/loops.so --input x=%t/x.pb --compare '#0=%t/y.pb' --rtol 1e-5 --atol 1e-5 | FileCheck %s --check-prefix=LOOPS

// CHECK: disc.reduce {{.*}} alloc=
// CHECK: disc.sub {{.*}} fused
// CHECK: disc.exp {{.*}} fused
// CHECK: disc.reduce {{.*}} alloc=
// CHECK: disc.div {{.*}} fused
// CHECK: disc.erf {{.*}} fused
// CHECK: disc.add {{.*}} fused
// CHECK: disc.mul {{.*}} fused
// CHECK: disc.mul {{.*}} alloc=

// Three loop nests: max, sum(exp(x - max)), the GELU factor times the sum.
// LINALG: linalg.generic
// LINALG: arith.maximumf
// LINALG: linalg.generic {{.*}} ins(%arg0, %{{.*}} : tensor<?x16xf32>, tensor<?x1xf32>)
// LINALG-NEXT: ^bb0
// LINALG-NEXT: arith.subf
// LINALG-NEXT: math.exp
// LINALG-NEXT: arith.addf
// LINALG: linalg.generic
// LINALG: arith.divf
// LINALG-NEXT: math.erf
// LINALG-NEXT: arith.addf
// LINALG-NEXT: arith.mulf
// LINALG-NEXT: arith.mulf
// LINALG-NOT: linalg.generic

// FUSED: peak_bytes: [[PEAK:[0-9]+]]  predicted_peak_bytes: [[PEAK]]  allocs: 3
// FUSED: PASSED
// LOOPS: peak_bytes: [[PEAK:[0-9]+]]  predicted_peak_bytes: [[PEAK]]  allocs: 9
// LOOPS: PASSED

func.func @f(%x: tensor<?x16xf32> {disc.dims = ["N", 16], disc.name = "x"}) -> (tensor<?x1xf32> {disc.name = "y"}) {
  %m = disc.reduce max, %x {dimensions = array<i64: 1>, keep_dims = true} : (tensor<?x16xf32>) -> tensor<?x1xf32>
  %d = disc.sub %x, %m : (tensor<?x16xf32>, tensor<?x1xf32>) -> tensor<?x16xf32>
  %e = disc.exp %d : tensor<?x16xf32>
  %s = disc.reduce sum, %e {dimensions = array<i64: 1>, keep_dims = true} : (tensor<?x16xf32>) -> tensor<?x1xf32>
  %sqrt2 = disc.constant dense<1.41421354> : tensor<f32>
  %half = disc.constant dense<0.5> : tensor<f32>
  %one = disc.constant dense<1.0> : tensor<f32>
  %q = disc.div %m, %sqrt2 : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %r = disc.erf %q : tensor<?x1xf32>
  %a = disc.add %r, %one : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %g = disc.mul %a, %half : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %y = disc.mul %s, %g : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return %y : tensor<?x1xf32>
}
