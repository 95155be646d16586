// IsLoopbackAddress decides whether plaintext (and a bearer token over it) is
// allowed: be exact about it.

#include "lib/base/loopback_address.h"

#include "gtest/gtest.h"

namespace verity {
namespace {

TEST(IsLoopbackAddressTest, Loopback) {
  for (const char* address :
       {"127.0.0.1:50051", "127.0.0.1:0", "127.1.2.3:80", "localhost:50051",
        "[::1]:50051", "ipv4:127.0.0.1:1", "ipv6:[::1]:40000",
        "dns:///localhost:50051", "dns://8.8.8.8/127.0.0.1:1",
        "unix:/tmp/verityd.sock", "unix-abstract:verityd"}) {
    EXPECT_TRUE(IsLoopbackAddress(address)) << address;
  }
}

TEST(IsLoopbackAddressTest, NotLoopback) {
  for (const char* address :
       {"0.0.0.0:50051", "[::]:50051", ":50051", "10.0.0.1:50051",
        "192.168.1.1:1", "[::ffff:10.0.0.1]:1", "example.com:50051",
        "128.0.0.1:1", "localhost.evil.com:1", "127.0.0.1.nip.io:1",
        "dns:///verityd:50051", "dns://127.0.0.1/verityd:1",
        "ipv4:10.1.2.3:40000", ""}) {
    EXPECT_FALSE(IsLoopbackAddress(address)) << address;
  }
}

}  // namespace
}  // namespace verity
