#include "analyzer/base/text.h"

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(DisplayNameTest, NewlinesAndInvalidBytesCannotForgeLines) {
  EXPECT_EQ(DisplayName("a\nb"), "a\\nb");
  EXPECT_EQ(DisplayName("x\xffy"), "x\\xffy");
  EXPECT_EQ(DisplayName("back\\slash"), "back\\\\slash");
  EXPECT_EQ(DisplayName("\xc3\xa9t\xc3\xa9"), "\xc3\xa9t\xc3\xa9");
  EXPECT_EQ(DisplayName(std::string("nul\0x", 5)), "nul\\x00x");
  // C1 controls: U+009B (CSI) and U+0085 (NEL); U+00A0 is not one.
  EXPECT_EQ(DisplayName("\xc2\x9b" "31m \xc2\x85 \xc2\xa0"), "\\xc2\\x9b31m \\xc2\\x85 \xc2\xa0");
}

TEST(MarkdownTextTest, NamesCannotBreakOutOfACellOrInjectMarkup) {
  EXPECT_EQ(MarkdownText("a|b"), "a\\|b");
  EXPECT_EQ(MarkdownText("<script>&"), "&lt;script&gt;&amp;");
  EXPECT_EQ(MarkdownText("[x](javascript:y) *b* _i_ `c` # ~s~ !"),
            "\\[x\\](javascript:y) \\*b\\* \\_i\\_ \\`c\\` \\# \\~s\\~ \\!");
  EXPECT_EQ(MarkdownText("line\nbreak"), "line\\\\nbreak");
}

TEST(MarkdownCodeTest, ShownLiterallyBetweenLongEnoughFences) {
  EXPECT_EQ(MarkdownCode("python train_model.py --data_dir /x"),
            "`python train_model.py --data_dir /x`");
  EXPECT_EQ(MarkdownCode("a `b` c"), "``a `b` c``");
  EXPECT_EQ(MarkdownCode("`start"), "`` `start ``");
  EXPECT_EQ(MarkdownCode("<b>\n"), "`<b>\\n`");
  EXPECT_EQ(MarkdownCode(""), "` `");
}

TEST(Utf8Test, RejectsSurrogatesAndOverlongForms) {
  EXPECT_EQ(Utf8SequenceLength("\xed\xa0\x80", 0), 0u);  // U+D800
  EXPECT_EQ(Utf8SequenceLength("\xe0\x80\xaf", 0), 0u);  // overlong
  EXPECT_EQ(Utf8SequenceLength("\xf4\x90\x80\x80", 0), 0u);  // > U+10FFFF
  EXPECT_EQ(Utf8SequenceLength("\xf0\x9f\x98\x80", 0), 4u);
}

TEST(HumanUnitsTest, BytesDurationsRates) {
  EXPECT_EQ(HumanBytes(17), "17 B");
  EXPECT_EQ(HumanBytes(1536), "1.50 KiB");
  EXPECT_EQ(HumanBytes(3.0 * 1024 * 1024 * 1024), "3.00 GiB");
  EXPECT_EQ(HumanDuration(1.25), "1.25 s");
  EXPECT_EQ(HumanDuration(0.0031), "3.1 ms");
  EXPECT_EQ(HumanDuration(42e-6), "42.0 us");
  EXPECT_EQ(HumanDuration(800e-9), "800 ns");
  EXPECT_EQ(HumanRate(100.0 * 1024 * 1024), "100.0 MiB/s");
}

}  // namespace
}  // namespace iotap::analyzer
