// RUN: disc-opt --disc-lower-to-linalg -cse %s | FileCheck %s

// CHECK-DAG: #[[DL:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[DR:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[DO:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[GIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3 * 2 + d5 * 3)>
// CHECK-DAG: #[[GF:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>
// CHECK-DAG: #[[O4:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[WIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK-DAG: #[[K2:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-DAG: #[[KEEP:.+]] = affine_map<(d0, d1, d2) -> (d0, 0, 0)>

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.+]]: tensor<?x64xf32>, %[[B:.+]]: tensor<64x?xf32>)
// CHECK: %[[M:.+]] = tensor.dim %[[A]]
// CHECK: %[[N:.+]] = tensor.dim %[[B]]
// CHECK: %[[E:.+]] = tensor.empty(%[[M]], %[[N]]) : tensor<?x?xf32>
// CHECK: %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<?x?xf32>)
// CHECK: linalg.matmul ins(%[[A]], %[[B]] : tensor<?x64xf32>, tensor<64x?xf32>) outs(%[[Z]] : tensor<?x?xf32>)
func.func @matmul(%a: tensor<?x64xf32>, %b: tensor<64x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.dot_general %a, %b {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x64xf32>, tensor<64x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @batch_matmul
// CHECK: linalg.batch_matmul
func.func @batch_matmul(%a: tensor<?x?x64xf32>, %b: tensor<?x64x?xf32>) -> tensor<?x?x?xf32> {
  %0 = disc.dot_general %a, %b {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<?x?x64xf32>, tensor<?x64x?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// Non-canonical form: one generic, loops [batch, lhs free, rhs free, k].
// CHECK-LABEL: func.func @dot_general_transposed_rhs
// CHECK: linalg.generic {indexing_maps = [#[[DL]], #[[DR]], #[[DO]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @dot_general_transposed_rhs(%a: tensor<?x?x64xf32>, %b: tensor<?x?x64xf32>) -> tensor<?x?x?xf32> {
  %0 = disc.dot_general %a, %b {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// Output size (ONNX Conv): (D + 6 - 7) floordiv 2 + 1.
// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:.+]]: tensor<?x3x?x?xf32>, %[[W:.+]]: tensor<64x3x7x7xf32>)
// CHECK: tensor.dim %[[X]], %{{.+}} : tensor<?x3x?x?xf32>
// CHECK: %[[H:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x3x?x?xf32>
// CHECK: %[[H6:.+]] = arith.addi %[[H]], %{{.+}} : index
// CHECK: %[[H7:.+]] = arith.subi %[[H6]], %{{.+}} : index
// CHECK: %[[HQ:.+]] = arith.floordivsi %[[H7]], %{{.+}} : index
// CHECK: %[[OH:.+]] = arith.addi %[[HQ]], %{{.+}} : index
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 3, 3] high[0, 0, 3, 3]
// CHECK: %[[E:.+]] = tensor.empty(%{{.+}}, %[[OH]], %{{.+}}) : tensor<?x64x?x?xf32>
// CHECK: %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]]
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<?x3x?x?xf32>, tensor<64x3x7x7xf32>) outs(%[[Z]]
func.func @conv2d(%x: tensor<?x3x?x?xf32>, %w: tensor<64x3x7x7xf32>) -> tensor<?x64x?x?xf32> {
  %0 = disc.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 3, 3, 3, 3>, feature_group_count = 1 : i64} : (tensor<?x3x?x?xf32>, tensor<64x3x7x7xf32>) -> tensor<?x64x?x?xf32>
  return %0 : tensor<?x64x?x?xf32>
}

// Grouped: input [N, G, Cg, D], filter [G, OCg, Cg, K], output collapsed.
// CHECK-LABEL: func.func @conv1d_grouped
// CHECK: %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1] high[0, 0, 0]
// CHECK: %[[N:.+]] = tensor.dim %[[P]], %{{.+}}
// CHECK: %[[D:.+]] = tensor.dim %[[P]], %{{.+}}
// CHECK: %[[XI:.+]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2], [3]] output_shape [%[[N]], 2, 2, %[[D]]] : tensor<?x4x?xf32> into tensor<?x2x2x?xf32>
// CHECK: %[[WI:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 2, 3] : tensor<6x2x3xf32> into tensor<2x3x2x3xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[GIN]], #[[GF]], #[[O4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[XI]], %[[WI]] : tensor<?x2x2x?xf32>, tensor<2x3x2x3xf32>)
// CHECK: tensor.collapse_shape %[[R]] {{\[\[}}0], [1, 2], [3]] : tensor<?x2x3x?xf32> into tensor<?x6x?xf32>
func.func @conv1d_grouped(%x: tensor<?x4x?xf32>, %w: tensor<6x2x3xf32>) -> tensor<?x6x?xf32> {
  %0 = disc.conv %x, %w {strides = array<i64: 2>, dilations = array<i64: 3>, padding = array<i64: 1, 0>, feature_group_count = 2 : i64} : (tensor<?x4x?xf32>, tensor<6x2x3xf32>) -> tensor<?x6x?xf32>
  return %0 : tensor<?x6x?xf32>
}

// Max pooling reads the input in place: a window reduction whose body reads
// the input at the position clamped into it and takes -inf outside it (the
// padding), no padded copy.
// CHECK-LABEL: func.func @maxpool
// CHECK-NOT: tensor.pad
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[I:.+]] = linalg.fill ins(%[[NINF]] : f32)
// CHECK: %[[WT:.+]] = tensor.empty() : tensor<3x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[K2]], #[[O4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[WT]] : tensor<3x3xf32>) outs(%[[I]]
// CHECK: %[[H:.+]] = arith.maxsi %{{.+}}, %{{.+}} : index
// CHECK: %[[W:.+]] = arith.maxsi %{{.+}}, %{{.+}} : index
// CHECK: %[[X:.+]] = tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %[[H]], %[[W]]] : tensor<?x64x?x?xf32>
// CHECK: %[[V:.+]] = arith.select %{{.+}}, %[[X]], %[[NINF]] : f32
// CHECK: arith.maximumf %{{.+}}, %[[V]]
func.func @maxpool(%x: tensor<?x64x?x?xf32>) -> tensor<?x64x?x?xf32> {
  %1 = disc.pool max, %x {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x64x?x?xf32>) -> tensor<?x64x?x?xf32>
  return %1 : tensor<?x64x?x?xf32>
}

// count_include_pad: divide by the window size.
// CHECK-LABEL: func.func @avgpool_include_pad
// CHECK: %[[S:.+]] = linalg.generic
// CHECK: arith.addf
// CHECK: %[[FOUR:.+]] = arith.constant 4.000000e+00 : f32
// CHECK: linalg.generic {{.+}} outs(%[[S]] : tensor<?x64x?x?xf32>)
// CHECK: arith.divf %{{.+}}, %[[FOUR]] : f32
func.func @avgpool_include_pad(%x: tensor<?x64x?x?xf32>) -> tensor<?x64x?x?xf32> {
  %1 = disc.pool avg, %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 1, 1>, count_include_pad = true} : (tensor<?x64x?x?xf32>) -> tensor<?x64x?x?xf32>
  return %1 : tensor<?x64x?x?xf32>
}

// Padding not counted: per-position counts from sum-pooling padded ones.
// CHECK-LABEL: func.func @avgpool_exclude_pad
// CHECK: %[[S:.+]] = linalg.generic
// CHECK: %[[ONES:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK: %[[PO:.+]] = tensor.pad %[[ONES]] low[0, 0] high[1, 1]
// CHECK: %[[CNT:.+]] = linalg.generic {{.+}} ins(%[[PO]], %{{.+}} : tensor<?x?xf32>, tensor<2x2xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[CNT]] : tensor<?x?xf32>) outs(%[[S]] : tensor<?x64x?x?xf32>)
// CHECK: arith.divf
func.func @avgpool_exclude_pad(%x: tensor<?x64x?x?xf32>) -> tensor<?x64x?x?xf32> {
  %1 = disc.pool avg, %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 1, 1>} : (tensor<?x64x?x?xf32>) -> tensor<?x64x?x?xf32>
  return %1 : tensor<?x64x?x?xf32>
}

