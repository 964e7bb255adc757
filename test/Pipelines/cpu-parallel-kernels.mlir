// Outlined kernels with a parallel outer loop run in chunks [lo, hi) of
// it on the session's threads (docs/performance.md, "Threads").
// RUN: disc-opt %s --split-input-file --disc-outline-kernels --disc-parallelize-kernels --canonicalize | FileCheck %s
// RUN: disc-opt %s --split-input-file --disc-outline-kernels --disc-parallelize-kernels --convert-linalg-to-loops --lower-affine --convert-scf-to-cf --expand-strided-metadata --lower-affine --convert-arith-to-llvm --convert-index-to-llvm --finalize-memref-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts --disc-lower-parallel-calls | FileCheck %s --check-prefix=LLVM

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// A row softmax-like reduction over the inner dim: rows run in parallel,
// 256 x 256 iterations, chunks of at least 64 rows.
// CHECK-LABEL: func.func @rows
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[N:[a-z0-9_]+]] = memref.dim %{{.*}}, %[[C0]]
// CHECK: %[[R:[a-z0-9_]+]] = memref.alloc
// CHECK: call @disc_kernel_0(%{{.*}}, %[[R]], %[[C0]], %[[N]], %[[C64]])
// CHECK: func.func private @disc_kernel_0(%[[X:[a-z0-9]+]]: memref<?x256xf32>, %[[O:[a-z0-9]+]]: memref<?x1xf32>, %[[LO:[a-z0-9]+]]: index, %[[HI:[a-z0-9]+]]: index, %{{.*}}: index)
// CHECK-SAME: disc.parallel
// CHECK: %[[SIZE:[0-9]+]] = arith.subi %[[HI]], %[[LO]]
// CHECK: %[[XS:[a-z0-9_]+]] = memref.subview %[[X]][%[[LO]], 0] [%[[SIZE]], 256] [1, 1]
// CHECK: %[[OS:[a-z0-9_]+]] = memref.subview %[[O]][%[[LO]], 0] [%[[SIZE]], 1] [1, 1]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[XS]] : {{.*}}) outs(%[[OS]] : {{.*}})

