// SPDX-License-Identifier: MIT
//
// An immutable string held once per distinct text for the whole process (interned) and shared
// by every value that holds it. Made for texts that many objects repeat: a doctor finding
// about the host (the "module rdma_ucm absent" problem, about 0.6 KB of code, text, evidence
// and remedy) is found on every device, and an RDMA-CM status message ("configfs is not
// mounted ...") on every RoCE port. At 1,024 devices each of them cost a copy per object.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <fmt/format.h>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

/// An immutable, interned string: equal texts share one copy, kept while any SharedText holds
/// it. Copying is a reference count (under a process-wide lock, so threads may hold them).
/// Reads as a `const std::string&` (str(), or the implicit conversion), compares and orders
/// as its text. "" holds nothing.
class SharedText {
  public:
    SharedText() = default;
    SharedText(std::string_view text);
    SharedText(const std::string& text) : SharedText(std::string_view(text)) {}
    SharedText(const char* text) : SharedText(std::string_view(text)) {}
    SharedText(const SharedText& other) noexcept;
    SharedText(SharedText&& other) noexcept : rep_(other.rep_) { other.rep_ = nullptr; }
    SharedText& operator=(const SharedText& other) noexcept;
    SharedText& operator=(SharedText&& other) noexcept;
    ~SharedText();

    const std::string& str() const;
    operator const std::string&() const { return str(); }
    operator std::string_view() const { return str(); }
    bool empty() const { return rep_ == nullptr; }
    size_t size() const { return str().size(); }
    const char* c_str() const { return str().c_str(); }
    size_t find(std::string_view s, size_t pos = 0) const { return str().find(s, pos); }
    size_t rfind(std::string_view s, size_t pos = std::string::npos) const {
        return str().rfind(s, pos);
    }

    /// One copy per text: the same text is the same copy.
    friend bool operator==(const SharedText& a, const SharedText& b) { return a.rep_ == b.rep_; }
    friend bool operator==(const SharedText& a, const std::string& b) { return a.str() == b; }
    friend bool operator==(const SharedText& a, std::string_view b) { return a.str() == b; }
    friend bool operator==(const SharedText& a, const char* b) { return a.str() == b; }
    friend std::strong_ordering operator<=>(const SharedText& a, const SharedText& b) {
        return a.str().compare(b.str()) <=> 0;
    }

    /// Hold this text with `more` appended (the text it held is not changed: other holders
    /// keep it).
    SharedText& operator+=(std::string_view more) {
        return *this = SharedText(str() + std::string(more));
    }

    friend std::string operator+(const std::string& a, const SharedText& b) { return a + b.str(); }
    friend std::string operator+(const SharedText& a, const std::string& b) { return a.str() + b; }
    friend std::string operator+(const SharedText& a, const char* b) { return a.str() + b; }
    friend std::string operator+(const char* a, const SharedText& b) { return a + b.str(); }
    friend std::ostream& operator<<(std::ostream& out, const SharedText& t) {
        return out << t.str();
    }

    /// Distinct texts held now (for tests and benchmarks).
    static size_t held();

    struct Rep; ///< the text and its count (shared_text.cpp)

  private:
    Rep* rep_ = nullptr;
};

/// Orders SharedTexts (and strings) by their text, as `std::less<std::string>` orders the same
/// strings; transparent, so that a map keyed by SharedText finds by a `std::string` or a
/// `std::string_view` without interning the text looked for.
struct SharedTextLess {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a < b; }
};

/// A list of shared texts equals a list of strings with the same texts in the same order.
inline bool operator==(const std::vector<SharedText>& a, const std::vector<std::string>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

} // namespace rdmad

/// Formats as its text.
template <> struct fmt::formatter<rdmad::SharedText> : fmt::formatter<std::string_view> {
    template <typename Context> auto format(const rdmad::SharedText& t, Context& ctx) const {
        return fmt::formatter<std::string_view>::format(std::string_view(t.str()), ctx);
    }
};
