"""Automatic PyTorch steps and Python stack samples for `iotap run`.

`iotap run --torch-steps` and `iotap run --py-samples` put this directory
first on PYTHONPATH, so every Python process of the job (DataLoader workers
started with spawn or forkserver too) runs this file at start-up, before the
user's code. It does three things and nothing else:

1. when IOTAP_TORCH_STEPS=1, waits for the job to import torch and then calls
   iotap.instrument_torch(). It never imports torch itself: a process that
   does not use torch (a shell helper, a data tool) loads only the standard
   library modules this file imports;
2. when IOTAP_PY_SAMPLES=HZ (HZ > 0), starts the stack sampler
   (iotap/_sampler.py): at once, or, with IOTAP_PY_SAMPLES_WHEN=torch (what
   --torch-steps alone sets), when the process imports torch, so that only
   the trainer and its workers are sampled. Forked children sample too;
3. runs the `sitecustomize` module that would have run without iotap (the
   next one on sys.path; Debian's installs the apport hook), so nothing the
   system or the user set up is lost.

It cannot reach interpreters started with -S (no site) or -I (PYTHONPATH
ignored); the trace header still says samples were asked for, and the report
names those processes.
"""

import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _run_next_sitecustomize():
    for entry in sys.path:
        if os.path.abspath(entry or os.curdir) == _HERE:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry or os.curdir])
        if spec is None or spec.loader is None:
            continue
        try:
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        except Exception as error:  # as site.py treats a failing sitecustomize
            sys.stderr.write(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                             f"{type(error).__name__}: {error}\n")
        return


def _samples_per_cpu_second():
    try:
        return max(int(os.environ.get("IOTAP_PY_SAMPLES", "0")), 0)
    except ValueError:
        return 0


_TORCH_STEPS = os.environ.get("IOTAP_TORCH_STEPS") == "1"
_SAMPLE_HZ = _samples_per_cpu_second()
_SAMPLE_WITH_TORCH = os.environ.get("IOTAP_PY_SAMPLES_WHEN") == "torch"


def _start_sampler():
    try:
        from iotap import _sampler
        _sampler.start(_SAMPLE_HZ)
    except Exception as error:  # the job must run whatever happens here
        if os.environ.get("IOTAP_QUIET") != "1":
            sys.stderr.write(f"iotap: cannot sample Python stacks ({type(error).__name__}: "
                             f"{error})\n")


def _instrument():
    if _TORCH_STEPS:
        try:
            import iotap
            iotap.instrument_torch()
        except Exception as error:  # the job must run whatever happens here
            if os.environ.get("IOTAP_QUIET") != "1":
                sys.stderr.write(f"iotap: cannot instrument torch ({type(error).__name__}: "
                                 f"{error}); PyTorch steps will not be recorded\n")
    if _SAMPLE_HZ > 0 and _SAMPLE_WITH_TORCH:
        _start_sampler()


class _InstrumentAfterLoad:
    """Loads torch with its own loader, then instruments it."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        # torch sees its real loader, as if iotap were not here.
        module.__loader__ = self._loader
        module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _instrument()

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _TorchImportWatcher:
    """A meta path finder that wraps the loader of `torch`, once."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _InstrumentAfterLoad(spec.loader)
        return spec

    def invalidate_caches(self):
        pass


# Watch first: the sitecustomize run next may itself import torch.
if (_TORCH_STEPS or (_SAMPLE_HZ > 0 and _SAMPLE_WITH_TORCH)) and "torch" not in sys.modules:
    sys.meta_path.insert(0, _TorchImportWatcher())
if _SAMPLE_HZ > 0 and not _SAMPLE_WITH_TORCH:
    _start_sampler()
_run_next_sitecustomize()
