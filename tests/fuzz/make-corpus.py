#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora (tests/fuzz/corpus/NAME), small on purpose.

Usage: tests/fuzz/make-corpus.py [BUILD_DIR]

Step logs and TFRecord files come from the third-party fixtures
(../shared/fixtures, cut down) and the readers' own test data; traces are
made by running the test program `lifecycle` under the shim of BUILD_DIR
(default: build), and saved reports by `iotap report --format json` on them.
The trace and TensorBoard fuzzers take a first byte that says how to read the
rest, and the TFRecord fuzzer nine (see their sources): seeds are written in
each form.
"""
import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(os.path.dirname(ROOT), "shared", "fixtures")
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def write(fuzzer, name, data):
    d = os.path.join(CORPUS, fuzzer)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def tfrecords(path, limit):
    with open(path, "rb") as f:
        data = f.read()
    records, i = [], 0
    while i + 12 <= len(data) and len(records) < limit:
        (n,) = struct.unpack_from("<Q", data, i)
        records.append((data[i:i + 12 + n + 4], data[i + 12:i + 12 + n]))
        i += 12 + n + 4
    return records


def tensorboard():
    for name, sub in (("pytorch", "pytorch_simple_value"), ("tf2", "tf2_tensor_scalars")):
        d = os.path.join(FIXTURES, "tfevents", sub)
        records = tfrecords(os.path.join(d, os.listdir(d)[0]), 6)
        framed = b"".join(r for r, _ in records)
        write("tensorboard_reader_fuzzer", name + "-file", b"\0" + framed)
        write("tensorboard_reader_fuzzer", name + "-file-gz", b"\0" + gzip.compress(framed, mtime=0))
        write("tensorboard_reader_fuzzer", name + "-records",
              b"\1" + b"".join(struct.pack("<H", len(e)) + e for _, e in records))


def profiler():
    with gzip.open(os.path.join(FIXTURES, "kineto", "cpu_only_rank-34.pt.trace.json.gz")) as f:
        current = json.load(f)
    current.pop("deviceProperties", None)
    current.pop("INFO", None)
    current["distributedInfo"] = {"backend": "gloo", "rank": 34, "world_size": 64}
    events = [e for e in current["traceEvents"]
              if e.get("ph") == "X" and e.get("name") != "gloo:all_reduce"][:8]
    events.append({"ph": "X", "cat": "user_annotation", "name":
                   "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                   "pid": 1, "tid": 1, "ts": events[0].get("ts", 0), "dur": 3})
    current["traceEvents"] = events
    text = json.dumps(current).encode()
    write("profiler_reader_fuzzer", "kineto-current.json", text)
    write("profiler_reader_fuzzer", "kineto-current.json.gz", gzip.compress(text, mtime=0))
    older = dict(current)
    del older["baseTimeNanoseconds"]
    older["traceEvents"] = [dict(e, ts=1700000000000000 + e["ts"]) if "ts" in e else e
                            for e in events]
    write("profiler_reader_fuzzer", "kineto-older.json", json.dumps(older).encode())
    with open(os.path.join(ROOT, "analyzer/steps/testdata/torch113_cpu.pt.trace.json"), "rb") as f:
        torch113 = json.load(f)
    keep = [e for e in torch113 if "ProfilerStep" in e.get("name", "")
            or "DataLoader" in e.get("name", "")][:6]
    write("profiler_reader_fuzzer", "torch113.json", json.dumps(keep).encode())


def jsonl():
    lines = [
        b'{"step": 0, "start": 1700000000.125, "end": 1700000000.480, "data_wait": 0.052, '
        b'"rank": 1, "epoch": 1, "loss": NaN}',
        b'{"step": 1, "start": 1700000000.480, "end": 1700000000.500000001, "data_waits": '
        b'[[1700000000.49, 1700000000.495], [1700000000.481, 1700000000.482]]}',
        b'',
        b'  {"forward": 0.1, "step": 2, "end": 1700000001, "start": 1700000000.5, "pid": 77, '
        b'"data_wait": 2, "phases": {"backward": [1, 2]}}',
        b'{"step": 3, "start": 1700000001, "end": 1700000001}',
    ]
    text = b"\n".join(lines) + b"\n"
    write("jsonl_reader_fuzzer", "every-field.jsonl", text)
    write("jsonl_reader_fuzzer", "every-field.jsonl.gz", gzip.compress(text, mtime=0))
    write("jsonl_reader_fuzzer", "damaged.jsonl",
          b'{"step": 1, "start": 2, "end": 1}\n{"step": "x"}\n[1, 2]\n{"step": 4, "start": 1e400, '
          b'"end": -0, "data_waits": [[1, 2, 3]]}\n{"step": 5, "start": 1.5, "end": 2.5, '
          b'"rank": 99999999999, "s\\u00e9p": "\\ud83d\\ude00"}\n')


def text():
    names = {
        "markup": b"<script>alert(1)</script> | *b* _i_ `c` [l](javascript:x) # ~ ! &amp; \\",
        "controls": b"a\nb\tc\rd\x00e\x1b[31mred\x7f\xc2\x9b\xc2\x85",
        "invalid-utf8": b"caf\xe9 \xff\xfe \xed\xa0\x80 \xc0\xaf \xf4\x90\x80\x80 \xe2\x82",
        "unicode": "données/日本語/😀/\u2028\u2029/\u202e".encode(),
        "json": b'{"k": "v\\"", "a": [1, 2]}\\u003c',
        "path": b"/data/train/shard-00001-of-01024.tfrecord",
    }
    for name, value in names.items():
        write("text_fuzzer", name, value)


def tfrecord():
    d = os.path.join(FIXTURES, "tfrecord")
    seed = struct.pack("<Q", 0x5eed)
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            data = f.read()
        for mode, how in ((0, "in-order"), (1, "fixed-crcs"), (2, "jumps")):
            write("tfrecord_parser_fuzzer", "%s-%s" % (name, how), bytes([mode]) + seed + data)
    # Forty records of 0 to 390 bytes; the CRCs are left for the fuzzer to
    # fix (mode bit 0), in order and with jumps.
    framed = b"".join(struct.pack("<QI", n, 0) + bytes([n % 251]) * n + b"\0" * 4
                      for n in range(0, 400, 10))
    for mode in (1, 3):
        write("tfrecord_parser_fuzzer", "forty-records-%d" % mode, bytes([mode]) + seed + framed)


def saved_reports(build, runs):
    """Each run's report, and the last one with hostile strings in its names."""
    iotap = os.path.join(build, "bin", "iotap")
    for name, path in runs.items():
        report = subprocess.run([iotap, "report", path, "--format", "json"],
                                capture_output=True, check=True).stdout
        write("saved_report_fuzzer", name + ".json", report)
    hostile = json.loads(report)
    hostile.setdefault("run", {})["command"] = [
        "<img src=x onerror=alert(1)>", "</script>", "a|b *c* [d](e)", "esc\x1b[31m\u009b"]
    for f in hostile.get("files", []):
        f["path"] = "/data/<b>|\n" + f.get("path", "")
    write("saved_report_fuzzer", "hostile.json", json.dumps(hostile).encode())


