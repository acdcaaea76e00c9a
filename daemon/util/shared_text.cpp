// SPDX-License-Identifier: MIT
#include "util/shared_text.hpp"

#include <functional>
#include <mutex>
#include <unordered_set>

namespace rdmad {

struct SharedText::Rep {
    std::string text;
    size_t refs = 1;
};

namespace {

using Rep = SharedText::Rep;

/// Hashes and compares Reps by their text, and a text with a Rep (a lookup before the Rep is
/// made).
struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    size_t operator()(const Rep* r) const { return (*this)(std::string_view(r->text)); }
};

struct TextEqual {
    using is_transparent = void;
    static std::string_view text(std::string_view s) { return s; }
    static std::string_view text(const Rep* r) { return r->text; }
    template <typename A, typename B> bool operator()(const A& a, const B& b) const {
        return text(a) == text(b);
    }
};

/// Every text held. One lock for the table and every count: a count reaching zero and a lookup
/// finding that Rep must not race.
struct Table {
    std::mutex lock;
    std::unordered_set<Rep*, TextHash, TextEqual> texts;
};

Table& table() {
    static Table* t = new Table; // never destroyed: SharedTexts in static objects outlive main
    return *t;
}

} // namespace

SharedText::SharedText(std::string_view text) {
    if (text.empty())
        return;
    Table& t = table();
    std::lock_guard<std::mutex> guard(t.lock);
    if (auto it = t.texts.find(text); it != t.texts.end()) {
        rep_ = *it;
        ++rep_->refs;
        return;
    }
    rep_ = new Rep{std::string(text)};
    t.texts.insert(rep_);
}

SharedText::SharedText(const SharedText& other) noexcept : rep_(other.rep_) {
    if (!rep_)
        return;
    std::lock_guard<std::mutex> guard(table().lock);
    ++rep_->refs;
}

SharedText& SharedText::operator=(const SharedText& other) noexcept {
    if (this != &other) {
        SharedText copy(other);
        *this = std::move(copy);
    }
    return *this;
}

SharedText& SharedText::operator=(SharedText&& other) noexcept {
    if (this != &other) {
        SharedText old(std::move(*this));
        rep_ = other.rep_;
        other.rep_ = nullptr;
    }
    return *this;
}

SharedText::~SharedText() {
    if (!rep_)
        return;
    Table& t = table();
    std::lock_guard<std::mutex> guard(t.lock);
    if (--rep_->refs == 0) {
        t.texts.erase(rep_);
        delete rep_;
    }
}

const std::string& SharedText::str() const {
    static const std::string empty;
    return rep_ ? rep_->text : empty;
}

size_t SharedText::held() {
    Table& t = table();
    std::lock_guard<std::mutex> guard(t.lock);
    return t.texts.size();
}

} // namespace rdmad
