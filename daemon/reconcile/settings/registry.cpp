// SPDX-License-Identifier: MIT
//
// Every setting of the desired state, in resolution order. A new setting is a file in this
// folder and one line here.
#include "reconcile/settings/setting.hpp"

#include <array>
#include <stdexcept>

namespace rdmad {

const Setting& profile_setting();
const Setting& port_type_setting();
const Setting& pfc_no_drop_setting();
const Setting& dscp_setting();
const Setting& rdma_cm_setting();
const Setting& kernel_modules_setting();
const Setting& rdma_netns_setting();
const Setting& sriov_numvfs_setting();
const Setting& vf_guids_setting();

std::span<const Setting* const> all_settings() {
    // A profile first: a rule's own keys override the values it gives.
    static const std::array<const Setting*, 9> settings = {
        &profile_setting(),    &port_type_setting(),      &pfc_no_drop_setting(),
        &dscp_setting(),       &rdma_cm_setting(),        &kernel_modules_setting(),
        &rdma_netns_setting(), &sriov_numvfs_setting(), &vf_guids_setting(),
    };
    return settings;
}

const Setting* setting_for_key(std::string_view key) {
    for (const Setting* s : all_settings())
        for (const auto k : s->keys())
            if (k == key)
                return s;
    return nullptr;
}

const Setting& setting_for(const Action& action) {
    for (const Setting* s : all_settings())
        if (s->owns(action))
            return *s;
    throw std::logic_error("no setting owns this action");
}

} // namespace rdmad
