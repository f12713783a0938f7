"""Trains on TFRecord shards of tf.train.Example records, without TensorFlow.

The storage format of most TensorFlow datasets, and of many PyTorch jobs that
share data with them: a few shard files, each a sequence of records framed as

  uint64 length | uint32 masked CRC32C of the length | data | uint32 masked CRC32C of the data

(little-endian), each record's data a serialized tf.train.Example with the
features "image" (bytes_list: 3 x S x S uint8 pixels) and "label"
(int64_list). --generate writes them, encoded here by hand, with a DALI-style
index per shard (one "offset size" line per record). Two readers:

  --reader sequential  an IterableDataset: each DataLoader worker takes its
                       share of the shards and reads their records in file
                       order through a buffered file object (256 KiB reads),
                       as tf.data's TFRecordDataset does; a shuffle buffer
                       mixes records in memory
  --reader indexed     a map-style dataset over the index: each sample is one
                       pread of exactly its record, in the DataLoader's
                       shuffled order, as NVIDIA DALI's or the `tfrecord`
                       package's indexed readers do

Every record's length CRC is checked; --verify-data-crc checks the data CRC
too (CRC32C from python3-crcmod, or a slower pure-Python table).

  # 4 shards of 512 records of 3x32x32, then one epoch of each reader
  python3 train.py --data /tmp/tfrecords --generate-only
  iotap run --torch-steps -o /tmp/seq -- python3 train.py --data /tmp/tfrecords
  iotap run --torch-steps -o /tmp/idx -- python3 train.py --data /tmp/tfrecords \\
      --reader indexed
  iotap report /tmp/idx

The loop, the network and the summary are examples/common/training.py.
"""

import argparse
import json
import os
import random
import struct
import sys

import numpy
import torch
from torch.utils.data import Dataset, IterableDataset, get_worker_info

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import training  # noqa: E402  (examples/common/training.py)

READERS = ("sequential", "indexed")
HEADER = 12  # uint64 length + uint32 masked CRC of the length
FOOTER = 4   # uint32 masked CRC of the data


# ---- CRC32C (Castagnoli), as TFRecord frames use it

def _pure_python_crc32c():
    """A table-driven CRC32C (reflected polynomial 0x82F63B78): about 1 ms
    per 3 KiB record, against 20 us for crcmod's C extension."""
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)

    def crc32c(data):
        c = 0xFFFFFFFF
        for b in data:
            c = table[(c ^ b) & 0xFF] ^ (c >> 8)
        return c ^ 0xFFFFFFFF
    return crc32c


try:
    import crcmod.predefined
    crc32c = crcmod.predefined.mkCrcFun("crc-32c")
except ImportError:
    crc32c = _pure_python_crc32c()


def masked_crc(data):
    """TFRecord's masked CRC32C: rotated right by 15 bits, plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    """`data` framed as one TFRecord record."""
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc(length)) + data +
            struct.pack("<I", masked_crc(data)))


def record_length(header, where):
    """The data length a 12-byte record header announces, its CRC checked."""
    length_bytes, crc = header[:8], struct.unpack("<I", header[8:12])[0]
    if len(header) != HEADER or masked_crc(length_bytes) != crc:
        raise IOError(f"corrupt TFRecord header at {where}")
    return struct.unpack("<Q", length_bytes)[0]


def check_data(data, footer, where):
    if len(footer) != FOOTER or masked_crc(data) != struct.unpack("<I", footer)[0]:
        raise IOError(f"corrupt TFRecord data at {where}")


# ---- tf.train.Example, in protobuf's wire format
#
#   Example   { Features features = 1; }
#   Features  { map<string, Feature> feature = 1; }   (entries: key = 1, value = 2)
#   Feature   { oneof { BytesList bytes_list = 1; FloatList float_list = 2;
#                       Int64List int64_list = 3; } }
#   BytesList { repeated bytes value = 1; }
#   Int64List { repeated int64 value = 1 [packed = true]; }

def _varint(n):
    n &= 0xFFFFFFFFFFFFFFFF  # int64 as two's complement, as protobuf does
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _field(number, payload):
    """A length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def encode_example(image, label):
    """A tf.train.Example of {"image": bytes_list [image], "label": int64_list [label]}."""
    features = {
        "image": _field(1, _field(1, image)),                 # Feature.bytes_list
        "label": _field(3, _field(1, _varint(label))),        # Feature.int64_list, packed
    }
    entries = b"".join(_field(1, _field(1, key.encode()) + _field(2, value))
                       for key, value in features.items())
    return _field(1, entries)  # Example.features


