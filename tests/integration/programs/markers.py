"""The iotap Python helper's markers, for torch_steps_test.cc.

Run with interpose/python on PYTHONPATH, with or without libiotap.so
preloaded. Prints what the helper reports, then calls iotap_span directly
(ctypes) with times the test checks to the nanosecond.
"""

import ctypes
import time

import iotap

print("enabled", iotap.enabled())
iotap.step_begin(3)
iotap.mark("checkpoint")
iotap.step_end(3)
with iotap.step(4):
    with iotap.data_wait():
        time.sleep(0.01)
if not iotap.enabled():
    print("instrumented", iotap.instrument_torch())  # does nothing, imports nothing
try:
    span = ctypes.CDLL(None).iotap_span
except AttributeError:
    print("no iotap_span")
else:
    span.argtypes = [ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_longlong]
    span.restype = ctypes.c_int
    print("span", span(303, 7, 1000000000000, 1000000001230),
          span(304, 8, 2000000000000, 2000000000500),
          span(999, 9, 1, 2), span(303, 9, 5, 4), span(303, 9, 0, 4))
