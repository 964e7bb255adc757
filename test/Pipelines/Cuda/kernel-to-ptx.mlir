// RUN: disc-opt %s --pass-pipeline='builtin.module(convert-scf-to-cf,gpu-kernel-outlining,nvvm-attach-target{chip=sm_90 O=3},gpu.module(convert-gpu-to-nvvm{index-bitwidth=64},reconcile-unrealized-casts),gpu-module-to-binary{format=isa})' | FileCheck %s --check-prefix=PTX
// RUN: disc-opt %s --pass-pipeline='builtin.module(convert-scf-to-cf,gpu-kernel-outlining,nvvm-attach-target{chip=sm_80 O=3},gpu.module(convert-gpu-to-nvvm{index-bitwidth=64},reconcile-unrealized-casts))' | FileCheck %s --check-prefix=NVVM
// RUN: disc-opt %s --pass-pipeline='builtin.module(convert-scf-to-cf,gpu-kernel-outlining,nvvm-attach-target{chip=sm_80 O=3},gpu.module(convert-gpu-to-nvvm{index-bitwidth=64},reconcile-unrealized-casts),gpu-module-to-binary{format=isa},gpu-to-llvm)' | FileCheck %s --check-prefix=HOST

// The mapped kernel: outlined into a gpu.module, lowered to NVVM (thread
// and block ids as PTX special registers), then to PTX for the chip.
// NVVM: gpu.module @add_kernel [#nvvm.target<O = 3, chip = "sm_80">]
// NVVM: llvm.func @add_kernel({{.*}}) attributes {gpu.kernel
// NVVM-DAG: nvvm.read.ptx.sreg.ctaid.x
// NVVM-DAG: nvvm.read.ptx.sreg.tid.x
// NVVM: llvm.fadd

// PTX: gpu.binary @add_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">
// PTX-SAME: .target sm_90
// PTX-SAME: .visible .entry add_kernel(
// PTX-SAME: add.rn.f32

// The host side: the launch takes LLVM values (the memref descriptors
// expanded); translation to LLVM IR turns it into calls of mgpuLaunchKernel
// and friends, which model.so implements over the runtime context.
// HOST: llvm.func @add(
// HOST: gpu.launch_func @add_kernel::@add_kernel blocks in ({{.*}}) threads in ({{.*}}) : i64 args({{.*}} : !llvm.ptr
// HOST: gpu.binary @add_kernel
module attributes {gpu.container_module} {
  func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %blocks = arith.ceildivui %n, %c256 : index
    gpu.launch blocks(%bx, %by, %bz) in (%x = %blocks, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c256, %v = %c1, %w = %c1) {
      %base = arith.muli %bx, %c256 : index
      %i = arith.addi %base, %tx : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %va = memref.load %a[%i] : memref<?xf32>
        %vb = memref.load %b[%i] : memref<?xf32>
        %s = arith.addf %va, %vb : f32
        memref.store %s, %a[%i] : memref<?xf32>
      }
      gpu.terminator
    }
    return
  }
}
