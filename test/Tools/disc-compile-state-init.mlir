// The initial value of a state input (disc.state_init) must be a public
// global: model.so exports it for the runtime (docs/runtime-abi.md,
// "Training state"), and nothing else of the compiled code.
// RUN: not disc-compile %s -o %t.so 2>&1 | FileCheck %s
// CHECK: error: the initial value 'w_init' of a state input is not a public global of the module

module {
  memref.global "private" constant @w_init : memref<2xf32> = dense<[1.0, 2.0]>
  func.func @main(%w: tensor<2xf32> {disc.name = "w", disc.state,
                                     disc.state_init = @w_init})
      -> (tensor<2xf32> {disc.name = "w2", disc.state_update = "w"}) {
    %0 = disc.exp %w : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
