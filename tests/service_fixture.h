// ServiceFixture: the start every whole-service test shares. A real `bulwark serve` on a store in a
// fresh temporary directory (service_harness.h), the bootstrap admin's key, one keep-alive client,
// and the two calls almost every test makes: one request, and a new principal's key.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "service_harness.h"
#include "testing/temp_dir.h"

namespace bulwark::testing {

class ServiceFixture : public ::testing::Test {
 protected:
  // Starts `bulwark serve ARGS` on the store `<temp>/<store_name>`. A server that does not start
  // fails the test (use ASSERT_NO_FATAL_FAILURE around it to stop there). `admin_` is the
  // bootstrap admin's key when the store was new, else unchanged.
  void StartServer(std::vector<std::string> args = {}, const std::string& store_name = "store") {
    store_ = dir_ / store_name;
    server_ = ServerProcess::Start(store_, std::move(args));
    ASSERT_NE(server_, nullptr) << "server did not start";
    if (server_->admin_key()) admin_ = *server_->admin_key();
    client_ = server_->Client();
  }
  // The store directory of the last StartServer (the default store before the first).
  const std::filesystem::path& store() const { return store_; }

  // One request with `key` (empty: none); a null body sends no body.
  Answer Call(const std::string& method, const std::string& path, const std::string& key,
              const nlohmann::json& body = nullptr, httplib::Headers headers = {}) {
    return body.is_null() ? Send(*client_, method, path, key, "", std::move(headers))
                          : SendJson(*client_, method, path, key, body, std::move(headers));
  }
  // Creates a principal through the admin API and returns its API key ("" and a failed
  // expectation if the service refused).
  std::string NewPrincipal(const std::string& name, const std::string& role,
                           std::vector<std::string> namespaces) {
    Answer a = Call("POST", "/v1/admin/principals", admin_,
                    {{"name", name}, {"role", role}, {"namespaces", namespaces}});
    EXPECT_EQ(a.status, 201) << a.body;
    return a.json().value("api_key", "");
  }

  TempDir dir_;
  std::filesystem::path store_ = dir_ / "store";
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
  std::string admin_;
};

}  // namespace bulwark::testing
