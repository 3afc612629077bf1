// HistoryChain: links every history event of a store into one chain, so that deleting, renumbering
// or reordering events is detected (issue #18 point 6 (i); doc/entry_format.md, "History chain").
//
// Each event's tag (signer.h, EventEncoding) covers what the event says; its link covers where it
// is: its seq and the link of the event just before it in the store,
//
//   link_k = HMAC-SHA256(key[link_key_id], LinkEncoding(event_k, link_key_id, link_{k-1}))
//
// (link_0 = the empty string), and the store keeps a signed head naming the newest event's seq and
// link. The link leaves out the event's detail (and tag) on purpose: a purge rewrites the detail
// and tag of every earlier event of the entry, which must not break the chain of the events after
// them. The backend computes links inside the transaction that appends the events (storage
// backends call Link under their write lock), so two processes can never fork the chain.
#pragma once

#include <absl/status/status.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "bulwark/entry.h"
#include "storage/storage_backend.h"

namespace bulwark {

class Signer;

inline constexpr std::string_view kHistoryLinkDomain = "bulwark.history.link.v1";
inline constexpr std::string_view kHistoryHeadDomain = "bulwark.history.head.v1";

// "bulwark.history.link.v1", then each field as an 8-byte little-endian length and its bytes:
//   link_key_id (decimal), seq (decimal), namespace, entry_id, event, actor, at_us (decimal),
//   previous_link (raw bytes; empty for the first event of the store).
std::string LinkEncoding(const HistoryEvent& event, uint32_t key_id, std::string_view previous_link);
// "bulwark.history.head.v1", then key_id (decimal), seq (decimal), link (raw bytes), as above.
std::string HeadEncoding(int64_t seq, std::string_view link, uint32_t key_id);

// The HistoryChainSigner of a store: links and heads under the keyring's newest key, checks with
// any key of the keyring. The signer (and its keyring) must outlive it.
class HistoryChain final : public HistoryChainSigner {
 public:
  explicit HistoryChain(const Signer* signer) : signer_(signer) {}

  HistoryLink Link(const HistoryEvent& event, std::string_view previous_link) const override;
  HistoryHead Head(int64_t seq, std::string_view link) const override;

  // OK if `link` is the link of `event` after `previous_link`; DataLoss (naming the event) if not.
  [[nodiscard]] absl::Status CheckLink(const HistoryEvent& event, const HistoryLink& link,
                                       std::string_view previous_link) const;
  absl::Status CheckHead(const HistoryHead& head) const override;

 private:
  const Signer* signer_;
};

}  // namespace bulwark
