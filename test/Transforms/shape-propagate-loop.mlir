// RUN: disc-opt %s --disc-shape-propagate | FileCheck %s

// The importer's loops (recurrent layers) carry loop-invariant shapes: the
// region arguments and results of scf.for get the dims of the init values,
// and tensor.insert_slice has the dims of its destination, so no unknown
// dims come out of a loop.
// CHECK-LABEL: func.func @loop
// CHECK: disc.tanh %{{.*}} {disc_shape.dims = {{\[\[}}@batch, 4]]}
// CHECK: tensor.insert_slice {{.*}} {disc_shape.dims = {{\[\[}}@seq, @batch, 4]]}
// CHECK: } {disc_shape.dims = {{\[\[}}@batch, 4], [@seq, @batch, 4]]}
// CHECK: disc.exp %{{.*}} {disc_shape.dims = {{\[\[}}@batch, 4]]}
func.func @loop(%x: tensor<?x?x4xf32> {disc.dims = ["seq", "batch", 4]},
                %h: tensor<?x4xf32> {disc.dims = ["batch", 4]})
    -> (tensor<?x4xf32>, tensor<?x?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x4xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%hh = %h, %y = %x)
      -> (tensor<?x4xf32>, tensor<?x?x4xf32>) {
    %t = disc.tanh %hh : tensor<?x4xf32>
    %b = tensor.dim %y, %c1 : tensor<?x?x4xf32>
    %y2 = tensor.insert_slice %t into %y[%i, 0, 0] [1, %b, 4] [1, 1, 1]
        : tensor<?x4xf32> into tensor<?x?x4xf32>
    scf.yield %t, %y2 : tensor<?x4xf32>, tensor<?x?x4xf32>
  }
  %e = disc.exp %r#0 : tensor<?x4xf32>
  return %e, %r#1 : tensor<?x4xf32>, tensor<?x?x4xf32>
}
