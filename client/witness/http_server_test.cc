// HttpServer: a request's method, path and body reach the handler, its
// answer the client; a body over the limit is 413 without the handler.

#include "client/witness/http_server.h"

#include <curl/curl.h>

#include <atomic>
#include <string>

#include "gtest/gtest.h"

namespace verity::client {
namespace {

size_t Collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

struct Reply {
  long status = 0;
  std::string content_type;
  std::string body;
};

Reply Post(uint16_t port, const std::string& path, const std::string& body) {
  Reply reply;
  CURL* curl = curl_easy_init();
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  EXPECT_EQ(curl_easy_perform(curl), CURLE_OK);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  char* type = nullptr;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &type);
  if (type != nullptr) reply.content_type = type;
  curl_easy_cleanup(curl);
  return reply;
}

TEST(HttpServerTest, AnswersWithTheHandlerAndRefusesLargeBodies) {
  std::atomic<int> calls{0};
  absl::StatusOr<std::unique_ptr<HttpServer>> server = HttpServer::Start(
      "127.0.0.1", 0, 1 << 16, [&calls](const HttpRequest& request) {
        ++calls;
        return HttpResponse{201, "text/x.test",
                            request.method + " " + request.path + " " +
                                std::to_string(request.body.size())};
      });
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_NE((*server)->port(), 0);
  const Reply small = Post((*server)->port(), "/add-checkpoint", "hello");
  EXPECT_EQ(small.status, 201);
  EXPECT_EQ(small.content_type, "text/x.test");
  EXPECT_EQ(small.body, "POST /add-checkpoint 5");
  // Larger than one read: the body arrives in pieces.
  EXPECT_EQ(Post((*server)->port(), "/x", std::string(60000, 'a')).body,
            "POST /x 60000");
  const Reply large = Post((*server)->port(), "/x", std::string(70000, 'a'));
  EXPECT_EQ(large.status, 413);
  EXPECT_EQ(calls.load(), 2);
}

TEST(HttpServerTest, RefusesAHostThatIsNotAnAddress) {
  EXPECT_TRUE(absl::IsInvalidArgument(
      HttpServer::Start("localhost", 0, 10, nullptr).status()));
}

}  // namespace
}  // namespace verity::client
