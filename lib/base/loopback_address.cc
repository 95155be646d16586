// Implements IsLoopbackAddress with inet_pton, so numeric forms are judged as
// addresses and not as strings.

#include "lib/base/loopback_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace verity {
namespace {

// The host part of "host:port" or "[v6]:port".
absl::string_view HostOf(absl::string_view address) {
  if (absl::ConsumePrefix(&address, "[")) {
    return address.substr(0, address.find(']'));
  }
  const size_t colon = address.rfind(':');
  return colon == absl::string_view::npos ? address : address.substr(0, colon);
}

}  // namespace

bool IsLoopbackAddress(absl::string_view address) {
  if (absl::StartsWith(address, "unix:") ||
      absl::StartsWith(address, "unix-abstract:")) {
    return true;
  }
  // dns:///host:port, or dns://resolver/host:port.
  if (absl::ConsumePrefix(&address, "dns:")) {
    if (absl::ConsumePrefix(&address, "//")) {
      address = address.substr(std::min(address.find('/'), address.size()));
      absl::ConsumePrefix(&address, "/");
    }
  }
  absl::ConsumePrefix(&address, "ipv4:");
  absl::ConsumePrefix(&address, "ipv6:");
  const std::string host(HostOf(address));
  if (host == "localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 &&
         IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace verity
