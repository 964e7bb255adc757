// RUN: disc-opt --disc-lower-to-linalg -cse %s | FileCheck %s

// ConvTranspose: the input is spread with the strides into a zero tensor at
// offset (K - 1) * dil = 2, cropped at pad_lo = 1, and convolved with the
// flipped, channel-swapped filter (stride 1).
// CHECK-LABEL: func.func @conv_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<?x8x?x?xf32>, %[[W:.+]]: tensor<8x4x3x3xf32>)
// CHECK: %[[Z:.+]] = linalg.fill
// CHECK: %[[S:.+]] = tensor.insert_slice %[[X]] into %[[Z]][0, 0, 2, 2] [%{{.+}}, 8, %{{.+}}, %{{.+}}] [1, 1, 2, 2]
// CHECK: %[[C:.+]] = tensor.extract_slice %[[S]][0, 0, 1, 1]
// CHECK: %[[WT:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<4x8x3x3xf32>)
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: tensor.extract %[[W]]
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[C]], %[[WT]] : tensor<?x8x?x?xf32>, tensor<4x8x3x3xf32>)
func.func @conv_transpose(%x: tensor<?x8x?x?xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<?x4x?x?xf32> {
  %0 = disc.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x4x3x3xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// CumSum: an scf.for over the scanned dim carries the running slab sum;
// exclusive stores the sum before adding the slab, reverse walks backwards.
// CHECK-LABEL: func.func @cumsum
// CHECK: %[[ACC:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x1xf32>)
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %[[N:.+]] step %{{.+}} iter_args(%[[A:.+]] = %[[ACC]], %[[R:.+]] = %{{.+}}) -> (tensor<?x1xf32>, tensor<?x?xf32>)
// CHECK: %[[P:.+]] = arith.subi %{{.+}}, %[[I]] : index
// CHECK: %[[SL:.+]] = tensor.extract_slice %{{.+}}[0, %[[P]]] [%{{.+}}, 1] [1, 1]
// CHECK: %[[INS:.+]] = tensor.insert_slice %[[A]] into %[[R]][0, %[[P]]]
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} ins(%[[A]], %[[SL]] : tensor<?x1xf32>, tensor<?x1xf32>) outs(%[[A]] : tensor<?x1xf32>)
// CHECK: arith.addf
// CHECK: scf.yield %[[SUM]], %[[INS]]
func.func @cumsum(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.cumsum %x {dimension = 1 : i64, exclusive = true, reverse = true} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// Shifts by the bit width or more give 0 (arith shifts would be poison).
// CHECK-LABEL: func.func @shift
// CHECK: %[[SH:.+]] = arith.shrui %[[A:.+]], %[[B:.+]] : i8
// CHECK: %[[W:.+]] = arith.constant 8 : i8
// CHECK: %[[OK:.+]] = arith.cmpi ult, %[[B]], %[[W]] : i8
// CHECK: arith.select %[[OK]], %[[SH]], %{{.+}} : i8
func.func @shift(%a: tensor<?xi8>, %b: tensor<?xi8>) -> tensor<?xi8> {
  %0 = disc.shift_right %a, %b : (tensor<?xi8>, tensor<?xi8>) -> tensor<?xi8>
  return %0 : tensor<?xi8>
}
