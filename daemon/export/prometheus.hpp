// SPDX-License-Identifier: MIT
//
// rdmad's metrics for Prometheus, in the text exposition format node-exporter's textfile
// collector reads (https://prometheus.io/docs/instrumenting/exposition_formats/; naming:
// https://prometheus.io/docs/practices/naming/). Pure: the text of rdmad.prom from plain values.
//
// They complement node-exporter's own node_infiniband_* (port state, physical state, rate,
// counters, board and firmware info) and node_network_* and never repeat them; RDMA device and
// port carry the labels node_infiniband_* has (`device`, `port`), so `on(device, port)` joins.
// Netdev series carry `device` = the netdev name, as node_network_* do. No timestamps, no GIDs,
// addresses or free text as label values: the series are bounded by the devices, ports and
// netdevs of the host.
#pragma once

#include "export/facts.hpp"
#include "inventory/inventory.hpp"
#include "inventory/model.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad::exports {

/// The whole rdmad.prom: every family with its HELP and TYPE (all gauges), series sorted by
/// device name, port number and netdev name, so equal inputs give equal bytes. Families:
///   rdmad_state{state}                      1 for the Manager state, 0 for the other two
///   rdmad_config_errors                     configuration files rdmad cannot use
///   rdmad_last_reconcile_timestamp_seconds  Unix time of the last pass without failures
///   rdmad_device_info{device,kernel_driver,provider,node_type}  1
///   rdmad_device_provider_installed{device} 0/1
///   rdmad_device_problems{device,code,severity}  problems of that code (only codes present)
///   rdmad_device_sriov_numvfs{device}       SR-IOV PFs: VFs enabled (sriov_numvfs)
///   rdmad_device_sriov_totalvfs{device}     SR-IOV PFs: the most VFs (sriov_totalvfs)
///   rdmad_device_desired_sriov_numvfs{device}  when a rule asks a VF count of the PF
///   rdmad_port_info{device,port,link_layer,transport,netdev}  1
///   rdmad_port_in_sync{device,port}         0/1: actual state equals the desired state
///   rdmad_port_type{device,port,type}       mlx4 ports, and ConnectX-4+ ports whose firmware
///                                           was read: 1 for the mode set (ib, eth, auto)
///   rdmad_port_desired_type{device,port,type}  when a rule or call asks one
///   rdmad_port_next_boot_type{device,port,type}  ConnectX-4+ where a port type is asked: 1 for
///                                           the firmware's next-boot mode
///   rdmad_port_type_pending{device,port}    0/1 likewise: the type asked waits for a firmware
///                                           reset or reboot
///   rdmad_port_pfc_status{device,port,status}  Ethernet ports: ok, not_supported, failed,
///                                           unknown (whether PFC could be read)
///   rdmad_port_pfc_no_drop{device,port,priority}  0/1 per priority 0-7, when PFC was read
///   rdmad_port_desired_pfc_no_drop{device,port,priority}  0/1, when a rule or call asks
///   rdmad_port_trust{device,port,trust}     when DCB was read: 1 for dscp or pcp
///   rdmad_port_desired_trust{device,port,trust}  when asked
///   rdmad_port_dscp_priority{device,port,dscp}  the priority of each DSCP entry, when read
///   rdmad_port_desired_dscp_priority{device,port,dscp}  the priority asked, when asked
///   rdmad_port_rdma_cm_roce_mode{device,port,mode}  RoCE ports whose configfs group reads:
///                                           1 for "RoCE v2" or "IB/RoCE v1"
///   rdmad_port_desired_rdma_cm_roce_mode{device,port,mode}  when asked
///   rdmad_port_rdma_cm_tos{device,port}     the ToS byte, when read
///   rdmad_port_desired_rdma_cm_tos{device,port}  when asked
///   rdmad_port_roce_version{device,port,version}  RoCE ports: 0/1 for v1 and v2
///   rdmad_port_roce_v2_routable_gid{device,port}  RoCE ports: 0/1 (facts.hpp)
///   rdmad_port_recommended_roce_gid_index{device,port}  RoCE ports that have one (facts.hpp)
///   rdmad_netdev_rdma_capable{device,state} every netdev: 1 for its state (yes, no,
///                                           module-not-loaded, unknown), 0 for the others
std::string render_prometheus(const HostState& inventory, const ManagerFacts& facts);

