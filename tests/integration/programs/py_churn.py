"""Stress for the signal sampler: the interpreter enters and leaves its
evaluation loop from C as often as it can (sorted's key, map, generators,
exceptions, recursion of varying depth), C code of many kinds leaves its
own data on the C stack between those entries, and code objects are made
and freed all the time."""
import functools, json, os, re, struct, sys, time, zlib
end = time.monotonic() + float(sys.argv[1])
def key(x): return -x
def gen(n):
    for i in range(n):
        yield i
def boom(i):
    if i % 3 == 0:
        raise ValueError(i)
    return i
def deep(d):
    return 0 if d == 0 else 1 + deep(d - 1)
pat = re.compile(r"(\w+)=(\d+)")
n = 0
while time.monotonic() < end:
    data = list(range(100))
    sorted(data, key=key)
    list(map(lambda v: v + 1, data))
    sum(gen(100))
    functools.reduce(lambda a, b: a + b, data)
    for i in range(20):
        try:
            boom(i)
        except ValueError:
            pass
    deep(n % 40)
    os.stat("/")
    pat.sub(lambda m: m.group(2), "a=1 b=22 c=333")
    json.loads(json.dumps({"k": data[:10], "n": n}), object_hook=lambda d: d)
    zlib.compress(struct.pack("<100q", *data))
    f = eval("lambda x: [x * k for k in range(%d)]" % (n % 17 + 1))
    f(n)
    del f
    n += 1
print("rounds", n)
