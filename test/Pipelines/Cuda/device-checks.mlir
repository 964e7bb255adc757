// RUN: disc-opt --disc-gpu-device-checks %s | FileCheck %s
// RUN: disc-opt --disc-gpu-device-checks --disc-gpu-emulate-launches %s | FileCheck %s --check-prefix=EMU
// RUN: disc-opt --disc-gpu-device-checks --convert-scf-to-cf --gpu-kernel-outlining --nvvm-attach-target="chip=sm_80 O=3" --convert-gpu-to-nvvm="index-bitwidth=64" --reconcile-unrealized-casts --gpu-module-to-binary="format=isa" %s | FileCheck %s --check-prefix=PTX

// In PTX the word is a visible global of the kernel's module (the runtime
// finds it with cuModuleGetGlobal) and the first failure wins by a
// compare-and-swap.
// PTX: .visible .global .align 8 .b8 disc_check_error[40]
// PTX: atom.{{.*}}global.cas.b64

// A Gather index check inside a kernel: the first failing thread records
// 1 + check id and the values in the device error word; the guarded load
// runs only when the check held, so an out-of-range index reads nothing.
// CHECK: memref.global @disc_check_error : memref<5xi64> = dense<0> {alignment = 8 : i64}
// CHECK-LABEL: func.func @gather
// CHECK: gpu.launch
// CHECK: %[[BAD:.+]] = arith.xori %[[OK:.+]], %true
// CHECK: scf.if %[[BAD]] {
// CHECK: %[[W:.+]] = memref.get_global @disc_check_error : memref<5xi64>
// CHECK: %[[CODE:.+]] = arith.addi %c3_i64, %c1_i64
// CHECK: %[[OLD:.+]] = memref.generic_atomic_rmw %[[W]][%{{.+}}] : memref<5xi64> {
// CHECK: ^bb0(%[[CUR:.+]]: i64):
// CHECK: %[[FREE:.+]] = arith.cmpi eq, %[[CUR]], %c0_i64
// CHECK: arith.select %[[FREE]], %[[CODE]], %[[CUR]]
// CHECK: %[[WON:.+]] = arith.cmpi eq, %[[OLD]], %c0_i64
// CHECK: scf.if %[[WON]] {
// CHECK-COUNT-4: memref.store %{{.+}}, %[[W]][%{{.+}}] : memref<5xi64>
// CHECK-NOT: func.call
// CHECK: %[[GOOD:.+]] = arith.xori %[[BAD]], %true
// CHECK: scf.if %[[GOOD]] {
// CHECK: memref.load %{{.+}}[%{{.+}}] : memref<?xf32>
// CHECK: memref.store
// CHECK: gpu.terminator

// Emulated: host loops over block and thread ids, then the word is read,
// cleared and reported through disc_check_failed like a host-side check.
// EMU-LABEL: func.func @gather
// EMU-NOT: gpu.
// EMU: scf.for %{{.+}} = %{{.+}} to %c1 step
// EMU: scf.for %{{.+}} = %{{.+}} to %c1 step
// EMU: scf.for %[[BX:.+]] = %{{.+}} to %arg4 step
// EMU: scf.for %{{.+}} = %{{.+}} to %c1 step
// EMU: scf.for %{{.+}} = %{{.+}} to %c1 step
// EMU: scf.for %[[TX:.+]] = %{{.+}} to %c256 step
// EMU: arith.muli %[[BX]], %c256
// EMU: arith.addi %{{.+}}, %[[TX]]
// EMU: memref.generic_atomic_rmw
// EMU: %[[W:.+]] = memref.get_global @disc_check_error
// EMU: %[[CODE:.+]] = memref.load %[[W]][%{{.+}}]
// EMU: %[[FAILED:.+]] = arith.cmpi ne, %[[CODE]], %{{.+}}
// EMU: scf.if %[[FAILED]] {
// EMU: %[[ID:.+]] = arith.subi %[[CODE]], %{{.+}}
// EMU: memref.store %{{.+}}, %[[W]][%{{.+}}]
// EMU: func.call @disc_check_failed(%[[ID]],
func.func private @disc_check_failed(i64, i64, i64, i64, i64)
func.func @gather(%data: memref<?xf32>, %idx: memref<?xi64>, %out: memref<?xf32>, %n: index, %blocks: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %true = arith.constant true
  %c3 = arith.constant 3 : i64
  %c0_i64 = arith.constant 0 : i64
  %dim = memref.dim %data, %c0 : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %blocks, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %c256 : index
    %i = arith.addi %base, %tx : index
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {
      %k = memref.load %idx[%i] : memref<?xi64>
      %ki = arith.index_cast %k : i64 to index
      %ge = arith.cmpi sge, %ki, %c0 : index
      %lt = arith.cmpi slt, %ki, %dim : index
      %ok = arith.andi %ge, %lt : i1
      %bad = arith.xori %ok, %true : i1
      scf.if %bad {
        %d = arith.index_cast %dim : index to i64
        func.call @disc_check_failed(%c3, %k, %d, %c0_i64, %c0_i64) : (i64, i64, i64, i64, i64) -> ()
      }
      %v = memref.load %data[%ki] : memref<?xf32>
      memref.store %v, %out[%i] : memref<?xf32>
    }
    gpu.terminator
  }
  return
}
