#include "analyzer/base/json_writer.h"

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(JsonWriterTest, NestedContainersOnOneLine) {
  JsonWriter j(0);
  j.BeginObject();
  j.Key("n");
  j.Uint(3);
  j.Key("list");
  j.BeginArray();
  j.Int(-1);
  j.Double(0.5);
  j.Bool(true);
  j.Null();
  j.EndArray();
  j.Key("empty");
  j.BeginObject();
  j.EndObject();
  j.EndObject();
  EXPECT_EQ(j.Take(), R"({"n":3,"list":[-1,0.5,true,null],"empty":{}})");
}

TEST(JsonWriterTest, NonFiniteNumbersBecomeNull) {
  JsonWriter j(0);
  j.BeginArray();
  j.Double(1.0 / 0.0);
  j.Double(0.0 / 0.0);
  j.EndArray();
  EXPECT_EQ(j.Take(), "[null,null]");
}

TEST(JsonEscapeTest, QuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonEscape("a\"b\\c\n\t\x01"), "a\\\"b\\\\c\\n\\t\\u0001");
  // DEL and the C1 controls too (U+009B acts as ESC [ on some terminals).
  EXPECT_EQ(JsonEscape("\x7f \xc2\x9b \xc2\x85 \xc2\xa0"), "\\u007f \\u009b \\u0085 \xc2\xa0");
}

TEST(JsonEscapeTest, HtmlSignificantCharactersAreInert) {
  EXPECT_EQ(JsonEscape("<img src=x onerror=alert(1)>&"),
            "\\u003cimg src=x onerror=alert(1)\\u003e\\u0026");
}

TEST(JsonEscapeTest, ValidUtf8IsKeptInvalidBytesAreSpelledOut) {
  EXPECT_EQ(JsonEscape("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
  // A lone continuation byte, an overlong '/' and a truncated sequence.
  EXPECT_EQ(JsonEscape("a\x80z"), "a\\\\x80z");
  EXPECT_EQ(JsonEscape("\xc0\xaf"), "\\\\xc0\\\\xaf");
  EXPECT_EQ(JsonEscape("\xe2\x82"), "\\\\xe2\\\\x82");
}

// With a sink, the same text, handed on in pieces of about kPieceBytes that
// each end where an object or array does, the rest at Take.
TEST(JsonWriterTest, ASinkGetsTheSameTextInPieces) {
  auto write = [](JsonWriter& j) {
    j.BeginObject();
    j.Key("files");
    j.BeginArray();
    for (int i = 0; i < 30000; ++i) {
      j.BeginObject();
      j.Key("path");
      j.String("/data/train/" + std::to_string(i) + ".jpg");
      j.Key("reads");
      j.Uint(static_cast<uint64_t>(i));
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
  };
  JsonWriter whole;
  write(whole);
  const std::string expected = whole.Take();
  ASSERT_GT(expected.size(), 2 * JsonWriter::kPieceBytes);

  std::vector<std::string> pieces;
  JsonWriter handed(2, [&](std::string_view piece) { pieces.emplace_back(piece); });
  write(handed);
  EXPECT_GE(pieces.size(), 2u);  // handed on while written
  EXPECT_EQ(handed.Take(), "");
  std::string joined;
  for (const std::string& p : pieces) {
    ASSERT_FALSE(p.empty());
    EXPECT_TRUE(p.back() == '}' || p.back() == ']') << p.back();
    joined += p;
  }
  EXPECT_EQ(joined, expected);
  for (size_t i = 0; i + 1 < pieces.size(); ++i) {
    EXPECT_GE(pieces[i].size(), JsonWriter::kPieceBytes);
    EXPECT_LT(pieces[i].size(), JsonWriter::kPieceBytes + 200);
  }
}

}  // namespace
}  // namespace iotap::analyzer
