"""Turns the step log the examples write (--step-log: one JSON line per step
with start_unix_s, data_s and compute_s) into the step sources other jobs
leave, for checking that iotap diagnoses a job whatever it logs:

  step_sources.py STEP_LOG OUT_PREFIX

writes
  OUT_PREFIX-measured.jsonl   {"step", "start", "end", "data_waits"}: the
                              step as --torch-steps records it, from the end
                              of the previous step's compute to the end of
                              its own, with the wait for its batch that the
                              loop measured;
  OUT_PREFIX-start-end.jsonl  {"step", "start", "end"}: the step's compute
                              only, as a loop that times its forward and
                              backward pass logs it (the waits fall between
                              the steps);
  OUT_PREFIX-tensorboard/events.out.tfevents.0.planted
                              a TensorBoard event file: the writer's
                              file_version record when the loop began, then
                              one "loss" scalar per step when its compute
                              ended, as torch.utils.tensorboard writes them
                              (its package may be missing: this writes the
                              records itself).
"""

import importlib.util
import json
import os
import struct
import sys


def tfrecord_framing():
    """frame(data) of examples/tfrecord/train.py: TFRecord's framing with its
    masked CRC32C."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tfrecord", "train.py")
    spec = importlib.util.spec_from_file_location("tfrecord_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.frame


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def event(wall_time, step=None, file_version=None, loss=None):
    """An Event message (tensorflow/core/util/event.proto): wall_time = 1,
    step = 2, file_version = 3, summary = 5 (Summary.value = 1: tag = 1,
    simple_value = 2)."""
    out = b"\x09" + struct.pack("<d", wall_time)
    if step is not None:
        out += b"\x10" + varint(step)
    if file_version is not None:
        out += b"\x1a" + varint(len(file_version)) + file_version
    if loss is not None:
        value = b"\x0a\x04loss" + b"\x15" + struct.pack("<f", loss)
        summary = b"\x0a" + varint(len(value)) + value
        out += b"\x2a" + varint(len(summary)) + summary
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    log, prefix = sys.argv[1:]
    with open(log) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    if not steps:
        sys.exit(f"step_sources.py: {log} holds no steps")
    frame = tfrecord_framing()
    with open(prefix + "-measured.jsonl", "w") as measured, \
            open(prefix + "-start-end.jsonl", "w") as start_end:
        previous = None  # the previous step's end
        for s in steps:
            begin = s["start_unix_s"]
            got = begin + s["data_s"]
            done = got + s["compute_s"]
            measured.write(json.dumps({"step": s["step"],
                                       "start": begin if previous is None else previous,
                                       "end": done, "data_waits": [[begin, got]]}) + "\n")
            previous = done
            start_end.write(json.dumps({"step": s["step"], "start": got, "end": done}) + "\n")
    tensorboard = prefix + "-tensorboard"
    os.makedirs(tensorboard, exist_ok=True)
    with open(os.path.join(tensorboard, "events.out.tfevents.0.planted"), "wb") as out:
        out.write(frame(event(steps[0]["start_unix_s"], file_version=b"brain.Event:2")))
        for s in steps:
            done = s["start_unix_s"] + s["data_s"] + s["compute_s"]
            out.write(frame(event(done, step=s["step"], loss=s["loss"])))


if __name__ == "__main__":
    main()