// ceil_mode: the windows past the end read -inf like the padding; no pad.
// CHECK-LABEL: func.func @maxpool_ceil
// CHECK: arith.ceildivsi
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic
// CHECK: tensor.extract
// CHECK: arith.select
// CHECK: arith.maximumf
func.func @maxpool_ceil(%x: tensor<?x64x?x?xf32>) -> tensor<?x64x?x?xf32> {
  %1 = disc.pool max, %x {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, ceil_mode = true} : (tensor<?x64x?x?xf32>) -> tensor<?x64x?x?xf32>
  return %1 : tensor<?x64x?x?xf32>
}

// Mean: sum with keep_dims (constant-0 result map), then divide by the
// run-time product of the reduced dims.
// CHECK-LABEL: func.func @reduce_mean
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x8xf32>)
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[KEEP]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK: arith.addf
// CHECK: %[[D1:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x?x8xf32>
// CHECK: %[[CNT:.+]] = arith.muli %[[D1]], %{{.+}} : index
// CHECK: %[[CI:.+]] = arith.index_cast %[[CNT]] : index to i64
// CHECK: %[[CF:.+]] = arith.sitofp %[[CI]] : i64 to f32
// CHECK: linalg.generic {{.+}} outs(%[[S]] : tensor<?x1x1xf32>)
// CHECK: arith.divf %{{.+}}, %[[CF]] : f32
func.func @reduce_mean(%x: tensor<?x?x8xf32>) -> tensor<?x1x1xf32> {
  %0 = disc.reduce mean, %x {dimensions = array<i64: 1, 2>, keep_dims = true} : (tensor<?x?x8xf32>) -> tensor<?x1x1xf32>
  return %0 : tensor<?x1x1xf32>
}

