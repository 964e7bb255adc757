// RUN: disc-opt --disc-lower-to-linalg -cse %s | FileCheck %s

// Every check message is kept on the module, indexed by the id passed to
// @disc_check_failed; a constant index within a static axis needs no check.
// CHECK: module attributes {disc.check_messages = ["Range node 'r': delta is 0", "Range node 'r': limit - start ({0} - {1}) overflows int64", "Range node 'r': the element count ceil((limit - start) / delta) does not fit in int64", "index {0} is out of range [-{1}, {1})"], disc.checks_dropped = 1 : i64}

// CHECK-LABEL: func.func @range_delta
// CHECK: %[[D:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK: %[[NZ:.+]] = arith.cmpi ne, %[[D]], %{{.+}} : i64
// CHECK: %[[BAD:.+]] = arith.xori %[[NZ]], %{{.+}} : i1
// CHECK: scf.if %[[BAD]] {
// CHECK: func.call @disc_check_failed(%[[ID:.+]], %[[ID]], %[[ID]], %[[ID]], %[[ID]]) : (i64, i64, i64, i64, i64) -> ()
// CHECK: }
// limit - start must not overflow (the sign test on l ^ s and l ^ diff),
// nor may the count be 2^63 (diff INT64_MIN, delta -1).
// CHECK: %[[DIFF:.+]] = arith.subi
// CHECK: arith.xori
// CHECK: arith.xori
// CHECK: arith.andi
// CHECK: arith.cmpi sge
// CHECK: func.call @disc_check_failed
// CHECK: arith.cmpi eq, %[[DIFF]]
// CHECK: func.call @disc_check_failed
// CHECK: arith.ceildivsi
func.func @range_delta(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?xi64> {
  %0 = disc.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64> loc("r"("Range"("m.onnx":0:0)))
  return %0 : tensor<?xi64>
}

// A run-time index is checked against [-dim, dim) inside the loop body,
// before it is read.
// CHECK-LABEL: func.func @gather_checked
// CHECK: linalg.generic
// CHECK: %[[RAW:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: %[[LO:.+]] = arith.cmpi sge, %[[RAW]], %{{.+}} : index
// CHECK: %[[HI:.+]] = arith.cmpi slt, %[[RAW]], %{{.+}} : index
// CHECK: %[[OK:.+]] = arith.andi %[[LO]], %[[HI]] : i1
// CHECK: scf.if
// CHECK: func.call @disc_check_failed
// CHECK: tensor.extract
func.func @gather_checked(%e: tensor<5x2xf32>, %t: tensor<?xi64>) -> tensor<?x2xf32> {
  %0 = disc.gather %e, %t {axis = 0 : i64} : (tensor<5x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// CHECK-LABEL: func.func @gather_constant
// CHECK-NOT: disc_check_failed
// CHECK: return
func.func @gather_constant(%e: tensor<5x2xf32>) -> tensor<2x2xf32> {
  %i = disc.constant dense<[4, -5]> : tensor<2xi64>
  %0 = disc.gather %e, %i {axis = 0 : i64} : (tensor<5x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// CHECK: func.func private @disc_check_failed(i64, i64, i64, i64, i64)
