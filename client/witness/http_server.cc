// HttpServer over libmicrohttpd's internal epoll thread.

#include "client/witness/http_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace verity::client {

struct HttpServing {
  size_t max_body = 0;
  HttpServer::Handler handler;
};

namespace {

// What a request has sent so far.
struct Pending {
  std::string body;
  bool too_large = false;
};

MHD_Result Queue(MHD_Connection* connection, const HttpResponse& answer) {
  MHD_Response* response = MHD_create_response_from_buffer(
      answer.body.size(), const_cast<char*>(answer.body.data()),
      MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                          answer.content_type.c_str());
  const MHD_Result queued = MHD_queue_response(
      connection, static_cast<unsigned int>(answer.status), response);
  MHD_destroy_response(response);
  return queued;
}

// Called first with no body (the request's state is made), then with each
// piece of it, then with none once it is whole: the answer.
MHD_Result OnRequest(void* cls, MHD_Connection* connection, const char* url,
                     const char* method, const char* /*version*/,
                     const char* upload_data, size_t* upload_size,
                     void** state) {
  const auto* serving = static_cast<const HttpServing*>(cls);
  if (*state == nullptr) {
    *state = new Pending;
    return MHD_YES;
  }
  auto* pending = static_cast<Pending*>(*state);
  if (*upload_size != 0) {
    if (pending->body.size() + *upload_size > serving->max_body) {
      pending->too_large = true;
      pending->body.clear();
    } else if (!pending->too_large) {
      pending->body.append(upload_data, *upload_size);
    }
    *upload_size = 0;
    return MHD_YES;
  }
  if (pending->too_large) {
    return Queue(connection, {413, "text/plain; charset=utf-8",
                              absl::StrCat("a request has at most ",
                                           serving->max_body, " bytes\n")});
  }
  return Queue(connection,
               serving->handler({method, url, std::move(pending->body)}));
}

void OnCompleted(void* /*cls*/, MHD_Connection* /*connection*/, void** state,
                 MHD_RequestTerminationCode /*why*/) {
  delete static_cast<Pending*>(*state);
  *state = nullptr;
}

}  // namespace

HttpServer::HttpServer(std::unique_ptr<HttpServing> serving)
    : serving_(std::move(serving)) {}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    absl::string_view host, uint16_t port, size_t max_body, Handler handler) {
  sockaddr_storage address{};
  unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
  const std::string host_text(host);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (inet_pton(AF_INET, host_text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
  } else if (inet_pton(AF_INET6, host_text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    flags |= MHD_USE_IPv6;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", host, "\" is not an IPv4 or IPv6 address to listen on"));
  }
  std::unique_ptr<HttpServer> server(
      new HttpServer(std::make_unique<HttpServing>(
          HttpServing{max_body, std::move(handler)})));
  server->daemon_ = MHD_start_daemon(
      flags, port, nullptr, nullptr, &OnRequest, server->serving_.get(),
      MHD_OPTION_SOCK_ADDR, &address, MHD_OPTION_NOTIFY_COMPLETED, &OnCompleted,
      nullptr, MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_CONNECTION_TIMEOUT,
      30u, MHD_OPTION_END);
  if (server->daemon_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", host, " port ", port));
  }
  const MHD_DaemonInfo* info =
      MHD_get_daemon_info(server->daemon_, MHD_DAEMON_INFO_BIND_PORT);
  server->port_ = info != nullptr ? info->port : port;
  return server;
}

HttpServer::~HttpServer() {
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
}

}  // namespace verity::client