def _read_varint(buf, pos):
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(buf):
    """(number, wire type, value) of each field of a message; value is the
    payload (a memoryview) for wire type 2, the integer for wire type 0."""
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
        elif wire == 2:
            n, pos = _read_varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield number, wire, value


def decode_example(data):
    """The features of a serialized tf.train.Example: name -> list of bytes
    (bytes_list) or of ints (int64_list)."""
    features = {}
    for number, _, feats in _fields(memoryview(data)):
        if number != 1:
            continue
        for entry_number, _, entry in _fields(feats):
            if entry_number != 1:
                continue
            key, value = None, []
            for n, _, v in _fields(entry):
                if n == 1:
                    key = bytes(v).decode()
                elif n == 2:
                    for kind, _, lst in _fields(v):
                        for vn, wire, item in _fields(lst):
                            if vn != 1:
                                continue
                            if kind == 1:
                                value.append(bytes(item))
                            elif kind == 3 and wire == 2:  # packed int64s
                                pos = 0
                                while pos < len(item):
                                    x, pos = _read_varint(item, pos)
                                    value.append(x - (1 << 64) if x >> 63 else x)
                            elif kind == 3:
                                value.append(item - (1 << 64) if item >> 63 else item)
            features[key] = value
    return features


# ---- the files

def shard_name(shard, shards):
    """TensorFlow's naming, with the suffix iotap's TFRecord layer watches."""
    return f"train-{shard:05d}-of-{shards:05d}.tfrecord"


def generate(root, shards, records, classes, size, seed):
    """Writes `records` records round-robin into `shards` shards, an index
    per shard (`.idx`: "offset size" of each framed record, DALI's format)
    and meta.json (counts, sizes, and the data bytes of each shard)."""
    if os.path.isdir(root) and os.listdir(root):
        sys.exit(f"train.py: --generate needs an empty directory, and {root} is not")
    os.makedirs(root, exist_ok=True)
    rng = numpy.random.default_rng(seed)
    centres = rng.integers(40, 216, size=(classes, 3)).astype(numpy.float32)
    files = [open(os.path.join(root, shard_name(s, shards)), "wb") for s in range(shards)]
    index = [[] for _ in range(shards)]
    data_bytes = [0] * shards
    for i in range(records):
        label = i % classes
        shard = i % shards
        noise = rng.normal(0, 40, size=(3, size, size)).astype(numpy.float32)
        pixels = numpy.clip(centres[label][:, None, None] + noise, 0, 255).astype(numpy.uint8)
        data = encode_example(pixels.tobytes(), label)
        framed = frame(data)
        index[shard].append((files[shard].tell(), len(framed)))
        files[shard].write(framed)
        data_bytes[shard] += len(data)
    for f in files:
        f.close()
    for s in range(shards):
        with open(os.path.join(root, shard_name(s, shards)[:-len(".tfrecord")] + ".idx"), "w") as f:
            f.writelines(f"{offset} {n}\n" for offset, n in index[s])
    with open(os.path.join(root, "meta.json"), "w") as f:
        json.dump({"shards": [shard_name(s, shards) for s in range(shards)],
                   "records": [len(i) for i in index], "data_bytes": data_bytes,
                   "classes": classes, "size": size}, f)


def sample(data, size):
    """(image tensor, label) of one record's data."""
    features = decode_example(data)
    pixels = numpy.frombuffer(features["image"][0], dtype=numpy.uint8)
    image = torch.from_numpy(pixels.reshape(3, size, size).astype(numpy.float32))
    return (image - 128.0) / 64.0, features["label"][0]


class Meta:
    def __init__(self, root):
        with open(os.path.join(root, "meta.json")) as f:
            meta = json.load(f)
        self.paths = [os.path.join(root, name) for name in meta["shards"]]
        self.records = meta["records"]
        self.classes = meta["classes"]
        self.size = meta["size"]


