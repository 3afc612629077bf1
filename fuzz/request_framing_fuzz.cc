// libFuzzer target for HTTP/1.1 request framing (src/server/request_framing.h). The input after its
// first byte is a connection's byte stream; the first byte seeds how that stream is cut into
// arrivals. Every request in the stream is framed twice, from the whole stream and from arrivals
// of 1..16 bytes, and the two must agree exactly (framing must not depend on packet boundaries).
// Every accepted request must be unambiguous: at most one Content-Length, never Content-Length
// with Transfer-Encoding, Transfer-Encoding only as exactly "chunked", a body within the limit,
// field names that are tokens and values without CR, LF or NUL; every refusal must carry one of
// the statuses the framer documents. Anything else aborts.
//
//   scripts/fuzz [SECONDS]      builds build-fuzz/ with clang and runs this target
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/request_framing.h"

namespace {

using bulwark::server::EqualsIgnoreCase;
using bulwark::server::FramedRequest;
using bulwark::server::FramingLimits;
using bulwark::server::RequestFramer;
using Result = RequestFramer::Result;

constexpr FramingLimits kLimits{/*max_head_bytes=*/1024, /*max_request_line_bytes=*/256,
                                /*max_header_fields=*/16, /*max_body_bytes=*/512,
                                /*max_chunk_overhead_bytes=*/256};

void Check(bool condition) {
  if (!condition) std::abort();
}

bool IsTokenByte(unsigned char c) {
  return c > 0x20 && c < 0x7f &&
         std::string_view("\"(),/:;<=>?@[\\]{}").find(static_cast<char>(c)) == std::string_view::npos;
}

void CheckAccepted(const FramedRequest& r) {
  int content_lengths = 0, transfer_encodings = 0;
  for (const auto& [name, value] : r.headers) {
    Check(!name.empty());
    for (char c : name) Check(IsTokenByte(static_cast<unsigned char>(c)));
    for (char c : value) Check(c != '\r' && c != '\n' && c != '\0');
    if (EqualsIgnoreCase(name, "content-length")) ++content_lengths;
    if (EqualsIgnoreCase(name, "transfer-encoding")) {
      ++transfer_encodings;
      Check(EqualsIgnoreCase(value, "chunked"));
    }
  }
  Check(content_lengths <= 1);
  Check(content_lengths == 0 || transfer_encodings == 0);
  Check(transfer_encodings <= 1);
  Check(r.body.size() <= kLimits.max_body_bytes);
  Check(r.headers.size() <= kLimits.max_header_fields);
  Check(!r.method.empty() && !r.target.empty());
}

// Frames one request from the start of `stream` as arrivals cut by `seed`.
Result FrameInArrivals(std::string_view stream, uint32_t seed, RequestFramer& framer) {
  size_t available = 0;
  Result r = Result::kNeedMore;
  while (r == Result::kNeedMore && available < stream.size()) {
    seed = seed * 1103515245u + 12345u;
    available = std::min(stream.size(), available + 1 + (seed >> 16) % 16);
    r = framer.Parse(stream.substr(0, available));
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint32_t seed = data[0];
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (int request = 0; request < 16 && !stream.empty(); ++request) {
    RequestFramer whole(kLimits), pieces(kLimits);
    const Result a = whole.Parse(stream);
    const Result b = FrameInArrivals(stream, seed + static_cast<uint32_t>(request), pieces);
    Check(a == b);
    if (a == Result::kNeedMore) return 0;
    if (a == Result::kError) {
      const int status = whole.error().status;
      Check(status == pieces.error().status && !whole.error().code.empty());
      Check(status == 400 || status == 413 || status == 414 || status == 417 || status == 431 ||
            status == 501 || status == 505);
      return 0;
    }
    Check(whole.consumed() == pieces.consumed() && whole.consumed() > 0 && whole.consumed() <= stream.size());
    const FramedRequest& r = whole.request();
    const FramedRequest& q = pieces.request();
    Check(r.method == q.method && r.target == q.target && r.body == q.body && r.headers == q.headers &&
          r.keep_alive == q.keep_alive && r.expect_continue == q.expect_continue);
    CheckAccepted(r);
    stream.remove_prefix(whole.consumed());  // the next, pipelined request
  }
  return 0;
}
