// SPDX-License-Identifier: MIT
//
// Indexes that point at one kept copy of a string key instead of holding copies of it. The
// key of a std::map or std::set entry stays at its address for the entry's life, so an index
// of syspaths can hold pointers to the keys of the map that owns the objects: at 1,024 RDMA
// devices each copy of every syspath (about 70 bytes, on the heap) cost about 100 KB.
#pragma once

#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <utility>

namespace rdmad {

/// The key of an entry of a node-based container (std::map, std::set), which stays where it
/// is until that entry is erased.
using KeyRef = const std::string*;

/// Orders KeyRefs by the strings they point at (the order a std::set<std::string> of the same
/// strings has); finds by a std::string as well.
struct KeyRefLess {
    using is_transparent = void;
    bool operator()(KeyRef a, KeyRef b) const { return *a < *b; }
    bool operator()(KeyRef a, const std::string& b) const { return *a < b; }
    bool operator()(const std::string& a, KeyRef b) const { return a < *b; }
};

/// String keys -> values, one node per (key, value) pair, each key's values in `Less` order.
/// A std::map<std::string, std::set<V>> costs a map node and a set node per pair, where most
/// keys have one value (one device per name, PCI function or netdev): about 80 bytes a pair
/// more. KeyRef values (with KeyRefLess) must leave before the entries they point at.
template <class V, class Less = std::less<V>>
class SortedIndex {
  public:
    /// Index `value` under `key` (once: adding it again changes nothing).
    void add(const std::string& key, V value) { set_.emplace(key, std::move(value)); }
    /// Drop `value` from under `key`, if it is there.
    void remove(const std::string& key, const V& value) { set_.erase(Entry{key, value}); }
    /// The first value under `key` in `Less` order, null when none.
    const V* first(const std::string& key) const {
        auto it = set_.lower_bound(Key{key});
        return it != set_.end() && it->first == key ? &it->second : nullptr;
    }
    /// How many values `key` has.
    size_t count(const std::string& key) const {
        auto [first, last] = set_.equal_range(Key{key});
        return static_cast<size_t>(std::distance(first, last));
    }
    /// Calls `f(value)` for each value under `key`, in `Less` order.
    template <class F>
    void for_each(const std::string& key, F&& f) const {
        auto [first, last] = set_.equal_range(Key{key});
        for (auto it = first; it != last; ++it)
            f(it->second);
    }

    /// Calls `f(value)` for each value of every key.
    template <class F>
    void for_all(F&& f) const {
        for (const auto& [_, value] : set_)
            f(value);
    }
    /// Drop `value` from under every key: a walk of the whole index.
    void remove_value(const V& value) {
        std::erase_if(set_, [&](const Entry& e) {
            return !Less{}(e.second, value) && !Less{}(value, e.second);
        });
    }
    void clear() { set_.clear(); }

  private:
    using Entry = std::pair<std::string, V>;
    struct Key {
        const std::string& key;
    };
    struct Order {
        using is_transparent = void;
        bool operator()(const Entry& a, const Entry& b) const {
            const int c = a.first.compare(b.first);
            return c < 0 || (c == 0 && Less{}(a.second, b.second));
        }
        bool operator()(const Entry& a, Key b) const { return a.first < b.key; }
        bool operator()(Key a, const Entry& b) const { return a.key < b.first; }
    };
    std::set<Entry, Order> set_;
};

} // namespace rdmad
