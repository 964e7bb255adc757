// Allocation checks (disc-check-allocations) and --dim ranges: without a
// maximum every dynamic allocation keeps its overflow check; with ranges
// the shape solver proves sizes >= 0 and bytes within int64 and drops it.
// The counts are in the signature (`runtime_checks`, disc-run --report).
// RUN: disc-compile %s -o %t.so
// RUN: disc-run %t.so --input x=2x3:ones --report %t.json > /dev/null
// RUN: FileCheck %s --check-prefix=NORANGE --input-file %t.json
// RUN: disc-compile %s --dim a=1:64 --dim b=1:4096 -o %t2.so
// RUN: disc-run %t2.so --input x=2x3:ones --report %t2.json > /dev/null
// RUN: FileCheck %s --check-prefix=RANGE --input-file %t2.json
// A maximum on one dim only: a * b * 4 bytes is still unbounded.
// RUN: disc-compile %s --dim a=1:64 -o %t3.so
// RUN: disc-run %t3.so --input x=2x3:ones --report %t3.json > /dev/null
// RUN: FileCheck %s --check-prefix=NORANGE --input-file %t3.json

// Two other checks of the model are proven without ranges.
// NORANGE: "runtime_checks": {
// NORANGE-NEXT: "dropped": 2,
// NORANGE-NEXT: "kept": 1
// RANGE: "runtime_checks": {
// RANGE-NEXT: "dropped": 3,
// RANGE-NEXT: "kept": 0

func.func @main(%x: tensor<?x?xf32> {disc.name = "x", disc.dims = ["a", "b"]})
    -> (tensor<?x?xf32> {disc.name = "y"}) {
  %0 = disc.exp %x : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
