// Strict request decoding: every kind of bad input is refused with the right API code.
#include "server/request_parsing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/api_status.h"

namespace bulwark::server {
namespace {

const RequestLimits kLimits;

// The API code of a failed parse, or "ok".
template <typename T>
std::string CodeOf(const absl::StatusOr<T>& result) {
  return result.ok() ? "ok" : ApiCodeOf(result.status());
}

TEST(ParseJsonObjectTest, RejectsMalformedAndNonObjects) {
  EXPECT_EQ(CodeOf(ParseJsonObject("", 32)), "invalid_json");
  EXPECT_EQ(CodeOf(ParseJsonObject("{", 32)), "invalid_json");
  EXPECT_EQ(CodeOf(ParseJsonObject("{\"a\":1} trailing", 32)), "invalid_json");
  EXPECT_EQ(CodeOf(ParseJsonObject("[1,2]", 32)), "invalid_json");
  EXPECT_EQ(CodeOf(ParseJsonObject("\"text\"", 32)), "invalid_json");
  EXPECT_EQ(CodeOf(ParseJsonObject("{\"a\":\"\xff\"}", 32)), "invalid_json");  // invalid UTF-8
  EXPECT_EQ(CodeOf(ParseJsonObject("{\"a\":1}", 32)), "ok");
}

TEST(ParseJsonObjectTest, RejectsDuplicateKeysAtAnyDepth) {
  EXPECT_EQ(CodeOf(ParseJsonObject(R"({"a":1,"a":2})", 32)), "duplicate_field");
  EXPECT_EQ(CodeOf(ParseJsonObject(R"({"m":{"x":1,"x":1}})", 32)), "duplicate_field");
  EXPECT_EQ(CodeOf(ParseJsonObject(R"({"m":{"x":1},"n":{"x":1}})", 32)),
            "ok");  // same key, different objects
}

TEST(ParseJsonObjectTest, BoundsNesting) {
  std::string deep = "{\"a\":" + std::string(40, '[') + std::string(40, ']') + "}";
  EXPECT_EQ(CodeOf(ParseJsonObject(deep, 32)), "invalid_json");
  std::string very_deep = "{\"a\":" + std::string(100000, '[');  // must not overflow the stack
  EXPECT_EQ(CodeOf(ParseJsonObject(very_deep, 32)), "invalid_json");
  EXPECT_EQ(CodeOf(ParseJsonObject(deep, 64)), "ok");
}

TEST(ParseAddRequestTest, SingleEntry) {
  auto r =
      ParseAddRequest(R"({"namespace":"a","text":"hello","metadata":{"k":1},"source":"agent"})", kLimits);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->batch);
  ASSERT_EQ(r->entries.size(), 1u);
  EXPECT_EQ(r->entries[0].text, "hello");
  EXPECT_EQ(r->entries[0].metadata["k"], 1);
  EXPECT_EQ(r->entries[0].source, Source::kAgent);
  EXPECT_EQ(r->name_space, "a");
}

TEST(ParseAddRequestTest, Batch) {
  auto r =
      ParseAddRequest(R"({"namespace":"a","entries":[{"text":"x"},{"text":"y","source":"tool"}]})", kLimits);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->batch);
  ASSERT_EQ(r->entries.size(), 2u);
  EXPECT_EQ(r->entries[1].source, Source::kTool);
}

TEST(ParseAddRequestTest, RejectsBadInput) {
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"namespace":"a"})", kLimits)), "missing_field");
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"text":"x","kind":"honeypot"})", kLimits)), "unknown_field");
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"text":42})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"text":"x","metadata":[1]})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"text":"x","source":"root"})", kLimits)), "invalid_argument");
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"text":"x","namespace":7})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"entries":[]})", kLimits)), "invalid_argument");
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"entries":{}})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"entries":[{"text":"x"},"y"]})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"entries":[{"text":"x","bogus":1}]})", kLimits)), "unknown_field");
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"entries":[{"text":"x"}],"text":"y"})", kLimits)), "unknown_field");
}

TEST(ParseAddRequestTest, ErrorsNameTheBatchEntry) {
  auto r = ParseAddRequest(R"({"entries":[{"text":"x"},{"text":"y"},{"text":false}]})", kLimits);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("entries[2]"));
}

TEST(ParseAddRequestTest, BoundsBatchSize) {
  RequestLimits limits;
  limits.max_batch_entries = 2;
  EXPECT_EQ(CodeOf(ParseAddRequest(R"({"entries":[{"text":"a"},{"text":"b"},{"text":"c"}]})", limits)),
            "out_of_range");
}

