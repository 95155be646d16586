// `verity mount`'s command line: the defaults, each flag, and the
// combinations refused before anything is resolved or mounted.

#include "client/cli/mount_command.h"

#include <string>
#include <vector>

#include "client/testing/test_argv.h"
#include "gtest/gtest.h"

namespace verity::cli {
namespace {

constexpr char kDigest[] =
    "sha256:0000000000000000000000000000000000000000000000000000000000000000";

absl::StatusOr<MountOptions> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "mount");
  TestArgv argv(std::move(args));
  return ParseMountOptions(argv.argc(), argv.argv());
}

// The message of a refusal, or "ok".
std::string Refusal(std::vector<std::string> args) {
  absl::StatusOr<MountOptions> opts = Parse(std::move(args));
  if (opts.ok()) return "ok";
  EXPECT_EQ(opts.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(opts.status().message());
}

TEST(MountCommandTest, Defaults) {
  absl::StatusOr<MountOptions> opts = Parse({"app/release", "/mnt/app"});
  ASSERT_TRUE(opts.ok()) << opts.status();
  EXPECT_EQ(opts->tree.name, "app/release");
  EXPECT_EQ(opts->fuse.mountpoint, "/mnt/app");
  EXPECT_EQ(opts->fuse.read_ahead, 16u << 20);
  EXPECT_EQ(opts->fuse.max_threads, 16);
  EXPECT_EQ(opts->read_timeout, absl::Seconds(30));
  EXPECT_TRUE(opts->cache_dir.empty());
  EXPECT_FALSE(opts->prefetch);
  EXPECT_FALSE(opts->follow);
}

TEST(MountCommandTest, EveryFlag) {
  absl::StatusOr<MountOptions> opts = Parse(
      {"app/release", "/mnt/app", "--read-timeout=5s", "--threads=4",
       "--read-ahead=1048576", "--cache-dir=/var/cache/verity",
       "--cache-bytes=2097152", "--prefetch", "--follow", "--interval=10s"});
  ASSERT_TRUE(opts.ok()) << opts.status();
  EXPECT_EQ(opts->read_timeout, absl::Seconds(5));
  EXPECT_EQ(opts->fuse.max_threads, 4);
  EXPECT_EQ(opts->fuse.read_ahead, 1u << 20);
  EXPECT_EQ(opts->cache_dir, "/var/cache/verity");
  EXPECT_EQ(opts->cache_bytes, uint64_t{2} << 20);
  EXPECT_TRUE(opts->prefetch);
  EXPECT_TRUE(opts->follow);
  EXPECT_EQ(opts->interval, absl::Seconds(10));
}

TEST(MountCommandTest, CombinationsThatCannotWork) {
  EXPECT_EQ(Refusal({"n", "/m", "--prefetch"}), "--prefetch needs --cache-dir");
  EXPECT_EQ(Refusal({"n", "/m", "--cache-bytes=2097152"}),
            "--cache-bytes needs --cache-dir");
  EXPECT_EQ(Refusal({"n", "/m", "--interval=5s"}), "--interval needs --follow");
  EXPECT_EQ(Refusal({kDigest, "/m", "--follow"}),
            "--follow needs a NAME: a digest never changes");
  EXPECT_EQ(Refusal({kDigest, "/m"}), "ok");
}

TEST(MountCommandTest, ValuesOutOfRange) {
  EXPECT_NE(Refusal({"n", "/m", "--cache-dir=/c", "--cache-bytes=1000"}), "ok");
  EXPECT_NE(Refusal({"n", "/m", "--cache-dir="}), "ok");
  EXPECT_NE(Refusal({"n", "/m", "--follow", "--interval=0s"}), "ok");
  EXPECT_NE(Refusal({"n", "/m", "--threads=0"}), "ok");
  EXPECT_NE(Refusal({"n", "/m", "--read-ahead=4096"}), "ok");
  EXPECT_NE(Refusal({"n", "/m", "--read-timeout=0s"}), "ok");
  EXPECT_NE(Refusal({"n"}), "ok");
  EXPECT_NE(Refusal({"n", ""}), "ok");
}

}  // namespace
}  // namespace verity::cli
