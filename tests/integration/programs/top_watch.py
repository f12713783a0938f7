"""Watches top_switch_train.py with `iotap top`, for top_test.cc.

    python3 top_watch.py IOTAP DIR

Starts the job under `iotap run --torch-steps` (traces in DIR/trace) and
`iotap top` on it, one line per refresh (--interval 1 --window 1 --lag 0.5;
the shim flushes every 200 ms), serving /metrics. After each line it scrapes
/metrics. Once 5 lines have shown steps, it creates DIR/switch (the job's
bottleneck changes); 8 lines later, DIR/stop (the job ends, and so does
`iotap top`). Prints one JSON object: every line, the index of the first
line read after the switch, and each line's scrape.
"""

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DEADLINE_S = 150


def touch(path):
    with open(path, "w"):
        pass


def main(iotap, work):
    trace = os.path.join(work, "trace")
    switch, stop = os.path.join(work, "switch"), os.path.join(work, "stop")
    job = subprocess.Popen(
        [iotap, "run", "--torch-steps", "--flush-interval", "200", "-o", trace, "--",
         sys.executable, os.path.join(HERE, "top_switch_train.py"), switch, stop],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while not os.path.isdir(trace) and job.poll() is None:
        time.sleep(0.05)
    top = subprocess.Popen(
        [iotap, "top", trace, "--interval", "1", "--window", "1", "--lag", "0.5",
         "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = int(re.search(r"\(port (\d+)\)", top.stderr.readline()).group(1))
    start = time.monotonic()
    lines, scrapes = [], []
    switched_at, shown = None, 0
    for line in top.stdout:
        line = line.rstrip("\n")
        lines.append(line)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                scrapes.append(r.read().decode())
        except urllib.error.URLError:
            # top shows its last line once the job has ended, and exits: its
            # server may be gone before this scrape. Only then is one missed.
            top.wait(timeout=10)
            scrapes.append(None)
        if switched_at is None and "stall_pct=-" not in line:
            shown += 1
            if shown == 5:
                touch(switch)
                switched_at = len(lines)
        if switched_at is not None and len(lines) == switched_at + 8:
            touch(stop)
        if time.monotonic() - start > DEADLINE_S:
            touch(stop)
    top.wait()
    out, err = job.communicate()
    print(json.dumps({"lines": lines, "switched_at": switched_at, "scrapes": scrapes,
                      "job_exit": job.returncode, "job_out": out, "job_err": err[-2000:],
                      "top_exit": top.returncode, "top_err": top.stderr.read()[-2000:]}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