TEST(ParseSearchRequestTest, DefaultsAndFields) {
  auto r = ParseSearchRequest(R"({"namespace":"a","query":"seat"})", kLimits);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->options.k, 5);
  EXPECT_FALSE(r->options.include_quarantined);
  r = ParseSearchRequest(R"({"query":"q","k":3,"filter":{"c":"x"},"include_quarantined":true})", kLimits);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->options.k, 3);
  EXPECT_EQ(r->options.metadata_filter["c"], "x");
  EXPECT_TRUE(r->options.include_quarantined);
}

TEST(ParseSearchRequestTest, ReadDefenseFields) {
  auto r =
      ParseSearchRequest(R"({"query":"q","k":4,"gate":"escalate","k_high":9,"smoothing":true})", kLimits);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->defenses.gate_mode, GateMode::kEscalate);
  EXPECT_EQ(r->defenses.k_high, 9);
  ASSERT_TRUE(r->defenses.smoothing.has_value());
  EXPECT_EQ(r->defenses.smoothing->m, 20);
  EXPECT_EQ(r->defenses.smoothing->k, 5);
  EXPECT_EQ(r->defenses.smoothing->nruns, 5);
  EXPECT_EQ(r->defenses.responder, ResponderKind::kExtractive);
  r = ParseSearchRequest(R"({"query":"q","smoothing":{"m":11,"k":3,"nruns":7,"responder":"llm"}})", kLimits);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->defenses.smoothing->m, 11);
  EXPECT_EQ(r->defenses.smoothing->k, 3);
  EXPECT_EQ(r->defenses.smoothing->nruns, 7);
  EXPECT_EQ(r->defenses.responder, ResponderKind::kLlm);
  r = ParseSearchRequest(R"({"query":"q","smoothing":false})", kLimits);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->defenses.smoothing.has_value());
  EXPECT_FALSE(r->defenses.gate_mode.has_value());

  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","gate":"block"})", kLimits)), "invalid_argument");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","gate":1})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","k":5,"k_high":4})", kLimits)), "out_of_range");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","k_high":101})", kLimits)), "out_of_range");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","smoothing":{"m":101}})", kLimits)), "out_of_range");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","smoothing":{"m":5,"k":6}})", kLimits)),
            "out_of_range");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","smoothing":{"nruns":26}})", kLimits)), "out_of_range");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","smoothing":{"seed":"00"}})", kLimits)),
            "unknown_field");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","smoothing":{"responder":"oracle"}})", kLimits)),
            "invalid_argument");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","smoothing":"yes"})", kLimits)), "wrong_type");
}

TEST(ParseAnswerRequestTest, AlwaysSmoothed) {
  auto r = ParseAnswerRequest(R"({"namespace":"a","question":"when?","filter":{"c":"x"},"gate":"strip"})",
                              kLimits);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->question, "when?");
  EXPECT_EQ(r->filter["c"], "x");
  EXPECT_EQ(r->defenses.gate_mode, GateMode::kStrip);
  ASSERT_TRUE(r->defenses.smoothing.has_value());
  EXPECT_EQ(r->defenses.smoothing->m, 20);
  RequestLimits small;
  small.max_k = 10;
  small.max_smoothing_runs = 3;
  r = ParseAnswerRequest(R"({"question":"q"})", small);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->defenses.smoothing->m, 10);  // the defaults bow to the server's limits
  EXPECT_EQ(r->defenses.smoothing->nruns, 3);
  EXPECT_EQ(CodeOf(ParseAnswerRequest(R"({"question":"q","smoothing":false})", kLimits)), "invalid_argument");
  EXPECT_EQ(CodeOf(ParseAnswerRequest(R"({"namespace":"a"})", kLimits)), "missing_field");
  EXPECT_EQ(CodeOf(ParseAnswerRequest(R"({"question":"q","k":3})", kLimits)), "unknown_field");
}

TEST(ParseSearchRequestTest, RejectsBadK) {
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","k":0})", kLimits)), "out_of_range");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","k":-1})", kLimits)), "out_of_range");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","k":101})", kLimits)), "out_of_range");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","k":18446744073709551615})", kLimits)), "out_of_range");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","k":1e99})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","k":2.5})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","k":"5"})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","k":100})", kLimits)), "ok");
}

TEST(ParseSearchRequestTest, RejectsOtherBadFields) {
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"k":3})", kLimits)), "missing_field");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":["q"]})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","filter":"c=x"})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","include_quarantined":1})", kLimits)), "wrong_type");
  EXPECT_EQ(CodeOf(ParseSearchRequest(R"({"query":"q","user_id":"bob"})", kLimits)), "unknown_field");
}

TEST(ParseUpdateRequestTest, NeedsAChange) {
  EXPECT_EQ(CodeOf(ParseUpdateRequest(R"({"namespace":"a"})", kLimits)), "missing_field");
  auto r = ParseUpdateRequest(R"({"text":"new"})", kLimits);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->update.text, "new");
  EXPECT_FALSE(r->update.metadata.has_value());
}

