#include "analyzer/steps/tensorboard_reader.h"

#include <cstring>
#include <map>
#include <optional>
#include <unordered_set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/steps/byte_source.h"
#include "analyzer/steps/span_building.h"
#include "proto/wire/crc32c.h"
#include "proto/wire/little_endian.h"
#include "proto/wire/varint.h"

namespace iotap::analyzer {

namespace {

// A record longer than this is taken for damage, even with a valid CRC.
constexpr uint64_t kMaxRecordBytes = 1ull << 30;
// TensorProto dtypes (tensorflow/core/framework/types.proto).
constexpr uint64_t kDtFloat = 1, kDtDouble = 2, kDtInt32 = 3, kDtInt64 = 9;

// Protobuf wire format over bytes in memory, zero-copy.
class Wire {
 public:
  explicit Wire(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}
  bool done() const { return p_ == end_; }
  bool Varint(uint64_t* v) {
    const auto* p = reinterpret_cast<const uint8_t*>(p_);
    bool ok = wire::ReadVarint(&p, reinterpret_cast<const uint8_t*>(end_), v);
    p_ = reinterpret_cast<const char*>(p);
    return ok;
  }
  bool Fixed(size_t n, const char** at) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    *at = p_;
    p_ += n;
    return true;
  }
  bool Bytes(std::string_view* out) {
    uint64_t n;
    const char* at;
    if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_) || !Fixed(n, &at)) return false;
    *out = std::string_view(at, n);
    return true;
  }
  // Reads a field's key; the value is read by the caller or skipped.
  bool Key(uint32_t* field, uint32_t* wire) {
    uint64_t key;
    if (!Varint(&key)) return false;
    *field = static_cast<uint32_t>(key >> 3);
    *wire = static_cast<uint32_t>(key & 7);
    return true;
  }
  bool Skip(uint32_t wire) {
    uint64_t v;
    const char* at;
    std::string_view s;
    switch (wire) {
      case 0:
        return Varint(&v);
      case 1:
        return Fixed(8, &at);
      case 2:
        return Bytes(&s);
      case 5:
        return Fixed(4, &at);
      default:
        return false;  // groups (3, 4) are not used by these messages
    }
  }

 private:
  const char* p_;
  const char* end_;
};

// The value of a one-element numeric TensorProto, if it is one.
std::optional<double> TensorScalar(std::string_view tensor) {
  Wire w(tensor);
  uint64_t dtype = 0;
  std::string_view content;
  std::vector<double> values;
  uint32_t field, wire;
  while (!w.done()) {
    if (!w.Key(&field, &wire)) return std::nullopt;
    const char* at;
    uint64_t v;
    std::string_view packed;
    if (field == 1 && wire == 0) {
      if (!w.Varint(&dtype)) return std::nullopt;
    } else if (field == 4 && wire == 2) {
      if (!w.Bytes(&content)) return std::nullopt;
    } else if (field == 5 && wire == 5) {  // float_val, one unpacked
      if (!w.Fixed(4, &at)) return std::nullopt;
      float f;
      std::memcpy(&f, at, 4);
      values.push_back(f);
    } else if (field == 6 && wire == 1) {  // double_val, one unpacked
      if (!w.Fixed(8, &at)) return std::nullopt;
      double d;
      std::memcpy(&d, at, 8);
      values.push_back(d);
    } else if ((field == 7 || field == 10) && wire == 0) {  // int_val, int64_val
      if (!w.Varint(&v)) return std::nullopt;
      values.push_back(field == 7 ? static_cast<int32_t>(v) : static_cast<int64_t>(v));
    } else if ((field == 5 || field == 6 || field == 7 || field == 10) && wire == 2) {
      if (!w.Bytes(&packed)) return std::nullopt;
      Wire p(packed);
      while (!p.done()) {
        if (field == 5 && p.Fixed(4, &at)) {
          float f;
          std::memcpy(&f, at, 4);
          values.push_back(f);
        } else if (field == 6 && p.Fixed(8, &at)) {
          double d;
          std::memcpy(&d, at, 8);
          values.push_back(d);
        } else if ((field == 7 || field == 10) && p.Varint(&v)) {
          values.push_back(field == 7 ? static_cast<int32_t>(v) : static_cast<int64_t>(v));
        } else {
          return std::nullopt;
        }
      }
    } else if (!w.Skip(wire)) {
      return std::nullopt;
    }
  }
  if (!content.empty()) {
    if (dtype == kDtFloat && content.size() == 4) {
      float f;
      std::memcpy(&f, content.data(), 4);
      return f;
    }
    if (dtype == kDtDouble && content.size() == 8) {
      double d;
      std::memcpy(&d, content.data(), 8);
      return d;
    }
    if (dtype == kDtInt32 && content.size() == 4) {
      return static_cast<int32_t>(wire::LoadLe32(content.data()));
    }
    if (dtype == kDtInt64 && content.size() == 8) {
      return static_cast<int64_t>(wire::LoadLe64(content.data()));
    }
    return std::nullopt;
  }
  bool numeric = dtype == kDtFloat || dtype == kDtDouble || dtype == kDtInt32 || dtype == kDtInt64;
  if (numeric && values.size() == 1) return values[0];
  return std::nullopt;
}

