// Identifiers in an answer -- numbers, account and reference codes, e-mail addresses, hosts and
// URLs -- and when two answers' identifiers contradict each other. The embedding equivalence judge
// uses this as a veto: on a lexical (or any bag-of-features) embedding, "pay the rent to IBAN
// DE89 3704 ..." and "pay the rent to IBAN GB33 BUKB ..." are near neighbours, yet they are the
// correct answer and a poisoned one. Grouping them lets a near-duplicate poison into the majority
// group, whose first response may then be the poison, so one poisoned run of five could decide
// the answer and the certificate (which bounds a majority of poisoned runs) would not hold.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

// The identifier tokens of `answer`, lowercased, sorted and unique. A token (whitespace-separated,
// surrounding punctuation removed) is an identifier if it has a digit ("500", "de89", "fin-04",
// "9:40"; thousands separators are dropped: "25,000" = "25000"), an '@', "://", or is a host name
// ("evil.example": dot-separated labels, the first and last of two or more characters).
std::vector<std::string> IdentifierTokens(std::string_view answer);

// True if both answers name identifiers and share none of them: "USD 500" against "USD 750",
// IBAN DE89... against GB33.... Answers that share one identifier do not conflict (a supporting
// passage may mention other numbers besides the one asked for), nor does an answer without any.
// Both arguments as returned by IdentifierTokens.
bool IdentifiersConflict(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace bulwark
