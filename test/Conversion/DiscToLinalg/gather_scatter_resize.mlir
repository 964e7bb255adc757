// RUN: disc-opt --disc-lower-to-linalg -cse %s | FileCheck %s

// Nearest resize along dim 1 (half_pixel, round_prefer_floor): the source
// index is computed in f64 from the output index and clamped to the input.
// CHECK-LABEL: func.func @resize_nearest
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>, %[[SZ:.+]]: tensor<2xi64>, %[[SC:.+]]: tensor<2xf64>)
// CHECK: %[[OUT:.+]] = tensor.extract %[[SZ]][%{{.+}}] : tensor<2xi64>
// CHECK: %[[S:.+]] = tensor.extract %[[SC]][%{{.+}}] : tensor<2xf64>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: %[[I0:.+]] = linalg.index 0
// CHECK: arith.divf %{{.+}}, %[[S]] : f64
// CHECK: math.floor
// CHECK: arith.cmpf ole
// CHECK: arith.fptosi
// CHECK: arith.maxsi
// CHECK: %[[J:.+]] = arith.minsi
// CHECK: tensor.extract %[[X]][%[[I0]], %[[J]]] : tensor<?x?xf32>
func.func @resize_nearest(%x: tensor<?x?xf32>, %sz: tensor<2xi64>, %sc: tensor<2xf64>) -> tensor<?x?xf32> {
  %0 = disc.resize "nearest", %x, %sz, %sc {axes = array<i64: 1>, coordinate_transformation_mode = "half_pixel"} : (tensor<?x?xf32>, tensor<2xi64>, tensor<2xf64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// Linear resize of one dim: two clamped taps, accumulated in f64.
// CHECK-LABEL: func.func @resize_linear
// CHECK: linalg.generic
// CHECK-COUNT-2: tensor.extract %{{.+}}[%{{.+}}] : tensor<?xf32>
// CHECK: arith.truncf %{{.+}} : f64 to f32
func.func @resize_linear(%x: tensor<?xf32>, %sz: tensor<1xi64>, %sc: tensor<1xf64>) -> tensor<?xf32> {
  %0 = disc.resize "linear", %x, %sz, %sc {axes = array<i64: 0>, coordinate_transformation_mode = "asymmetric"} : (tensor<?xf32>, tensor<1xi64>, tensor<1xf64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// CHECK-LABEL: func.func @gather_elements
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>, %[[I:.+]]: tensor<?x?xi64>)
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<?x?xi64>)
// CHECK: ^bb0(%[[IN:.+]]: i64, %{{.+}}: f32):
// CHECK: %[[R:.+]] = linalg.index 0
// CHECK: %[[C:.+]] = arith.index_cast %[[IN]] : i64 to index
// CHECK: arith.cmpi slt, %[[C]]
// CHECK: %[[W:.+]] = arith.select
// CHECK: tensor.extract %[[X]][%[[R]], %[[W]]]
func.func @gather_elements(%x: tensor<?x?xf32>, %i: tensor<?x?xi64>) -> tensor<?x?xf32> {
  %0 = disc.gather_elements %x, %i {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @gather_nd
// CHECK: linalg.generic
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<?x1xi64>
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<?x?xf32>
func.func @gather_nd(%x: tensor<?x?xf32>, %i: tensor<?x1xi64>) -> tensor<?x?xf32> {
  %0 = disc.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<?x?xf32>, tensor<?x1xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// Scatter: a loop over the updates threading the data tensor.
// CHECK-LABEL: func.func @scatter_elements
// CHECK-SAME: (%[[X:.+]]: tensor<?xf32>, %[[I:.+]]: tensor<?xi64>, %[[U:.+]]: tensor<?xf32>)
// CHECK: scf.for %[[IV:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[X]])
// CHECK: tensor.extract %[[I]][%[[IV]]]
// CHECK: %[[UV:.+]] = tensor.extract %[[U]][%[[IV]]]
// CHECK: %[[OLD:.+]] = tensor.extract %[[ACC]][%[[D:.+]]]
// CHECK: %[[NEW:.+]] = arith.addf %[[OLD]], %[[UV]]
// CHECK: %[[INS:.+]] = tensor.insert %[[NEW]] into %[[ACC]][%[[D]]]
// CHECK: scf.yield %[[INS]]
func.func @scatter_elements(%x: tensor<?xf32>, %i: tensor<?xi64>, %u: tensor<?xf32>) -> tensor<?xf32> {
  %0 = disc.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "add"} : (tensor<?xf32>, tensor<?xi64>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// CHECK-LABEL: func.func @scatter_nd
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tensor.insert
func.func @scatter_nd(%x: tensor<?x4xf32>, %i: tensor<?x1xi64>, %u: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = disc.scatter_nd %x, %i, %u : (tensor<?x4xf32>, tensor<?x1xi64>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// Ranks by counting the elements that precede each one, then the inverse
// permutation.
// CHECK-LABEL: func.func @arg_sort
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpi slt
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.cmpi eq
func.func @arg_sort(%x: tensor<?xf32>) -> tensor<?xi64> {
  %0 = disc.arg_sort %x {dimension = 0 : i64, descending = true} : (tensor<?xf32>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// Bilinear grid sampling with zero padding: four taps, each guarded by an
// in-bounds test.
// CHECK-LABEL: func.func @grid_sample
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK: math.floor
// CHECK-COUNT-4: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<?x?x?x?xf32>
func.func @grid_sample(%x: tensor<?x?x?x?xf32>, %g: tensor<?x?x?x2xf32>) -> tensor<?x?x?x?xf32> {
  %0 = disc.grid_sample %x, %g {mode = "bilinear", padding_mode = "zeros", align_corners = false} : (tensor<?x?x?x?xf32>, tensor<?x?x?x2xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}
