#include "analyzer/base/json_writer.h"

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

}  // namespace
}  // namespace iotap::analyzer
