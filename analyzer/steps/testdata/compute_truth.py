"""Computes the values the step-log tests expect, independently of iotap.

Run with /usr/bin/python3 from the repository root; it reads the shared
fixtures (../shared/fixtures) and the committed testdata, and prints what the
*_test.cc files hard-code. It uses only the standard library: struct for the
TFRecord framing, a bitwise CRC32C, gzip and json for profiler traces, and
decimal arithmetic for exact nanoseconds.
"""

import decimal
import glob
import gzip
import json
import math
import os
import struct

FIXTURES = os.path.join(os.path.dirname(__file__), "../../../../shared/fixtures")
TESTDATA = os.path.dirname(__file__)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def fields(buf):
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 1:
            v = buf[i:i + 8]
            i += 8
        elif wire == 5:
            v = buf[i:i + 4]
            i += 4
        elif wire == 2:
            n, i = varint(buf, i)
            v = buf[i:i + n]
            i += n
        yield field, v


def wall_ns(w):
    # Whole seconds exactly, the fraction rounded half to even: as the reader.
    whole = math.floor(w)
    return whole * 10**9 + round((w - whole) * 1e9)


def tfevents(path):
    data = open(path, "rb").read()
    events, off = [], 0
    while off < len(data):
        (n,) = struct.unpack_from("<Q", data, off)
        assert struct.unpack_from("<I", data, off + 8)[0] == masked(crc32c(data[off:off + 8]))
        body = data[off + 12:off + 12 + n]
        assert struct.unpack_from("<I", data, off + 12 + n)[0] == masked(crc32c(body))
        ev = {"offset": off, "step": 0, "scalars": []}
        for f, v in fields(body):
            if f == 1:
                ev["wall_time"] = struct.unpack("<d", v)[0]
            elif f == 2:
                ev["step"] = v
            elif f == 5:
                for sf, sv in fields(v):
                    if sf != 1:
                        continue
                    tag, value = None, None
                    for vf, vv in fields(sv):
                        if vf == 1:
                            tag = vv.decode()
                        elif vf == 2:
                            value = struct.unpack("<f", vv)[0]
                        elif vf == 8:
                            for tf, tv in fields(vv):
                                if tf == 4:
                                    value = struct.unpack("<f", tv)[0]
                    ev["scalars"].append((tag, value))
        events.append(ev)
        off += 16 + n
    return events


def report_tfevents(name):
    (path,) = glob.glob(os.path.join(FIXTURES, "tfevents", name, "events.out.tfevents.*"))
    events = tfevents(path)
    steps = [e for e in events if e["scalars"]]
    print(f"== {name}: {len(events)} records, {len(steps)} steps, size {os.path.getsize(path)}")
    print(f"  first record wall_time {events[0]['wall_time']!r} -> {wall_ns(events[0]['wall_time'])} ns")
    for i in (0, 1, len(steps) - 1):
        e = steps[i]
        print(f"  step[{i}] step={e['step']} wall_time={e['wall_time']!r} -> {wall_ns(e['wall_time'])} ns "
              f"scalars={e['scalars']} record offset {e['offset']}")
    print(f"  record 5 offset {events[5]['offset']}, record 6 offset {events[6]['offset']}")


def exact_ns(us, base=0):
    return base + int((decimal.Decimal(repr(us)) * 1000).to_integral_value(decimal.ROUND_HALF_EVEN))


def report_profiler(path):
    opener = gzip.open if path.endswith(".gz") else open
    doc = json.load(opener(path, "rt"))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    base = doc.get("baseTimeNanoseconds", 0) if isinstance(doc, dict) else 0
    rank = doc.get("distributedInfo", {}).get("rank", -1) if isinstance(doc, dict) else -1
    steps = [e for e in events if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")
             and not e.get("cat", "").startswith("gpu_")]
    waits = [e for e in events if e.get("ph") == "X" and e["name"].startswith("enumerate(DataLoader)#")
             and e["name"].endswith(".__next__")]
    print(f"== {os.path.basename(path)}: base {base}, rank {rank}, {len(steps)} steps, {len(waits)} waits")
    for e in steps:
        start = exact_ns(e["ts"], base)
        print(f"  {e['name']} pid {e['pid']} start {start} end {start + exact_ns(e['dur'])} ns")
    for e in waits:
        start = exact_ns(e["ts"], base)
        print(f"  wait start {start} end {start + exact_ns(e['dur'])} ns")


if __name__ == "__main__":
    report_tfevents("tf2_tensor_scalars")
    report_tfevents("pytorch_simple_value")
    for path in sorted(glob.glob(os.path.join(FIXTURES, "kineto", "*.json.gz"))):
        report_profiler(path)
    report_profiler(os.path.join(TESTDATA, "torch113_cpu.pt.trace.json"))
