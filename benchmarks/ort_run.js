// ort_run.js - times one ONNX model in ONNX Runtime (onnxruntime-node).
// Usage: node ort_run.js MODEL.onnx NAME:DTYPE:DIMS[:RANGE][,...] REPEAT THREADS
// (DTYPE float32 or int64, DIMS like 1x3x224x224; int64 values lie in
// [0, RANGE), default 1000). Prints one JSON line
// {"latencies_ms": [...], "first_ms": F} (the first run, a warm-up, is left
// out of the list and given as first_ms).
const ort = require('onnxruntime-node');

async function main() {
  const [model, spec, repeatText, threadsText] = process.argv.slice(2);
  const repeat = parseInt(repeatText, 10), threads = parseInt(threadsText, 10);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const item of spec.split(',')) {
    const [name, dtype, dimsText, rangeText] = item.split(':');
    const range = rangeText ? parseInt(rangeText, 10) : 1000;
    const dims = dimsText.split('x').map((d) => parseInt(d, 10));
    const n = dims.reduce((a, b) => a * b, 1);
    let data;
    if (dtype === 'int64') {
      data = new BigInt64Array(n);
      for (let i = 0; i < n; ++i) data[i] = BigInt((i * 7919) % range);
    } else {
      data = new Float32Array(n);
      for (let i = 0; i < n; ++i) data[i] = Math.sin(i * 0.37);
    }
    feeds[name] = new ort.Tensor(dtype, data, dims);
  }
  const lat = [];
  let first = 0;
  for (let i = 0; i <= repeat; ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    const t1 = process.hrtime.bigint();
    if (i > 0) lat.push(Number(t1 - t0) / 1e6);
    else first = Number(t1 - t0) / 1e6;
  }
  console.log(JSON.stringify({latencies_ms: lat, first_ms: first}));
}

main().catch((e) => {
  console.error(String(e));
  process.exit(1);
});
