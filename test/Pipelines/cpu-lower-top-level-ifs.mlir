// The entry function's inline checks become branches in linear time
// (docs/performance.md, "Compile time"): each scf.if without results in a
// function body is a cf.cond_br to its then (else) block, which branches
// to the rest of the block; ifs nested in other ops are left alone.
// RUN: disc-opt %s --disc-lower-top-level-ifs | FileCheck %s
// RUN: disc-opt %s --disc-lower-top-level-ifs --convert-scf-to-cf | FileCheck %s --check-prefix=SCF

// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[A:.*]]: i1, %[[B:.*]]: i1, %[[N:.*]]: index)
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: cf.cond_br %[[A]], ^[[T1:bb[0-9]+]], ^[[C1:bb[0-9]+]]
// CHECK-NEXT: ^[[T1]]:
// CHECK-NEXT: call @fail(%[[C0]])
// CHECK-NEXT: cf.br ^[[C1]]
// CHECK-NEXT: ^[[C1]]:
// CHECK-NEXT: %[[C1V:.*]] = arith.constant 1 : i64
// CHECK-NEXT: cf.cond_br %[[B]], ^[[T2:bb[0-9]+]], ^[[E2:bb[0-9]+]]
// CHECK-NEXT: ^[[T2]]:
// CHECK-NEXT: call @fail(%[[C1V]])
// CHECK-NEXT: cf.br ^[[C2:bb[0-9]+]]
// CHECK-NEXT: ^[[E2]]:
// CHECK-NEXT: call @fail(%[[C0]])
// CHECK-NEXT: cf.br ^[[C2]]
// CHECK-NEXT: ^[[C2]]:
// CHECK: scf.for
// CHECK-NEXT: scf.if
// CHECK: return
// SCF-LABEL: func.func @checks
// SCF-NOT: scf.
// SCF: return
func.func private @fail(i64)
func.func @checks(%a: i1, %b: i1, %n: index) {
  %c0 = arith.constant 0 : i64
  scf.if %a {
    func.call @fail(%c0) : (i64) -> ()
  }
  %c1 = arith.constant 1 : i64
  scf.if %b {
    func.call @fail(%c1) : (i64) -> ()
  } else {
    func.call @fail(%c0) : (i64) -> ()
  }
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  scf.for %i = %i0 to %n step %i1 {
    scf.if %a {
      func.call @fail(%c1) : (i64) -> ()
    }
  }
  return
}
