// Identical kernels become one function (docs/performance.md, "Compile
// time"): every call of a duplicate calls the kernel with the lowest
// number and keeps its own location; kernels that differ in an op, a
// constant, a type or their noalias parameters stay apart.
// RUN: disc-opt %s --split-input-file --disc-outline-kernels --disc-dedupe-kernels --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s
// Trace points are inserted before the merge and name each call's node.
// RUN: disc-opt %s --split-input-file --disc-outline-kernels --disc-insert-trace-points --disc-dedupe-kernels | FileCheck %s --check-prefix=TRACE

#id = affine_map<(d0, d1) -> (d0, d1)>

// Three ReLUs on [?, 8] buffers of different dynamic sizes: one kernel,
// called three times from the nodes' own locations.
// CHECK-LABEL: func.func @same
// CHECK: call @disc_kernel_0({{.*}}) : {{.*}} loc("relu_a"
// CHECK: call @disc_kernel_0({{.*}}) : {{.*}} loc("relu_b"
// CHECK: call @disc_kernel_0({{.*}}) : {{.*}} loc("relu_c"
// CHECK-NOT: disc_kernel_1
// CHECK-NOT: disc_kernel_2
// CHECK: func.func private @disc_kernel_0(%{{.*}}: memref<?x8xf32> {{.*}}, %{{.*}}: memref<?x8xf32> {{.*}}) attributes {disc.noalias_params = array<i32: 1, 8>}
// CHECK: } loc(fused["relu_a"("Relu"("m.onnx":1:0)), "relu_b"("Relu"("m.onnx":2:0)), "relu_c"("Relu"("m.onnx":3:0))])
// CHECK-NOT: func.func private @disc_kernel_

// TRACE: disc.trace_points = [{kind = "kernel", name = "relu_a", {{.*}}}, {kind = "kernel", name = "relu_b", {{.*}}}, {kind = "kernel", name = "relu_c", {{.*}}}]
// TRACE-LABEL: func.func @same
// TRACE-COUNT-3: call @disc_kernel_0(
// TRACE-NOT: func.func private @disc_kernel_1
// TRACE: {{^// [-]{5}$}}
func.func @same(%x: memref<?x8xf32>, %y: memref<?x8xf32>) -> (memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x8xf32>
  %m = memref.dim %y, %c0 : memref<?x8xf32>
  %a = memref.alloc(%n) : memref<?x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x8xf32>) outs(%a : memref<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } loc("relu_a"("Relu"("m.onnx":1:0)))
  %b = memref.alloc(%m) : memref<?x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<?x8xf32>) outs(%b : memref<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } loc("relu_b"("Relu"("m.onnx":2:0)))
  %c = memref.alloc(%n) : memref<?x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x8xf32>) outs(%c : memref<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } loc("relu_c"("Relu"("m.onnx":3:0)))
  return %a, %b, %c : memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A different constant, a different type, a different op: four kernels.
// CHECK-LABEL: func.func @different
// CHECK: call @disc_kernel_0(
// CHECK: call @disc_kernel_1(
// CHECK: call @disc_kernel_2(
// CHECK: call @disc_kernel_3(
// CHECK: call @disc_kernel_0(
// CHECK-DAG: func.func private @disc_kernel_0(
// CHECK-DAG: func.func private @disc_kernel_1(
// CHECK-DAG: func.func private @disc_kernel_2(
// CHECK-DAG: func.func private @disc_kernel_3(
// CHECK-NOT: func.func private @disc_kernel_4
func.func @different(%x: memref<4x8xf32>, %w: memref<4x16xf32>) -> (memref<4x8xf32>, memref<4x8xf32>, memref<4x16xf32>, memref<4x8xf32>, memref<4x8xf32>) {
  %a = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%a : memref<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %k = arith.constant 2.0 : f32
    %r = arith.mulf %v, %k : f32
    linalg.yield %r : f32
  }
  %b = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %k = arith.constant 3.0 : f32
    %r = arith.mulf %v, %k : f32
    linalg.yield %r : f32
  }
  %c = memref.alloc() : memref<4x16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<4x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %k = arith.constant 2.0 : f32
    %r = arith.mulf %v, %k : f32
    linalg.yield %r : f32
  }
  %d = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%d : memref<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %k = arith.constant 2.0 : f32
    %r = arith.addf %v, %k : f32
    linalg.yield %r : f32
  }
  %e = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%e : memref<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %k = arith.constant 2.0 : f32
    %r = arith.mulf %v, %k : f32
    linalg.yield %r : f32
  }
  return %a, %b, %c, %d, %e : memref<4x8xf32>, memref<4x8xf32>, memref<4x16xf32>, memref<4x8xf32>, memref<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The same loop nest, once on distinct buffers (noalias) and once in place
// through a cast of its output (not noalias): two kernels.
// CHECK-LABEL: func.func @aliasing
// CHECK: call @disc_kernel_0(
// CHECK: call @disc_kernel_1(
// CHECK: func.func private @disc_kernel_0({{.*}} attributes {disc.noalias_params = array<i32: 1, 8>}
// CHECK: func.func private @disc_kernel_1(
// CHECK-NOT: disc.noalias_params
// CHECK-SAME: {
func.func @aliasing(%x: memref<4x8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>) {
  %a = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%a : memref<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  }
  %b = memref.alloc() : memref<4x8xf32>
  %in = memref.cast %b : memref<4x8xf32> to memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  }
  return %a, %b : memref<4x8xf32>, memref<4x8xf32>
}

// -----

// A run-time check inside the loop passes its node's message id: the two
// loops differ in that constant and stay apart, so a failing check names
// its own node.
// CHECK-LABEL: func.func @checks
// CHECK: call @disc_kernel_0(
// CHECK: call @disc_kernel_1(
// CHECK: func.func private @disc_kernel_0(
// CHECK: arith.constant 0 : i64
// CHECK: call @disc_check_failed
// CHECK: func.func private @disc_kernel_1(
// CHECK: arith.constant 1 : i64
// CHECK: call @disc_check_failed
func.func private @disc_check_failed(i64, i64, i64, i64, i64)
func.func @checks(%idx: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %idx, %c0 : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %idx[%i] : memref<?xi64>
    %z = arith.constant 0 : i64
    %bad = arith.cmpi slt, %v, %z : i64
    scf.if %bad {
      %id = arith.constant 0 : i64
      func.call @disc_check_failed(%id, %v, %z, %z, %z) : (i64, i64, i64, i64, i64) -> ()
    }
  }
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %idx[%i] : memref<?xi64>
    %z = arith.constant 0 : i64
    %bad = arith.cmpi slt, %v, %z : i64
    scf.if %bad {
      %id = arith.constant 1 : i64
      func.call @disc_check_failed(%id, %v, %z, %z, %z) : (i64, i64, i64, i64, i64) -> ()
    }
  }
  return
}
