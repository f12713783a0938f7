#include "interpose/mapped/look_policy.h"

#include "gtest/gtest.h"

namespace iotap::interpose::faults {
namespace {

constexpr int kTrustAfter = static_cast<int>(LookPolicy::kTrustAfter);

// How many of the next `regions` regions the policy gives to a look, each
// look's check holding.
int LooksOf(LookPolicy* policy, int regions) {
  int looks = 0;
  for (int i = 0; i < regions; ++i) {
    if (policy->WantsLook()) {
      ++looks;
      policy->Checked(true);
    }
  }
  return looks;
}

TEST(LookPolicyTest, LooksAtEveryRegionUntilTheRuleHeldEnoughChecksInARow) {
  LookPolicy policy;
  EXPECT_FALSE(policy.Trusted());
  EXPECT_EQ(LooksOf(&policy, kTrustAfter - 1), kTrustAfter - 1);
  EXPECT_FALSE(policy.Trusted());
  EXPECT_EQ(LooksOf(&policy, 1), 1);
  EXPECT_TRUE(policy.Trusted());
  // Then one region in kCheckEvery.
  EXPECT_EQ(LooksOf(&policy, 80 * LookPolicy::kCheckEvery), 80);
}

TEST(LookPolicyTest, ACheckThatFailsTakesTheTrustBack) {
  LookPolicy policy;
  LooksOf(&policy, kTrustAfter);
  int predicted = 0;
  while (!policy.WantsLook()) ++predicted;
  EXPECT_EQ(predicted, static_cast<int>(LookPolicy::kCheckEvery) - 1);
  policy.Checked(false);
  EXPECT_FALSE(policy.Trusted());
  EXPECT_EQ(LooksOf(&policy, kTrustAfter), kTrustAfter);
  EXPECT_TRUE(policy.Trusted());
  // A failure part way to the trust starts the count again.
  while (!policy.WantsLook()) {
  }
  policy.Checked(false);
  LooksOf(&policy, kTrustAfter - 1);
  ASSERT_TRUE(policy.WantsLook());
  policy.Checked(false);
  EXPECT_EQ(LooksOf(&policy, kTrustAfter - 1), kTrustAfter - 1);
  EXPECT_FALSE(policy.Trusted());
}

}  // namespace
}  // namespace iotap::interpose::faults
