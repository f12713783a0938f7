#include "analyzer/analysis/py_profile.h"

#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace iotap::analyzer {

namespace {

// Reads one varint of a KIND_PY_STACK string; false at its end or on damage.
bool ReadVarint(std::string_view& s, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && !s.empty(); shift += 7) {
    uint8_t b = static_cast<uint8_t>(s.front());
    s.remove_prefix(1);
    *v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// "Compose.__call__" -> "Compose"; "" for a plain function.
std::string_view ClassOf(const PyFunction& f) {
  size_t dot = f.name.rfind('.');
  if (dot == std::string::npos) return {};
  std::string_view cls(f.name.data(), dot);
  size_t locals = cls.rfind(".<locals>");
  if (locals != std::string_view::npos) return {};
  size_t outer = cls.rfind('.');
  return outer == std::string_view::npos ? cls : cls.substr(outer + 1);
}

absl::string_view BaseName(const PyFunction& f) {
  size_t dot = f.name.rfind('.');
  return dot == std::string::npos ? absl::string_view(f.name)
                                  : absl::string_view(f.name).substr(dot + 1);
}

bool InTorchvisionTransforms(const PyFunction& f) {
  return absl::StrContains(f.file, "/torchvision/transforms/");
}

bool IsCompose(const PyFunction& f) {
  return InTorchvisionTransforms(f) && ClassOf(f) == "Compose";
}

bool IsModuleCall(const PyFunction& f) {
  return absl::StrContains(f.file, "/torch/nn/modules/module.py");
}

// The decoder a frame belongs to, or nullptr.
const char* DecoderOf(const PyFunction& f) {
  if (absl::StrContains(f.file, "/PIL/")) {
    if (absl::EndsWith(f.file, "/ImageFile.py") || absl::EndsWith(f.file, "ImagePlugin.py")) {
      return "PIL decoding (ImageFile.load)";
    }
    if (absl::EndsWith(f.file, "/Image.py") && (f.name == "open" || f.name == "Image.load")) {
      return "PIL decoding (ImageFile.load)";
    }
    return nullptr;
  }
  if (absl::StrContains(f.file, "/torchvision/io/") &&
      (absl::StartsWith(BaseName(f), "decode_") || BaseName(f) == "read_image")) {
    return "torchvision.io decoding";
  }
  return nullptr;
}

}  // namespace

PyFunction ParsePyFunction(std::string_view text) {
  PyFunction f;
  size_t a = text.find('\0');
  f.name = std::string(text.substr(0, a));
  if (a == std::string_view::npos) return f;
  text.remove_prefix(a + 1);
  size_t b = text.find('\0');
  f.file = std::string(text.substr(0, b));
  if (b != std::string_view::npos && !absl::SimpleAtoi(std::string(text.substr(b + 1)), &f.line)) f.line = 0;
  return f;
}

std::vector<std::string> PyStackFunctions(const ProcessTrace& process, uint32_t id) {
  std::vector<std::string> out;
  const InternedName& name = process.Name(id);
  if (name.kind != InternedString::KIND_PY_STACK) return out;
  std::string_view s = name.value;
  uint64_t function = 0, line = 0;
  while (ReadVarint(s, &function) && ReadVarint(s, &line) && function <= UINT32_MAX) {
    const InternedName& f = process.Name(static_cast<uint32_t>(function));
    out.push_back(function == 0 ? "(deeper frames)"
                  : f.kind == InternedString::KIND_PY_FUNCTION ? ParsePyFunction(f.value).name
                                                               : "(unknown)");
  }
  return out;
}

uint32_t PySampleCollector::Function(const ProcessTrace& process, uint32_t id) {
  auto [it, inserted] =
      function_of_id_.try_emplace(id, static_cast<uint32_t>(out_.functions.size()));
  if (inserted) {
    const InternedName& name = process.Name(id);
    if (id == 0) {
      out_.functions.push_back(PyFunction{"(deeper frames)", "", 0});
    } else if (name.kind != InternedString::KIND_PY_FUNCTION || name.value.empty()) {
      out_.functions.push_back(PyFunction{"(unknown)", "", 0});
    } else {
      out_.functions.push_back(ParsePyFunction(name.value));
    }
  }
  return it->second;
}

uint32_t PySampleCollector::Stack(const ProcessTrace& process, uint32_t id) {
  auto it = stack_of_id_.find(id);
  if (it != stack_of_id_.end()) return it->second;
  std::vector<uint32_t> frames;
  const InternedName& name = process.Name(id);
  bool entered = false;  // the innermost frame is on its first line
  if (name.kind == InternedString::KIND_PY_STACK) {
    std::string_view s = name.value;
    uint64_t function = 0, line = 0;
    while (ReadVarint(s, &function) && ReadVarint(s, &line) && function <= UINT32_MAX) {
      frames.push_back(Function(process, static_cast<uint32_t>(function)));
      int first = out_.functions[frames.back()].line;
      entered = first > 0 && line == static_cast<uint64_t>(first);
    }
  }
  // A function just entered has run nothing yet: the sampler got in at its
  // first instruction (where the interpreter lets other threads run), and
  // the CPU time since the previous sample was spent before, by its caller
  // and what the caller ran. The sample counts for the caller.
  if (entered && frames.size() > 1) frames.pop_back();
  if (frames.empty()) frames.push_back(Function(process, UINT32_MAX));  // "(unknown)"
  uint32_t index = static_cast<uint32_t>(out_.stacks.size());
  out_.stacks.push_back(std::move(frames));
  stack_of_id_.emplace(id, index);
  return index;
}

void PySampleCollector::OnEvent(const ProcessTrace& process, const Event& e, int64_t offset) {
  if (e.op == OP_PY_SAMPLER) {
    // trace.proto: 1 started, 2 unavailable, 3 by signal, 4 with the GIL.
    std::string_view note = process.Text(e.file);
    if (e.result == 1) {
      out_.started = true;
    } else if (e.result == 3) {
      // By signal: nothing to warn of.
    } else if (e.result == 4) {
      out_.with_gil = note.empty() ? "no reason recorded" : std::string(note);
    } else if (out_.unavailable.empty()) {
      out_.unavailable = note.empty() ? "not available" : std::string(note);
    }
    return;
  }
  if (e.op != OP_PY_SAMPLE || e.file == 0) return;
  PySample s;
  s.start_unix_ns = e.start_ns + offset;
  s.end_unix_ns = e.end_ns + offset;
  s.cpu_ns = static_cast<int64_t>(std::min<uint64_t>(e.requested, INT64_MAX / 4));
  s.tid = static_cast<uint32_t>(e.aux);
  s.stack = Stack(process, e.file);
  out_.samples.push_back(s);
}

PyCostGroup ClassifyPyStack(const std::vector<const PyFunction*>& stack) {
  const int n = static_cast<int>(stack.size());
  for (int k = n - 1; k >= 0; --k) {
    const PyFunction& f = *stack[k];
    if (const char* decoder = DecoderOf(f)) return {"decoding", decoder};
    std::string_view cls = ClassOf(f);
    if (InTorchvisionTransforms(f) && !cls.empty() && cls != "Compose" && cls != "Transform" &&
        cls.front() != '_') {
      return {"transform", std::string(cls)};
    }
    // The object Compose called (past nn.Module's __call__): a transform of
    // the user's own.
    int caller = k - 1;
    while (caller >= 0 && IsModuleCall(*stack[caller])) --caller;
    if (caller >= 0 && caller < k && IsCompose(*stack[caller]) && !IsModuleCall(f)) {
      return {"transform", cls.empty() ? f.name : std::string(cls)};
    }
    if (absl::StrContains(BaseName(f), "collate")) return {"collate", "collate_fn"};
  }
  for (int k = 0; k < n; ++k) {
    const PyFunction& f = *stack[k];
    if (BaseName(f) == "__getitem__" && !absl::StrContains(f.file, "/torch/utils/data/")) {
      return {"getitem", absl::StrCat(f.name, " (the rest)")};
    }
  }
  return {"other", "other (worker loop, sending batches)"};
}

}  // namespace iotap::analyzer
