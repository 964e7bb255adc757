// Loop-nest codegen on CPU (docs/performance.md, "Generated loops"):
// kernels get `noalias` pointers for distinct buffers, float reduction
// combiners allow reassociation, and exp/tanh/erf become polynomials.
// RUN: disc-opt %s --split-input-file --disc-outline-kernels | FileCheck %s --check-prefix=OUTLINE
// RUN: disc-opt %s --split-input-file --disc-reassociate-reductions | FileCheck %s --check-prefix=REASSOC
// RUN: disc-opt %s --split-input-file --convert-linalg-to-loops --disc-approximate-math | FileCheck %s --check-prefix=APPROX

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// Two distinct allocations and an input: every memref argument is noalias
// (the aligned pointer: parameter 1 of a memref, then 3 + 2 * rank more).
// OUTLINE-LABEL: func.func @distinct
// OUTLINE: func.func private @disc_kernel_0
// OUTLINE-SAME: disc.noalias_params = array<i32: 1, 8, 15>
func.func @distinct(%x: memref<4x8xf32>) -> memref<4x1xf32> {
  %s = memref.alloc() : memref<4x8xf32>
  %r = memref.alloc() : memref<4x1xf32>
  linalg.generic {indexing_maps = [#id, #id, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %s : memref<4x8xf32>, memref<4x8xf32>) outs(%r : memref<4x1xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %0 = arith.addf %acc, %m : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %s : memref<4x8xf32>
  return %r : memref<4x1xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Two views of one buffer: neither is noalias, the input is.
// OUTLINE-LABEL: func.func @views
// OUTLINE: func.func private @disc_kernel_0
// OUTLINE-SAME: disc.noalias_params = array<i32: 1>}
func.func @views(%x: memref<4x8xf32>) -> memref<8x8xf32> {
  %b = memref.alloc() : memref<8x8xf32>
  %top = memref.subview %b[0, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1]>>
  %bot = memref.subview %b[4, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %top : memref<4x8xf32>, memref<4x8xf32, strided<[8, 1]>>)
      outs(%bot : memref<4x8xf32, strided<[8, 1], offset: 32>>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %0 = arith.addf %a, %c : f32
    linalg.yield %0 : f32
  }
  return %b : memref<8x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// The combiner (it reads the accumulator) gets reassoc/contract, the
// producer of its other operand does not; an elementwise generic keeps
// its flags.
// REASSOC-LABEL: func.func @reduce
// REASSOC: arith.subf %{{.*}}, %{{.*}} : f32
// REASSOC: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// REASSOC: arith.addf %{{.*}}, %{{.*}} : f32
// REASSOC-NOT: fastmath
// REASSOC: return
func.func @reduce(%x: memref<4x8xf32>, %r: memref<4x1xf32>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%r : memref<4x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %d = arith.subf %a, %a : f32
    %0 = arith.maximumf %acc, %d : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.addf %a, %o : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// exp, tanh and erf of f32 become inline arithmetic (no math op left to
// turn into a libm call).
// APPROX-LABEL: func.func @transcendental
// APPROX-NOT: math.exp
// APPROX-NOT: math.tanh
// APPROX-NOT: math.erf
// APPROX: return
func.func @transcendental(%x: memref<?xf32>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    %t = math.tanh %e : f32
    %r = math.erf %t : f32
    linalg.yield %r : f32
  }
  return
}
