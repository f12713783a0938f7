#include "analyzer/cli/perf_keeper.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "proto/wire/layer_names.h"

namespace iotap::cli {

PerfKeeper PerfKeeper::ForLayers(const std::string& layers) {
  bool mapped = layers.empty() || layers == "all";
  for (absl::string_view layer : absl::StrSplit(layers, ',')) {
    absl::string_view name = absl::StripAsciiWhitespace(layer);
    mapped = mapped || wire::LayerIndex(name.data(), name.size()) == wire::LayerIndex("mapped");
  }
  if (!mapped) return PerfKeeper();
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.disabled = 1;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2, as the shim's
  attr.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &attr, /*pid=*/0L, /*cpu=*/-1L, /*group=*/-1L,
                    static_cast<long>(PERF_FLAG_FD_CLOEXEC));
  return fd >= 0 ? PerfKeeper(static_cast<int>(fd)) : PerfKeeper();
}

PerfKeeper::~PerfKeeper() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace iotap::cli
