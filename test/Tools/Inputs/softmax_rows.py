"""Input and NumPy reference (float64) of a row Softmax: softmax_rows.py
ROWS COLS X.npy Y.npy (x of shape [ROWS, COLS], values of a few units)."""
import sys

import numpy as np

rows, cols = int(sys.argv[1]), int(sys.argv[2])
x = np.random.RandomState(rows * 7919 + cols).randn(rows, cols) * 4
np.save(sys.argv[3], x.astype(np.float32))
x = x.astype(np.float32).astype(np.float64)
e = np.exp(x - x.max(axis=1, keepdims=True))
np.save(sys.argv[4], (e / e.sum(axis=1, keepdims=True)).astype(np.float32))
