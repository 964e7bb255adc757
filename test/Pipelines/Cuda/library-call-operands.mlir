// RUN: disc-opt --disc-gpu-upload-library-call-operands --split-input-file %s | FileCheck %s
// RUN: disc-opt --disc-gpu-upload-library-call-operands --disc-gpu-check-host-access --split-input-file %s | FileCheck %s --check-prefix=OK
// RUN: not disc-opt --disc-gpu-check-host-access --split-input-file %s 2>&1 | FileCheck %s --check-prefix=HOST

// A cuBLAS/cuDNN call (disc_lib_*) reading a constant of model.so reads the
// session's device copy (disc_device_constant_*: uploaded on the session's
// first request, kept, outside the peak), requested at the start of the
// run and viewed as the call expects; nothing is allocated or freed per
// run. The host access check accepts library calls on device buffers and
// rejects one that still reads host memory.
memref.global "private" constant @w : memref<2x3xf32> = dense<1.0>
func.func private @disc_lib_matmul(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64)

// CHECK-LABEL: func.func @linear
// CHECK-NOT: disc.device_constant_bytes
// CHECK: %[[G:.+]] = memref.get_global @w : memref<2x3xf32>
// CHECK: %[[N:.+]] = arith.constant 24 : i64
// CHECK: %[[D:.+]] = call @disc_device_constant_2_0(%[[G]], %[[N]]) : (memref<2x3xf32>, i64) -> memref<2x3xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: gpu.memcpy
// CHECK: %[[E:.+]] = memref.expand_shape %[[D]]
// CHECK: %[[C:.+]] = memref.cast %[[E]]
// CHECK: call @disc_lib_matmul(%{{.+}}, %[[C]], %{{.+}}, %{{.+}}, %{{.+}})
// CHECK-NOT: memref.dealloc
// CHECK: return
// CHECK: func.func private @disc_device_constant_2_0(memref<2x3xf32>, i64) -> memref<2x3xf32> attributes {llvm.emit_c_interface}
// OK-LABEL: func.func @linear
// HOST: error: ONNX node 'mm_1' (MatMul) is not supported on --target=cuda yet: library call 'disc_lib_matmul' reads host memory
func.func @linear(%a: memref<1x4x2xf32>, %c: memref<1x4x3xf32>) {
  %f = arith.constant 0 : i64
  %g = memref.get_global @w : memref<2x3xf32>
  %e = memref.expand_shape %g [[0, 1], [2]] output_shape [1, 2, 3] : memref<2x3xf32> into memref<1x2x3xf32>
  %bs = memref.cast %e : memref<1x2x3xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
  %as = memref.cast %a : memref<1x4x2xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
  %cs = memref.cast %c : memref<1x4x3xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
  call @disc_lib_matmul(%as, %bs, %cs, %f, %f) : (memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64) -> () loc("mm_1"("MatMul"("m.onnx":0:0)))
  // HOST-NOT: error
  return
}