// Reads up to `n` bytes; fewer only at the end of the data.
absl::StatusOr<size_t> ReadFull(ByteSource* in, char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    absl::StatusOr<size_t> r = in->Read(buf + got, n - got);
    if (!r.ok()) return r.status();
    if (*r == 0) break;
    got += *r;
  }
  return got;
}

}  // namespace

absl::StatusOr<TfEvent> DecodeTfEvent(std::string_view data) {
  TfEvent event;
  Wire w(data);
  uint32_t field, wire;
  auto malformed = [](const char* what) {
    return absl::InvalidArgumentError(absl::StrCat("malformed Event: ", what));
  };
  while (!w.done()) {
    if (!w.Key(&field, &wire)) return malformed("bad field key");
    const char* at;
    uint64_t v;
    std::string_view bytes;
    if (field == 1 && wire == 1) {
      if (!w.Fixed(8, &at)) return malformed("wall_time cut short");
      std::memcpy(&event.wall_time, at, 8);
    } else if (field == 2 && wire == 0) {
      if (!w.Varint(&v)) return malformed("step cut short");
      event.step = static_cast<int64_t>(v);
    } else if (field == 3 && wire == 2) {
      if (!w.Bytes(&bytes)) return malformed("file_version cut short");
      event.has_file_version = true;
    } else if (field == 5 && wire == 2) {
      std::string_view summary;
      if (!w.Bytes(&summary)) return malformed("summary cut short");
      Wire s(summary);
      while (!s.done()) {
        if (!s.Key(&field, &wire)) return malformed("bad key in summary");
        if (field != 1 || wire != 2) {
          if (!s.Skip(wire)) return malformed("bad field in summary");
          continue;
        }
        std::string_view value;
        if (!s.Bytes(&value)) return malformed("summary value cut short");
        ++event.summary_values;
        TfScalar scalar;
        bool is_scalar = false;
        Wire val(value);
        while (!val.done()) {
          if (!val.Key(&field, &wire)) return malformed("bad key in summary value");
          if (field == 1 && wire == 2) {
            if (!val.Bytes(&bytes)) return malformed("tag cut short");
            scalar.tag = std::string(bytes);
          } else if (field == 2 && wire == 5) {
            if (!val.Fixed(4, &at)) return malformed("simple_value cut short");
            float f;
            std::memcpy(&f, at, 4);
            scalar.value = f;
            is_scalar = true;
          } else if (field == 8 && wire == 2) {
            if (!val.Bytes(&bytes)) return malformed("tensor cut short");
            if (std::optional<double> x = TensorScalar(bytes)) {
              scalar.value = *x;
              scalar.tensor_form = true;
              is_scalar = true;
            }
          } else if (!val.Skip(wire)) {
            return malformed("bad field in summary value");
          }
        }
        if (is_scalar) event.scalars.push_back(std::move(scalar));
      }
    } else if (!w.Skip(wire)) {
      return malformed("bad field");
    }
  }
  return event;
}

bool LooksLikeTfRecord(std::string_view head) {
  return head.size() >= 12 &&
         wire::MaskCrc32c(wire::Crc32c(head.data(), 8)) == wire::LoadLe32(head.data() + 8);
}

