#!/usr/bin/env python3
"""PyTorch peer of Keel's `mlp` benchmark (DESIGN.md § Peers measured by the benchmarks).

The same workload as Keel's training step (`trainMlp` from @keel/mlp): 784-512-512-10 MLP, ReLU,
softmax cross-entropy, plain SGD lr 0.05, batch 256, fp32 with TF32 off, a synthetic 10-class data set
(a prototype per class plus uniform noise in [-1, 1)), 8 batches generated up front and cycled (as the
Keel and TF.js sides do). Every step uploads its batch (host -> device, timed, as on the Keel side) and
reads the loss back to the host (`.item()`), so ms/step includes the round trip Keel pays too.

Two ways to run the step, in alternating rounds, each timed as the median over all timed steps:
  eager      model(x) -> loss -> backward -> optimizer.step() as plain PyTorch code;
  cudagraph  the whole step (forward, backward, SGD update) captured once in one CUDA graph and
             replayed (torch.cuda.graphs' whole-network capture), inputs copied into static tensors.

Prints one JSON object on stdout: {"torch", "device", "eager_ms", "cudagraph_ms", "loss_step_3", ...};
progress goes to stderr. Where torch or CUDA is missing it prints {"skipped": "<one-line reason>"} and
exits 0 (the GPU-machine entry, bench/src/gpu-entry.ts, reports the reason). `--device cpu` runs the
eager side on the CPU (no CUDA graph) to check the script on a machine without a GPU.

  python3 bench/py/mlp_torch.py [--steps 50] [--warmup 5] [--rounds 3] [--device cuda|cpu]
"""

import argparse
import json
import statistics
import sys
import time

LAYERS = (784, 512, 512, 10)
BATCH = 256
LR = 0.05
BATCHES = 8


def log(line):
    sys.stderr.write(f"[mlp_torch] {line}\n")
    sys.stderr.flush()


def skip(reason):
    print(json.dumps({"skipped": reason}))
    sys.exit(0)


def parse_args(argv):
    p = argparse.ArgumentParser(description="PyTorch peer of Keel's mlp benchmark")
    p.add_argument("--steps", type=int, default=50, help="timed steps per round")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps per round")
    p.add_argument("--rounds", type=int, default=3, help="rounds (eager and CUDA graph alternate)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    return p.parse_args(argv)


def make_data(torch, generator):
    """8 batches of the synthetic data set: a prototype per class plus uniform noise in [-1, 1)."""
    classes = LAYERS[-1]
    prototypes = torch.rand(classes, LAYERS[0], generator=generator) * 2 - 1
    batches = []
    for _ in range(BATCHES):
        labels = torch.randint(0, classes, (BATCH,), generator=generator)
        noise = torch.rand(BATCH, LAYERS[0], generator=generator) * 2 - 1
        batches.append((prototypes[labels] + noise, labels))
    return batches


def make_model(torch):
    torch.manual_seed(0)
    layers = []
    for i in range(len(LAYERS) - 1):
        layers.append(torch.nn.Linear(LAYERS[i], LAYERS[i + 1]))
        if i < len(LAYERS) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def run_eager(torch, device, host_batches, steps, warmup):
    """Eager PyTorch: upload, forward, loss, backward, SGD step, loss.item() every step."""
    F = torch.nn.functional
    model = make_model(torch).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    times, losses = [], []
    for k in range(warmup + steps):
        x_host, y_host = host_batches[k % BATCHES]
        t0 = time.perf_counter()
        x = x_host.to(device, non_blocking=True)
        y = y_host.to(device, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        value = loss.item()  # waits for the whole step: the stream runs in order
        if k >= warmup:
            times.append((time.perf_counter() - t0) * 1000)
        losses.append(value)
    return times, losses


def run_cudagraph(torch, device, host_batches, steps, warmup):
    """The whole step captured in one CUDA graph (PyTorch's whole-network capture recipe)."""
    F = torch.nn.functional
    model = make_model(torch).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    static_x = torch.zeros(BATCH, LAYERS[0], device=device)
    static_y = torch.zeros(BATCH, dtype=torch.long, device=device)
    static_x.copy_(host_batches[0][0])
    static_y.copy_(host_batches[0][1])
    # Warm up on a side stream (allocator pools, cuBLAS handles), as the capture recipe asks. These
    # steps update the weights like any step, so the captured run starts three steps later.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = F.cross_entropy(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    times, losses = [], []
    for k in range(warmup + steps):
        x_host, y_host = host_batches[k % BATCHES]
        t0 = time.perf_counter()
        static_x.copy_(x_host, non_blocking=True)
        static_y.copy_(y_host, non_blocking=True)
        graph.replay()
        value = static_loss.item()
        if k >= warmup:
            times.append((time.perf_counter() - t0) * 1000)
        losses.append(value)
    return times, losses


def main(argv):
    args = parse_args(argv)
    try:
        import torch
    except Exception as error:  # noqa: BLE001 - any import failure means "no torch here"
        skip(f"python3 has no torch ({type(error).__name__}: {error})")
    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        skip(f"torch {torch.__version__} sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    device = torch.device("cuda" if cuda else "cpu")
    generator = torch.Generator().manual_seed(1)
    host_batches = make_data(torch, generator)
    if cuda:
        host_batches = [(x.pin_memory(), y.pin_memory()) for x, y in host_batches]
        name = torch.cuda.get_device_name(0)
    else:
        name = f"cpu ({torch.get_num_threads()} threads)"

    log(f"torch {torch.__version__} on {name}: {args.rounds} rounds x {args.steps} steps")
    eager, graph = [], []
    eager_losses = None
    graph_error = None
    for r in range(args.rounds):
        t, losses = run_eager(torch, device, host_batches, args.steps, args.warmup)
        eager += t
        eager_losses = eager_losses or losses
        if cuda and graph_error is None:
            try:
                t, _ = run_cudagraph(torch, device, host_batches, args.steps, args.warmup)
                graph += t
            except Exception as error:  # noqa: BLE001 - reported in the JSON, eager still counts
                graph_error = f"{type(error).__name__}: {error}"
                log(f"CUDA graph capture failed: {graph_error}")
        log(
            f"round {r + 1}/{args.rounds}: eager {statistics.median(eager):.3f} ms"
            + (f", cudagraph {statistics.median(graph):.3f} ms" if graph else "")
        )
    result = {
        "torch": torch.__version__,
        "device": name,
        "steps": args.steps,
        "rounds": args.rounds,
        "tf32": False,
        "eager_ms": statistics.median(eager),
        "loss_step_3": eager_losses[2] if len(eager_losses) > 2 else None,
    }
    if graph:
        result["cudagraph_ms"] = statistics.median(graph)
    if graph_error is not None:
        result["cudagraph_error"] = graph_error
    elif not cuda:
        result["cudagraph_skipped"] = "no CUDA device (--device cpu)"
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
