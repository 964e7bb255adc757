// RUN: disc-opt %s --disc-widen-bool-accesses | FileCheck %s

// Scalar i1 loads and stores become byte loads and stores; the bytes are
// the same (0 or 1), other types and vectors of i1 are left alone.

// CHECK-LABEL: llvm.func @select_by_mask
// CHECK-SAME: (%[[M:.*]]: !llvm.ptr, %[[X:.*]]: !llvm.ptr, %[[Y:.*]]: !llvm.ptr)
// CHECK: %[[B:.*]] = llvm.load %[[M]] {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK: %[[BIT:.*]] = llvm.trunc %[[B]] : i8 to i1
// CHECK: %[[V:.*]] = llvm.load %[[X]] : !llvm.ptr -> f32
// CHECK: llvm.select %[[BIT]], %[[V]]
// CHECK: %[[NOT:.*]] = llvm.xor %[[BIT]]
// CHECK: %[[Z:.*]] = llvm.zext %[[NOT]] : i1 to i8
// CHECK: llvm.store %[[Z]], %[[M]] : i8, !llvm.ptr
// CHECK: llvm.load %[[M]] : !llvm.ptr -> vector<8xi1>
// CHECK-NOT: llvm.load {{.*}} -> i1
llvm.func @select_by_mask(%mask: !llvm.ptr, %x: !llvm.ptr, %y: !llvm.ptr) {
  %bit = llvm.load %mask {alignment = 1 : i64} : !llvm.ptr -> i1
  %v = llvm.load %x : !llvm.ptr -> f32
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  %r = llvm.select %bit, %v, %zero : i1, f32
  llvm.store %r, %y : f32, !llvm.ptr
  %true = llvm.mlir.constant(true) : i1
  %not = llvm.xor %bit, %true : i1
  llvm.store %not, %mask : i1, !llvm.ptr
  %vec = llvm.load %mask : !llvm.ptr -> vector<8xi1>
  llvm.return
}
