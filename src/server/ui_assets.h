// The dashboard's static files (ui/dist/, built from ui/src/ and committed), embedded in the binary
// at build time: cmake/embed_ui.cmake turns every file under ui/dist/ into a byte array of a
// generated ui_assets.cc, so `bulwark serve` needs no files beside it and no Node at run time.
#pragma once

#include <span>
#include <string_view>

namespace bulwark::server {

struct UiAsset {
  std::string_view path;          // relative to ui/dist/: "index.html", "assets/app.js"
  std::string_view content_type;  // from the file's extension, e.g. "text/javascript; charset=utf-8"
  std::string_view bytes;
};

// Every embedded file, sorted by path.
std::span<const UiAsset> UiAssets();

// The file at `path` (relative to ui/dist/), or null.
const UiAsset* FindUiAsset(std::string_view path);

}  // namespace bulwark::server
