// SPDX-License-Identifier: MIT
//
// Indexes that point at one kept copy of a string key instead of holding copies of it. The
// key of a std::map or std::set entry stays at its address for the entry's life, so an index
// of syspaths can hold pointers to the keys of the map that owns the objects: at 1,024 RDMA
// devices each copy of every syspath (about 70 bytes, on the heap) cost about 100 KB.
#pragma once

#include <map>
#include <set>
#include <string>

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

/// Keys of another container, in the order of their strings. An entry must leave the set
/// before the entry it points at is erased.
using KeyRefSet = std::set<KeyRef, KeyRefLess>;

/// Adds the strings `refs` points at to `into`.
inline void insert_strings(std::set<std::string>& into, const KeyRefSet& refs) {
    for (KeyRef r : refs)
        into.insert(*r);
}

/// String keys (a name, an address) -> keys of another container, one node per (key, ref)
/// pair. A std::map<std::string, KeyRefSet> costs a map node and a set node for each pair,
/// where most keys have one ref (one RDMA device per name, PCI function or netdev): 80 bytes
/// a pair more. A ref must be removed before the entry it points at is erased.
class KeyRefIndex {
  public:
    /// Index `ref` under `key` (once: adding it again changes nothing).
    void add(const std::string& key, KeyRef ref) {
        auto [first, last] = map_.equal_range(key);
        for (auto it = first; it != last; ++it)
            if (it->second == ref)
                return;
        map_.emplace_hint(last, key, ref);
    }
    /// Drop `ref` from under `key`, if it is there.
    void remove(const std::string& key, KeyRef ref) {
        auto [first, last] = map_.equal_range(key);
        for (auto it = first; it != last; ++it)
            if (it->second == ref) {
                map_.erase(it);
                return;
            }
    }
    /// Adds the strings the refs under `key` point at to `into`.
    void insert_strings(const std::string& key, std::set<std::string>& into) const {
        auto [first, last] = map_.equal_range(key);
        for (auto it = first; it != last; ++it)
            into.insert(*it->second);
    }
    void clear() { map_.clear(); }

  private:
    std::multimap<std::string, KeyRef> map_;
};

} // namespace rdmad
