// IsLoopbackAddress decides whether plaintext is allowed: be exact about it.

#include "server/listen_address.h"

#include "gtest/gtest.h"

namespace verity::server {
namespace {

TEST(IsLoopbackAddressTest, Loopback) {
  for (const char* address :
       {"127.0.0.1:50051", "127.0.0.1:0", "127.1.2.3:80", "localhost:50051",
        "[::1]:50051", "ipv4:127.0.0.1:1", "unix:/tmp/verityd.sock",
        "unix-abstract:verityd"}) {
    EXPECT_TRUE(IsLoopbackAddress(address)) << address;
  }
}

TEST(IsLoopbackAddressTest, NotLoopback) {
  for (const char* address :
       {"0.0.0.0:50051", "[::]:50051", ":50051", "10.0.0.1:50051",
        "192.168.1.1:1", "[::ffff:10.0.0.1]:1", "example.com:50051",
        "128.0.0.1:1", "localhost.evil.com:1", "127.0.0.1.nip.io:1", ""}) {
    EXPECT_FALSE(IsLoopbackAddress(address)) << address;
  }
}

}  // namespace
}  // namespace verity::server
