// A small HTTP/1.1 server (GNU libmicrohttpd) for `verity witness`: each
// request's body is read whole, up to a limit, and answered by one handler
// on the server's own thread (epoll), one request at a time.

#ifndef VERITYD_CLIENT_WITNESS_HTTP_SERVER_H_
#define VERITYD_CLIENT_WITNESS_HTTP_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct MHD_Daemon;

namespace verity::client {

struct HttpServing;  // what libmicrohttpd's callbacks use (http_server.cc)

struct HttpRequest {
  std::string method;
  std::string path;
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Thread-safe; the handler runs on the server's thread.
class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  // Serves on `host` (an IPv4 or IPv6 address) and `port` (0: a free one).
  // A body longer than `max_body` is answered 413 unread. INVALID_ARGUMENT
  // for a host that is not an address; UNAVAILABLE if it cannot listen.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      absl::string_view host, uint16_t port, size_t max_body, Handler handler);
  // Stops serving, waiting for the request in progress.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port it listens on.
  uint16_t port() const { return port_; }

 private:
  explicit HttpServer(std::unique_ptr<HttpServing> serving);

  const std::unique_ptr<HttpServing> serving_;
  MHD_Daemon* daemon_ = nullptr;
  uint16_t port_ = 0;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_WITNESS_HTTP_SERVER_H_
