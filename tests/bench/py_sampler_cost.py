"""The Python stack sampler's own CPU time against the sampled thread's, in
one process: a loop decoding, resizing and blurring a 384x384 JPEG with some
pure Python between, for SECONDS of its thread's CPU time, sampled at HZ
(the README's figure, "What it costs"). Run with the shim preloaded:

  LD_PRELOAD=build/lib/libiotap.so IOTAP_DIR=/tmp/t PYTHONPATH=interpose/python \
      python3 tests/bench/py_sampler_cost.py 100 8

From CPython 3.11.1 on the samples are taken by a signal handler in the
sampled thread itself, whose cost is in that thread's CPU time: compare the
iterations per CPU second with HZ 0 (no sampler). IOTAP_TEST_PY_GIL_SAMPLER=1
runs the sampler that takes every sample with the GIL instead.
"""
import io
import os
import sys
import threading
import time

from iotap import _sampler
from PIL import Image, ImageFilter

img = Image.effect_noise((384, 384), 40).convert("RGB")
buf = io.BytesIO()
img.save(buf, "JPEG")
data = buf.getvalue()

def work(seconds):
    end = time.thread_time() + seconds
    n = 0
    while time.thread_time() < end:
        im = Image.open(io.BytesIO(data)).convert("RGB")
        im = im.resize((224, 224)).filter(ImageFilter.GaussianBlur(1))
        sum(p * p for p in range(3000))
        n += 1
    return n

hz = int(sys.argv[1])
if hz:
    assert _sampler.start(hz)
w0 = time.perf_counter()
n = work(float(sys.argv[2]))
wall = time.perf_counter() - w0
main_cpu = time.thread_time()
others = 0.0
for ident in sys._current_frames():
    if ident != threading.main_thread().ident:
        others += time.clock_gettime(time.pthread_getcpuclockid(ident))
print(f"hz {hz}: {n} iterations, {n / wall:.1f}/s wall, {n / main_cpu:.1f}/s of CPU, "
      f"main thread CPU {main_cpu:.2f} s, "
      f"other threads (the sampler) {others:.3f} s = {100 * others / main_cpu:.2f}% of it")
