// HistoryChain (see history_chain.h): the encodings and their HMACs.
#include "store/history_chain.h"

#include <absl/strings/str_cat.h>

#include "provenance/signer.h"

namespace bulwark {

std::string LinkEncoding(const HistoryEvent& event, uint32_t key_id, std::string_view previous_link) {
  std::string out(kHistoryLinkDomain);
  AppendEncodingField(&out, absl::StrCat(key_id));
  AppendEncodingField(&out, absl::StrCat(event.seq));
  AppendEncodingField(&out, event.name_space);
  AppendEncodingField(&out, event.entry_id);
  AppendEncodingField(&out, event.event);
  AppendEncodingField(&out, event.actor);
  AppendEncodingField(&out, absl::StrCat(event.at_us));
  AppendEncodingField(&out, previous_link);
  return out;
}

std::string HeadEncoding(int64_t seq, std::string_view link, uint32_t key_id) {
  std::string out(kHistoryHeadDomain);
  AppendEncodingField(&out, absl::StrCat(key_id));
  AppendEncodingField(&out, absl::StrCat(seq));
  AppendEncodingField(&out, link);
  return out;
}

HistoryLink HistoryChain::Link(const HistoryEvent& event, std::string_view previous_link) const {
  auto [key_id, link] =
      signer_->NewestTag([&](uint32_t id) { return LinkEncoding(event, id, previous_link); });
  return HistoryLink{key_id, std::move(link)};
}

HistoryHead HistoryChain::Head(int64_t seq, std::string_view link) const {
  auto [key_id, tag] = signer_->NewestTag([&](uint32_t id) { return HeadEncoding(seq, link, id); });
  return HistoryHead{seq, std::string(link), key_id, std::move(tag)};
}

absl::Status HistoryChain::CheckLink(const HistoryEvent& event, const HistoryLink& link,
                                     std::string_view previous_link) const {
  return signer_->CheckTag([&] { return absl::StrCat("the history chain at event ", event.seq); },
                           link.key_id, link.link,
                           [&](uint32_t id) { return LinkEncoding(event, id, previous_link); });
}

absl::Status HistoryChain::CheckHead(const HistoryHead& head) const {
  return signer_->CheckTag([] { return std::string("the history head"); }, head.key_id, head.tag,
                           [&](uint32_t id) { return HeadEncoding(head.seq, head.link, id); });
}

}  // namespace bulwark
