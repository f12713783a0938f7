"""Compares what a program says it copied to the GPU (its manifest) with what
iotap recorded (`iotap dump` and `iotap stats --json` of its trace).

    python3 check_trace.py --iotap build/bin/iotap --trace DIR --manifest FILE

For every {"bytes": B, "pinned": P, "count": N} of the manifest, the trace
must hold exactly N successful host-to-device copies of B bytes, each
classified pinned if P and pageable if not; with "driver": true, each made
through the driver API (a statically linked cudart). Then the stats' HtoD
groups must add up to what the dump shows. Exits 0 when all holds, 1 with
the reasons otherwise.
"""

import argparse
import collections
import json
import re
import subprocess
import sys

DETAILS = re.compile(r"\[([^\]]*)\]\s*$")


def cuda_copies(iotap, trace):
    """Host-to-device copies in `iotap dump`: (op, bytes, result, words)."""
    dump = subprocess.run([iotap, "dump", trace], check=True, capture_output=True, text=True).stdout
    copies = []
    for line in dump.splitlines():
        if line.startswith("#"):
            continue
        # time dur pid tid layer op offset requested result error [file] [details]
        fields = line.split(None, 10)
        if len(fields) < 10 or fields[4] != "CUDA":
            continue
        if fields[5] not in ("cudaMemcpyHtoD", "cudaMemcpy"):
            continue
        m = DETAILS.search(line)
        words = set(w.strip() for w in m.group(1).split(",")) if m else set()
        copies.append((fields[5], int(fields[7]), int(fields[8]), words))
    return copies


def check(iotap, trace, manifest):
    problems = []
    copies = cuda_copies(iotap, trace)
    driver = manifest.get("driver", False)
    for want in manifest["moved"]:
        size, pinned, count = want["bytes"], want["pinned"], want["count"]
        before = len(problems)
        found = [c for c in copies if c[1] == size]
        label = f"{count} copies of {size} bytes from {'pinned' if pinned else 'pageable'} memory"
        if len(found) != count:
            problems.append(f"{label}: the trace has {len(found)} copies of that size")
            continue
        for op, _, result, words in found:
            if result != 0:
                problems.append(f"{label}: a copy returned {result}")
            # A static cudart may hand cudaMemcpy to the driver's unified
            # cuMemcpy, whose direction iotap cannot tell; its pinned flag
            # still holds, and a pageable host side then shows no flag.
            if op != "cudaMemcpyHtoD" and not (driver and op == "cudaMemcpy"):
                problems.append(f"{label}: recorded as {op}, not cudaMemcpyHtoD")
            expected = "pinned" if pinned else "pageable"
            if expected not in words and not (op == "cudaMemcpy" and not pinned and
                                              "pinned" not in words):
                problems.append(f"{label}: recorded as [{', '.join(sorted(words))}]")
            if driver and "driver API" not in words:
                problems.append(f"{label}: not recorded as a driver API call")
        if len(problems) == before:
            print(f"  ok: {label}")

    # The stats' HtoD groups hold what the dump holds.
    stats = json.loads(subprocess.run([iotap, "stats", "--json", trace], check=True,
                                      capture_output=True, text=True).stdout)
    from_stats = collections.Counter()
    for g in stats["cuda_copies"]:
        if g["direction"] == "HtoD":
            from_stats[g["host_memory"]] += g["bytes"]
    from_dump = collections.Counter()
    for op, size, result, words in copies:
        if op == "cudaMemcpyHtoD" and result == 0:
            memory = "pinned" if "pinned" in words else "pageable" if "pageable" in words else "unknown"
            from_dump[memory] += size
    if from_stats != from_dump:
        problems.append(f"stats say HtoD bytes {dict(from_stats)}, the dump {dict(from_dump)}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iotap", required=True)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--manifest", required=True)
    args = parser.parse_args()
    with open(args.manifest) as f:
        manifest = json.load(f)
    problems = check(args.iotap, args.trace, manifest)
    for p in problems:
        print(f"  FAIL: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
