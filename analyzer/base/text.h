// Text helpers for every output: safe display of names that come from the
// user's system, and human units.

#ifndef IOTAP_ANALYZER_BASE_TEXT_H_
#define IOTAP_ANALYZER_BASE_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace iotap::analyzer {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if the bytes
// there are not valid UTF-8 (overlong forms and surrogates included).
size_t Utf8SequenceLength(std::string_view s, size_t i);

// `s` for a terminal or a log line: valid UTF-8 kept, control characters
// (C0, DEL and C1) and invalid bytes as \n, \t, \xNN, and '\' doubled, so a
// name with a newline cannot forge a line nor one with a control sequence
// drive the terminal.
std::string DisplayName(std::string_view s);

// `s` for Markdown: DisplayName's text, with every character Markdown or HTML
// would act on escaped (table pipes, emphasis, links, code, headings, raw
// HTML and entities), so a file name cannot break out of a table cell or
// inject markup. Renders as DisplayName(s).
std::string MarkdownText(std::string_view s);

// `s` as a Markdown code span, its backticks included: DisplayName(s), shown
// literally (nothing is escaped or interpreted inside a code span), between
// fences longer than any run of backticks in it.
std::string MarkdownCode(std::string_view s);

// `s` as valid UTF-8 for protobuf string fields and JSON: valid sequences
// kept, each other byte replaced by the four characters \xNN (the same
// spelling JsonEscape uses), so a non-UTF-8 file name stays recognisable.
std::string ValidUtf8(std::string_view s);

// "1.5 GiB", "312 KiB", "17 B".
std::string HumanBytes(double bytes);
// "1.25 s", "310 ms", "42 us", "800 ns".
std::string HumanDuration(double seconds);
// "1.2 GiB/s".
std::string HumanRate(double bytes_per_second);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_BASE_TEXT_H_
