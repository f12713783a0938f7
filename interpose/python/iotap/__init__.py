"""iotap step markers for Python training loops.

Tells iotap where training steps begin and end, and when the loop waited for
data, by calling the marker API that libiotap.so exports (see
interpose/iotap.h). When the shim is not loaded (the job runs without
`iotap run` or LD_PRELOAD), every function here does nothing and costs about
one attribute lookup, so the calls can stay in the code for good:

    import iotap
    for n, (x, y) in enumerate(loader):
        with iotap.step(n):
            loss = model(x, y); loss.backward(); opt.step()

A loop that fetches its batches without a DataLoader can time the fetch:

    with iotap.data_wait():
        batch = next(my_iterator)

Unmodified PyTorch jobs need none of this: `iotap run --torch-steps` makes
Python call instrument_torch() as soon as the job imports torch.

Steps under instrument_torch() (and data_wait()) are numbered from the
optimizer steps. Step N ends when its optimizer step returns; the data waits
after step N-1's optimizer step belong to step N. A second optimizer step
with no wait since the previous one (two optimizers on one batch, as in a
GAN) belongs to the same step; in a loop that never waits for a DataLoader,
every optimizer step is a step. The analyzer's step N spans from the end of
step N-1's last optimizer step to the end of its own (the first step from the
start of its first wait), so each step's waits lie inside it; work between
epochs (evaluation, checkpoints) falls into the next epoch's first step.
Waits that end the iteration (StopIteration) are not recorded.

Where the loaders spend their CPU time (decoding, transforms, collate_fn)
comes from sampling the Python stacks: `iotap run --py-samples` (and
`--torch-steps`) starts the sampler in every process; a program run under the
shim another way can call sample_stacks() (see iotap/_sampler.py).

Only the standard library is imported here; torch is touched only by
instrument_torch().
"""

import contextlib
import ctypes
import functools
import threading
import time

__all__ = ["enabled", "step_begin", "step_end", "mark", "step", "data_wait",
           "instrument_torch", "sample_stacks"]

# Span kinds of iotap_span: OP_DATA_WAIT and OP_OPTIMIZER_STEP of trace.proto.
DATA_WAIT = 303
OPTIMIZER_STEP = 304


def _find_shim():
    """The shim's marker functions, or None if libiotap.so is not loaded."""
    try:
        process = ctypes.CDLL(None)
        fns = (process.iotap_step_begin, process.iotap_step_end, process.iotap_mark,
               process.iotap_span)
    except (OSError, AttributeError):
        return None
    begin, end, mark_fn, span = fns
    for f in (begin, end):
        f.argtypes = [ctypes.c_longlong]
        f.restype = None
    mark_fn.argtypes = [ctypes.c_char_p]
    mark_fn.restype = None
    span.argtypes = [ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_longlong]
    span.restype = ctypes.c_int
    return begin, end, mark_fn, span


_shim = _find_shim()


def enabled():
    """Whether libiotap.so is loaded in this process (markers are recorded)."""
    return _shim is not None


def step_begin(n):
    """Marks the start of training step `n` on the calling thread."""
    if _shim is not None:
        _shim[0](int(n))


def step_end(n):
    """Marks the end of training step `n`."""
    if _shim is not None:
        _shim[1](int(n))


def mark(name):
    """Records a named instant ("epoch", "checkpoint", ...)."""
    if _shim is not None:
        _shim[2](str(name).encode("utf-8", "replace"))


@contextlib.contextmanager
def step(n):
    """Marks the body of a `with` block as training step `n`."""
    step_begin(n)
    try:
        yield
    finally:
        step_end(n)


class _Steps:
    """Step numbering of the optimizer-step rule above, for the whole process
    (a loop that fetches batches on another thread still numbers them by the
    optimizer's steps)."""

    def __init__(self):
        self.step = 0          # the step being run
        self.closed = False    # an optimizer step has ended it
        self.any_wait = False  # a data wait was ever recorded


