#!/usr/bin/python3
"""torch_run.py - times one benchmark model in PyTorch (eager, CPU).

    /usr/bin/python3 torch_run.py MODEL INPUT.npy REPEAT THREADS

MODEL is an e2e model of examples/models/disc_models.py (rebuilt with its
fixed seed, so its weights are those of the exported ONNX file) or
`linear` (nn.Linear(768, 3072), seed 0, as compare_ort.py exports it) or
a model of the extended set (benchmarks/extended_models.py).
INPUT.npy is the model's single input. Runs REPEAT + 1 times under
torch.no_grad() with torch.set_num_threads(THREADS) and prints one JSON
line {"latencies_ms": [...], "first_ms": F} (the first run, a warm-up,
is left out of the list and given as first_ms).
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples", "models"))


def build(name):
    import torch
    if name == "linear":
        torch.manual_seed(0)
        return torch.nn.Linear(768, 3072).eval()
    import disc_models
    if name in disc_models.MODELS:
        return disc_models.MODELS[name]["build"]().eval()
    sys.path.insert(0, HERE)
    import extended_models
    return extended_models.build(name).eval()


def main(argv):
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    name, path, repeat, threads = argv[1], argv[2], int(argv[3]), int(argv[4])
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    model = build(name)
    x = torch.from_numpy(np.load(path))
    lat = []
    first = None
    with torch.no_grad():
        for i in range(repeat + 1):
            t0 = time.perf_counter()
            model(x)
            t1 = time.perf_counter()
            if i > 0:
                lat.append((t1 - t0) * 1e3)
            else:
                first = (t1 - t0) * 1e3
    print(json.dumps({"latencies_ms": lat, "first_ms": first}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
