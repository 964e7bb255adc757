// RUN: disc-opt %s --disc-expand-bf16 | FileCheck %s

// bf16 arithmetic computes in f32 and rounds to bf16 after every op; the
// conversions become bit operations (round to nearest even, NaN quiet).
// CHECK-LABEL: func.func @chain
func.func @chain(%a: bf16, %b: bf16, %x: f32) -> (bf16, f32) {
  // CHECK-NOT: arith.extf
  // CHECK-NOT: arith.truncf
  // CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
  // CHECK: %[[BITS:.*]] = arith.bitcast %[[SUM]] : f32 to i32
  // CHECK: arith.shrui %[[BITS]]
  // CHECK: arith.trunci
  // CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
  // CHECK-NOT: arith.extf
  // CHECK-NOT: arith.truncf
  // CHECK: return
  %0 = arith.addf %a, %b : bf16
  %1 = arith.truncf %x : f32 to bf16
  %2 = arith.mulf %0, %1 : bf16
  %3 = arith.extf %2 : bf16 to f32
  return %2, %3 : bf16, f32
}

// A function without bf16 is left alone.
// CHECK-LABEL: func.func @f32_only
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: return
func.func @f32_only(%x: f32) -> f32 {
  %0 = arith.addf %x, %x : f32
  return %0 : f32
}
