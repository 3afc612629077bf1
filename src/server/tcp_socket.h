// TCP socket helpers of the connection loop (connection_loop.h): the listening socket, sends that
// never block or raise SIGPIPE, the open-file limit, and a peer's address as text.
#pragma once

#include <absl/status/statusor.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <string>
#include <string_view>

namespace bulwark::server {

// A non-blocking, close-on-exec socket listening on `host`:`port_number` (0 picks a free port)
// with `backlog`: the first address getaddrinfo gives that binds. InvalidArgument when `host`
// does not resolve; Unavailable when no address binds (in use?).
[[nodiscard]] absl::StatusOr<int> ListenTcp(const std::string& host, int port_number, int backlog);

// The local port a bound socket listens on.
int BoundPort(int fd);

// send() without blocking or SIGPIPE, retrying EINTR; the bytes sent, or -1 on an error other than
// a full socket.
ssize_t SendSome(int fd, std::string_view bytes);

// Raises the soft RLIMIT_NOFILE towards what `connections` need; returns how many connections the
// limit then allows (at most `connections`).
int FitToDescriptorLimit(int connections);

// The IP address of an accepted peer as text (inet_ntop), "" for other address families.
std::string PeerAddressText(const sockaddr_storage& address);

}  // namespace bulwark::server
