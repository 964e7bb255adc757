// REQUIRES: ptxas
// The toolkit path gives ptxas and libdevice (__nv_expf).
// RUN: disc-opt %s --pass-pipeline='builtin.module(gpu-kernel-outlining,nvvm-attach-target{chip=sm_80 O=3},gpu.module(convert-gpu-to-nvvm{index-bitwidth=64},reconcile-unrealized-casts),gpu-module-to-binary{format=bin toolkit=/usr/local/cuda})' | FileCheck %s
// RUN: disc-opt %s --pass-pipeline='builtin.module(gpu-kernel-outlining,nvvm-attach-target{chip=sm_90 O=3},gpu.module(convert-gpu-to-nvvm{index-bitwidth=64},reconcile-unrealized-casts),gpu-module-to-binary{format=bin toolkit=/usr/local/cuda})' | FileCheck %s

// ptxas accepts the kernel (math through libdevice) and gives an ELF cubin.
// CHECK: gpu.binary @exp_kernel
// CHECK-SAME: bin = "\7FELF
module attributes {gpu.container_module} {
  func.func @exp(%a: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c64, %v = %c1, %w = %c1) {
      %va = memref.load %a[%tx] : memref<?xf32>
      %e = math.exp %va : f32
      memref.store %e, %a[%tx] : memref<?xf32>
      gpu.terminator
    }
    return
  }
}
