// disc-build-training-step: an op without a gradient rule on the path from
// a trained parameter to the loss is an error naming the ONNX node and op.
// RUN: not disc-opt %s --disc-build-training-step="loss=loss" 2>&1 | FileCheck %s --check-prefix=NORULE
// disc-compile --train stops with exit 2 (bad input) and the same message.
// RUN: %python -c "import subprocess, sys; r = subprocess.run(['disc-compile', '%s', '--train', '--loss', 'loss', '-o', '%t.so'], capture_output=True, text=True); print(r.stderr); sys.exit(0 if r.returncode == 2 else 1)" | FileCheck %s --check-prefix=NORULE
// NORULE: error: loc("mod_1"("Mod")): no gradient rule for node 'mod_1' (Mod) ('disc.rem'): the loss depends on a trained parameter through it
func.func @norule(%x: tensor<2x2xf32> {disc.name = "x"}) -> (tensor<f32> {disc.name = "loss"}) {
  %w = disc.constant {disc.param = "w"} dense<0.5> : tensor<2x2xf32>
  %c = disc.constant dense<0.3> : tensor<f32>
  %m = disc.mul %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = disc.rem %m, %c : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32> loc("mod_1"("Mod"))
  %l = disc.reduce sum, %r {dimensions = array<i64: 0, 1>} : (tensor<2x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
