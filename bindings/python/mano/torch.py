"""mano.torch: scores a PyTorch model's outputs over a DataLoader as they come, without keeping them.

    import mano.torch
    result = mano.torch.score(model, loader, methods="mano,confscore", device="cuda")

Each batch's logits are pushed into a :class:`mano.Accumulator`, so memory holds one or two
batches whatever the loader's length, and the result equals :func:`mano.score` on all the logits
at once. On CUDA, each batch's logits are copied to pinned host memory on a stream of their own
while the model already runs on the next batch; the host waits for a copy (an event) only when it
pushes it, one batch later.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, Union

import numpy as np
import torch

from ._core import InputError
from ._scoring import Accumulator

__all__ = ["score"]


def score(model: Any, loader: Iterable, methods: Union[None, str, Iterable[str]] = None, *,
          device: Union[None, str, "torch.device"] = None, **options: Any) -> dict:
    """Runs ``model`` under ``torch.no_grad()`` (in eval mode, restored afterwards) over
    ``loader`` and scores its N x K outputs as :func:`mano.score` does.

    loader: any iterable of batches: an input tensor, or ``(inputs, labels, ...)``, whose labels
    (every batch's, or none) give the result's true accuracy. device: where the model is and runs
    (default: where its parameters are); the inputs are moved there. methods and ``options``
    (source, p, temperature, ...) are :class:`mano.Accumulator`'s; with no methods, the defaults
    for K classes (COT, which keeps every row, only when named).
    """
    device = torch.device(device) if device is not None else _model_device(model)
    training = getattr(model, "training", False)
    if hasattr(model, "eval"):
        model.eval()
    try:
        with torch.no_grad():
            batches = (_split(batch, i) for i, batch in enumerate(loader))
            outputs = _cuda_outputs(model, batches, device) if device.type == "cuda" else _outputs(model, batches, device)
            acc = None
            had_labels = None
            for i, (logits, labels) in enumerate(outputs):
                if had_labels is not None and (labels is not None) != had_labels:
                    raise InputError(f"mano.torch.score: batch {i} {'has' if labels is not None else 'has no'} labels "
                                     f"and the batches before it {'had' if had_labels else 'had none'}; give labels "
                                     "with every batch or with none")
                had_labels = labels is not None
                if acc is None:
                    acc = Accumulator(logits.shape[1], methods, **options)
                acc.push(logits, labels)
    finally:
        if hasattr(model, "train"):
            model.train(training)
    if acc is None:
        raise InputError("mano.torch.score: the loader gave no batch")
    return acc.result()


def _model_device(model: Any) -> "torch.device":
    for p in getattr(model, "parameters", lambda: [])():
        return p.device
    return torch.device("cpu")


def _split(batch: Any, index: int) -> tuple:
    """(inputs, labels or None) of one batch."""
    if isinstance(batch, torch.Tensor):
        return batch, None
    if isinstance(batch, (tuple, list)) and batch and isinstance(batch[0], torch.Tensor):
        labels = batch[1] if len(batch) > 1 else None
        if labels is not None and not isinstance(labels, torch.Tensor):
            labels = torch.as_tensor(labels)
        return batch[0], labels
    raise InputError(f"mano.torch.score: batch {index} is a {type(batch).__name__}; the loader must give tensors or "
                     "(inputs, labels) pairs of tensors")


def _checked(out: Any, index: int) -> "torch.Tensor":
    if not isinstance(out, torch.Tensor) or out.dim() != 2:
        what = f"a tensor of shape {tuple(out.shape)}" if isinstance(out, torch.Tensor) else f"a {type(out).__name__}"
        raise InputError(f"mano.torch.score: the model gave {what} for batch {index}; it must give N x K logits "
                         "(wrap it to return them)")
    # float16/32/64 go to the core as they are; others (bfloat16) as float32
    return out if out.dtype in (torch.float16, torch.float32, torch.float64) else out.float()


def _host_labels(labels: Optional["torch.Tensor"]) -> Optional[np.ndarray]:
    return None if labels is None else labels.detach().cpu().numpy()


def _outputs(model: Any, batches: Iterable, device: "torch.device") -> Iterable:
    """(logits, labels) as NumPy arrays, one batch at a time (CPU)."""
    for i, (x, labels) in enumerate(batches):
        out = _checked(model(x.to(device)), i)
        yield out.detach().cpu().numpy(), _host_labels(labels)


def _cuda_outputs(model: Any, batches: Iterable, device: "torch.device") -> Iterable:
    """(logits, labels) as NumPy arrays (views of pinned host memory), each copied on a stream of
    its own while the model runs on the next batch. Two pinned buffers take turns: the one a batch
    is copied into was last read when the batch before the previous one was pushed."""
    compute = torch.cuda.current_stream(device)
    copy = torch.cuda.Stream(device)
    buffers = [None, None]
    pending = None  # (host logits, host labels, the copy's event) of the batch before
    for i, (x, labels) in enumerate(batches):
        out = _checked(model(x.to(device, non_blocking=True)), i)
        buffer = buffers[i % 2]
        if buffer is None or buffer.dtype != out.dtype or buffer.shape[1] != out.shape[1] or buffer.shape[0] < out.shape[0]:
            buffer = buffers[i % 2] = torch.empty(out.shape, dtype=out.dtype, pin_memory=True)
        host = buffer[:out.shape[0]]
        copy.wait_stream(compute)  # the copy starts when the model's output is ready
        with torch.cuda.stream(copy):
            host.copy_(out, non_blocking=True)
            out.record_stream(copy)  # the allocator keeps `out` until the copy is done
            done = torch.cuda.Event()
            done.record(copy)
        if pending is not None:
            yield _ready(pending)
        pending = (host, _host_labels(labels), done)
    if pending is not None:
        yield _ready(pending)


def _ready(pending: tuple) -> tuple:
    host, labels, done = pending
    done.synchronize()
    return host.numpy(), labels
