// RUN: disc-opt --disc-lower-to-linalg -cse %s | FileCheck %s

// CHECK-LABEL: func.func @constant
// CHECK: %[[C:.+]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: return %[[C]]
func.func @constant() -> tensor<2xf32> {
  %0 = disc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @shape_of
// CHECK-SAME: (%[[X:.+]]: tensor<?x3x?xf32>)
// CHECK: %[[D0:.+]] = tensor.dim %[[X]], %{{.+}}
// CHECK: %[[I0:.+]] = arith.index_cast %[[D0]] : index to i64
// CHECK: %[[I1:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK: %[[D2:.+]] = tensor.dim %[[X]], %{{.+}}
// CHECK: %[[I2:.+]] = arith.index_cast %[[D2]] : index to i64
// CHECK: tensor.from_elements %[[I0]], %[[I1]], %[[I2]] : tensor<3xi64>
func.func @shape_of(%x: tensor<?x3x?xf32>) -> tensor<3xi64> {
  %0 = disc.shape_of %x : tensor<?x3x?xf32> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// Result dim = select(s == 1, d, s); the operand's dynamic dim may be 1.
// CHECK-LABEL: func.func @expand
// CHECK-SAME: (%[[X:.+]]: tensor<?x1xf32>, %[[S:.+]]: tensor<2xi64>)
// CHECK: %[[E0:.+]] = tensor.extract %[[S]][%{{.+}}] : tensor<2xi64>
// CHECK: %[[S0:.+]] = arith.index_cast %[[E0]] : i64 to index
// CHECK: %[[D0:.+]] = tensor.dim %[[X]]
// CHECK: %[[IS1:.+]] = arith.cmpi eq, %[[S0]], %{{.+}} : index
// CHECK: %[[R0:.+]] = arith.select %[[IS1]], %[[D0]], %[[S0]] : index
// CHECK: %[[SAME:.+]] = arith.cmpi eq, %[[D0]], %[[R0]] : index
// CHECK: func.call @disc_check_failed
// CHECK: %[[E:.+]] = tensor.empty(%[[R0]], %{{.+}}) : tensor<?x?xf32>
// CHECK: scf.if %[[SAME]]
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<?x1xf32>) outs(%[[E]] : tensor<?x?xf32>)
// CHECK: else
// CHECK: tensor.extract %[[X]]
func.func @expand(%x: tensor<?x1xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = disc.expand %x, %s : (tensor<?x1xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// 0 copies the operand dim, -1 is the element count over the other dims.
// CHECK-LABEL: func.func @dynamic_reshape
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x128xf32>, %[[S:.+]]: tensor<4xi64>)
// CHECK: %[[E0:.+]] = tensor.extract %[[S]]
// CHECK: %[[S0:.+]] = arith.index_cast %[[E0]] : i64 to index
// CHECK: %[[D0:.+]] = tensor.dim %[[X]]
// CHECK: %[[Z0:.+]] = arith.cmpi eq, %[[S0]], %[[C0:.+]] : index
// CHECK: %[[R0:.+]] = arith.select %[[Z0]], %[[D0]], %[[S0]] : index
// CHECK: arith.floordivsi
// CHECK: %[[M1:.+]] = arith.cmpi eq, %[[R0]], %{{.+}} : index
// CHECK: %[[F0:.+]] = arith.select %[[M1]], %{{.+}}, %[[R0]] : index
// CHECK: %[[SH:.+]] = tensor.from_elements %[[F0]], %{{.+}}, %{{.+}}, %{{.+}} : tensor<4xindex>
// CHECK: tensor.reshape %[[X]](%[[SH]]) : (tensor<?x?x128xf32>, tensor<4xindex>) -> tensor<?x?x4x32xf32>
func.func @dynamic_reshape(%x: tensor<?x?x128xf32>, %s: tensor<4xi64>) -> tensor<?x?x4x32xf32> {
  %0 = disc.dynamic_reshape %x, %s : (tensor<?x?x128xf32>, tensor<4xi64>) -> tensor<?x?x4x32xf32>
  return %0 : tensor<?x?x4x32xf32>
}

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x4xf32>)
// CHECK: %[[E:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<?x4x?xf32>
// CHECK: linalg.transpose ins(%[[X]] : tensor<?x?x4xf32>) outs(%[[E]] : tensor<?x4x?xf32>) permutation = [0, 2, 1]
func.func @transpose(%x: tensor<?x?x4xf32>) -> tensor<?x4x?xf32> {
  %0 = disc.transpose %x {permutation = array<i64: 0, 2, 1>} : (tensor<?x?x4xf32>) -> tensor<?x4x?xf32>
  return %0 : tensor<?x4x?xf32>
}

// CHECK-LABEL: func.func @concatenate
// CHECK-SAME: (%[[A:.+]]: tensor<?xi64>, %[[B:.+]]: tensor<2xi64>)
// CHECK: %[[DA:.+]] = tensor.dim %[[A]]
// CHECK: %[[N:.+]] = arith.addi %[[DA]], %{{.+}} : index
// CHECK: %[[E:.+]] = tensor.empty(%[[N]]) : tensor<?xi64>
// CHECK: %[[I0:.+]] = tensor.insert_slice %[[A]] into %[[E]][0] [%[[DA]]] [1]
// CHECK: tensor.insert_slice %[[B]] into %[[I0]][%[[DA]]] [2] [1]
func.func @concatenate(%a: tensor<?xi64>, %b: tensor<2xi64>) -> tensor<?xi64> {
  %0 = disc.concatenate %a, %b {dimension = 0 : i64} : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// Run-time steps: generic reading start + i * step.
// CHECK-LABEL: func.func @slice_dynamic_step
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<?x?xf32>, %{{.+}}, %[[SP:[a-z0-9_]+]]: tensor<1xi64>)
// CHECK: %[[SPE:.+]] = tensor.extract %[[SP]]
// CHECK: %[[STEP:.+]] = arith.index_cast %[[SPE]] : i64 to index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[STEP]], %{{.+}} : index
// CHECK: %[[START:.+]] = arith.select %[[NEG]], %{{.+}}, %{{.+}} : index
// CHECK: %[[CNT:.+]] = arith.ceildivsi %{{.+}}, %[[STEP]] : index
// CHECK: %[[N:.+]] = arith.maxsi %[[CNT]], %{{.+}} : index
// CHECK: %[[E:.+]] = tensor.empty(%{{.+}}, %[[N]]) : tensor<?x?xf32>
// CHECK: linalg.generic {{.+}} outs(%[[E]] : tensor<?x?xf32>)
// CHECK: %[[I0:.+]] = linalg.index 0 : index
// CHECK: %[[I1:.+]] = linalg.index 1 : index
// CHECK: %[[MUL:.+]] = arith.muli %[[I1]], %[[STEP]] : index
// CHECK: %[[IDX:.+]] = arith.addi %[[START]], %[[MUL]] : index
// CHECK: tensor.extract %[[X]][%[[I0]], %[[IDX]]] : tensor<?x?xf32>
func.func @slice_dynamic_step(%x: tensor<?x?xf32>, %st: tensor<1xi64>, %en: tensor<1xi64>, %sp: tensor<1xi64>) -> tensor<?x?xf32> {
  %0 = disc.slice %x, %st, %en, %sp {axes = array<i64: 1>} : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// Constant positive steps: tensor.extract_slice.
// CHECK-LABEL: func.func @slice_constant_step
// CHECK: tensor.extract_slice %{{.+}}[0, %{{.+}}] [%{{.+}}, %{{.+}}] [1, 2] : tensor<?x?xf32> to tensor<?x?xf32>
func.func @slice_constant_step(%x: tensor<?x?xf32>, %st: tensor<1xi64>, %en: tensor<1xi64>) -> tensor<?x?xf32> {
  %sp = disc.constant dense<2> : tensor<1xi64>
  %0 = disc.slice %x, %st, %en, %sp {axes = array<i64: 1>} : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// Negative indices wrap by the axis size.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[D:.+]]: tensor<1000x128xf32>, %[[T:.+]]: tensor<?x?xi64>)
// CHECK: linalg.generic {indexing_maps = [#[[IDX:.+]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[T]] : tensor<?x?xi64>)
// CHECK: ^bb0(%[[IN:.+]]: i64, %{{.+}}: f32):
// CHECK: %[[RAW:.+]] = arith.index_cast %[[IN]] : i64 to index
// CHECK: func.call @disc_check_failed
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[RAW]], %{{.+}} : index
// CHECK: %[[ADD:.+]] = arith.addi %[[RAW]], %{{.+}} : index
// CHECK: %[[FIX:.+]] = arith.select %[[NEG]], %[[ADD]], %[[RAW]] : index
// CHECK: %[[I2:.+]] = linalg.index 2 : index
// CHECK: tensor.extract %[[D]][%[[FIX]], %[[I2]]] : tensor<1000x128xf32>
func.func @gather(%e: tensor<1000x128xf32>, %t: tensor<?x?xi64>) -> tensor<?x?x128xf32> {
  %0 = disc.gather %e, %t {axis = 0 : i64} : (tensor<1000x128xf32>, tensor<?x?xi64>) -> tensor<?x?x128xf32>
  return %0 : tensor<?x?x128xf32>
}

// CHECK-LABEL: func.func @pad_constant
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>, %[[P:.+]]: tensor<4xi64>, %[[V:.+]]: tensor<f32>)
// CHECK: %[[VAL:.+]] = tensor.extract %[[V]][] : tensor<f32>
// CHECK: tensor.pad %[[X]] low[%{{.+}}, %{{.+}}] high[%{{.+}}, %{{.+}}]
// CHECK: tensor.yield %[[VAL]] : f32
func.func @pad_constant(%x: tensor<?x?xf32>, %p: tensor<4xi64>, %v: tensor<f32>) -> tensor<?x?xf32> {
  %0 = disc.pad constant, %x, %p, %v : (tensor<?x?xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// Constant pads give static bounds.
// CHECK-LABEL: func.func @pad_static
// CHECK: tensor.pad %{{.+}} low[1, 0] high[2, 3]
// CHECK: tensor.cast %{{.+}} : tensor<5x7xf32> to tensor<?x?xf32>
func.func @pad_static(%x: tensor<2x4xf32>, %v: tensor<f32>) -> tensor<?x?xf32> {
  %p = disc.constant dense<[1, 0, 2, 3]> : tensor<4xi64>
  %0 = disc.pad constant, %x, %p, %v : (tensor<2x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// Reflect: j < 0 -> -j; j > last -> 2 * last - j.
// CHECK-LABEL: func.func @pad_reflect
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: arith.subi
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: arith.muli
// CHECK: arith.cmpi sgt
// CHECK: arith.select
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract
func.func @pad_reflect(%x: tensor<?x?xf32>, %p: tensor<4xi64>, %v: tensor<f32>) -> tensor<?x?xf32> {
  %0 = disc.pad reflect, %x, %p, %v : (tensor<?x?xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// count = max(ceildiv(limit - start, delta), 0); element i = start + i * delta.
// CHECK-LABEL: func.func @range
// CHECK: %[[D:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK: %[[NZ:.+]] = arith.cmpi ne, %[[D]], %{{.+}} : i64
// CHECK: func.call @disc_check_failed
// CHECK: %[[S:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK: %[[L:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK: %[[DIFF:.+]] = arith.subi %[[L]], %[[S]] : i64
// CHECK: %[[Q:.+]] = arith.ceildivsi %[[DIFF]], %[[D]] : i64
// CHECK: %[[QI:.+]] = arith.index_cast %[[Q]] : i64 to index
// CHECK: %[[N:.+]] = arith.maxsi %[[QI]], %{{.+}} : index
// CHECK: %[[E:.+]] = tensor.empty(%[[N]]) : tensor<?xi64>
// CHECK: linalg.generic {{.+}} outs(%[[E]] : tensor<?xi64>)
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK: %[[II:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[M:.+]] = arith.muli %[[II]], %[[D]] : i64
// CHECK: arith.addi %[[S]], %[[M]] : i64
func.func @range(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?xi64> {
  %0 = disc.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
