/* Reads a TFRecord file the ways real readers do, for the TFRecord tests.
 *
 *   tfrecord_reader buffered FILE [CHUNK]      read() of CHUNK bytes (default
 *                                              256 KiB) to the end, as tf.data
 *   tfrecord_reader per-record FILE            read() of the 12-byte header,
 *                                              then read() of data and footer
 *   tfrecord_reader indexed FILE IDX SEED      pread() of each record named in a
 *                                              DALI-style index ("offset size"
 *                                              lines), in an order shuffled by SEED
 *   tfrecord_reader stdio-buffered FILE        fread() of 256 KiB to the end
 *   tfrecord_reader stdio-indexed FILE IDX SEED
 *                                              fseek() and fread() of each record
 *   tfrecord_reader probe FILE N               N pread()s of 1 byte at offset 0
 *                                              (a reader peeking at a magic
 *                                              number), then as buffered
 *
 * Checks the framing it reads (lengths only; the CRCs are the tests' job) and
 * prints "records N bytes B". Exits 1 on a framing error. */

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

static void die(const char* what) {
  perror(what);
  exit(1);
}

/* Counts records in a stream of bytes cut anywhere. */
struct Framing {
  unsigned char header[12];
  uint64_t have, skip, records, bytes;
};

static void frame(struct Framing* f, const unsigned char* p, size_t n) {
  while (n > 0) {
    if (f->skip > 0) {
      size_t take = f->skip < n ? f->skip : n;
      f->skip -= take;
      p += take;
      n -= take;
      continue;
    }
    size_t take = 12 - f->have < n ? 12 - f->have : n;
    memcpy(f->header + f->have, p, take);
    f->have += take;
    p += take;
    n -= take;
    if (f->have == 12) {
      f->skip = le64(f->header) + 4;
      f->bytes += le64(f->header);
      f->records++;
      f->have = 0;
    }
  }
}

struct Entry {
  long long offset, size;
};

static struct Entry* read_index(const char* path, size_t* count, unsigned seed) {
  FILE* f = fopen(path, "r");
  if (f == NULL) die(path);
  size_t cap = 1024, n = 0;
  struct Entry* e = malloc(cap * sizeof(*e));
  while (fscanf(f, "%lld %lld", &e[n].offset, &e[n].size) == 2) {
    if (++n == cap) e = realloc(e, (cap *= 2) * sizeof(*e));
  }
  fclose(f);
  srand(seed);
  for (size_t i = n; i > 1; --i) { /* Fisher-Yates */
    size_t j = (size_t)rand() % i;
    struct Entry t = e[i - 1];
    e[i - 1] = e[j];
    e[j] = t;
  }
  *count = n;
  return e;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: tfrecord_reader MODE FILE [ARGS]\n");
    return 2;
  }
  const char* mode = argv[1];
  const char* path = argv[2];
  struct Framing f = {0};
  static unsigned char buf[1 << 20];
  if (strcmp(mode, "buffered") == 0 || strcmp(mode, "per-record") == 0 ||
      (strcmp(mode, "probe") == 0 && argc > 3)) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) die(path);
    size_t chunk = argc > 3 && strcmp(mode, "buffered") == 0 ? (size_t)atol(argv[3]) : 256 * 1024;
    if (strcmp(mode, "probe") == 0) {
      for (long i = atol(argv[3]); i > 0; --i) {
        if (pread(fd, buf, 1, 0) != 1) die("pread");
      }
    }
    if (strcmp(mode, "per-record") != 0) {
      ssize_t r;
      while ((r = read(fd, buf, chunk)) > 0) frame(&f, buf, (size_t)r);
      if (r < 0) die("read");
    } else {
      for (;;) {
        ssize_t r = read(fd, buf, 12);
        if (r == 0) break;
        if (r != 12) die("header");
        frame(&f, buf, 12);
        size_t rest = (size_t)le64(buf) + 4;
        if (rest > sizeof(buf) || read(fd, buf, rest) != (ssize_t)rest) die("data");
        frame(&f, buf, rest);
      }
    }
    close(fd);
  } else if (strcmp(mode, "stdio-buffered") == 0) {
    FILE* s = fopen(path, "rb");
    if (s == NULL) die(path);
    size_t r;
    while ((r = fread(buf, 1, 256 * 1024, s)) > 0) frame(&f, buf, r);
    fclose(s);
  } else if ((strcmp(mode, "indexed") == 0 || strcmp(mode, "stdio-indexed") == 0) && argc > 4) {
    size_t n;
    struct Entry* e = read_index(argv[3], &n, (unsigned)atoi(argv[4]));
    int fd = -1;
    FILE* s = NULL;
    if (strcmp(mode, "indexed") == 0) {
      fd = open(path, O_RDONLY);
      if (fd < 0) die(path);
    } else if ((s = fopen(path, "rb")) == NULL) {
      die(path);
    }
    for (size_t i = 0; i < n; ++i) {
      size_t size = (size_t)e[i].size;
      if (size > sizeof(buf)) die("record too large");
      if (fd >= 0) {
        if (pread(fd, buf, size, e[i].offset) != (ssize_t)size) die("pread");
      } else if (fseeko(s, e[i].offset, SEEK_SET) != 0 || fread(buf, 1, size, s) != size) {
        die("fread");
      }
      struct Framing one = {0};
      frame(&one, buf, size);
      if (one.records != 1 || one.have != 0 || one.skip != 0) die("index entry is not one record");
      f.records++;
      f.bytes += one.bytes;
    }
    if (fd >= 0) close(fd);
    if (s != NULL) fclose(s);
    free(e);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  if (f.have != 0 || f.skip != 0) {
    fprintf(stderr, "file ends inside a record\n");
    return 1;
  }
  printf("records %llu bytes %llu\n", (unsigned long long)f.records, (unsigned long long)f.bytes);
  return 0;
}
