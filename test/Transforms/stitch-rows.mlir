// disc-stitch-rows: a row reduction, the fills of its accumulators and the
// nests over the same rows run in one loop over the rows (flattened), each
// nest on the row's size-1 subviews; the ops between the nests stay, and a
// deallocation ends a group. Then disc-parallelize-kernels runs that loop
// in chunks.
// RUN: disc-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(disc-stitch-rows),canonicalize,cse)" | FileCheck %s
// RUN: disc-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(disc-stitch-rows),disc-outline-kernels,disc-parallelize-kernels,canonicalize)" | FileCheck %s --check-prefix=PAR

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>

// Softmax as lowered: max, exp(x - max) (then the max is freed), sum,
// division. Two row kernels, the dealloc between them; the row length is
// dynamic, so each is chosen at run time against the separate nests (rows
// of 256 elements or more take the row loop).
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: memref<?x?x?xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[B:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK: %[[T:.*]] = memref.dim %[[X]], %[[C1]]
// CHECK: %[[M:.*]] = memref.alloc(%[[B]], %[[T]]) : memref<?x?x1xf32>
// CHECK: call @disc_check_failed
// CHECK: %[[E:.*]] = memref.alloc(%[[B]], %[[T]], %{{.*}}) : memref<?x?x?xf32>
// CHECK: %[[N:.*]] = arith.muli %[[B]], %[[T]]
// CHECK: %[[LONG:.*]] = arith.cmpi uge, %{{.*}}, %[[C256]]
// CHECK: scf.if %[[LONG]] {
// CHECK:   %[[MC:.*]] = memref.collapse_shape %[[M]] {{\[}}[0, 1], [2]]
// CHECK:   %[[XC:.*]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]]
// CHECK:   scf.for %[[I:.*]] = %[[C0]] to %[[N]] step %[[C1]] {
// CHECK:     %[[MS:.*]] = memref.subview %[[MC]][%[[I]], 0] [1, 1] [1, 1]
// CHECK:     %[[MR:.*]] = memref.expand_shape %[[MS]] {{\[}}[0, 1], [2]] output_shape [1, 1, 1]
// CHECK:     linalg.fill ins(%{{.*}} : f32) outs(%[[MR]]
// CHECK:     %[[XS:.*]] = memref.subview %[[XC]][%[[I]], 0] [1, %{{.*}}] [1, 1]
// CHECK:     %[[XR:.*]] = memref.expand_shape %[[XS]]
// CHECK:     linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[XR]] : {{.*}}) outs(%{{.*}} : {{.*}})
// CHECK:     arith.maximumf
// CHECK:     linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK:     math.exp
// CHECK:   } {disc.row_loop}
// CHECK: } else {
// CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[M]] : memref<?x?x1xf32>)
// CHECK:   linalg.generic {{.*}} ins(%[[X]] : memref<?x?x?xf32>) outs(%[[M]] : memref<?x?x1xf32>)
// CHECK:   linalg.generic {{.*}} outs(%[[E]] : memref<?x?x?xf32>)
// CHECK: } {disc.row_versions}
// CHECK-NEXT: memref.dealloc %[[M]]
// CHECK: scf.if
// CHECK:   scf.for
// CHECK:     linalg.fill
// CHECK:     arith.addf
// CHECK:     arith.divf
// CHECK:   } {disc.row_loop}
// CHECK: } else {
// CHECK: } {disc.row_versions}
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc %[[E]]

// Outlined: the row loops run in chunks; the separate nests as before.
// PAR-LABEL: func.func @softmax
// PAR: scf.if
// PAR: call @disc_kernel_0(
// PAR: } else {
// PAR: call @disc_kernel_1(
// PAR: func.func private @disc_kernel_0(
// PAR-SAME: %[[LO:[a-z0-9]+]]: index, %[[HI:[a-z0-9]+]]: index, %{{[a-z0-9]+}}: index)
// PAR-SAME: disc.parallel
// PAR: scf.for %{{.*}} = %[[LO]] to %[[HI]] step
// PAR: func.func private @disc_kernel_1(
// PAR-SAME: disc.parallel
// PAR: linalg.fill
func.func private @disc_check_failed(i64)
func.func @softmax(%x: memref<?x?x?xf32>) -> memref<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %x, %c0 : memref<?x?x?xf32>
  %t = memref.dim %x, %c1 : memref<?x?x?xf32>
  %s = memref.dim %x, %c2 : memref<?x?x?xf32>
  %m = memref.alloc(%b, %t) : memref<?x?x1xf32>
  linalg.fill ins(%ninf : f32) outs(%m : memref<?x?x1xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x?x?xf32>) outs(%m : memref<?x?x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %acc, %in : f32
    linalg.yield %0 : f32
  }
  %bad = arith.cmpi slt, %s, %c0 : index
  scf.if %bad {
    %i = arith.index_cast %s : index to i64
    func.call @disc_check_failed(%i) : (i64) -> ()
  }
  %e = memref.alloc(%b, %t, %s) : memref<?x?x?xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : memref<?x?x?xf32>, memref<?x?x1xf32>) outs(%e : memref<?x?x?xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %0 = arith.subf %in, %mx : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %m : memref<?x?x1xf32>
  %sum = memref.alloc(%b, %t) : memref<?x?x1xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<?x?x1xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : memref<?x?x?xf32>) outs(%sum : memref<?x?x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  }
  %y = memref.alloc(%b, %t, %s) : memref<?x?x?xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %sum : memref<?x?x?xf32>, memref<?x?x1xf32>) outs(%y : memref<?x?x?xf32>) {
  ^bb0(%in: f32, %sm: f32, %out: f32):
    %0 = arith.divf %in, %sm : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %sum : memref<?x?x1xf32>
  memref.dealloc %e : memref<?x?x?xf32>
  return %y : memref<?x?x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#bcast = affine_map<(d0, d1) -> (d1)>

// A LayerNorm-like tail: a mean over rows of 768, the centered values,
// scaled by a [768] weight read whole (it indexes no row dim). One kernel,
// no run-time choice (the row length is static and long enough).
// CHECK-LABEL: func.func @centered
// CHECK-SAME: (%[[X:.*]]: memref<?x768xf32>, %[[W:.*]]: memref<768xf32>)
// CHECK-NOT: scf.if
// CHECK: scf.for
// CHECK:   linalg.fill
// CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %[[W]] : memref<1x768xf32, {{.*}}>, memref<1xf32, {{.*}}>, memref<768xf32>)
// CHECK: } {disc.row_loop}
func.func @centered(%x: memref<?x768xf32>, %w: memref<768xf32>) -> memref<?x768xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x768xf32>
  %s = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x768xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  }
  %y = memref.alloc(%n) : memref<?x768xf32>
  linalg.generic {indexing_maps = [#id, #row, #bcast, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s, %w : memref<?x768xf32>, memref<?xf32>, memref<768xf32>) outs(%y : memref<?x768xf32>) {
  ^bb0(%in: f32, %mean: f32, %g: f32, %out: f32):
    %0 = arith.subf %in, %mean : f32
    %1 = arith.mulf %0, %g : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %s : memref<?xf32>
  return %y : memref<?x768xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#other = affine_map<(d0, d1) -> (d1)>

// Not stitched: the second nest reads the written sums at d1, other rows'
// elements; without it the fill and the reduction alone stay as they are.
// CHECK-LABEL: func.func @across_rows
// CHECK-NOT: scf.for
// CHECK-NOT: disc.row_loop
func.func @across_rows(%x: memref<512x512xf32>) -> memref<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<512xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<512xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<512x512xf32>) outs(%s : memref<512xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  }
  %y = memref.alloc() : memref<512x512xf32>
  linalg.generic {indexing_maps = [#id, #other, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<512x512xf32>, memref<512xf32>) outs(%y : memref<512x512xf32>) {
  ^bb0(%in: f32, %o: f32, %out: f32):
    %0 = arith.subf %in, %o : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %s : memref<512xf32>
  return %y : memref<512x512xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// A mean: the sum, then its division in place on [rows, 1]. One nest over
// whole rows only: nothing to reuse, not stitched.
// CHECK-LABEL: func.func @mean
// CHECK-NOT: scf.for
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @mean(%x: memref<?x1024xf32>) -> memref<?x1xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %k = arith.constant 1024.0 : f32
  %n = memref.dim %x, %c0 : memref<?x1024xf32>
  %s = memref.alloc(%n) : memref<?x1xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<?x1xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x1024xf32>) outs(%s : memref<?x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%s : memref<?x1xf32>) {
  ^bb0(%out: f32):
    %0 = arith.divf %out, %k : f32
    linalg.yield %0 : f32
  }
  return %s : memref<?x1xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#mask = affine_map<(d0, d1, d2) -> (d1, d2)>

// Rows (heads, tokens) of 512 scores plus a [tokens, 512] mask shared by
// the heads: the mask indexes only the second row dim, so the row's own
// indices are computed (a division and a remainder by the token count);
// the other operands are read through their collapsed rows.
// CHECK-LABEL: func.func @masked_max
// CHECK-SAME: (%[[X:.*]]: memref<?x?x512xf32>, %[[MASK:.*]]: memref<?x512xf32>)
// CHECK: %[[T:.*]] = memref.dim %[[X]], %c1
// CHECK-NOT: scf.if
// CHECK: scf.for %[[I:.*]] =
// CHECK:   %[[R1:.*]] = arith.remui %[[I]], %[[T]]
// CHECK:   memref.subview %[[MASK]][%[[R1]], 0] [1, 512] [1, 1]
// CHECK:   arith.addf
// CHECK:   arith.maximumf
// CHECK: } {disc.row_loop}
func.func @masked_max(%x: memref<?x?x512xf32>, %mask: memref<?x512xf32>) -> memref<?x?x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %h = memref.dim %x, %c0 : memref<?x?x512xf32>
  %t = memref.dim %x, %c1 : memref<?x?x512xf32>
  %a = memref.alloc(%h, %t) : memref<?x?x512xf32>
  linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %mask : memref<?x?x512xf32>, memref<?x512xf32>) outs(%a : memref<?x?x512xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.addf %in, %m : f32
    linalg.yield %0 : f32
  }
  %m = memref.alloc(%h, %t) : memref<?x?x1xf32>
  linalg.fill ins(%ninf : f32) outs(%m : memref<?x?x1xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a : memref<?x?x512xf32>) outs(%m : memref<?x?x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %acc, %in : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %a : memref<?x?x512xf32>
  return %m : memref<?x?x1xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Rows of a static 77 elements: the separate nests stay.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT: scf.for
// CHECK-NOT: scf.if
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @short_rows(%x: memref<?x77xf32>) -> memref<?x77xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x77xf32>
  %s = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x77xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  }
  %y = memref.alloc(%n) : memref<?x77xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<?x77xf32>, memref<?xf32>) outs(%y : memref<?x77xf32>) {
  ^bb0(%in: f32, %mean: f32, %out: f32):
    %0 = arith.subf %in, %mean : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %s : memref<?xf32>
  return %y : memref<?x77xf32>
}
