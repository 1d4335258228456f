"""The Python oracle of host_conv2d (task.json "python_reference"): a 5x5 valid cross-correlation in float64.

An implementation independent of reference.cpp, run by `evoteam eval kernels/host_conv2d --oracle`.
"""
import numpy as np


def run(IN, Wt):
    x = IN.astype(np.float64)
    w = Wt.astype(np.float64)
    h, wd = x.shape[0] - 4, x.shape[1] - 4
    out = np.zeros((h, wd))
    for i in range(5):
        for j in range(5):
            out += w[i, j] * x[i:i + h, j:j + wd]
    return out.astype(np.float32)
