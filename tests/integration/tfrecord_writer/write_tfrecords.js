// Writes a TFRecord file of tf.train.Example records with @roboflow/tfrecords,
// a writer iotap did not write, for the TFRecord layer's tests.
//
//   node write_tfrecords.js OUT RECORDS SEED [none|gzip|zlib]
//
// Record i carries an int64 "index" = i, a string "name" and a binary
// "image/encoded" of a pseudo-random length between 16 bytes and 2 KiB
// (from SEED), so records differ in size the way images do. With gzip or
// zlib the whole file is compressed, as TensorFlow's TFRecordWriter does with
// compression_type GZIP or ZLIB. Prints the number of records and bytes.
"use strict";
const fs = require("fs");
const zlib = require("zlib");
const { TFRecordsBuilder, FeatureType } = require("@roboflow/tfrecords");

const [out, countArg, seedArg, compression = "none"] = process.argv.slice(2);
if (!out || !countArg) {
  console.error("usage: node write_tfrecords.js OUT RECORDS SEED [none|gzip|zlib]");
  process.exit(1);
}
const count = Number(countArg);
let state = (Number(seedArg) >>> 0) || 1;
function next() {  // xorshift32: the same file for the same seed
  state ^= state << 13;
  state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5;
  state >>>= 0;
  return state;
}

const records = [];
for (let i = 0; i < count; ++i) {
  const size = 16 + (next() % (2048 - 16));
  const image = Buffer.alloc(size);
  for (let k = 0; k < size; k += 4) image.writeUInt32LE(next(), k - (k + 4 > size ? k + 4 - size : 0));
  const builder = new TFRecordsBuilder();
  builder.addFeature("index", FeatureType.Int64, i);
  builder.addFeature("name", FeatureType.String, `sample-${i}`);
  builder.addFeature("image/encoded", FeatureType.Binary, image);
  records.push(builder.build());
}
let bytes = TFRecordsBuilder.buildTFRecords(records);
if (compression === "gzip") bytes = zlib.gzipSync(bytes);
else if (compression === "zlib") bytes = zlib.deflateSync(bytes);
else if (compression !== "none") throw new Error(`unknown compression ${compression}`);
fs.writeFileSync(out, bytes);
console.log(`${count} records, ${bytes.length} bytes`);
