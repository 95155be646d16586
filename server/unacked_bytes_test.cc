// The shutdown's wait for unacknowledged bytes rests on this count: check the
// parser on the kernel's format and the count on a real loopback connection.

#include "server/unacked_bytes.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace verity::server {
namespace {

constexpr char kTable[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
    "retrnsmt   uid  timeout inode\n"
    "   0: 0100007F:9C4F 00000000:0000 0A 00000000:00000003 00:00000000 "
    "00000000     0        0 1 1 0 100 0 0 10 0\n"
    "   1: 0100007F:9C4F 0100007F:D431 01 00010000:00000000 01:00000014 "
    "00000000     0        0 2 1 0 20 4 30 10 -1\n"
    "   2: 0100007F:9C4F 0100007F:D433 08 00000200:00000000 00:00000000 "
    "00000000     0        0 3 1 0 20 4 30 10 -1\n"
    "   3: 0100007F:D431 0100007F:9C4F 01 00000400:00000000 00:00000000 "
    "00000000     0        0 4 1 0 20 4 30 10 -1\n";

TEST(UnackedBytesInTableTest, SumsThePortsConnectionsNotItsListener) {
  // 0x9C4F = 40015: the established and the closing connection count; the
  // listener's queue and the client end (local port 0xD431) do not.
  EXPECT_EQ(*UnackedBytesInTable(kTable, 40015), 0x10000 + 0x200);
  EXPECT_EQ(*UnackedBytesInTable(kTable, 0xD431), 0x400);
  EXPECT_EQ(*UnackedBytesInTable(kTable, 1), 0);
  EXPECT_EQ(*UnackedBytesInTable("header only\n", 40015), 0);
}

TEST(UnackedBytesInTableTest, RefusesALineItCannotRead) {
  EXPECT_EQ(
      UnackedBytesInTable("header\n 0: 0100007F:9C4F\n", 1).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(UnackedBytesInTable("header\n 0: 0100007F:XYZ 0:0 01 0:0\n", 1)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

int BoundPort(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  return ntohs(address.sin_port);
}

// Polls until the port's unacknowledged bytes satisfy `done`, for 5 s.
template <typename Done>
int64_t WaitFor(int port, Done done) {
  int64_t unacked = -1;
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  do {
    unacked = *UnackedBytesOnPort(port);
    if (done(unacked)) break;
    absl::SleepFor(absl::Milliseconds(10));
  } while (absl::Now() < deadline);
  return unacked;
}

TEST(UnackedBytesOnPortTest, CountsWhatAPeerThatDoesNotReadHasNotAcked) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(
      bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)),
      0);
  ASSERT_EQ(listen(listener, 1), 0);
  const int port = BoundPort(listener);
  address.sin_port = htons(port);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  const int small = 4096;  // a small window, so that the sender must wait
  setsockopt(client, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  ASSERT_EQ(
      connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address)),
      0);
  const int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  EXPECT_EQ(*UnackedBytesOnPort(port), 0);

  fcntl(server, F_SETFL, O_NONBLOCK);
  const std::string data(1 << 20, 'x');
  const ssize_t sent = write(server, data.data(), data.size());
  ASSERT_GT(sent, small);
  EXPECT_GT(WaitFor(port, [](int64_t n) { return n > 0; }), 0);

  char buffer[65536];
  for (ssize_t got = 0; got < sent;) {
    const ssize_t n = read(client, buffer, sizeof(buffer));
    ASSERT_GT(n, 0);
    got += n;
  }
  EXPECT_EQ(WaitFor(port, [](int64_t n) { return n == 0; }), 0);
  for (int fd : {client, server, listener}) close(fd);
}

}  // namespace
}  // namespace verity::server
