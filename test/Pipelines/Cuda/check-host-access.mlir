// RUN: not disc-opt --disc-gpu-check-host-access --split-input-file %s 2>&1 | FileCheck %s

// The host reads a tensor (device memory): not supported yet; the error
// names the ONNX node from the importer's location.
func.func @host_read(%a: memref<?xi64>) -> index {
  %c0 = arith.constant 0 : index
  // CHECK: error: ONNX node 'shape_1' (Reshape) is not supported on --target=cuda yet: it reads tensor data on the host (memref.load)
  %v = memref.load %a[%c0] : memref<?xi64> loc("shape_1"("Reshape"("m.onnx":0:0)))
  %i = arith.index_cast %v : i64 to index
  return %i : index
}

// -----

// Constants (host memory) may be read on the host.
memref.global "private" constant @s : memref<2xi64> = dense<[2, 3]>
func.func @host_constant() -> i64 {
  %c0 = arith.constant 0 : index
  %g = memref.get_global @s : memref<2xi64>
  %v = memref.load %g[%c0] : memref<2xi64>
  return %v : i64
}

// -----

func.func private @disc_check_failed(i64, i64, i64, i64, i64)

// A run-time check inside a kernel cannot call the host.
func.func @check_in_kernel(%a: memref<?xi64>) {
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %zz = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    // CHECK: error: ONNX node 'g' (Gather) is not supported on --target=cuda yet: a call inside a kernel (disc_check_failed; run-time checks and library calls run on the host)
    func.call @disc_check_failed(%z, %z, %z, %z, %z) : (i64, i64, i64, i64, i64) -> () loc("g"("Gather"("m.onnx":0:0)))
    gpu.terminator
  }
  return
}

// -----

// Linalg left on the host (not mapped to a kernel).
func.func @unmapped(%a: memref<?xf32>, %b: memref<?xf32>) {
  // CHECK: error: 'linalg.copy' is not supported on --target=cuda yet: it was not mapped to a kernel (linalg.copy)
  linalg.copy ins(%a : memref<?xf32>) outs(%b : memref<?xf32>)
  return
}