/// The metric families of rdmad.prom (listed at render_prometheus()).
inline constexpr size_t kFamilyCount = 30;

/// One object's samples (the Manager's, one RDMA device's with its ports, or one netdev's),
/// family by family: family f is text[start[f], start[f + 1]). No HELP or TYPE lines, and
/// each sample without its family's name (the same for every sample of the family; put back
/// when the file is assembled): at 1,024 devices the names were a third of the kept text.
/// Nor, but in its first sample, the object's own first label (`device="mlx5_0"`): a sample
/// that starts with it starts with a mark instead (prometheus.cpp kObjectLabel).
struct PrometheusFragments {
    std::string text;
    std::array<uint32_t, kFamilyCount + 1> start{};
};

/// rdmad.prom kept rendered object by object, so that a change costs the objects it names,
/// not the host: changed() marks what a change set names, update() renders those again (and
/// nothing else), and write() or render() joins every object's samples, family by family, in
/// the order render_prometheus() gives. render() equals render_prometheus() on the same
/// inventory as long as every change of the inventory since the last update() was passed to
/// changed().
class PrometheusRenderer {
  public:
    /// The devices (by Inventory id) and netdevs (by ifindex) that `changes` names, added,
    /// changed or removed, are rendered again at the next update().
    void changed(const ChangeSet& changes);
    /// Render every object again at the next update() (start-up, a lost change set).
    void invalidate() { all_stale_ = true; }
    /// Bring the kept samples up to `inventory` and `facts`: the devices changed() named are
    /// rendered again, the order and generation() follow. Then write() gives the file.
    void update(const Inventory& inventory, const ManagerFacts& facts);
    /// The whole rdmad.prom as of the last update() (`inventory` the one given there), in
    /// pieces of about 64 KiB, in order: the export writer streams it to the file, so the text
    /// (1.3 MB at 1,024 devices) is never whole in memory. The netdevs' samples are rendered
    /// here from `inventory`, not kept.
    void write(const Inventory& inventory, const std::function<void(std::string_view)>& out) const;
    /// update(), then the whole rdmad.prom as one text (what write() gives, joined).
    std::string render(const Inventory& inventory, const ManagerFacts& facts);
    /// Counts the texts update() made that differ from the one before (the first counts): a
    /// writer that keeps the generation it wrote needs no copy of the text to compare.
    uint64_t generation() const { return generation_; }
    /// Devices rendered into kept samples since construction (for tests and benchmarks).
    uint64_t objects_rendered() const { return objects_rendered_; }

  private:
    // An object's sort key (device name and syspath, netdev name) is not kept: the order is
    // sorted again from the Inventory when an object came, went or was renamed (a change set
    // naming its Name): a copy of every syspath and name was 0.17 MB at 1,024 devices.
    void render_device_entry(const std::string& id, const Inventory& inventory);
    /// order_ and link_order_ from the Inventory's names; true when either changed.
    bool sort_order(const Inventory& inventory);
    /// The netdevs' samples in link_order_, rendered from `inventory`.
    std::vector<PrometheusFragments> render_links(const Inventory& inventory) const;
    /// order_, then `links`: every object of the file in its order.
    std::vector<const PrometheusFragments*>
    objects(const std::vector<PrometheusFragments>& links) const;

    bool all_stale_ = true;
    bool order_stale_ = true;
    std::set<std::string> stale_devices_;                ///< Inventory ids
    std::map<std::string, PrometheusFragments> devices_; ///< by Inventory id
    std::vector<const PrometheusFragments*> order_;      ///< devices by name
    /// Netdevs (ifindexes) by name. A netdev's samples (one family, four lines: its name and
    /// RdmaCapable) are rendered at each write() instead of kept: kept, they were 0.35 MB at
    /// 1,024 netdevs. What changes them is known from the change set's property names.
    std::vector<int32_t> link_order_;
    /// Put `next` into `slot`, noting whether that changes the text.
    void keep(PrometheusFragments& slot, PrometheusFragments&& next);

    PrometheusFragments manager_;
    uint64_t objects_rendered_ = 0;
    uint64_t generation_ = 0;
    bool text_changed_ = true; ///< since the last update(): a fragment, a netdev, or the order
};

/// A label value in the exposition format: backslash, double quote and line feed escaped.
std::string escape_label_value(const std::string& value);

} // namespace rdmad::exports