TEST(ParseEntryActionRequestTest, EmptyBodyOrNamespaceAndReason) {
  EXPECT_TRUE(ParseEntryActionRequest("", false, kLimits).ok());
  EXPECT_EQ(CodeOf(ParseEntryActionRequest(R"({"reason":"x"})", false, kLimits)), "unknown_field");
  auto r = ParseEntryActionRequest(R"({"namespace":"a","reason":"looks injected"})", true, kLimits);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reason, "looks injected");
}

TEST(ParseCreatePrincipalRequestTest, FieldsAndErrors) {
  auto r = ParseCreatePrincipalRequest(R"({"name":"bob","role":"writer","namespaces":["a","b"]})", kLimits);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->principal.role, Role::kWriter);
  EXPECT_EQ(r->principal.namespaces, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r->create_key);
  EXPECT_EQ(CodeOf(ParseCreatePrincipalRequest(R"({"name":"b","role":"root","namespaces":["a"]})", kLimits)),
            "invalid_argument");
  EXPECT_EQ(CodeOf(ParseCreatePrincipalRequest(R"({"name":"b","role":"reader","namespaces":"a"})", kLimits)),
            "wrong_type");
  EXPECT_EQ(CodeOf(ParseCreatePrincipalRequest(R"({"name":"b","role":"reader"})", kLimits)), "missing_field");
  EXPECT_EQ(CodeOf(ParseCreatePrincipalRequest(R"({"name":"b","role":"reader","namespaces":[1]})", kLimits)),
            "wrong_type");
}

TEST(QueryParamsTest, StrictNames) {
  QueryParams params{{"namespace", "a"}, {"limit", "10"}};
  EXPECT_TRUE(CheckQueryParams(params, {"namespace", "limit"}).ok());
  EXPECT_EQ(ApiCodeOf(CheckQueryParams(params, {"namespace"})), "unknown_field");
  QueryParams twice{{"namespace", "a"}, {"namespace", "b"}};
  EXPECT_EQ(ApiCodeOf(CheckQueryParams(twice, {"namespace"})), "duplicate_field");
  EXPECT_EQ(*IntQueryParam(params, "limit", 5, 1, 100), 10);
  EXPECT_EQ(*IntQueryParam(params, "missing", 5, 1, 100), 5);
  EXPECT_EQ(CodeOf(IntQueryParam(QueryParams{{"limit", "10x"}}, "limit", 5, 1, 100)), "wrong_type");
  EXPECT_EQ(CodeOf(IntQueryParam(QueryParams{{"limit", "0"}}, "limit", 5, 1, 100)), "out_of_range");
}

TEST(ResolveNamespaceTest, BodyOrQueryButNotConflicting) {
  EXPECT_EQ(*ResolveNamespace("a", {}), "a");
  EXPECT_EQ(*ResolveNamespace(std::nullopt, {{"namespace", "b"}}), "b");
  EXPECT_EQ(*ResolveNamespace("a", {{"namespace", "a"}}), "a");
  EXPECT_EQ(CodeOf(ResolveNamespace("a", {{"namespace", "b"}})), "invalid_argument");
  EXPECT_EQ(CodeOf(ResolveNamespace(std::nullopt, {})), "missing_field");
  EXPECT_EQ(CodeOf(ResolveNamespace("../etc", {})), "invalid_argument");
}

TEST(ParseAuditQueryTest, FiltersAndLimits) {
  auto q = ParseAuditQuery({{"principal", "bob"}, {"limit", "20"}, {"since_us", "5"}}, kLimits);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->principal, "bob");
  EXPECT_EQ(q->limit, 20);
  EXPECT_EQ(q->since_us, 5);
  EXPECT_EQ(CodeOf(ParseAuditQuery({{"entry_id", "nope"}}, kLimits)), "invalid_argument");
  EXPECT_EQ(CodeOf(ParseAuditQuery({{"limit", "100000"}}, kLimits)), "out_of_range");
  EXPECT_EQ(CodeOf(ParseAuditQuery({{"query", "x"}}, kLimits)), "unknown_field");
}

TEST(SessionIdTest, PrintableAsciiOnly) {
  EXPECT_TRUE(ValidateSessionId("").ok());
  EXPECT_TRUE(ValidateSessionId("sess-42_abc").ok());
  EXPECT_FALSE(ValidateSessionId("has space").ok());
  EXPECT_FALSE(ValidateSessionId("tab\t").ok());
  EXPECT_FALSE(ValidateSessionId(std::string(129, 'a')).ok());
}

}  // namespace
}  // namespace bulwark::server
