// Word-level helpers of the LLM-free generators: the words of a text, its salient words (the
// content words an attacker or a user would pick up from a returned memory, ranked by the
// lexical embedder's IDF table), its first and last words (RAG-Thief's overlap anchors), and the
// command words that mark an extraction-style prompt.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bulwark::extraction {

// Lowercase runs of [a-z] (ASCII letters only; digits and everything else separate words).
std::vector<std::string> LowerWords(std::string_view text);

// Up to `n` distinct words of `text` that are at least 4 letters long and not stopwords, ranked
// by IDF (embed/idf_table.h), highest first; ties keep text order.
std::vector<std::string> SalientWords(std::string_view text, size_t n);

// The first / last `n` whitespace-separated tokens of `text`, joined by single spaces.
std::string FirstTokens(std::string_view text, size_t n);
std::string LastTokens(std::string_view text, size_t n);

// Words that mark an extraction-style command ("ignore", "verbatim", "output", "chunks", ...):
// the MEXTRA / RAG-Thief / DGEA vocabulary and the keyword filter of MemPot's Agent baseline
// (copy, output, print, repeat, chunk). IKEA's queries never contain them; benign users
// sometimes do ("How do I print from the hallway?" in data/corpora/benign_queries.jsonl).
const std::vector<std::string>& CommandWords();

// True if any lowercase word of `text` is a command word.
bool HasCommandWord(std::string_view text);

}  // namespace bulwark::extraction