class SequentialRecords(IterableDataset):
    """Each worker reads shards worker, worker + workers, ... in file order
    through a buffered reader, and yields their records through a shuffle
    buffer of `shuffle_buffer` records (tf.data's shuffle())."""

    def __init__(self, meta, buffer_bytes, shuffle_buffer, verify_data, seed):
        self.meta = meta
        self.buffer_bytes = buffer_bytes
        self.shuffle_buffer = shuffle_buffer
        self.verify_data = verify_data
        self.seed = seed
        self.epoch = 0

    def records(self, path):
        offset = 0  # counted here: f.tell() would cost an lseek per record
        with open(path, "rb", buffering=self.buffer_bytes) as f:
            while True:
                header = f.read(HEADER)
                if not header:
                    return
                where = f"{path}:{offset}"
                data = f.read(record_length(header, where))
                footer = f.read(FOOTER)
                if self.verify_data:
                    check_data(data, footer, where)
                offset += HEADER + len(data) + FOOTER
                yield data

    def __iter__(self):
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        # The same shuffle in every run, different in each worker and epoch
        # (persistent workers keep their first epoch's copy of `epoch`).
        rng = random.Random(self.seed * 1000003 + self.epoch * 1009 + worker)
        pool = []
        for path in self.meta.paths[worker::workers]:
            for data in self.records(path):
                if len(pool) < self.shuffle_buffer:
                    pool.append(data)
                    continue
                k = rng.randrange(len(pool))
                pool[k], data = data, pool[k]
                yield sample(data, self.meta.size)
        rng.shuffle(pool)
        for data in pool:
            yield sample(data, self.meta.size)


class IndexedRecords(Dataset):
    """Sample i is one pread of exactly its framed record, at the offset the
    shard's index gives. Shards are opened lazily in each worker."""

    def __init__(self, meta, verify_data):
        self.meta = meta
        self.verify_data = verify_data
        self.index = []  # (shard, offset, framed size)
        for s, path in enumerate(meta.paths):
            with open(path[:-len(".tfrecord")] + ".idx") as f:
                for line in f:
                    offset, n = line.split()
                    self.index.append((s, int(offset), int(n)))
        self.fds = None

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        if self.fds is None:
            self.fds = [os.open(path, os.O_RDONLY) for path in self.meta.paths]
        shard, offset, n = self.index[i]
        record = os.pread(self.fds[shard], n, offset)
        where = f"{self.meta.paths[shard]}:{offset}"
        length = record_length(record[:HEADER], where)
        if HEADER + length + FOOTER != n:
            raise IOError(f"TFRecord at {where} is {length} bytes, the index says {n} framed")
        data = record[HEADER:HEADER + length]
        if self.verify_data:
            check_data(data, record[HEADER + length:], where)
        return sample(data, self.meta.size)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="directory of the shards, indexes and meta.json")
    p.add_argument("--generate", action="store_true",
                   help="first write the shards into --data (which must be empty)")
    p.add_argument("--generate-only", action="store_true", help="write the shards and stop")
    p.add_argument("--shards", type=int, default=4, help="shards to generate (default 4)")
    p.add_argument("--records", type=int, default=2048, help="records to generate (default 2048)")
    p.add_argument("--classes", type=int, default=4, help="classes to generate (default 4)")
    p.add_argument("--image-size", type=int, default=32,
                   help="pixels per side of a generated image (default 32: 3 KiB)")
    p.add_argument("--reader", choices=READERS, default="sequential",
                   help="sequential (buffered, in file order) or indexed (one pread per "
                        "record, shuffled); default sequential")
    p.add_argument("--buffer-kib", type=int, default=256,
                   help="the sequential reader's buffer (default 256 KiB, tf.data's)")
    p.add_argument("--shuffle-buffer", type=int, default=256,
                   help="records the sequential reader shuffles in memory (default 256)")
    p.add_argument("--verify-data-crc", action="store_true",
                   help="check each record's data CRC too, not only its length's")
    training.add_arguments(p, batch_size=64)
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    if args.generate or args.generate_only:
        generate(args.data, args.shards, args.records, args.classes, args.image_size, args.seed)
        if args.generate_only:
            return
    meta = Meta(args.data)
    if args.reader == "sequential":
        dataset = SequentialRecords(meta, args.buffer_kib * 1024, args.shuffle_buffer,
                                    args.verify_data_crc, args.seed)
        before_epoch = lambda epoch: setattr(dataset, "epoch", epoch)  # noqa: E731
    else:
        dataset = IndexedRecords(meta, args.verify_data_crc)
        before_epoch = None
    training.train(dataset, meta.classes, args, before_epoch=before_epoch, unit="records")


if __name__ == "__main__":
    main(sys.argv[1:])