def traces(build):
    lifecycle = os.path.join(build, "bin", "lifecycle")
    shim = os.path.join(build, "lib", "libiotap.so")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        os.mkdir(data)
        for name, size in (("a.bin", 4096), ("b.bin", 600)):
            with open(os.path.join(data, name), "wb") as f:
                f.write(b"x" * size)
        runs = {"loop": ["loop", data, "40"], "fork": ["fork", data], "errors": ["errors", data]}
        for name, args in runs.items():
            out = os.path.join(tmp, name)
            env = dict(os.environ, LD_PRELOAD=shim, IOTAP_DIR=out, IOTAP_FLUSH_INTERVAL_MS="10")
            subprocess.run([lifecycle] + args, env=env, check=True, stdout=subprocess.DEVNULL)
            for i, file in enumerate(sorted(os.listdir(out))):
                with open(os.path.join(out, file), "rb") as f:
                    raw = f.read()
                plain = subprocess.run(["zstd", "-dcq"], input=raw, capture_output=True,
                                       check=True).stdout
                write("trace_reader_fuzzer", "%s-%d-file" % (name, i), b"\0" + raw)
                write("trace_reader_fuzzer", "%s-%d-packets" % (name, i), b"\1" + plain)
        saved_reports(build, {name: os.path.join(tmp, name) for name in runs})


if __name__ == "__main__":
    tensorboard()
    profiler()
    jsonl()
    text()
    tfrecord()
    traces(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
