// Incremental RFC 9112 request framing (see request_framing.h).
#include "server/request_framing.h"

#include <absl/strings/str_cat.h>

#include <algorithm>

namespace bulwark::server {
namespace {

constexpr size_t kNpos = std::string_view::npos;

// tchar of RFC 9110 5.6.2.
bool IsTchar(unsigned char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':  // NOLINT
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':  // NOLINT
      return true;
    default:
      return false;
  }
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTchar(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// field-vchar / SP / HTAB of RFC 9110 5.5 (obs-text included); everything else is a control byte.
bool IsFieldValueByte(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

bool IsOws(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && IsOws(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsOws(s.back())) s.remove_suffix(1);
  return s;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool StartsWithIgnoreCase(std::string_view s, std::string_view lowercase_prefix) {
  return s.size() >= lowercase_prefix.size() &&
         EqualsIgnoreCase(s.substr(0, lowercase_prefix.size()), lowercase_prefix);
}

// A list field's elements (RFC 9110 5.6.1), trimmed; an empty element makes the list malformed.
bool SplitList(std::string_view value, std::vector<std::string_view>* out) {
  while (true) {
    const size_t comma = value.find(',');
    const std::string_view element = TrimOws(value.substr(0, comma));
    if (element.empty()) return false;
    out->push_back(element);
    if (comma == kNpos) return true;
    value.remove_prefix(comma + 1);
  }
}

// Skips a quoted-string (RFC 9110 5.6.4) starting at s[*i] == '"'. False if malformed.
bool SkipQuotedString(std::string_view s, size_t* i) {
  for (++*i; *i < s.size(); ++*i) {
    const unsigned char c = static_cast<unsigned char>(s[*i]);
    if (c == '"') {
      ++*i;
      return true;
    }
    if (c == '\\') {
      if (++*i == s.size() || !IsFieldValueByte(static_cast<unsigned char>(s[*i]))) return false;
    } else if (!IsFieldValueByte(c)) {
      return false;
    }
  }
  return false;
}

size_t SkipToken(std::string_view s, size_t i) {
  while (i < s.size() && IsTchar(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

size_t SkipOws(std::string_view s, size_t i) {
  while (i < s.size() && IsOws(s[i])) ++i;
  return i;
}

// chunk-ext of RFC 9112 7.1.1: *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ).
bool IsChunkExtensions(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    i = SkipOws(s, i);
    if (i == s.size() || s[i] != ';') return false;
    i = SkipOws(s, i + 1);
    const size_t name_end = SkipToken(s, i);
    if (name_end == i) return false;
    i = SkipOws(s, name_end);
    if (i < s.size() && s[i] == '=') {
      i = SkipOws(s, i + 1);
      if (i < s.size() && s[i] == '"') {
        if (!SkipQuotedString(s, &i)) return false;
      } else {
        const size_t value_end = SkipToken(s, i);
        if (value_end == i) return false;
        i = value_end;
      }
    }
  }
  return true;
}

}  // namespace

bool EqualsIgnoreCase(std::string_view name, std::string_view lowercase) {
  if (name.size() != lowercase.size()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i] >= 'A' && name[i] <= 'Z' ? static_cast<char>(name[i] - 'A' + 'a') : name[i];
    if (c != lowercase[i]) return false;
  }
  return true;
}

void RequestFramer::Reset() {
  phase_ = Phase::kHead;
  request_ = FramedRequest();
  error_ = FramingError();
  head_start_ = scan_ = line_begin_ = pos_ = line_scan_ = body_start_ = consumed_ = 0;
  remaining_ = 0;
  overhead_ = content_length_fields_ = 0;
  chunked_ = false;
}

RequestFramer::Result RequestFramer::Fail(int status, std::string code, std::string message) {
  phase_ = Phase::kFailed;
  error_ = FramingError{status, std::move(code), std::move(message)};
  return Result::kError;
}

RequestFramer::Result RequestFramer::Parse(std::string_view input) {
  if (phase_ == Phase::kDone) return Result::kComplete;
  if (phase_ == Phase::kFailed) return Result::kError;
  if (phase_ == Phase::kHead) {
    const Result r = ParseHead(input);
    if (r != Result::kNeedMore || phase_ == Phase::kHead) return r;
  }
  return ParseBody(input);
}

// Finds the blank line that ends the head, one byte at a time from where the last call stopped.
RequestFramer::Result RequestFramer::ParseHead(std::string_view input) {
  for (; scan_ < input.size(); ++scan_) {
    if (scan_ >= limits_.max_head_bytes) {
      return Fail(431, "headers_too_large",
                  absl::StrCat("request headers exceed ", limits_.max_head_bytes, " bytes"));
    }
    if (line_begin_ == head_start_ && scan_ - head_start_ >= limits_.max_request_line_bytes) {
      return Fail(414, "uri_too_long", "the request line is too long");
    }
    const char c = input[scan_];
    if (scan_ > 0 && input[scan_ - 1] == '\r' && c != '\n') return Refuse("bare CR in the request head");
    if (c != '\n') continue;
    if (scan_ == 0 || input[scan_ - 1] != '\r')
      return Refuse("bare LF in the request head (lines end in CRLF)");
    const size_t line_length = scan_ - 1 - line_begin_;
    const size_t next_line = scan_ + 1;
    if (line_length > 0) {
      line_begin_ = next_line;
      continue;
    }
    if (line_begin_ == head_start_) {  // an empty line before the request line (RFC 9112 2.2)
      head_start_ = line_begin_ = next_line;
      continue;
    }
    // The blank line: the head is head_start_ .. line_begin_ (each line with its CRLF).
    body_start_ = next_line;
    ++scan_;
    const std::string_view head = input.substr(head_start_, line_begin_ - head_start_);
    const size_t first_crlf = head.find("\r\n");
    if (Result r = ParseRequestLine(head.substr(0, first_crlf)); r != Result::kNeedMore) return r;
    return ParseFields(head.substr(first_crlf + 2));
  }
  return Result::kNeedMore;
}

RequestFramer::Result RequestFramer::ParseRequestLine(std::string_view line) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == kNpos ? kNpos : line.find(' ', sp1 + 1);
  if (sp2 == kNpos) return Refuse("malformed request line (method SP target SP version)");
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return Refuse("malformed request method");
  if (target.empty()) return Refuse("empty request target");
  for (char c : target) {
    if (c <= 0x20 || c >= 0x7f) return Refuse("invalid byte in the request target");
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !IsDigit(version[5]) || version[6] != '.' ||
      !IsDigit(version[7])) {
    return Refuse("malformed HTTP version");
  }
  if (version[5] != '1') return Fail(505, "http_version_not_supported", "only HTTP/1.x is served");
  request_.version_minor = version[7] == '0' ? 0 : 1;
  request_.keep_alive = request_.version_minor == 1;
  request_.method = std::string(method);
  if (target.front() == '/') {
    request_.target = std::string(target);
  } else if (target == "*") {
    if (method != "OPTIONS") return Refuse("the asterisk target is for OPTIONS only");
    request_.target = "*";
  } else if (StartsWithIgnoreCase(target, "http://") || StartsWithIgnoreCase(target, "https://")) {
    // absolute-form (RFC 9112 3.2.2): the path and query are what the server routes on.
    const std::string_view rest = target.substr(target.find("//") + 2);
    const size_t path = rest.find_first_of("/?");
    if (path == 0 || rest.empty()) return Refuse("absolute-form target without authority");
    const std::string_view tail = path == kNpos ? "" : rest.substr(path);
    request_.target = tail.empty() || tail.front() == '?' ? "/" + std::string(tail) : std::string(tail);
  } else {
    return Refuse("unsupported request-target form");
  }
  return Result::kNeedMore;
}

RequestFramer::Result RequestFramer::ParseFields(std::string_view fields) {
  FramingFields framing;
  while (!fields.empty()) {
    const size_t crlf = fields.find("\r\n");  // every line of the head ends in CRLF
    if (Result r = ParseField(fields.substr(0, crlf), &framing); r != Result::kNeedMore) return r;
    fields.remove_prefix(crlf + 2);
  }
  return ApplyFraming(framing);
}

RequestFramer::Result RequestFramer::ParseField(std::string_view line, FramingFields* framing) {
  if (IsOws(line.front())) return Refuse("obs-fold (a header line starting with whitespace)");
  const size_t colon = line.find(':');
  if (colon == kNpos) return Refuse("header line without a colon");
  const std::string_view name = line.substr(0, colon);
  if (!IsToken(name)) return Refuse("malformed header field name (no whitespace before the colon)");
  const std::string_view value = TrimOws(line.substr(colon + 1));
  for (char c : value) {
    if (!IsFieldValueByte(static_cast<unsigned char>(c)))
      return Refuse("control character in a header value");
  }
  if (request_.headers.size() >= limits_.max_header_fields) {
    return Fail(431, "headers_too_large",
                absl::StrCat("more than ", limits_.max_header_fields, " header fields"));
  }
  auto append = [](std::string* joined, std::string_view v) {
    if (!joined->empty()) joined->push_back(',');
    joined->append(v);
  };
  if (EqualsIgnoreCase(name, "host")) {
    ++framing->host;
  } else if (EqualsIgnoreCase(name, "content-length")) {
    if (++content_length_fields_ > 1) return Refuse("more than one Content-Length field");
    if (value.empty() || !std::all_of(value.begin(), value.end(), IsDigit)) {
      return Refuse("malformed Content-Length (1*DIGIT)");
    }
    const size_t first = std::min(value.find_first_not_of('0'), value.size());
    const std::string_view digits = value.substr(first);
    uint64_t length = 0;
    for (char c : digits.substr(0, 19)) length = length * 10 + static_cast<uint64_t>(c - '0');
    if (digits.size() > 18 || length > limits_.max_body_bytes) {
      return Fail(413, "payload_too_large",
                  absl::StrCat("request body exceeds ", limits_.max_body_bytes, " bytes"));
    }
    remaining_ = length;
  } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
    framing->has_transfer_encoding = true;
    append(&framing->transfer_encoding, value);
  } else if (EqualsIgnoreCase(name, "connection")) {
    append(&framing->connection, value);
  } else if (EqualsIgnoreCase(name, "expect")) {
    framing->has_expect = true;
    append(&framing->expect, value);
  }
  request_.headers.emplace_back(name, value);
  return Result::kNeedMore;
}

RequestFramer::Result RequestFramer::ApplyFraming(const FramingFields& framing) {
  const bool v11 = request_.version_minor == 1;
  if (framing.host > 1 || (v11 && framing.host != 1))
    return Refuse("an HTTP/1.1 request needs exactly one Host");
  std::vector<std::string_view> connection;
  if (!SplitList(framing.connection, &connection) && !framing.connection.empty()) {
    return Refuse("malformed Connection field");
  }
  for (std::string_view option : connection) {
    if (EqualsIgnoreCase(option, "close")) request_.keep_alive = false;
    if (EqualsIgnoreCase(option, "keep-alive") && !v11) request_.keep_alive = true;
  }
  if (framing.has_expect && v11) {  // HTTP/1.0 expectations are ignored (RFC 9110 10.1.1)
    if (!EqualsIgnoreCase(framing.expect, "100-continue")) {
      return Fail(417, "expectation_failed", "the only expectation served is 100-continue");
    }
    request_.expect_continue = true;
  }
  if (framing.has_transfer_encoding) {
    if (!v11) return Refuse("Transfer-Encoding in an HTTP/1.0 request");
    if (content_length_fields_ > 0) return Refuse("both Content-Length and Transfer-Encoding");
    std::vector<std::string_view> codings;
    if (!SplitList(framing.transfer_encoding, &codings)) return Refuse("malformed Transfer-Encoding");
    for (size_t i = 0; i < codings.size(); ++i) {
      const bool chunked = EqualsIgnoreCase(codings[i], "chunked");
      if (chunked != (i + 1 == codings.size()))
        return Refuse("chunked must be the final transfer coding, once");
      if (!IsToken(codings[i])) return Refuse("malformed transfer coding");
    }
    if (codings.size() > 1) return Fail(501, "not_implemented", "transfer codings other than chunked");
    chunked_ = true;
    phase_ = Phase::kChunkSize;
    pos_ = line_scan_ = body_start_;
    return Result::kNeedMore;
  }
  if (content_length_fields_ > 0 && remaining_ > 0) {
    phase_ = Phase::kFixedBody;
    return Result::kNeedMore;
  }
  phase_ = Phase::kDone;  // no body (RFC 9112 6.3, rule 7)
  consumed_ = body_start_;
  return Result::kComplete;
}

size_t RequestFramer::FindLineEnd(std::string_view input, bool* bad) {
  for (; line_scan_ < input.size(); ++line_scan_) {
    const char c = input[line_scan_];
    const bool after_cr = line_scan_ > pos_ && input[line_scan_ - 1] == '\r';
    if (c == '\n') {
      if (!after_cr) *bad = true;
      return *bad ? kNpos : line_scan_ - 1 - pos_;
    }
    if (after_cr) {
      *bad = true;
      return kNpos;
    }
  }
  return kNpos;
}

bool RequestFramer::OverheadExceeded(size_t extra) const {
  return overhead_ + extra > limits_.max_chunk_overhead_bytes;
}

RequestFramer::Result RequestFramer::ParseChunkSizeLine(std::string_view line) {
  size_t digits = 0;
  while (digits < line.size() && HexValue(line[digits]) >= 0) ++digits;
  if (digits == 0) return Refuse("malformed chunk size (1*HEXDIG)");
  if (!IsChunkExtensions(line.substr(digits))) return Refuse("malformed chunk extension");
  const std::string_view hex = line.substr(0, digits);
  const std::string_view significant = hex.substr(std::min(hex.find_first_not_of('0'), hex.size()));
  uint64_t size = 0;
  for (char c : significant.substr(0, 15)) size = size * 16 + static_cast<uint64_t>(HexValue(c));
  if (significant.size() > 15 || size > limits_.max_body_bytes - request_.body.size()) {
    return Fail(413, "payload_too_large",
                absl::StrCat("request body exceeds ", limits_.max_body_bytes, " bytes"));
  }
  remaining_ = size;
  return Result::kNeedMore;
}

RequestFramer::Result RequestFramer::ParseBody(std::string_view input) {
  while (true) {
    switch (phase_) {
      case Phase::kFixedBody:
        if (input.size() - body_start_ < remaining_) return Result::kNeedMore;
        request_.body.assign(input.substr(body_start_, remaining_));
        consumed_ = body_start_ + remaining_;
        phase_ = Phase::kDone;
        return Result::kComplete;
      case Phase::kChunkData:
        if (input.size() - pos_ < remaining_ + 2) return Result::kNeedMore;
        if (input.substr(pos_ + remaining_, 2) != "\r\n") return Refuse("chunk data not followed by CRLF");
        request_.body.append(input.substr(pos_, remaining_));
        pos_ = line_scan_ = pos_ + remaining_ + 2;
        overhead_ += 2;
        phase_ = Phase::kChunkSize;
        break;
      case Phase::kChunkSize:
      case Phase::kTrailers: {
        bool bad = false;
        const size_t length = FindLineEnd(input, &bad);
        if (bad) return Refuse("bare CR or LF in chunked framing (lines end in CRLF)");
        if (length == kNpos ? OverheadExceeded(input.size() - pos_) : OverheadExceeded(length + 2)) {
          return Refuse(absl::StrCat("chunked framing exceeds ", limits_.max_chunk_overhead_bytes, " bytes"));
        }
        if (length == kNpos) return Result::kNeedMore;
        const std::string_view line = input.substr(pos_, length);
        overhead_ += length + 2;
        pos_ = line_scan_ = pos_ + length + 2;
        if (phase_ == Phase::kChunkSize) {
          if (Result r = ParseChunkSizeLine(line); r != Result::kNeedMore) return r;
          phase_ = remaining_ == 0 ? Phase::kTrailers : Phase::kChunkData;
        } else if (line.empty()) {
          consumed_ = pos_;
          phase_ = Phase::kDone;
          return Result::kComplete;
        } else {
          FramingFields ignored;  // trailer fields are checked like header fields, then dropped
          const size_t fields = request_.headers.size();
          if (Result r = ParseField(line, &ignored); r != Result::kNeedMore) return r;
          request_.headers.resize(fields);
        }
        break;
      }
      case Phase::kDone:
        return Result::kComplete;
      case Phase::kHead:
      case Phase::kFailed:
        return Result::kError;
    }
  }
}

}  // namespace bulwark::server
