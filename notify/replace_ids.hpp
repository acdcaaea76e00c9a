// SPDX-License-Identifier: MIT
//
// The ids the notification server gave (Notify's return value), by what a notification is about
// (Notification::key): the next notification about the same port or problem passes the id as
// replaces_id, so the server replaces the old one instead of stacking a new one (Desktop
// Notifications Specification 1.2, "Notify").
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace rdmad::notify {

class ReplaceIds {
  public:
    /// The replaces_id for a notification with this key: 0 (a new notification) for key "" or
    /// one not seen.
    uint32_t replaces(const std::string& key) const {
        auto it = ids_.find(key);
        return key.empty() || it == ids_.end() ? 0 : it->second;
    }
    /// Notify returned `id` for a notification with this key.
    void posted(const std::string& key, uint32_t id) {
        if (!key.empty())
            ids_[key] = id;
    }
    /// The server closed notification `id` (NotificationClosed): it cannot be replaced any more.
    void closed(uint32_t id) {
        std::erase_if(ids_, [&](const auto& kv) { return kv.second == id; });
    }
    /// A new server (its name's owner changed): the old ids mean nothing to it.
    void clear() { ids_.clear(); }

  private:
    std::map<std::string, uint32_t> ids_;
};

} // namespace rdmad::notify
