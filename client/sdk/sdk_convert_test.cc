// The SDK's priority classes become lib's, which proto/convert puts on the
// wire: an unset or unknown class is the server's default.

#include "client/sdk/sdk_convert.h"

#include "gtest/gtest.h"
#include "lib/base/priority_class.h"
#include "verity/options.h"

namespace verity::client {
namespace {

TEST(SdkConvertTest, PriorityClassIsLibs) {
  EXPECT_EQ(ToPriorityClass(sdk::PriorityClass::kUnset), PriorityClass::kNone);
  EXPECT_EQ(ToPriorityClass(sdk::PriorityClass::kRealtime), PriorityClass::kRt);
  EXPECT_EQ(ToPriorityClass(sdk::PriorityClass::kBestEffort),
            PriorityClass::kBe);
  EXPECT_EQ(ToPriorityClass(sdk::PriorityClass::kIdle), PriorityClass::kIdle);
  EXPECT_EQ(ToPriorityClass(static_cast<sdk::PriorityClass>(9)),
            PriorityClass::kNone);
}

}  // namespace
}  // namespace verity::client
