// A proven reshape that only splits dims lowers to tensor.expand_shape: a
// view of any strided operand (here a slice of the last dim, as an
// attention's q/k/v split of a fused projection), where tensor.reshape would
// need a dense operand and bufferization would copy the slice first. A
// reshape whose value is returned (or read by a library call) keeps
// tensor.reshape: those readers take dense buffers.
// RUN: disc-opt --disc-lower-to-linalg -cse %s | FileCheck %s

// CHECK-LABEL: func.func @split_reshape_of_slice
// CHECK: %[[K:.+]] = tensor.extract_slice %{{.+}}[0, 0, %{{.+}}] [%{{.+}}, %{{.+}}, 64] [1, 1, 1] : tensor<?x?x192xf32> to tensor<?x?x64xf32>
// CHECK: %[[E:.+]] = tensor.expand_shape %[[K]] {{\[}}[0], [1], [2, 3]] output_shape [%{{.+}}, %{{.+}}, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
// CHECK-NOT: tensor.reshape
// CHECK: linalg.generic {{.+}} ins(%[[E]] : tensor<?x?x4x16xf32>)
func.func @split_reshape_of_slice(%x: tensor<?x?x192xf32>) -> tensor<?x?x4x16xf32> {
  %st = disc.constant dense<64> : tensor<1xi64>
  %en = disc.constant dense<128> : tensor<1xi64>
  %sp = disc.constant dense<1> : tensor<1xi64>
  %k = disc.slice %x, %st, %en, %sp {axes = array<i64: 2>} : (tensor<?x?x192xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x64xf32>
  %s = disc.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
  %r = disc.dynamic_reshape %k, %s : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  %y = disc.neg %r : tensor<?x?x4x16xf32>
  return %y : tensor<?x?x4x16xf32>
}

// CHECK-LABEL: func.func @split_reshape_returned
// CHECK-NOT: tensor.expand_shape
// CHECK: tensor.reshape %{{.+}}(%{{.+}}) : (tensor<?x?x64xf32>, tensor<4xindex>) -> tensor<?x?x4x16xf32>
func.func @split_reshape_returned(%x: tensor<?x?x192xf32>) -> tensor<?x?x4x16xf32> {
  %st = disc.constant dense<64> : tensor<1xi64>
  %en = disc.constant dense<128> : tensor<1xi64>
  %sp = disc.constant dense<1> : tensor<1xi64>
  %k = disc.slice %x, %st, %en, %sp {axes = array<i64: 2>} : (tensor<?x?x192xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x64xf32>
  %s = disc.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
  %r = disc.dynamic_reshape %k, %s : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  return %r : tensor<?x?x4x16xf32>
}
