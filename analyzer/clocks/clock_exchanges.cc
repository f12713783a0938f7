#include "analyzer/clocks/clock_exchanges.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analyzer/base/numbers.h"

namespace iotap::analyzer {

namespace {

// A file larger than this is no exchange file of ours (a day of exchanges
// every 64 s is under 200 KB).
constexpr std::streamsize kMaxFileBytes = 64 << 20;
// Exchanges further apart than this start a new burst.
constexpr int64_t kBurstGapNs = 500'000'000;
// Within a burst, exchanges up to this many times the fastest are kept.
constexpr double kDelaySlack = 1.5;

bool ParseExchange(absl::string_view rest, ClockExchange* x) {
  std::vector<absl::string_view> f = absl::StrSplit(rest, ' ', absl::SkipEmpty());
  return f.size() == 4 && absl::SimpleAtoi(f[0], &x->t1) && absl::SimpleAtoi(f[1], &x->t2) &&
         absl::SimpleAtoi(f[2], &x->t3) && absl::SimpleAtoi(f[3], &x->t4);
}

}  // namespace

double ClockExchange::Offset() const {
  return (static_cast<double>(t1 - t2) + static_cast<double>(t4 - t3)) / 2;
}

std::string ClockExchangeLine(const ClockExchange& x) {
  return absl::StrCat("x ", x.t1, " ", x.t2, " ", x.t3, " ", x.t4, "\n");
}

absl::StatusOr<ClockExchangeFile> ReadClockExchanges(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string text(static_cast<size_t>(kMaxFileBytes) + 1, '\0');
  in.read(text.data(), kMaxFileBytes + 1);
  text.resize(static_cast<size_t>(in.gcount()));
  if (static_cast<std::streamsize>(text.size()) > kMaxFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": larger than ", kMaxFileBytes >> 20, " MiB; not a clock exchange file"));
  }
  ClockExchangeFile file;
  file.path = path;
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  // The last piece is what followed the last newline: a line cut short.
  if (!lines.empty()) lines.pop_back();
  if (lines.empty() || lines[0] != kClockExchangeMagic) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": does not start with \"", kClockExchangeMagic, "\""));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    ClockExchange x;
    if (absl::ConsumePrefix(&line, "x ")) {
      if (ParseExchange(line, &x)) {
        file.exchanges.push_back(x);
      } else {
        ++file.bad_lines;
      }
    } else if (absl::ConsumePrefix(&line, "host ")) {
      file.host = std::string(line);
    } else if (absl::ConsumePrefix(&line, "reference ")) {
      file.reference = std::string(line);
    } else {
      ++file.bad_lines;
    }
  }
  if (file.host.empty() || file.reference.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": names no ", file.host.empty() ? "host" : "reference host"));
  }
  return file;
}

ExchangeAnchors PickExchangeAnchors(const std::vector<ClockExchange>& exchanges) {
  ExchangeAnchors out;
  out.exchanges = static_cast<int>(exchanges.size());
  std::vector<ClockExchange> valid;
  for (const ClockExchange& x : exchanges) {
    if (x.t4 >= x.t1 && x.t3 >= x.t2 && x.Delay() >= 0) valid.push_back(x);
  }
  std::sort(valid.begin(), valid.end(),
            [](const ClockExchange& a, const ClockExchange& b) { return a.t1 < b.t1; });
  std::vector<double> delays;
  for (size_t begin = 0; begin < valid.size();) {
    size_t end = begin + 1;
    while (end < valid.size() && valid[end].t1 - valid[end - 1].t4 < kBurstGapNs) ++end;
    int64_t fastest = valid[begin].Delay();
    for (size_t i = begin; i < end; ++i) fastest = std::min(fastest, valid[i].Delay());
    for (size_t i = begin; i < end; ++i) {
      const ClockExchange& x = valid[i];
      if (static_cast<double>(x.Delay()) > kDelaySlack * static_cast<double>(fastest)) continue;
      out.anchors.push_back({x.t1 + (x.t4 - x.t1) / 2, std::llround(x.Offset())});
      delays.push_back(static_cast<double>(x.Delay()));
    }
    if (out.bursts == 0 || fastest < out.best_delay_ns) out.best_delay_ns = static_cast<double>(fastest);
    ++out.bursts;
    begin = end;
  }
  if (!delays.empty()) out.median_delay_ns = Median(std::move(delays));
  return out;
}

}  // namespace iotap::analyzer