// The call becomes disc_parallel_for(body, env, n, chunk); the body loads
// the arguments from env and calls the kernel on [lo, hi).
// LLVM-LABEL: llvm.func @rows
// LLVM: %[[ENV:[0-9]+]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, i64, i64, i64, i64, ptr, ptr, i64, i64, i64, i64, i64)>
// LLVM: %[[BODY:[0-9]+]] = llvm.mlir.addressof @disc_parallel_body_0
// LLVM: llvm.call @disc_parallel_for(%[[BODY]], %[[ENV]], %{{.*}}, %{{.*}})
// LLVM-NOT: llvm.call @disc_kernel_0
// LLVM: llvm.func @disc_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
// LLVM: llvm.func internal @disc_parallel_body_0(%{{.*}}: !llvm.ptr, %[[L:[a-z0-9]+]]: i64, %[[H:[a-z0-9]+]]: i64)
// LLVM: llvm.load
// LLVM: llvm.call @disc_kernel_0({{.*}}, %[[L]], %[[H]], %{{.*}})
func.func @rows(%x: memref<?x256xf32>) -> memref<?x1xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x256xf32>
  %r = memref.alloc(%n) : memref<?x1xf32>
  linalg.generic {indexing_maps = [#id, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x256xf32>) outs(%r : memref<?x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  }
  return %r : memref<?x1xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (0, d1)>

// A reduction over the outer dim stays serial.
// CHECK-LABEL: func.func @columns
// CHECK: call @disc_kernel_0(%{{[^,]*}}, %{{[^,]*}}) :
// CHECK: func.func private @disc_kernel_0(%{{.*}}: memref<512x256xf32>, %{{.*}}: memref<1x256xf32>)
// CHECK-NOT: disc.parallel
// CHECK: linalg.generic
// LLVM-LABEL: llvm.func @columns
// LLVM: llvm.call @disc_kernel_0
// LLVM-NOT: disc_parallel_for
// LLVM: llvm.func @disc_kernel_0
// LLVM-NOT: disc_parallel
// LLVM: llvm.return
func.func @columns(%x: memref<512x256xf32>) -> memref<1x256xf32> {
  %r = memref.alloc() : memref<1x256xf32>
  linalg.generic {indexing_maps = [#id, #col],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<512x256xf32>) outs(%r : memref<1x256xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.addf %acc, %a : f32
    linalg.yield %0 : f32
  }
  return %r : memref<1x256xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A tiny static kernel (4 x 8 iterations) stays serial.
// CHECK-LABEL: func.func @tiny
// CHECK: func.func private @disc_kernel_0(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>)
// CHECK-NOT: disc.parallel
// CHECK: linalg.generic
func.func @tiny(%x: memref<4x8xf32>) -> memref<4x8xf32> {
  %r = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%r : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.addf %a, %a : f32
    linalg.yield %0 : f32
  }
  return %r : memref<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>

// A transpose within one buffer (input and output views of the same
// allocation, read through another indexing) stays serial. A static
// elementwise op with two parallel loops runs in chunks of the flattened
// 256 x 256 rows and columns: each row the chunk touches gets a slice of
// its columns, and linalg.index 0 is the row.
// CHECK-LABEL: func.func @alias
// CHECK-DAG: %[[N:.*]] = arith.constant 65536 : index
// CHECK-DAG: %[[CHUNK:.*]] = arith.constant 16384 : index
// CHECK: call @disc_kernel_0(%{{[^,]*}}) :
// CHECK: call @disc_kernel_1(%{{.*}}, %{{.*}}, %[[N]], %[[CHUNK]])
// CHECK: func.func private @disc_kernel_0(%{{.*}}: memref<256x256xf32>)
// CHECK-NOT: disc.parallel
// CHECK: func.func private @disc_kernel_1(%{{.*}}: memref<256x256xf32>, %[[LO:[a-z0-9]+]]: index, %[[HI:[a-z0-9]+]]: index, %{{.*}}: index)
// CHECK-SAME: disc.parallel
// CHECK: %[[FIRST:[0-9]+]] = arith.divui %[[LO]], %{{.*}}
// CHECK: %[[LAST:[0-9]+]] = arith.ceildivui %[[HI]], %{{.*}}
// CHECK: scf.for %[[ROW:[a-z0-9]+]] = %[[FIRST]] to %[[LAST]]
// CHECK: memref.subview %{{.*}}[%[[ROW]], %{{.*}}] [1, %{{.*}}] [1, 1]
// CHECK: linalg.generic
// CHECK: arith.index_cast %[[ROW]] : index to i64
func.func @alias() -> memref<256x256xf32> {
  %b = memref.alloc() : memref<256x256xf32>
  linalg.generic {indexing_maps = [#t, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<256x256xf32>) outs(%b : memref<256x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %r = memref.alloc() : memref<256x256xf32>
  linalg.generic {indexing_maps = [#id],
                  iterator_types = ["parallel", "parallel"]}
      outs(%r : memref<256x256xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    linalg.yield %f : f32
  }
  memref.dealloc %b : memref<256x256xf32>
  return %r : memref<256x256xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// A dynamic reduced dim: the smallest chunk is computed at the call,
// ceil(16384 / max(dim 1, 1)) rows.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-DAG: %[[C16384:.*]] = arith.constant 16384 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[M:[a-z0-9_]+]] = memref.dim %[[X:[a-z0-9]+]], %[[C1]]
// CHECK: %[[MAX:[0-9]+]] = arith.maxui %[[M]], %[[C1]]
// CHECK: %[[CHUNK:[0-9]+]] = arith.ceildivui %[[C16384]], %[[MAX]]
// CHECK: call @disc_kernel_0(%[[X]], %{{.*}}, %{{.*}}, %{{.*}}, %[[CHUNK]])
func.func @dynamic_rows(%x: memref<?x?xf32>, %r: memref<?x1xf32>) {
  linalg.generic {indexing_maps = [#id, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%r : memref<?x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  }
  return
}
