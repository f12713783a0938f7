// The shim repeats numbers of trace.proto that it cannot include: the ops
// and flag bits of ops.h and the string kinds of strings.h (the end reasons
// of file/packets.h: file/packets_test.cc). Each must match the generated
// enum by name and number, and every value of the proto enum must be known
// to the shim.

#include "interpose/core/ops.h"

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "interpose/core/strings.h"
#include "iotap/trace.pb.h"

namespace iotap::interpose {
namespace {

TEST(OpsTest, EveryShimOpHasItsProtoNumber) {
  for (const OpName& entry : kOpNames) {
    ::iotap::Op parsed = ::iotap::OP_UNSPECIFIED;
    ASSERT_TRUE(::iotap::Op_Parse(entry.proto_name, &parsed))
        << entry.proto_name << " is not in enum Op of trace.proto";
    EXPECT_EQ(static_cast<int>(parsed), static_cast<int>(entry.op)) << entry.proto_name;
  }
}

TEST(OpsTest, EveryProtoOpIsInTheShim) {
  const google::protobuf::EnumDescriptor* op = ::iotap::Op_descriptor();
  std::set<std::string> names;
  std::set<int> numbers;
  for (const OpName& entry : kOpNames) {
    EXPECT_TRUE(names.insert(entry.proto_name).second) << "twice: " << entry.proto_name;
    EXPECT_TRUE(numbers.insert(entry.op).second) << "twice: " << entry.op;
  }
  for (int i = 0; i < op->value_count(); ++i) {
    EXPECT_EQ(names.count(op->value(i)->name()), 1u) << op->value(i)->name() << " not in kOpNames";
  }
  EXPECT_EQ(std::size(kOpNames), static_cast<size_t>(op->value_count()));
}

TEST(OpsTest, EveryShimFlagHasItsProtoBit) {
  for (const FlagName& entry : kFlagNames) {
    ::iotap::Flag parsed = ::iotap::FLAG_NONE;
    ASSERT_TRUE(::iotap::Flag_Parse(entry.proto_name, &parsed))
        << entry.proto_name << " is not in enum Flag of trace.proto";
    EXPECT_EQ(static_cast<int>(parsed), static_cast<int>(entry.flag)) << entry.proto_name;
  }
}

TEST(OpsTest, EveryProtoFlagIsInTheShim) {
  const google::protobuf::EnumDescriptor* flag = ::iotap::Flag_descriptor();
  std::set<std::string> names;
  int bits = 0;
  for (const FlagName& entry : kFlagNames) {
    EXPECT_TRUE(names.insert(entry.proto_name).second) << "twice: " << entry.proto_name;
    EXPECT_EQ(entry.flag & (entry.flag - 1), 0) << entry.proto_name << " is not a single bit";
    EXPECT_EQ(bits & entry.flag, 0) << entry.proto_name << " reuses a bit";
    bits |= entry.flag;
  }
  for (int i = 0; i < flag->value_count(); ++i) {
    const std::string& name = flag->value(i)->name();
    if (flag->value(i)->number() == ::iotap::FLAG_NONE) continue;
    EXPECT_EQ(names.count(name), 1u) << name << " not in kFlagNames";
  }
  EXPECT_EQ(std::size(kFlagNames), static_cast<size_t>(flag->value_count() - 1));
}

// StringKind has no name table; its values are listed here one by one, and
// the count catches a value added to the proto alone.
TEST(OpsTest, StringKindsMatchTheProto) {
  EXPECT_EQ(kKindUnspecified, InternedString::KIND_UNSPECIFIED);
  EXPECT_EQ(kKindPath, InternedString::KIND_PATH);
  EXPECT_EQ(kKindPipe, InternedString::KIND_PIPE);
  EXPECT_EQ(kKindSocket, InternedString::KIND_SOCKET);
  EXPECT_EQ(kKindDevice, InternedString::KIND_DEVICE);
  EXPECT_EQ(kKindAnon, InternedString::KIND_ANON);
  EXPECT_EQ(kKindDataset, InternedString::KIND_DATASET);
  EXPECT_EQ(kKindMark, InternedString::KIND_MARK);
  EXPECT_EQ(kKindThreadName, InternedString::KIND_THREAD_NAME);
  EXPECT_EQ(kKindCudaStream, InternedString::KIND_CUDA_STREAM);
  EXPECT_EQ(kKindPyFunction, InternedString::KIND_PY_FUNCTION);
  EXPECT_EQ(kKindPyStack, InternedString::KIND_PY_STACK);
  EXPECT_EQ(InternedString::Kind_descriptor()->value_count(), 12);
}

}  // namespace
}  // namespace iotap::interpose
