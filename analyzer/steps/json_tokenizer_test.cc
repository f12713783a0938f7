#include "analyzer/steps/json_tokenizer.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

// Every token of `json` as "type:text", or the error as "error:message".
std::vector<std::string> Tokens(JsonTokenizer* json) {
  static const char* kNames[] = {"{",   "}",    "[",     "]",    "key", "str",
                                 "num", "true", "false", "null", "end"};
  std::vector<std::string> out;
  JsonToken t;
  for (;;) {
    absl::Status s = json->Next(&t);
    if (!s.ok()) {
      out.push_back("error:" + std::string(s.message()));
      return out;
    }
    out.push_back(std::string(kNames[t.type]) + (t.text.empty() ? "" : ":" + t.text));
    if (t.type == JsonToken::kEnd) return out;
  }
}

std::vector<std::string> Tokens(std::string_view text, bool many = false) {
  JsonTokenizer json(text);
  json.set_allow_many(many);
  return Tokens(&json);
}

using V = std::vector<std::string>;

TEST(JsonTokenizerTest, Structure) {
  EXPECT_EQ(Tokens(R"( {"a": [1, -2.5e3, true, false, null], "b": {}, "c": []} )"),
            (V{"{", "key:a", "[", "num:1", "num:-2.5e3", "true", "false", "null", "]", "key:b", "{",
               "}", "key:c", "[", "]", "}", "end"}));
  EXPECT_EQ(Tokens("[]"), (V{"[", "]", "end"}));
  EXPECT_EQ(Tokens("\"x\""), (V{"str:x", "end"}));
  EXPECT_EQ(Tokens("  12\n"), (V{"num:12", "end"}));
}

TEST(JsonTokenizerTest, Strings) {
  EXPECT_EQ(Tokens(R"(["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20ac", "\ud83d\ude00", "\udc00x"])"),
            (V{"[", "str:a\"b\\c/d\b\f\n\r\t", "str:\xc3\xa9\xe2\x82\xac", "str:\xf0\x9f\x98\x80",
               "str:\xef\xbf\xbdx", "]", "end"}));
  // Bytes of any encoding pass through.
  EXPECT_EQ(Tokens("\"caf\xc3\xa9 \xff\""), (V{"str:caf\xc3\xa9 \xff", "end"}));
}

TEST(JsonTokenizerTest, PythonNumbers) {
  EXPECT_EQ(Tokens("[NaN, Infinity, -Infinity, 0, -0.0]"),
            (V{"[", "num:NaN", "num:Infinity", "num:-Infinity", "num:0", "num:-0.0", "]", "end"}));
}

TEST(JsonTokenizerTest, ManyValues) {
  EXPECT_EQ(Tokens("{\"a\":1}\n{\"a\":2}\n", true),
            (V{"{", "key:a", "num:1", "}", "{", "key:a", "num:2", "}", "end"}));
  EXPECT_EQ(Tokens("", true), (V{"end"}));
  EXPECT_EQ(Tokens("{\"a\":1}\n{\"a\":2}\n").back(),
            "error:line 2, column 1 (byte 8): unexpected '{' after the end of the JSON value");
}

