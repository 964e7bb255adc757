// A causal mask on attention scores as exported (`Where(mask, scores *
// scale, ConstantOfShape(Shape(scores * scale), -inf))`): disc-fusion folds
// the broadcast -inf into the select, and the `disc.shape_of` it leaves
// without readers goes too, so the scaled scores have one reader and fuse
// into the select (one loop nest, one buffer). Then on the CPU and the GPU
// emulation against NumPy, measured peak == predicted.
// RUN: disc-opt %s --disc-shape-simplify --disc-fusion | FileCheck %s
// RUN: rm -rf %t && %python %S/Inputs/masked_scores_ref.py %t
// RUN: disc-compile %s --library-calls=none -o %t/cpu.so
// RUN: disc-run %t/cpu.so --input s=%t/s.pb --input m=%t/m.pb --compare '#0=%t/y.pb' --rtol 1e-6 --atol 1e-6 | FileCheck %s --check-prefix=EXEC
// RUN: disc-compile %s --target=cuda-emulate -o %t/emulate.so
// RUN: disc-run %t/emulate.so --input s=%t/s.pb --input m=%t/m.pb --compare '#0=%t/y.pb' --rtol 1e-6 --atol 1e-6 | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @masked
// CHECK-NOT: disc.shape_of
// CHECK-NOT: disc.expand
// CHECK: disc.mul {{.*}}disc.fused
// CHECK-NEXT: disc.select
// CHECK-NEXT: return

// EXEC: compare {{.*}} PASSED
// EXEC: peak_bytes: [[PEAK:[0-9]+]]  predicted_peak_bytes: [[PEAK]]  allocs: 1

func.func @masked(%s: tensor<?x3x4xf32> {disc.dims = ["b", 3, 4], disc.name = "s"},
                  %m: tensor<3x4xi1> {disc.name = "m"})
    -> (tensor<?x3x4xf32> {disc.name = "y"}) {
  %scale = disc.constant dense<2.500000e-01> : tensor<f32>
  %ninf = disc.constant dense<0xFF800000> : tensor<f32>
  %x = disc.mul %s, %scale : (tensor<?x3x4xf32>, tensor<f32>) -> tensor<?x3x4xf32>
  %shape = disc.shape_of %x : tensor<?x3x4xf32> -> tensor<3xi64>
  %fill = disc.expand %ninf, %shape : (tensor<f32>, tensor<3xi64>) -> tensor<?x3x4xf32>
  %y = disc.select %m, %x, %fill : (tensor<3x4xi1>, tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
  return %y : tensor<?x3x4xf32>
}
