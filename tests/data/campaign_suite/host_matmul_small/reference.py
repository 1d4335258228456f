"""The Python oracle of host_matmul (task.json "python_reference"): C = A @ B in float64, stored as float32.

An implementation independent of reference.cpp, run by `evoteam eval kernels/host_matmul --oracle` on the
correctness trials' inputs and compared with reference.cpp's outputs with the task's tolerances.
"""
import numpy as np


def run(A, B):
    return (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)
