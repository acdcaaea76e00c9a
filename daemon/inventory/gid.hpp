// SPDX-License-Identifier: MIT
//
// A GID as its 16 bytes. The kernel prints a GID table entry as text (`ports/<n>/gids/<i>`:
// "%pI6", 8 groups of 4 lower-case hex digits, 39 characters; Documentation/ABI/stable/
// sysfs-class-infiniband); the Inventory keeps the bytes and renders that text where a value
// is shown (D-Bus, Describe(), the doctor's evidence): at 1,024 devices the text was a heap
// allocation per entry.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rdmad {

/// A GID, in network byte order. All zeros is "no GID" (an empty table entry).
class Gid {
  public:
    using Bytes = std::array<uint8_t, 16>;
    Gid() = default;
    explicit Gid(const Bytes& bytes) : bytes_(bytes) {}

    /// The kernel's text of a GID: 8 groups of exactly 4 hex digits separated by ':'
    /// ("fe80:0000:0000:0000:0202:c9ff:fe00:0001"), upper case tolerated; surrounding
    /// whitespace is the caller's (parse_gid() trims). nullopt for anything else, compressed
    /// forms ("fe80::1") included: the kernel never prints them.
    static std::optional<Gid> parse(std::string_view text);

    /// The kernel's text (lower-case hex digits), "" for the all-zero GID.
    std::string text() const;
    /// True for the all-zero GID.
    bool empty() const;
    const Bytes& bytes() const { return bytes_; }

    /// Byte order, which is the order of the texts.
    auto operator<=>(const Gid&) const = default;

  private:
    Bytes bytes_{};
};

} // namespace rdmad
