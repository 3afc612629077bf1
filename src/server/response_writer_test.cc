// WriteResponse: status line, true Content-Length and Connection option, no body for HEAD and
// 204, and no header a handler sets can split the answer or change its framing.
#include "server/response_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/request_framing.h"

namespace bulwark::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ResponseWriterTest, WritesStatusHeadersAndBody) {
  httplib::Response r;
  r.status = 404;
  r.body = "{}";
  r.set_header("Content-Type", "application/json");
  EXPECT_EQ(WriteResponse(r, {}),
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(WriteResponse(r, {.close = true}),
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: "
            "close\r\n\r\n{}");
  EXPECT_THAT(WriteResponse(r, {.http10_keep_alive = true}), HasSubstr("Connection: keep-alive\r\n"));
}

TEST(ResponseWriterTest, HeadAnd204CarryNoBody) {
  httplib::Response r;
  r.status = 200;
  r.body = "hello";
  EXPECT_EQ(WriteResponse(r, {.head = true}), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
  r.status = 204;
  EXPECT_EQ(WriteResponse(r, {}), "HTTP/1.1 204 No Content\r\n\r\n");
  r.status = 42;
  EXPECT_THAT(WriteResponse(r, {}), HasSubstr("HTTP/1.1 500 "));
}

TEST(ResponseWriterTest, HandlerHeadersCannotSplitOrReframeTheAnswer) {
  httplib::Response r;
  r.status = 200;
  r.body = "ok";
  r.headers.emplace("X-Evil", "a\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK");
  r.headers.emplace("X-Lf", "a\nb");
  r.headers.emplace("X-Nul", std::string("a\0b", 3));
  r.headers.emplace("Bad Name", "x");
  r.headers.emplace("Content-Length", "99");
  r.headers.emplace("Transfer-Encoding", "chunked");
  r.headers.emplace("Connection", "keep-alive");
  r.headers.emplace("X-Fine", "tab\tok");
  const std::string wire = WriteResponse(r, {.close = true});
  EXPECT_EQ(wire, "HTTP/1.1 200 OK\r\nX-Fine: tab\tok\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
  // What a client reads back is one answer whose framing is the writer's.
  EXPECT_THAT(wire, Not(HasSubstr("chunked")));
}

TEST(ResponseWriterTest, FieldNamesCompareIgnoringCase) {
  EXPECT_TRUE(EqualsIgnoreCase("Content-LENGTH", "content-length"));
  EXPECT_FALSE(EqualsIgnoreCase("Content-Length2", "content-length"));
  EXPECT_FALSE(EqualsIgnoreCase("Content-Lengt", "content-length"));
}

}  // namespace
}  // namespace bulwark::server
