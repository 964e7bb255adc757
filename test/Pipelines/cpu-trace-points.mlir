// Trace points (docs/memory.md, "Timeline"): every kernel and library call
// of the model's functions is bracketed by disc_trace_op(id, 0/1), and
// `disc.trace_points` names each id after the ONNX node of the call's
// location, with the program point that disc-attach-memory-model put in
// the location metadata. Kernels themselves get no trace points.
// RUN: disc-opt %s --disc-insert-trace-points | FileCheck %s

// CHECK: module attributes {disc.trace_points = [
// CHECK-SAME: {kind = "kernel", name = "relu_1", op = 3 : i64, op_type = "Relu"},
// CHECK-SAME: {kind = "library", name = "mm_0", op = 5 : i64, op_type = "MatMul"},
// CHECK-SAME: {kind = "kernel", name = "disc_kernel_1", op = -1 : i64, op_type = ""}]}
// CHECK: func.func private @disc_trace_op(i64, i64)
// CHECK-LABEL: func.func @entry
// CHECK: %[[K0:.*]] = arith.constant 0 : i64
// CHECK: %[[B0:.*]] = arith.constant 0 : i64
// CHECK: call @disc_trace_op(%[[K0]], %[[B0]])
// CHECK-NEXT: call @disc_kernel_0
// CHECK: %[[E0:.*]] = arith.constant 1 : i64
// CHECK: call @disc_trace_op(%{{.*}}, %[[E0]])
// CHECK: %[[K1:.*]] = arith.constant 1 : i64
// CHECK: call @disc_trace_op(%[[K1]], %{{.*}})
// CHECK-NEXT: call @disc_lib_matmul
// CHECK: call @disc_trace_op
// CHECK: %[[K2:.*]] = arith.constant 2 : i64
// CHECK: call @disc_trace_op(%[[K2]], %{{.*}})
// CHECK-NEXT: call @disc_kernel_1
// CHECK: call @disc_trace_op
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
// CHECK: func.func private @disc_kernel_0
// CHECK-NOT: disc_trace_op
// CHECK: return
module {
  func.func @entry(%x: memref<4x8xf32>, %w: memref<8x8xf32>) -> memref<4x8xf32> {
    %a = memref.alloc() : memref<4x8xf32>
    call @disc_kernel_0(%x, %a) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
        loc("relu_1"(fused<{disc.op = 3 : i64}>["Relu"("m.onnx":0:0)]))
    %b = memref.alloc() : memref<4x8xf32>
    call @disc_lib_matmul(%a, %w, %b) : (memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>) -> ()
        loc("mm_0"(fused<{disc.op = 5 : i64}>["MatMul"("m.onnx":0:0)]))
    call @disc_kernel_1(%b) : (memref<4x8xf32>) -> ()
    memref.dealloc %a : memref<4x8xf32>
    return %b : memref<4x8xf32>
  }
  func.func private @disc_kernel_0(%x: memref<4x8xf32>, %o: memref<4x8xf32>) {
    return
  }
  func.func private @disc_kernel_1(%x: memref<4x8xf32>) {
    return
  }
  func.func private @disc_lib_matmul(memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>)
}