_steps = _Steps()
# Depth of optimizer step calls on this thread: a subclass's step calling
# super().step() is one step.
_nesting = threading.local()


def _record_wait(start_ns, end_ns):
    s = _steps
    if s.closed:
        s.step += 1
        s.closed = False
    s.any_wait = True
    _shim[3](DATA_WAIT, s.step, start_ns, end_ns)


def _record_optimizer_step(start_ns, end_ns):
    s = _steps
    if s.closed and not s.any_wait:
        s.step += 1
    s.closed = True
    _shim[3](OPTIMIZER_STEP, s.step, start_ns, end_ns)


@contextlib.contextmanager
def data_wait():
    """Times the body as a wait for the next batch (recorded unless it raises)."""
    if _shim is None:
        yield
        return
    start = time.monotonic_ns()
    yield
    _record_wait(start, time.monotonic_ns())


def _timed_next(original):
    @functools.wraps(original)
    def __next__(self):
        start = time.monotonic_ns()
        batch = original(self)
        _record_wait(start, time.monotonic_ns())
        return batch
    __next__._iotap_wrapped = True
    return __next__


def _timed_step(original):
    @functools.wraps(original)
    def step(*args, **kwargs):
        if getattr(_nesting, "depth", 0):
            return original(*args, **kwargs)
        _nesting.depth = 1
        start = time.monotonic_ns()
        try:
            result = original(*args, **kwargs)
        finally:
            _nesting.depth = 0
        _record_optimizer_step(start, time.monotonic_ns())
        return result
    step._iotap_wrapped = True
    return step


def _wrap_class_step(cls):
    """Wraps `cls.step` once; subclasses that inherit it see the wrapper."""
    current = getattr(cls, "step", None)
    if current is not None and not getattr(current, "_iotap_wrapped", False):
        cls.step = _timed_step(current)


def _then_wrap_step(method):
    """`method` (Optimizer.__init__ or __setstate__), then _wrap_class_step."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        method(self, *args, **kwargs)
        _wrap_class_step(type(self))
    return wrapper


_instrumented = False


def instrument_torch():
    """Records PyTorch data waits, optimizer steps and epochs automatically.

    Patches torch.utils.data's DataLoader iterators (each __next__ is a data
    wait; each iter(DataLoader) marks "epoch") and torch.optim.Optimizer, so
    that the `step` of every optimizer class, built-in or user-defined, is
    timed. torch 1.13 wraps each optimizer class's `step` for its profiler
    when the first instance is built (Optimizer._hook_for_profile); iotap
    wraps at the same moment, from Optimizer.__init__ (and __setstate__, for
    unpickled optimizers), around whatever the class's `step` is then.

    Returns True if instrumented, False if the shim is not loaded (nothing is
    patched then). Calling it again does nothing.
    """
    global _instrumented
    if _shim is None:
        return False
    if _instrumented:
        return True
    import torch.optim
    import torch.utils.data.dataloader as dataloader

    base_iter = dataloader._BaseDataLoaderIter
    if not getattr(base_iter.__next__, "_iotap_wrapped", False):
        base_iter.__next__ = _timed_next(base_iter.__next__)

    loader_iter = dataloader.DataLoader.__iter__

    @functools.wraps(loader_iter)
    def __iter__(self):
        mark("epoch")
        return loader_iter(self)
    dataloader.DataLoader.__iter__ = __iter__

    optimizer = torch.optim.Optimizer
    for name in ("__init__", "__setstate__"):
        setattr(optimizer, name, _then_wrap_step(getattr(optimizer, name)))
    _instrumented = True
    return True


def sample_stacks(hz=100):
    """Samples this process's Python stacks `hz` times per second of each
    thread's CPU time, for the report's breakdown of where CPU time goes
    (iotap/_sampler.py). Returns True if sampling, False if the shim is not
    loaded or this interpreter cannot be sampled."""
    from iotap import _sampler
    return _sampler.start(hz)