absl::StatusOr<StepLog> ReadTensorBoardLog(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> in = ByteSource::Open(path);
  if (!in.ok()) return in.status();
  StepLog log;
  log.source = StepSource::kTensorBoard;
  log.path = path;
  std::optional<int64_t> previous;  // the time the next step starts from
  std::unordered_set<int64_t> seen;
  int64_t repeated = 0;
  std::map<std::string, std::pair<int64_t, bool>> tags;  // tag -> (values, tensor form)
  internal::ErrorList errors(&log);
  std::string data;
  uint64_t offset = 0;
  for (int64_t record = 0;; ++record) {
    auto where = [&] { return absl::StrCat(path, ": record ", record, " at byte ", offset); };
    char header[12];
    absl::StatusOr<size_t> n = ReadFull(in->get(), header, sizeof(header));
    if (!n.ok()) {
      errors.Add(absl::StrCat(n.status().message(), " (in record ", record, ")"));
      break;
    }
    if (*n == 0) break;
    if (*n < sizeof(header)) {
      errors.Add(absl::StrCat(where(), ": the file ends inside the record's header (", *n,
                              " of 12 bytes): it was cut short"));
      break;
    }
    uint64_t length = wire::LoadLe64(header);
    uint32_t stored = wire::LoadLe32(header + 8);
    uint32_t computed = wire::MaskCrc32c(wire::Crc32c(header, 8));
    if (stored != computed) {
      errors.Add(absl::StrFormat(
          "%s: bad CRC of the record's length (stored 0x%08x, computed 0x%08x): the rest of the "
          "file cannot be framed and is not read",
          where(), stored, computed));
      break;
    }
    if (length > kMaxRecordBytes) {
      errors.Add(absl::StrCat(where(), ": a record of ", length,
                              " bytes is not an event; the rest is not read"));
      break;
    }
    data.resize(length + 4);
    n = ReadFull(in->get(), data.data(), data.size());
    if (!n.ok()) {
      errors.Add(absl::StrCat(n.status().message(), " (in record ", record, ")"));
      break;
    }
    if (*n < data.size()) {
      errors.Add(absl::StrCat(where(), ": the file ends inside the record (", *n, " of ",
                              data.size(), " bytes after the header): it was cut short"));
      break;
    }
    std::string where_now = where();
    offset += 12 + data.size();
    stored = wire::LoadLe32(data.data() + length);
    computed = wire::MaskCrc32c(wire::Crc32c(data.data(), length));
    if (stored != computed) {
      errors.Add(absl::StrFormat(
          "%s: bad CRC of the record's data (stored 0x%08x, computed 0x%08x): record skipped",
          where_now, stored, computed));
      continue;
    }
    absl::StatusOr<TfEvent> event = DecodeTfEvent(std::string_view(data.data(), length));
    if (!event.ok()) {
      errors.Add(absl::StrCat(where_now, ": ", event.status().message(), ": record skipped"));
      continue;
    }
    std::optional<int64_t> t = internal::SecondsToNs(event->wall_time);
    if (!t) {
      errors.Add(absl::StrCat(where_now, ": wall_time ", event->wall_time,
                              " is not a time: record skipped"));
      continue;
    }
    for (const TfScalar& s : event->scalars) {
      auto& [count, tensor] = tags[s.tag];
      ++count;
      tensor = tensor || s.tensor_form;
    }
    if (event->summary_values == 0 || !seen.insert(event->step).second) {
      if (event->summary_values != 0) ++repeated;
      if (!previous) previous = *t;
      continue;
    }
    if (!previous || *t < *previous) {
      log.notes.push_back(
          absl::StrCat("step ", event->step, " (record ", record, ") is left out: ",
                       previous ? "its time is earlier than the previous step's"
                                : "it is the file's first record, so nothing says when it began"));
      if (!previous) previous = *t;
      continue;
    }
    StepSpan span;
    span.step = event->step;
    span.start_ns = *previous;
    span.end_ns = *t;
    log.spans.push_back(std::move(span));
    previous = *t;
  }
  errors.Close();
  log.notes.insert(log.notes.begin(),
                   "TensorBoard records one time per step, when its values were written: a step "
                   "spans from the previous step's first record to its own, the first step from "
                   "the file's first record; data waits are unknown");
  if (!tags.empty()) {
    std::string list;
    int shown = 0;
    for (const auto& [tag, value] : tags) {
      if (shown++ == 10) {
        absl::StrAppend(&list, ", and ", tags.size() - 10, " more");
        break;
      }
      absl::StrAppend(&list, shown > 1 ? ", " : "", tag, " (", value.first, " values, ",
                      value.second ? "TF2 tensor form" : "simple_value form", ")");
    }
    log.notes.push_back(absl::StrCat("scalars: ", list));
  }
  if (repeated > 0) {
    log.notes.push_back(absl::StrCat(repeated,
                                     " records repeat the step number of an earlier record; "
                                     "each step's span ends at its first record"));
  }
  return internal::FinishStepLog(std::move(log));
}

}  // namespace iotap::analyzer
