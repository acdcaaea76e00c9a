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

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace rdmad::exports {

/// The whole rdmad.prom: every family with its HELP and TYPE (all gauges), series sorted by
/// device name, port number and netdev name, so equal inputs give equal bytes. Families:
///   rdmad_state{state}                      1 for the Manager state, 0 for the other two
///   rdmad_config_errors                     configuration files rdmad cannot use
///   rdmad_last_reconcile_timestamp_seconds  Unix time of the last pass without failures
///   rdmad_problems{code,severity}           Manager Problems of that code (only codes present)
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
inline constexpr size_t kFamilyCount = 31;

/// render_prometheus() piece by piece: `out` is called with pieces of about 64 KiB, in order,
/// rendered family by family, one object at a time, as they go: neither the whole text nor any
/// object's samples are kept (the transient memory is one piece and a pointer per object,
/// to sort them by name).
void write_prometheus(const HostState& inventory, const ManagerFacts& facts,
                      const std::function<void(std::string_view)>& out);

/// write_prometheus() a piece at a time, for a writer that goes back to its event loop
/// between pieces: the pieces of next(), joined, are the text write_prometheus() gives.
/// `inventory` is read as the pieces are made: it must not change until the last one (the
/// stream holds a pointer to each object, sorted by name). Movable, not copyable.
class PrometheusStream {
  public:
    PrometheusStream(const HostState& inventory, const ManagerFacts& facts);
    ~PrometheusStream();
    PrometheusStream(PrometheusStream&&) noexcept = default;
    PrometheusStream& operator=(PrometheusStream&&) noexcept = default;

    /// The next piece: whole families and objects, about 64 KiB (more when one object's
    /// samples do not fit); "" once the text has ended. Valid until the next call.
    std::string_view next();
    /// The last piece has been given (next() gives "" from now on).
    bool done() const;

  private:
    struct Walk;
    std::unique_ptr<Walk> walk_;
};

/// rdmad.prom, rendered from the Inventory at each write(), with nothing kept per object:
/// changed() decides from a change set's structure (objects added, removed) and property
/// names whether the text may have changed, in the time of the change set; update() counts it
/// in generation(), so that the export writer skips a write when nothing it shows changed,
/// without a copy of the text (1.3 MB at 1,024 devices) to compare with. A property whose new
/// value happens to show as the old one did (a GID table change that leaves the routable flag)
/// still counts: the writer then writes the same bytes again.
class PrometheusRenderer {
  public:
    /// Notes whether `changes` names an object or a property rdmad.prom shows.
    void changed(const ChangeSet& changes);
    /// The text counts as changed at the next update() (start-up, a lost change set).
    void invalidate() { text_changed_ = true; }
    /// Takes `facts` (the Manager's samples) and counts a new generation() when they differ
    /// from the last ones or changed() saw a change since. Renders nothing.
    void update(const Inventory& inventory, const ManagerFacts& facts);
    /// The whole rdmad.prom (write_prometheus()) of `inventory` and the facts of the last
    /// update(), in pieces of about 64 KiB: the export writer streams it to the file.
    void write(const Inventory& inventory, const std::function<void(std::string_view)>& out) const;
    /// write() a piece at a time (PrometheusStream): `inventory` must not change until its
    /// last piece.
    PrometheusStream stream(const Inventory& inventory) const;
    /// update(), then the whole rdmad.prom as one text (what write() gives, joined).
    std::string render(const Inventory& inventory, const ManagerFacts& facts);
    /// Counts the update()s after which the text may differ from the one before (the first
    /// counts): a writer that keeps the generation it wrote needs no copy of the text.
    uint64_t generation() const { return generation_; }

  private:
    ManagerFacts facts_;
    uint64_t generation_ = 0;
    bool text_changed_ = true; ///< since the last update()
};

/// A label value in the exposition format: backslash, double quote and line feed escaped.
std::string escape_label_value(const std::string& value);

} // namespace rdmad::exports
