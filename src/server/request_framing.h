// RequestFramer: the HTTP/1.1 request parser of the server's connection loop (connection_loop.h).
// It finds where one request ends in a connection's byte stream (RFC 9112 "message framing") and
// decodes its request line, header fields and body. It is incremental: the loop calls Parse with
// the connection's unconsumed bytes each time more arrive, and every byte is examined once, so a
// client that sends one byte at a time costs linear work, not quadratic.
//
// Framing is where request smuggling lives: if this server and a proxy in front of it disagree on
// where a request ends, a client's bytes become someone else's request. So every form whose framing
// a reasonable implementation could read differently is refused, with the connection closed after
// the answer (RFC 9112 6.1, 6.3, 11.2):
//   - Content-Length together with Transfer-Encoding; more than one Content-Length field (even with
//     equal values); a Content-Length that is not 1*DIGIT ("+5", "5 5", "0x5", "5,5", "");
//   - a Transfer-Encoding other than exactly "chunked" (400 when chunked is not the final coding,
//     501 for a known-form list such as "gzip, chunked"); any Transfer-Encoding in HTTP/1.0;
//   - obs-fold (a header line starting with SP or HTAB), whitespace between a field name and its
//     colon, a field name that is not a token, control bytes (NUL, bare CR, DEL...) in a value;
//   - a bare LF anywhere a line ends (CRLF only: a proxy that ends lines at LF alone would see
//     other headers than we do), in the head, chunk-size lines and trailers alike;
//   - a malformed chunk-size (not 1*HEXDIG, more than 16 digits), chunk data not followed by CRLF,
//     a malformed chunk extension;
//   - an HTTP/1.1 request without exactly one Host field; a request line that is not
//     `token SP target SP HTTP/d.d` with single spaces.
// Requests are answered in order: the framer stops at the end of one request and reports how many
// bytes it used (consumed()); the bytes after it are the next, pipelined request.
//
// Every size is bounded before it is used: the head (request line, fields, blank line) by
// max_head_bytes (431; 414 for a request line longer than max_request_line_bytes), the number of
// fields, the decoded body by max_body_bytes (413, decided from Content-Length before any body byte
// is read), and the chunked framing overhead (size lines, extensions, trailers) by
// max_chunk_overhead_bytes (400).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bulwark::server {

struct FramingLimits {
  size_t max_head_bytes = 64 << 10;            // request line + fields + CRLF CRLF; more -> 431
  size_t max_request_line_bytes = 8 << 10;     // more -> 414; <= max_head_bytes
  size_t max_header_fields = 128;              // more -> 431
  size_t max_body_bytes = 1 << 20;             // decoded body; more -> 413
  size_t max_chunk_overhead_bytes = 64 << 10;  // chunk-size lines, extensions and trailers; more -> 400
};

// One complete request, as the framer decoded it.
struct FramedRequest {
  std::string method;     // a token, case as sent ("GET")
  std::string target;     // origin-form "/path?query" (an absolute-form target is reduced to it), or "*"
  int version_minor = 1;  // HTTP/1.<minor>; 0 or 1 (HTTP/1.2+ is served as 1.1)
  std::vector<std::pair<std::string, std::string>> headers;  // name as sent, value without OWS
  std::string body;                                          // decoded (de-chunked)
  bool keep_alive = true;        // the client allows another request on this connection
  bool expect_continue = false;  // "Expect: 100-continue" on HTTP/1.1
  std::string peer_address;      // the client's IP address (set by the connection loop; "" if unknown)
};

// Why a request was refused; the connection is always closed after answering it.
struct FramingError {
  int status = 400;     // 400, 413, 414, 417, 431, 501 or 505
  std::string code;     // API error code: "bad_request", "payload_too_large", ...
  std::string message;  // for the client; names the rule broken
};

// True if `name` equals `lowercase` ignoring ASCII case (HTTP field names and codings compare so).
bool EqualsIgnoreCase(std::string_view name, std::string_view lowercase);

class RequestFramer {
 public:
  enum class Result { kNeedMore, kComplete, kError };

  explicit RequestFramer(const FramingLimits& limits) : limits_(limits) {}

  // Parses `input`: the connection's unconsumed bytes, starting at the first byte of this request.
  // Between calls until Reset(), `input` may only grow at its end. Returns kNeedMore until the
  // request is complete (then request() and consumed() are valid) or refused (then error() is).
  // After kComplete or kError further calls return the same result without looking at `input`.
  Result Parse(std::string_view input);

  // True once the head has been parsed and the request is waiting for its body; with
  // request().expect_continue the loop then sends "100 Continue".
  bool awaiting_body() const { return phase_ > Phase::kHead && phase_ < Phase::kDone; }
  const FramedRequest& request() const { return request_; }
  FramedRequest TakeRequest() { return std::move(request_); }
  size_t consumed() const { return consumed_; }  // bytes of `input` this request used
  const FramingError& error() const { return error_; }

  // Forgets the current request, ready for the next one.
  void Reset();

 private:
  enum class Phase { kHead, kFixedBody, kChunkSize, kChunkData, kTrailers, kDone, kFailed };

  Result Fail(int status, std::string code, std::string message);
  Result Refuse(std::string message) { return Fail(400, "bad_request", std::move(message)); }
  Result ParseHead(std::string_view input);
  // The framing-relevant fields, gathered from every field line before they are judged together.
  struct FramingFields {
    int host = 0;
    std::string transfer_encoding;  // all Transfer-Encoding values, comma-joined
    std::string connection;         // all Connection values, comma-joined
    std::string expect;             // all Expect values, comma-joined
    bool has_transfer_encoding = false;
    bool has_expect = false;
  };
  Result ParseRequestLine(std::string_view line);
  Result ParseFields(std::string_view fields);
  Result ParseField(std::string_view line, FramingFields* framing);
  Result ApplyFraming(const FramingFields& framing);
  Result ParseBody(std::string_view input);
  Result ParseChunkSizeLine(std::string_view line);
  // Finds the CRLF ending the line that starts at pos_; resumes its scan at line_scan_. Returns the
  // line's length (without CRLF), npos when not there yet; sets a failure on a bare LF or CR.
  size_t FindLineEnd(std::string_view input, bool* bad);
  bool OverheadExceeded(size_t extra) const;

  const FramingLimits limits_;
  Phase phase_ = Phase::kHead;
  FramedRequest request_;
  FramingError error_;
  size_t head_start_ = 0;   // after the empty lines allowed before a request line
  size_t scan_ = 0;         // where the search for the end of the head resumes
  size_t line_begin_ = 0;   // start of the head line being scanned
  size_t pos_ = 0;          // start of the next body element to decode
  size_t line_scan_ = 0;    // where the search for the end of a chunk line resumes
  uint64_t remaining_ = 0;  // bytes of the fixed body or of the current chunk still to come
  size_t body_start_ = 0;
  size_t consumed_ = 0;
  size_t overhead_ = 0;  // chunked framing bytes so far
  size_t content_length_fields_ = 0;
  bool chunked_ = false;
};

}  // namespace bulwark::server
