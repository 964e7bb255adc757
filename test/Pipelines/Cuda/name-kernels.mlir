// RUN: disc-opt --disc-gpu-name-kernels --split-input-file --verify-diagnostics %s | FileCheck %s

// gpu-kernel-outlining's modules are named apart, their kernels all
// @disc_entry_kernel: each kernel takes its module's name, and the
// launches follow.
// CHECK-LABEL: gpu.module @disc_entry_kernel
// CHECK: gpu.func @disc_entry_kernel(
// CHECK-LABEL: gpu.module @disc_entry_kernel_0
// CHECK: gpu.func @disc_entry_kernel_0(
// CHECK-LABEL: func.func @disc_entry
// CHECK: gpu.launch_func @disc_entry_kernel::@disc_entry_kernel
// CHECK: gpu.launch_func @disc_entry_kernel_0::@disc_entry_kernel_0
module attributes {gpu.container_module} {
  gpu.module @disc_entry_kernel {
    gpu.func @disc_entry_kernel(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @disc_entry_kernel_0 {
    gpu.func @disc_entry_kernel(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
  }
  func.func @disc_entry(%m: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @disc_entry_kernel::@disc_entry_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    gpu.launch_func @disc_entry_kernel_0::@disc_entry_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    return
  }
}

// -----

// A module with two kernels keeps their names.
// CHECK-LABEL: gpu.module @two
// CHECK: gpu.func @a(
// CHECK: gpu.func @b(
module attributes {gpu.container_module} {
  gpu.module @two {
    gpu.func @a() kernel {
      gpu.return
    }
    gpu.func @b() kernel {
      gpu.return
    }
  }
}

// -----

// The module's name is taken by another symbol inside it.
module attributes {gpu.container_module} {
  // expected-error @below {{disc-gpu-name-kernels: the name 'k_0' is taken in the module}}
  gpu.module @k_0 {
    gpu.func @k() kernel {
      gpu.return
    }
    gpu.func @k_0() {
      gpu.return
    }
  }
}