// CHECK-LABEL: func.func @reduce_kinds
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
// CHECK: arith.constant 0x7F800000 : f32
// CHECK: arith.minimumf
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: arith.mulf
// CHECK: arith.constant -9223372036854775808 : i64
// CHECK: arith.maxsi
func.func @reduce_kinds(%x: tensor<?x?xf32>, %i: tensor<?x?xi64>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xi64>) {
  %0 = disc.reduce max, %x {dimensions = array<i64: 1>} : (tensor<?x?xf32>) -> tensor<?xf32>
  %1 = disc.reduce min, %x {dimensions = array<i64: 1>} : (tensor<?x?xf32>) -> tensor<?xf32>
  %2 = disc.reduce prod, %x {dimensions = array<i64: 0>} : (tensor<?x?xf32>) -> tensor<?xf32>
  %3 = disc.reduce max, %i {dimensions = array<i64: 0>} : (tensor<?x?xi64>) -> tensor<?xi64>
  return %0, %1, %2, %3 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xi64>
}

// ArgMax: value and i64 index accumulators; ties keep the smaller index.
// CHECK-LABEL: func.func @argmax
// CHECK: %[[R:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
// CHECK: %[[I:.+]] = linalg.index 1 : index
// CHECK: %[[II:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[GT:.+]] = arith.cmpf ogt
// CHECK: %[[EQ:.+]] = arith.cmpf oeq
// CHECK: %[[LT:.+]] = arith.cmpi slt, %[[II]]
// CHECK: %[[TIE:.+]] = arith.andi %[[EQ]], %[[LT]]
// CHECK: arith.ori %[[GT]], %[[TIE]]
// CHECK: return %[[R]]#1 : tensor<?xi64>
func.func @argmax(%x: tensor<?x10xf32>) -> tensor<?xi64> {
  %1 = disc.arg_reduce %x {dimension = 1 : i64, is_max = true, keep_dims = false} : (tensor<?x10xf32>) -> tensor<?xi64>
  return %1 : tensor<?xi64>
}

// The filter fixes the channel count of a grouped convolution whose input
// channels are dynamic (dynamic mode): C = groups * (C / groups) = 2 * 2.

// CHECK-LABEL: func @grouped_conv_dynamic_input_channels
// CHECK:         %[[CAST:.*]] = tensor.cast %{{.*}} : tensor<?x?x?xf32> to tensor<?x4x?xf32>
// CHECK:         tensor.expand_shape %[[CAST]] {{\[\[}}0], [1, 2], [3]]
// CHECK-SAME:      into tensor<?x2x2x?xf32>
// CHECK:         tensor.expand_shape %{{.*}} : tensor<6x2x3xf32> into tensor<2x3x2x3xf32>
// CHECK:         %[[G:.*]] = linalg.generic
// CHECK:         tensor.collapse_shape %[[G]] {{\[\[}}0], [1, 2], [3]] : tensor<?x2x3x?xf32> into tensor<?x6x?xf32>
func.func @grouped_conv_dynamic_input_channels(%x: tensor<?x?x?xf32>, %w: tensor<6x2x3xf32>) -> tensor<?x6x?xf32> {
  %0 = disc.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, padding = array<i64: 0, 0>, feature_group_count = 2 : i64} : (tensor<?x?x?xf32>, tensor<6x2x3xf32>) -> tensor<?x6x?xf32>
  return %0 : tensor<?x6x?xf32>
}
