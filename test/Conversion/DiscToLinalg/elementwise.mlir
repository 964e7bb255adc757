// RUN: disc-opt --disc-lower-to-linalg -cse %s | FileCheck %s

// Static shapes that prove no broadcasting: identity maps, no versioning.
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[BC0:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[BC1:.+]] = affine_map<(d0, d1) -> (d0, 0)>

// CHECK-LABEL: func.func @add_static_one
// CHECK-SAME: (%[[A:.+]]: tensor<?x4xf32>, %[[B:.+]]: tensor<1x4xf32>)
// CHECK: %[[D0:.+]] = tensor.dim %[[A]], %{{.+}} : tensor<?x4xf32>
// CHECK: %[[E:.+]] = tensor.empty(%[[D0]]) : tensor<?x4xf32>
// CHECK-NOT: scf.if
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[BC0]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<?x4xf32>, tensor<1x4xf32>) outs(%[[E]] : tensor<?x4xf32>)
// CHECK: arith.addf
func.func @add_static_one(%a: tensor<?x4xf32>, %b: tensor<1x4xf32>) -> tensor<?x4xf32> {
  %0 = disc.add %a, %b : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// The same value on both sides cannot broadcast against itself.
// CHECK-LABEL: func.func @mul_same_value
// CHECK-NOT: scf.if
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ID2]]]
// CHECK: arith.mulf
func.func @mul_same_value(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.mul %a, %a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// A lower-rank operand whose dim is the only source of the result dim.
// CHECK-LABEL: func.func @sub_unique_source
// CHECK-NOT: scf.if
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #[[BC1]], #[[ID2]]]
func.func @sub_unique_source(%a: tensor<?xf32>, %b: tensor<1x1xf32>) -> tensor<1x?xf32> {
  %0 = disc.sub %a, %b : (tensor<?xf32>, tensor<1x1xf32>) -> tensor<1x?xf32>
  return %0 : tensor<1x?xf32>
}

// Dynamic dims that may be 1 at run time: the result dim is
// select(a == 1, b, a); the op is versioned on every stretching candidate
// equal to its result dim; the fallback reads with tensor.extract at
// select(dim == 1, 0, i).
// CHECK-LABEL: func.func @add_dynamic_broadcast
// CHECK-SAME: (%[[A:.+]]: tensor<?x?xf32>, %[[B:.+]]: tensor<?xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[A0:.+]] = tensor.dim %[[A]], %[[C0]]
// CHECK-DAG: %[[A1:.+]] = tensor.dim %[[A]], %[[C1]]
// CHECK-DAG: %[[B0:.+]] = tensor.dim %[[B]], %[[C0]]
// CHECK: %[[IS1:.+]] = arith.cmpi eq, %[[A1]], %[[C1]] : index
// CHECK: %[[R1:.+]] = arith.select %[[IS1]], %[[B0]], %[[A1]] : index
// CHECK: %[[EQA:.+]] = arith.cmpi eq, %[[A1]], %[[R1]]
// CHECK: func.call @disc_check_failed
// CHECK: %[[BIS1:.+]] = arith.cmpi eq, %[[B0]], %[[C1]]
// CHECK: %[[EQB:.+]] = arith.cmpi eq, %[[B0]], %[[R1]]
// CHECK: func.call @disc_check_failed
// CHECK: %[[E:.+]] = tensor.empty(%[[A0]], %[[R1]]) : tensor<?x?xf32>
// CHECK: %[[COND:.+]] = arith.andi %[[EQA]], %[[EQB]]
// CHECK: scf.if %[[COND]] -> (tensor<?x?xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<?x?xf32>, tensor<?xf32>)
// CHECK: } else {
// CHECK: linalg.generic {indexing_maps = [#[[ID2]]], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<?x?xf32>)
// CHECK: %[[I0:.+]] = linalg.index 0 : index
// CHECK: %[[I1:.+]] = linalg.index 1 : index
// CHECK: %[[J:.+]] = arith.select %[[IS1]], %[[C0]], %[[I1]] : index
// CHECK: tensor.extract %[[A]][%[[I0]], %[[J]]] : tensor<?x?xf32>
// CHECK: %[[K:.+]] = arith.select %[[BIS1]], %[[C0]], %[[I1]] : index
// CHECK: tensor.extract %[[B]][%[[K]]] : tensor<?xf32>
// CHECK: arith.addf
func.func @add_dynamic_broadcast(%a: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = disc.add %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @int_ops
// CHECK: arith.divsi
// CHECK: arith.remsi
// CHECK: math.ipowi
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: arith.xori
func.func @int_ops(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = disc.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = disc.rem %0, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = disc.pow %1, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = disc.max %2, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %4 = disc.min %3, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %5 = disc.and %4, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %6 = disc.or %5, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %7 = disc.xor %6, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %7 : tensor<4xi32>
}

// CHECK-LABEL: func.func @float_ops
// CHECK: arith.divf
// CHECK: arith.remf
// CHECK: math.powf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
func.func @float_ops(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = disc.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = disc.rem %0, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = disc.pow %1, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = disc.max %2, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = disc.min %3, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// CHECK-LABEL: func.func @unary_math
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: math.tanh
// CHECK: math.erf
// CHECK: math.floor
// CHECK: math.ceil
// CHECK: math.roundeven
// CHECK: math.sin
// CHECK: math.cos
// CHECK: math.tan
// CHECK: math.asin
// CHECK: math.acos
// CHECK: math.atan
// CHECK: math.sinh
// CHECK: math.cosh
// CHECK: math.asinh
// CHECK: math.acosh
// CHECK: math.atanh
// CHECK: math.absf
// CHECK: arith.negf
func.func @unary_math(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = disc.exp %x : tensor<?xf32>
  %1 = disc.log %0 : tensor<?xf32>
  %2 = disc.rsqrt %1 : tensor<?xf32>
  %3 = disc.tanh %2 : tensor<?xf32>
  %4 = disc.erf %3 : tensor<?xf32>
  %5 = disc.floor %4 : tensor<?xf32>
  %6 = disc.ceil %5 : tensor<?xf32>
  %7 = disc.round %6 : tensor<?xf32>
  %8 = disc.sin %7 : tensor<?xf32>
  %9 = disc.cos %8 : tensor<?xf32>
  %10 = disc.tan %9 : tensor<?xf32>
  %11 = disc.asin %10 : tensor<?xf32>
  %12 = disc.acos %11 : tensor<?xf32>
  %13 = disc.atan %12 : tensor<?xf32>
  %14 = disc.sinh %13 : tensor<?xf32>
  %15 = disc.cosh %14 : tensor<?xf32>
  %16 = disc.asinh %15 : tensor<?xf32>
  %17 = disc.acosh %16 : tensor<?xf32>
  %18 = disc.atanh %17 : tensor<?xf32>
  %19 = disc.abs %18 : tensor<?xf32>
  %20 = disc.neg %19 : tensor<?xf32>
  return %20 : tensor<?xf32>
}

// logistic = 1 / (1 + exp(-x)); sign keeps 0 and NaN.
// CHECK-LABEL: func.func @logistic_sign_reciprocal
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[N:.+]] = arith.negf %{{.+}} : f32
// CHECK: %[[E:.+]] = math.exp %[[N]] : f32
// CHECK: %[[D:.+]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK: arith.divf %[[ONE]], %[[D]] : f32
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: arith.select
// CHECK: arith.divf
func.func @logistic_sign_reciprocal(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = disc.logistic %x : tensor<?xf32>
  %1 = disc.sign %0 : tensor<?xf32>
  %2 = disc.reciprocal %1 : tensor<?xf32>
  return %2 : tensor<?xf32>
}

// CHECK-LABEL: func.func @compare_select
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf une
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf oge
// CHECK: arith.cmpi sle
// CHECK: arith.select
func.func @compare_select(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi64>) -> tensor<4xf32> {
  %0 = disc.compare eq, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = disc.compare ne, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = disc.compare lt, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %3 = disc.compare ge, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %4 = disc.compare le, %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %5 = disc.and %0, %1 : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %6 = disc.or %2, %3 : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %7 = disc.xor %5, %6 : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %8 = disc.and %7, %4 : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %9 = disc.select %8, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %9 : tensor<4xf32>
}

// CHECK-LABEL: func.func @not_nan_inf
// CHECK: %[[T:.+]] = arith.constant true
// CHECK: arith.xori %{{.+}}, %[[T]] : i1
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf oeq, %{{.+}}, %[[NINF:.+]] : f32
// CHECK-NOT: 0x7F800000
// CHECK: arith.ori
func.func @not_nan_inf(%x: tensor<?xf32>, %p: tensor<?xi1>) -> (tensor<?xi1>, tensor<?xi1>, tensor<?xi1>) {
  %0 = disc.not %p : tensor<?xi1>
  %1 = disc.is_nan %x : tensor<?xf32> -> tensor<?xi1>
  %2 = disc.is_inf %x {detect_positive = false} : tensor<?xf32> -> tensor<?xi1>
  return %0, %1, %2 : tensor<?xi1>, tensor<?xi1>, tensor<?xi1>
}

// CHECK-LABEL: func.func @convert
// CHECK: arith.fptosi %{{.+}} : f32 to i64
// CHECK: arith.sitofp %{{.+}} : i64 to f16
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.cmpf une
// CHECK: arith.uitofp %{{.+}} : i1 to f32
// CHECK: arith.uitofp %{{.+}} : i8 to f32
// CHECK: arith.trunci %{{.+}} : i64 to i8
// CHECK: arith.extui %{{.+}} : i8 to i32
func.func @convert(%x: tensor<?xf32>, %u: tensor<?xi8>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xi32>) {
  %0 = disc.convert %x : (tensor<?xf32>) -> tensor<?xi64>
  %1 = disc.convert %0 : (tensor<?xi64>) -> tensor<?xf16>
  %2 = disc.convert %1 : (tensor<?xf16>) -> tensor<?xf32>
  %3 = disc.convert %2 : (tensor<?xf32>) -> tensor<?xi1>
  %4 = disc.convert %3 : (tensor<?xi1>) -> tensor<?xf32>
  %5 = disc.convert %u {unsigned_source = true} : (tensor<?xi8>) -> tensor<?xf32>
  %6 = disc.convert %0 : (tensor<?xi64>) -> tensor<?xi8>
  %7 = disc.convert %6 {unsigned_source = true} : (tensor<?xi8>) -> tensor<?xi32>
  return %4, %5, %7 : tensor<?xf32>, tensor<?xf32>, tensor<?xi32>
}

// Dims the symbolic shape analysis proves equal need no version: %r has
// the shape of %x through a run-time reshape, so both dims are `b`.
// CHECK-LABEL: func.func @add_proven_equal
// CHECK-NOT: scf.if
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ID2]]]
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<?x4xf32>, tensor<?x?xf32>)
// CHECK-NOT: scf.if
// CHECK: return
func.func @add_proven_equal(%x: tensor<?x4xf32> {disc.dims = ["b", 4]}) -> tensor<?x4xf32> {
  %s = disc.shape_of %x : tensor<?x4xf32> -> tensor<2xi64>
  %e = disc.exp %x : tensor<?x4xf32>
  %r = disc.dynamic_reshape %e, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %y = disc.add %x, %r : (tensor<?x4xf32>, tensor<?x?xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// Two different named dims: either may be 1 at run time, so the version
// stays.
// CHECK-LABEL: func.func @add_assumed_equal
// CHECK: scf.if
// CHECK: } else {
// CHECK: tensor.extract
func.func @add_assumed_equal(%x: tensor<?xf32> {disc.dims = ["a"]}, %y: tensor<?xf32> {disc.dims = ["b"]}) -> tensor<?xf32> {
  %z = disc.add %x, %y : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %z : tensor<?xf32>
}