TEST(JsonTokenizerTest, ErrorsSayWhereAndWhat) {
  auto last = [](std::string_view text) { return Tokens(text).back(); };
  EXPECT_EQ(last("{\"a\" 1}"),
            "error:line 1, column 6 (byte 5): expected ':' after a member "
            "name, found '1'");
  EXPECT_EQ(last("[1,\n 2\n 3]"),
            "error:line 3, column 2 (byte 8): expected ',' or ']', "
            "found '3'");
  EXPECT_EQ(last("{\"a\": 1,}"),
            "error:line 1, column 9 (byte 8): expected a member name in "
            "double quotes, found '}'");
  EXPECT_EQ(last("[1, ]"), "error:line 1, column 5 (byte 4): expected a value, found ']'");
  EXPECT_EQ(last("[tru]"), "error:line 1, column 5 (byte 4): expected 'true', found ']'");
  EXPECT_EQ(last("[01]"), "error:line 1, column 3 (byte 2): expected ',' or ']', found '1'");
  EXPECT_EQ(last("[1.]"),
            "error:line 1, column 4 (byte 3): expected a digit after '.', "
            "found ']'");
  EXPECT_EQ(last("[\"ab\ncd\"]"),
            "error:line 1, column 5 (byte 4): a control character (0x0a) "
            "inside a string: unclosed quote, or unescaped text");
  EXPECT_EQ(last("[\"\\x\"]"),
            "error:line 1, column 5 (byte 4): unknown escape \\x in a "
            "string");
  EXPECT_EQ(last("{\"a\": [1, 2"),
            "error:line 1, column 12 (byte 11): the input ends inside "
            "an array (2 levels deep): the file is cut short?");
  EXPECT_EQ(last("[\"abc"),
            "error:line 1, column 6 (byte 5): the input ends inside a string: "
            "the file is cut short?");
  EXPECT_EQ(last(""), "error:line 1, column 1 (byte 0): no JSON value: the input is empty");
  EXPECT_EQ(last(std::string(1001, '[')),
            "error:line 1, column 1001 (byte 1000): JSON nested more than 1000 levels deep");
}

TEST(JsonTokenizerTest, StartAtCountsFromALineOfAFile) {
  JsonTokenizer json("{\"a\" 1}");
  json.StartAt(12, 300);
  EXPECT_EQ(Tokens(&json).back(),
            "error:line 12, column 6 (byte 305): expected ':' after a member name, found '1'");
}

TEST(JsonTokenizerTest, SkipValueAndDepth) {
  JsonTokenizer json(R"({"skip": {"x": [1, {"y": 2}], "z": "w"}, "keep": 3})");
  JsonToken t;
  ASSERT_TRUE(json.Next(&t).ok());
  EXPECT_EQ(json.depth(), 1u);
  ASSERT_TRUE(json.Next(&t).ok());
  EXPECT_EQ(t.text, "skip");
  ASSERT_TRUE(json.Next(&t).ok());
  EXPECT_EQ(t.type, JsonToken::kBeginObject);
  EXPECT_EQ(json.depth(), 2u);
  ASSERT_TRUE(json.SkipValue(t).ok());
  EXPECT_EQ(json.depth(), 1u);
  ASSERT_TRUE(json.Next(&t).ok());
  EXPECT_EQ(t.text, "keep");
  ASSERT_TRUE(json.Next(&t).ok());
  EXPECT_EQ(t.text, "3");
  EXPECT_EQ(t.line, 1u);
  EXPECT_EQ(t.column, 50u);
  EXPECT_EQ(t.offset, 49u);
  ASSERT_TRUE(json.SkipValue(t).ok());  // a scalar: nothing more to skip
  ASSERT_TRUE(json.Next(&t).ok());
  EXPECT_EQ(t.type, JsonToken::kEndObject);
}

// Tokens that straddle the 1 MiB read buffer are read whole.
TEST(JsonTokenizerTest, TokensAcrossBufferRefills) {
  std::string path =
      ::testing::TempDir() + "iotap-json-refill-" + std::to_string(getpid()) + ".json";
  std::string big(1 << 20, 'x');
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "[\"" << big.substr(0, (1 << 20) - 10) << "\", 12345678901234567890, \"a\\u00e9b\","
        << " \"" << big << "\"]";
  }
  auto source = ByteSource::Open(path);
  ASSERT_TRUE(source.ok());
  JsonTokenizer json(source->get());
  std::vector<std::string> tokens = Tokens(&json);
  ASSERT_EQ(tokens.size(), 7u) << tokens.back();
  EXPECT_EQ(tokens[1], "str:" + big.substr(0, (1 << 20) - 10));
  EXPECT_EQ(tokens[2], "num:12345678901234567890");
  EXPECT_EQ(tokens[3],
            "str:a\xc3\xa9"
            "b");
  EXPECT_EQ(tokens[4], "str:" + big);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace iotap::analyzer
