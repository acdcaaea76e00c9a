// SPDX-License-Identifier: MIT
#include "inventory/object_path.hpp"

#include "rdmad_api.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <systemd/sd-bus.h>

namespace rdmad {
namespace {

/// The element after `prefix` + "/" in `path`, decoded (sd_bus_path_decode(3)); nullopt when
/// `path` is not exactly one element below `prefix`.
std::optional<std::string> decode(const char* path, const char* prefix) {
    // sd_bus_path_decode() takes everything after the prefix, slashes included.
    const size_t n = std::strlen(prefix);
    if (std::strncmp(path, prefix, n) != 0 || path[n] != '/' || std::strchr(path + n + 1, '/'))
        return std::nullopt;
    char* out = nullptr;
    if (sd_bus_path_decode(path, prefix, &out) <= 0 || !out)
        return std::nullopt;
    std::unique_ptr<char, decltype(&std::free)> owned(out, &std::free);
    // One path per object: an element that is not the one encode_path() gives (an escape
    // where none is needed, a "_00" that would cut the id) names no object.
    std::string id(out);
    if (encode_path(prefix, id) != path)
        return std::nullopt;
    return id;
}

/// A decimal number without sign or leading zero ("0" itself is one) that fits in T, nullopt otherwise.
template <typename T> std::optional<T> decimal(std::string_view s, T max) {
    if (s == "0")
        return T{0};
    if (s.empty() || s.size() > 10 || s[0] == '0')
        return std::nullopt;
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || end != s.data() + s.size() || n > static_cast<uint64_t>(max))
        return std::nullopt;
    return static_cast<T>(n);
}

} // namespace

std::string encode_path(const std::string& prefix, const std::string& id) {
    char* out = nullptr;
    int r = sd_bus_path_encode(prefix.c_str(), id.c_str(), &out);
    if (r < 0 || !out)
        throw std::runtime_error("sd_bus_path_encode failed");
    std::string path(out);
    std::free(out);
    return path;
}

std::string device_path(const std::string& id) { return encode_path(api::kDevicePrefix, id); }

std::string port_path(const std::string& id, uint32_t number) {
    return device_path(id) + "/" + api::kPortElement + "/" + std::to_string(number);
}

std::string link_path(int32_t ifindex) {
    return encode_path(api::kLinkPrefix, std::to_string(ifindex));
}

std::optional<std::string> device_id_of_path(const char* path) {
    return decode(path, api::kDevicePrefix);
}

std::optional<std::pair<std::string, uint32_t>> port_of_path(const char* path) {
    const std::string_view p(path);
    const std::string marker = std::string("/") + api::kPortElement + "/";
    const size_t at = p.rfind(marker);
    if (at == std::string_view::npos)
        return std::nullopt;
    auto number = decimal<uint32_t>(p.substr(at + marker.size()), UINT32_MAX);
    if (!number)
        return std::nullopt;
    auto id = device_id_of_path(std::string(p.substr(0, at)).c_str());
    if (!id)
        return std::nullopt;
    return std::pair{std::move(*id), *number};
}

std::optional<int32_t> ifindex_of_path(const char* path) {
    auto element = decode(path, api::kLinkPrefix);
    if (!element)
        return std::nullopt;
    return decimal<int32_t>(*element, INT32_MAX);
}

} // namespace rdmad
