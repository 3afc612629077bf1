// RequestFramer: a table of framing cases (RFC 9112), each fed whole and one byte at a time (the
// outcome must not depend on how the bytes arrive), pipelined requests, limits, and a smuggling
// property over generated variants of the framing headers: every variant is either refused or
// framed exactly like the canonical request, so the next variant nobody listed is covered too.
#include "server/request_framing.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_replace.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bulwark::server {
namespace {

using Result = RequestFramer::Result;

struct Outcome {
  Result result = Result::kNeedMore;
  int status = 0;  // of an error
  FramedRequest request;
  size_t consumed = 0;
  std::string Describe() const {
    return absl::StrCat("result ", static_cast<int>(result), " status ", status, " body '", request.body,
                        "' consumed ", consumed);
  }
};

Outcome Finish(RequestFramer& framer, Result result) {
  Outcome o;
  o.result = result;
  if (result == Result::kError) o.status = framer.error().status;
  if (result == Result::kComplete) {
    o.consumed = framer.consumed();
    o.request = framer.TakeRequest();
  }
  return o;
}

Outcome FrameWhole(std::string_view bytes, const FramingLimits& limits = {}) {
  RequestFramer framer(limits);
  return Finish(framer, framer.Parse(bytes));
}

// Feeds growing prefixes, one byte more each time, as a client sending byte by byte would.
Outcome FrameByteByByte(std::string_view bytes, const FramingLimits& limits = {}) {
  RequestFramer framer(limits);
  Result r = Result::kNeedMore;
  for (size_t n = 1; n <= bytes.size() && r == Result::kNeedMore; ++n) r = framer.Parse(bytes.substr(0, n));
  return Finish(framer, r);
}

void ExpectSameOutcome(const Outcome& a, const Outcome& b, const std::string& what) {
  EXPECT_EQ(a.result, b.result) << what << ": " << a.Describe() << " vs " << b.Describe();
  EXPECT_EQ(a.status, b.status) << what;
  EXPECT_EQ(a.request.body, b.request.body) << what;
  EXPECT_EQ(a.consumed, b.consumed) << what;
}

struct Case {
  std::string name;
  std::string bytes;
  int status;        // 0: complete
  std::string body;  // when complete
};

const char kHost[] = "Host: x\r\n";

std::vector<Case> FramingCases() {
  const std::string post = absl::StrCat("POST /v1/memories HTTP/1.1\r\n", kHost);
  const std::string chunked = absl::StrCat(post, "Transfer-Encoding: chunked\r\n\r\n");
  return {
      {"get", absl::StrCat("GET /healthz HTTP/1.1\r\n", kHost, "\r\n"), 0, ""},
      {"content_length", post + "Content-Length: 5\r\n\r\nhello", 0, "hello"},
      {"content_length_ows", post + "Content-Length: \t5 \r\n\r\nhello", 0, "hello"},
      {"content_length_leading_zeros", post + "Content-Length: 005\r\n\r\nhello", 0, "hello"},
      {"content_length_zero", post + "Content-Length: 0\r\n\r\n", 0, ""},
      {"post_without_framing_has_no_body", post + "\r\n", 0, ""},
      {"chunked", chunked + "5\r\nhello\r\n0\r\n\r\n", 0, "hello"},
      {"chunked_two_chunks_upper_hex", chunked + "3\r\nhel\r\n0002\r\nlo\r\n0\r\n\r\n", 0, "hello"},
      {"chunked_extensions", chunked + "5 ; a=b;c=\"q\\\"s\"\r\nhello\r\n0;x\r\n\r\n", 0, "hello"},
      {"chunked_trailer", chunked + "5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n", 0, "hello"},
      {"chunked_case_insensitive", post + "Transfer-Encoding: Chunked\r\n\r\n0\r\n\r\n", 0, ""},
      {"leading_empty_lines", absl::StrCat("\r\n\r\nGET / HTTP/1.1\r\n", kHost, "\r\n"), 0, ""},
      {"http10_without_host", "GET / HTTP/1.0\r\n\r\n", 0, ""},
      {"options_asterisk", absl::StrCat("OPTIONS * HTTP/1.1\r\n", kHost, "\r\n"), 0, ""},
      {"absolute_form", absl::StrCat("GET http://x/healthz?a=1 HTTP/1.1\r\n", kHost, "\r\n"), 0, ""},
      // Framing ambiguity: refused.
      {"cl_and_te", post + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
       400, ""},
      {"te_and_cl", post + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
       400, ""},
      {"two_equal_cl", post + "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400, ""},
      {"two_different_cl", post + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400, ""},
      {"cl_list", post + "Content-Length: 5, 5\r\n\r\nhello", 400, ""},
      {"cl_plus", post + "Content-Length: +5\r\n\r\nhello", 400, ""},
      {"cl_minus", post + "Content-Length: -5\r\n\r\nhello", 400, ""},
      {"cl_inner_space", post + "Content-Length: 5 5\r\n\r\nhello", 400, ""},
      {"cl_hex", post + "Content-Length: 0x5\r\n\r\nhello", 400, ""},
      {"cl_empty", post + "Content-Length:\r\n\r\n", 400, ""},
      {"cl_too_large", post + "Content-Length: 1048577\r\n\r\n", 413, ""},
      {"cl_overflow", post + "Content-Length: 99999999999999999999999999\r\n\r\n", 413, ""},
      {"te_gzip", post + "Transfer-Encoding: gzip\r\n\r\n", 400, ""},
      {"te_chunked_not_final", post + "Transfer-Encoding: chunked, gzip\r\n\r\n", 400, ""},
      {"te_chunked_twice", post + "Transfer-Encoding: chunked, chunked\r\n\r\n", 400, ""},
      {"te_gzip_chunked", post + "Transfer-Encoding: gzip, chunked\r\n\r\n", 501, ""},
      {"te_split_fields", post + "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", 501, ""},
      {"te_identity", post + "Transfer-Encoding: identity\r\n\r\n", 400, ""},
      {"te_empty_element", post + "Transfer-Encoding: ,chunked\r\n\r\n", 400, ""},
      {"te_vertical_tab",
       post + "Transfer-Encoding: \x0b"
              "chunked\r\n\r\n",
       400, ""},
      {"te_in_http10", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, ""},
      {"obs_fold", post + "X-A: b\r\n c\r\n\r\n", 400, ""},
      {"obs_fold_te", post + "Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", 400, ""},
      {"space_before_colon", post + "Content-Length : 5\r\n\r\nhello", 400, ""},
      {"tab_before_colon", post + "Transfer-Encoding\t: chunked\r\n\r\n0\r\n\r\n", 400, ""},
      {"bare_lf_head", "GET / HTTP/1.1\nHost: x\n\n", 400, ""},
      {"bare_lf_after_field", post + "X-A: b\nContent-Length: 5\r\n\r\nhello", 400, ""},
      {"bare_cr_in_value", post + "X-A: b\rContent-Length: 5\r\n\r\nhello", 400, ""},
      {"nul_in_value", post + std::string("X-A: b\0c\r\n\r\n", 12), 400, ""},
      {"no_host", "GET / HTTP/1.1\r\n\r\n", 400, ""},
      {"two_hosts", absl::StrCat("GET / HTTP/1.1\r\n", kHost, kHost, "\r\n"), 400, ""},
      {"double_space", absl::StrCat("GET  / HTTP/1.1\r\n", kHost, "\r\n"), 400, ""},
      {"lowercase_version", absl::StrCat("GET / http/1.1\r\n", kHost, "\r\n"), 400, ""},
      {"trailing_space_version", absl::StrCat("GET / HTTP/1.1 \r\n", kHost, "\r\n"), 400, ""},
      {"http09", "GET /\r\n\r\n", 400, ""},
      {"http2", absl::StrCat("GET / HTTP/2.0\r\n", kHost, "\r\n"), 505, ""},
      {"asterisk_for_get", absl::StrCat("GET * HTTP/1.1\r\n", kHost, "\r\n"), 400, ""},
      {"authority_form", absl::StrCat("CONNECT x:443 HTTP/1.1\r\n", kHost, "\r\n"), 400, ""},
      {"target_with_del", absl::StrCat("GET /\x7f HTTP/1.1\r\n", kHost, "\r\n"), 400, ""},
      {"not_http", "\x16\x03\x01 not http at all\r\n\r\n", 400, ""},
      {"chunk_size_not_hex", chunked + "g\r\nhello\r\n0\r\n\r\n", 400, ""},
      {"chunk_size_trailing_space", chunked + "5 \r\nhello\r\n0\r\n\r\n", 400, ""},
      {"chunk_size_plus", chunked + "+5\r\nhello\r\n0\r\n\r\n", 400, ""},
      {"chunk_data_too_long", chunked + "5\r\nhelloX\r\n0\r\n\r\n", 400, ""},
      {"chunk_bare_lf", chunked + "5\nhello\r\n0\r\n\r\n", 400, ""},
      {"chunk_data_bare_lf", chunked + "5\r\nhello\n0\r\n\r\n", 400, ""},
      {"chunk_extension_trailing_space", chunked + "5;a=b \r\nhello\r\n0\r\n\r\n", 400, ""},
      {"chunk_bad_extension", chunked + "5;\r\nhello\r\n0\r\n\r\n", 400, ""},
      {"chunk_size_overflow", chunked + "10000000000000000\r\n", 413, ""},
      {"chunked_too_large", chunked + "100001\r\n", 413, ""},
      {"trailer_obs_fold", chunked + "0\r\nX: a\r\n b\r\n\r\n", 400, ""},
      {"expect_unknown", post + "Expect: 200-ok\r\nContent-Length: 1\r\n\r\nx", 417, ""},
      {"long_request_line", absl::StrCat("GET /", std::string(9000, 'a'), " HTTP/1.1\r\n", kHost, "\r\n"),
       414, ""},
      {"head_too_large", post + std::string(70000, 'a') + ": b\r\n\r\n", 431, ""},
  };
}

TEST(RequestFramerTest, FramingTableWholeAndByteByByte) {
  for (const Case& c : FramingCases()) {
    SCOPED_TRACE(c.name);
    const Outcome whole = FrameWhole(c.bytes);
    if (c.status == 0) {
      ASSERT_EQ(whole.result, Result::kComplete) << whole.Describe();
      EXPECT_EQ(whole.request.body, c.body);
      EXPECT_EQ(whole.consumed, c.bytes.size()) << "the whole request and nothing more";
    } else {
      EXPECT_EQ(whole.result, Result::kError) << whole.Describe();
      EXPECT_EQ(whole.status, c.status);
    }
    ExpectSameOutcome(whole, FrameByteByByte(c.bytes), c.name);
  }
}

TEST(RequestFramerTest, DecodesRequestFields) {
  Outcome o = FrameWhole("GET http://x/a%20b?q=1 HTTP/1.0\r\nConnection: keep-alive\r\nX-Key:  v v \r\n\r\n");
  ASSERT_EQ(o.result, Result::kComplete) << o.Describe();
  EXPECT_EQ(o.request.method, "GET");
  EXPECT_EQ(o.request.target, "/a%20b?q=1");
  EXPECT_EQ(o.request.version_minor, 0);
  EXPECT_TRUE(o.request.keep_alive);
  ASSERT_EQ(o.request.headers.size(), 2u);
  EXPECT_EQ(o.request.headers[1], (std::pair<std::string, std::string>{"X-Key", "v v"}));

  o = FrameWhole(absl::StrCat("GET / HTTP/1.1\r\n", kHost, "Connection: Close\r\n\r\n"));
  ASSERT_EQ(o.result, Result::kComplete);
  EXPECT_FALSE(o.request.keep_alive);
  o = FrameWhole("GET / HTTP/1.0\r\n\r\n");
  EXPECT_FALSE(o.request.keep_alive) << "HTTP/1.0 closes unless asked";
}

TEST(RequestFramerTest, ExpectContinueIsReportedBeforeTheBody) {
  RequestFramer framer({});
  const std::string head =
      absl::StrCat("POST / HTTP/1.1\r\n", kHost, "Expect: 100-continue\r\nContent-Length: 3\r\n\r\n");
  ASSERT_EQ(framer.Parse(head), Result::kNeedMore);
  EXPECT_TRUE(framer.awaiting_body());
  EXPECT_TRUE(framer.request().expect_continue);
  ASSERT_EQ(framer.Parse(head + "abc"), Result::kComplete);
  EXPECT_EQ(framer.request().body, "abc");
}

// Pipelined requests: each ends exactly where the next begins, whatever framing the first uses.
TEST(RequestFramerTest, PipelinedRequestsAreFramedInOrder) {
  const std::string second = absl::StrCat("GET /second HTTP/1.1\r\n", kHost, "\r\n");
  for (const std::string& first :
       {absl::StrCat("GET /first HTTP/1.1\r\n", kHost, "\r\n"),
        absl::StrCat("POST /first HTTP/1.1\r\n", kHost, "Content-Length: 3\r\n\r\nabc"),
        absl::StrCat("POST /first HTTP/1.1\r\n", kHost,
                     "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")}) {
    const std::string stream = first + second + second;
    RequestFramer framer({});
    std::vector<std::string> targets;
    size_t offset = 0;
    while (offset < stream.size()) {
      ASSERT_EQ(framer.Parse(std::string_view(stream).substr(offset)), Result::kComplete) << targets.size();
      targets.push_back(framer.request().target);
      offset += framer.consumed();
      framer.Reset();
    }
    EXPECT_EQ(targets, (std::vector<std::string>{"/first", "/second", "/second"}));
  }
}

TEST(RequestFramerTest, LimitsAreEnforced) {
  FramingLimits limits;
  limits.max_header_fields = 3;
  limits.max_body_bytes = 4;
  limits.max_chunk_overhead_bytes = 64;
  const std::string post = absl::StrCat("POST / HTTP/1.1\r\n", kHost);
  EXPECT_EQ(FrameWhole(post + "A: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits).status, 431);
  EXPECT_EQ(FrameWhole(post + "Content-Length: 5\r\n\r\nhello", limits).status, 413);
  EXPECT_EQ(FrameWhole(post + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n", limits).status,
            413)
      << "the decoded body counts across chunks";
  std::string tiny_chunks = post + "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 40; ++i) tiny_chunks += "0000000000;a=b\r\n";  // never ends: overhead only
  EXPECT_EQ(FrameWhole(tiny_chunks, limits).status, 400);
  EXPECT_EQ(FrameWhole(post + "Transfer-Encoding: chunked\r\n\r\n" + std::string(100, '0'), limits).status,
            400)
      << "an endless chunk-size line is refused before its CRLF";
}

// ---- Smuggling property over generated variants ----

// The canonical request is POST "hello" followed by a pipelined GET /smuggled. A variant mutates
// the framing header line. Whatever the mutation, the framer must refuse, or frame the body as
// "hello" with the GET next, or (when the mutation made the line a different, non-framing field)
// see no framing header at all -- never another body length.
void CheckVariant(const std::string& framing_line, const std::string& body, const std::string& what) {
  const std::string next = absl::StrCat("GET /smuggled HTTP/1.1\r\n", kHost, "\r\n");
  const std::string stream = absl::StrCat("POST / HTTP/1.1\r\n", kHost, framing_line, "\r\n\r\n", body, next);
  const Outcome o = FrameWhole(stream);
  ExpectSameOutcome(o, FrameByteByByte(stream), what);
  if (o.result == Result::kError) {
    EXPECT_GE(o.status, 400) << what;
    return;
  }
  ASSERT_EQ(o.result, Result::kComplete) << what << ": " << o.Describe();
  bool saw_framing = false;
  for (const auto& [name, value] : o.request.headers) {
    saw_framing |= EqualsIgnoreCase(name, "content-length") || EqualsIgnoreCase(name, "transfer-encoding");
  }
  if (!saw_framing) {
    EXPECT_EQ(o.request.body, "") << what;
    return;
  }
  EXPECT_EQ(o.request.body, "hello") << what;
  EXPECT_EQ(std::string_view(stream).substr(o.consumed), next) << what;
}

TEST(RequestFramerTest, NoFramingHeaderVariantIsFramedDifferently) {
  const std::vector<std::pair<std::string, std::string>> canonical = {
      {"Content-Length: 5", "hello"}, {"Transfer-Encoding: chunked", "5\r\nhello\r\n0\r\n\r\n"}};
  // Bytes inserted at every position of the line. (Not CRLF alone or a digit: those make a
  // different, unambiguous message that every parser reads alike.)
  const std::vector<std::string> inserts = {
      " ",  "\t", "\r", "\n", "\r\n ", "\r\n\t", std::string(1, '\0'), "\x0b", "\x0c", ",", "+", "-",
      "\"", ";",  ":",  "=",  "\x85",  "\xa0"};
  int variants = 0;
  for (const auto& [line, body] : canonical) {
    for (size_t at = 0; at <= line.size(); ++at) {
      for (const std::string& insert : inserts) {
        CheckVariant(line.substr(0, at) + insert + line.substr(at), body, absl::StrCat(line, " insert@", at));
        ++variants;
      }
      if (at < line.size()) {
        std::string deleted = line;
        deleted.erase(at, 1);
        CheckVariant(deleted, body, absl::StrCat(line, " delete@", at));
        std::string upper = line;
        upper[at] = absl::ascii_toupper(static_cast<unsigned char>(upper[at]));
        CheckVariant(upper, body, absl::StrCat(line, " upper@", at));
        variants += 2;
      }
    }
    // Spellings every parser reads alike must still be accepted as the canonical framing.
    for (const std::string& same :
         {absl::AsciiStrToLower(line), absl::StrCat(line, " \t"), absl::StrReplaceAll(line, {{": ", ":"}}),
          absl::StrReplaceAll(line, {{": 5", ": 005"}})}) {
      const std::string stream = absl::StrCat("POST / HTTP/1.1\r\n", kHost, same, "\r\n\r\n", body);
      const Outcome o = FrameWhole(stream);
      EXPECT_EQ(o.result, Result::kComplete) << same;
      EXPECT_EQ(o.request.body, "hello") << same;
    }
    // The header repeated, or combined with the other framing header, in either order.
    for (const auto& [other, unused] : canonical) {
      CheckVariant(absl::StrCat(line, "\r\n", other), body, absl::StrCat(line, " + ", other));
      CheckVariant(absl::StrCat(other, "\r\n", line), body, absl::StrCat(other, " + ", line));
      variants += 2;
    }
  }
  EXPECT_GT(variants, 900);
}

}  // namespace
}  // namespace bulwark::server
