// RUN: disc-opt --disc-lower-to-linalg -cse %s | FileCheck %s

// Bounds fixed by an op's contract (TopK k, Split sizes) carry their
// message on disc.slice: the lowering checks 0 <= start <= end <= dim (and
// end == dim) before slicing, with {0} start, {1} end, {2} dim, {3} size.
// Constant bounds within a static dim need no check (dropped: those two
// and the three steps, constant 1).
// CHECK: module attributes {disc.check_messages = ["TopK node 't': k is {1}, out of range [0, {2}]", "Split node 's': sizes end at {1}, not {2}"], disc.checks_dropped = 5 : i64}

// CHECK-LABEL: func.func @topk_like
// CHECK: %[[K:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK-DAG: arith.cmpi sle, %[[K]], %{{.+}} : index
// CHECK-DAG: arith.cmpi sge, %[[K]], %{{.+}} : index
// CHECK: scf.if
// CHECK: func.call @disc_check_failed
// CHECK: tensor.extract_slice
func.func @topk_like(%x: tensor<?xf32>, %k: tensor<1xi64>) -> tensor<?xf32> {
  %z = disc.constant dense<0> : tensor<1xi64>
  %one = disc.constant dense<1> : tensor<1xi64>
  %0 = disc.slice %x, %z, %k, %one {axes = array<i64: 0>, disc.bounds_message = "k is {1}, out of range [0, {2}]"} : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32> loc("t"("TopK"("m.onnx":0:0)))
  return %0 : tensor<?xf32>
}

// CHECK-LABEL: func.func @split_last
// CHECK: arith.cmpi eq
// CHECK: scf.if
// CHECK: func.call @disc_check_failed
func.func @split_last(%x: tensor<?xf32>) -> tensor<2xf32> {
  %s = disc.constant dense<1> : tensor<1xi64>
  %e = disc.constant dense<3> : tensor<1xi64>
  %0 = disc.slice %x, %s, %e, %s {axes = array<i64: 0>, disc.end_message = "sizes end at {1}, not {2}"} : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32> loc("s"("Split"("m.onnx":0:0)))
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @static_in_range
// CHECK-NOT: disc_check_failed
// CHECK: tensor.extract_slice
func.func @static_in_range(%x: tensor<5xf32>) -> tensor<4xf32> {
  %s = disc.constant dense<1> : tensor<1xi64>
  %e = disc.constant dense<5> : tensor<1xi64>
  %0 = disc.slice %x, %s, %e, %s {axes = array<i64: 0>, disc.bounds_message = "out of range", disc.end_message = "end"} : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf32> loc("s2"("Split"("m.onnx":0:0)))
  return %0 : tensor<4xf32>
}
