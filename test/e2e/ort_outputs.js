// ort_outputs.js - runs one ONNX model once in ONNX Runtime (onnxruntime-node)
// and writes every graph output, for test/e2e/quantized_convnet.py.
// Usage: node ort_outputs.js SPEC.json
// SPEC: {"model": PATH, "threads": N, "out_dir": DIR,
//        "inputs": {NAME: {"file": RAW, "dtype": "float32", "dims": [...]}}}
// RAW is the tensor's bytes, little-endian, row-major. Writes DIR/NAME.bin
// per output and DIR/outputs.json ({NAME: {"dtype", "dims"}}).
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const ARRAYS = {
  float32: Float32Array, int32: Int32Array, uint8: Uint8Array, int8: Int8Array,
  int64: BigInt64Array,
};

async function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const session = await ort.InferenceSession.create(spec.model, {
    intraOpNumThreads: spec.threads || 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const [name, t] of Object.entries(spec.inputs)) {
    const buf = fs.readFileSync(t.file);
    const Arr = ARRAYS[t.dtype];
    const data = new Arr(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
    feeds[name] = new ort.Tensor(t.dtype, data, t.dims);
  }
  const results = await session.run(feeds);
  const meta = {};
  for (const [name, t] of Object.entries(results)) {
    const file = path.join(spec.out_dir, name + '.bin');
    fs.writeFileSync(file, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    meta[name] = {dtype: t.type, dims: t.dims.map(Number)};
  }
  fs.writeFileSync(path.join(spec.out_dir, 'outputs.json'), JSON.stringify(meta));
}

main().catch((e) => {
  console.error(String(e));
  process.exit(1);
});
