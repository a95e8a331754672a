"""numpy peer of the `mlp` benchmark suite: the reference MLP's training step in numpy (OpenBLAS).

Same step as Keel's `trainingStepProgram` (packages/mlp/src/step-program.ts): forward
relu(x W0 + b0) -> relu(. W1 + b1) -> . W2 + b2, softmax cross-entropy (mean over the batch, the loss
computed and read as a Python float every step), backward with the ReLU masks, plain SGD on every
weight and bias (every gradient from the pre-step parameters), fp32 throughout.

Data: the suite writes the exact initial parameters and pre-generated batches Keel trains on (a raw
little-endian file described by a JSON manifest), so the losses match Keel's step for step.

Protocol (driven by bench/src/mlp/numpy-peer.ts): `python3 mlp_numpy.py MANIFEST`, then one command per
stdin line; each answer is one JSON line on stdout.
  `run WARMUP STEPS`  resets the parameters, trains WARMUP + STEPS steps (cycling the batches) and answers
                      {"stepMs": [...timed steps...], "cpuMs": [...], "losses": [...every step...]}
                      (cpuMs: the process's CPU time per timed step, every thread; with one BLAS
                      thread it is the step's work alone, whatever else runs on the machine)
  `quit`              exits.
The first line the script prints is {"ready": true, "numpy": ..., "blas": ..., "threads": ...}.
Threads: the suite sets OPENBLAS_NUM_THREADS (and OMP/MKL equivalents) before starting python.
"""

import json
import os
import sys
import time

import numpy as np


def blas_info():
    try:
        cfg = np.show_config(mode="dicts")  # numpy >= 1.25
        blas = cfg["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # noqa: BLE001 - older numpy: best effort
        return "unknown"


def load(manifest_path):
    with open(manifest_path) as f:
        m = json.load(f)
    raw = np.fromfile(m["data"], dtype=np.uint8)
    layers = m["layers"]
    batch = m["batch"]
    at = 0

    def take(count, dtype):
        nonlocal at
        nbytes = 4 * count
        a = raw[at : at + nbytes].view(dtype).copy()
        at += nbytes
        return a

    weights, biases = [], []
    for i in range(len(layers) - 1):
        weights.append(take(layers[i] * layers[i + 1], "<f4").reshape(layers[i], layers[i + 1]))
        biases.append(take(layers[i + 1], "<f4"))
    batches = []
    for _ in range(m["batches"]):
        x = take(batch * layers[0], "<f4").reshape(batch, layers[0])
        labels = take(batch, "<u4").astype(np.int64)
        batches.append((x, labels))
    return m, weights, biases, batches


def step(weights, biases, x, labels, lr):
    """One SGD step in place; returns the mean loss as a Python float."""
    L = len(weights)
    B = x.shape[0]
    acts = [x]
    for i in range(L):
        z = acts[-1] @ weights[i]
        z += biases[i]
        if i < L - 1:
            np.maximum(z, 0, out=z)
        acts.append(z)
    logits = acts[-1]
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(B)
    loss = float(np.mean(np.log(s[:, 0]) - shifted[rows, labels]))
    d = e / s
    d[rows, labels] -= 1
    d *= np.float32(1.0 / B)
    for j in range(L - 1, -1, -1):
        d_prev = None
        if j > 0:
            d_prev = d @ weights[j].T
            d_prev *= acts[j] > 0
        biases[j] -= lr * d.sum(axis=0)
        weights[j] -= lr * (acts[j].T @ d)
        d = d_prev
    return loss


def main():
    m, w0, b0, batches = load(sys.argv[1])
    lr = np.float32(m["learningRate"])
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(json.dumps({"ready": True, "numpy": np.__version__, "blas": blas_info(), "threads": threads}), flush=True)
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "quit":
            break
        if parts[0] != "run" or len(parts) != 3:
            print(json.dumps({"error": f"unknown command {line.strip()!r}"}), flush=True)
            continue
        warmup, steps = int(parts[1]), int(parts[2])
        weights = [w.copy() for w in w0]
        biases = [b.copy() for b in b0]
        step_ms, cpu_ms, losses = [], [], []
        for s in range(warmup + steps):
            x, labels = batches[s % len(batches)]
            c0 = time.process_time()
            t0 = time.perf_counter()
            losses.append(step(weights, biases, x, labels, lr))
            t1 = time.perf_counter()
            c1 = time.process_time()
            if s >= warmup:
                step_ms.append((t1 - t0) * 1e3)
                cpu_ms.append((c1 - c0) * 1e3)
        print(json.dumps({"stepMs": step_ms, "cpuMs": cpu_ms, "losses": losses}), flush=True)


if __name__ == "__main__":
    main()
