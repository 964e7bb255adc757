// RUN: disc-opt --disc-lower-to-linalg -cse %s | FileCheck %s

// The shape analysis carries float(seq) as the integer seq (the range below
// has seq elements) only if f32 represents it exactly: seq has no maximum,
// so the cast checks |seq| <= 2^24 at run time. `short` has the maximum
// 4096: the solver proves the bound and the cast has no check.
// CHECK: module attributes {disc.check_messages = ["Cast node 'c': value {0} is outside [-16777216, 16777216], the integers f32 represents exactly (the compiled shapes assume it is exact)"
disc_shape.symbolic_dim @short {name = "short", min = 1, max = 4096}

// CHECK-LABEL: func.func @unbounded
// CHECK-NOT: disc_check_failed
// CHECK: %[[N:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK: %[[V:.+]] = arith.index_cast %[[N]] : i64 to index
// CHECK: %[[LE:.+]] = arith.cmpi sle, %[[V]], %{{.+}} : index
// CHECK: %[[GE:.+]] = arith.cmpi sge, %[[V]], %{{.+}} : index
// CHECK: %[[OK:.+]] = arith.andi %[[LE]], %[[GE]] : i1
// CHECK: scf.if
// CHECK: func.call @disc_check_failed
// CHECK: arith.sitofp
func.func @unbounded(%x: tensor<?xf32> {disc.dims = ["seq"]}) -> tensor<?xf32> {
  %s = disc.shape_of %x : tensor<?xf32> -> tensor<1xi64>
  %scalar = disc.constant dense<> : tensor<0xi64>
  %n = disc.dynamic_reshape %s, %scalar : (tensor<1xi64>, tensor<0xi64>) -> tensor<i64>
  %nf = disc.convert %n : (tensor<i64>) -> tensor<f32> loc("c"("Cast"("m.onnx":0:0)))
  %z = disc.constant dense<0.0> : tensor<f32>
  %o = disc.constant dense<1.0> : tensor<f32>
  %r = disc.range %z, %nf, %o : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// CHECK-LABEL: func.func @bounded
// CHECK-NOT: 16777216
// CHECK: arith.sitofp
// CHECK-NOT: 16777216
// CHECK: return
func.func @bounded(%x: tensor<?xf32> {disc.dims = ["short"]}) -> tensor<?xf32> {
  %s = disc.shape_of %x : tensor<?xf32> -> tensor<1xi64>
  %scalar = disc.constant dense<> : tensor<0xi64>
  %n = disc.dynamic_reshape %s, %scalar : (tensor<1xi64>, tensor<0xi64>) -> tensor<i64>
  %nf = disc.convert %n : (tensor<i64>) -> tensor<f32> loc("b"("Cast"("m.onnx":0:0)))
  %z = disc.constant dense<0.0> : tensor<f32>
  %o = disc.constant dense<1.0> : tensor<f32>
  %r = disc.range %z, %nf, %o : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
