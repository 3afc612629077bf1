// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` header a caller's
// tracing sends, carried into the audit records of its request (issue #15 point 6) so an operator
// can join Bulwark's audit log with the agent's traces.
#pragma once

#include <httplib.h>

#include <optional>
#include <string>
#include <string_view>

namespace bulwark::server {

// The request's traceparent when it is well formed: version "00" (or a later version, whose first
// four fields are read as version 00's), 32 lowercase hex trace id and 16 lowercase hex parent id,
// neither all zeros, 2 hex flags. nullopt otherwise (an invalid header is ignored, as the
// specification asks), so a caller cannot put arbitrary text in the audit log through it.
std::optional<std::string> ValidTraceParent(std::string_view header);
std::optional<std::string> TraceParentOf(const httplib::Request& request);

}  // namespace bulwark::server
