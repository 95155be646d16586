// The environment fills in flags; the command line overrides it.

#include "server/env_flags.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace verity::server {
namespace {

TEST(EnvFlagsTest, VariableNames) {
  EXPECT_EQ(EnvVarForFlag("VERITYD_", "store_dir"), "VERITYD_STORE_DIR");
}

TEST(EnvFlagsTest, EnvironmentComesBeforeTheCommandLine) {
  setenv("VERITYD_TEST_LISTEN", "0.0.0.0:1", 1);
  setenv("VERITYD_TEST_VERIFY_ON_READ", "false", 1);
  unsetenv("VERITYD_TEST_STORE_DIR");
  char arg0[] = "verityd";
  char arg1[] = "--listen=127.0.0.1:0";
  char* argv[] = {arg0, arg1};
  const std::vector<std::string> args = ArgvWithEnvironment(
      2, argv, "VERITYD_TEST_", {"listen", "store_dir", "verify_on_read"});
  const std::vector<std::string> want = {"verityd", "--listen=0.0.0.0:1",
                                         "--verify_on_read=false",
                                         "--listen=127.0.0.1:0"};
  EXPECT_EQ(args, want);
}

}  // namespace
}  // namespace verity::server
