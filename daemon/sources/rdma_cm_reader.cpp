// SPDX-License-Identifier: MIT
#include "sources/rdma_cm_reader.hpp"

#include "util/sysfs.hpp"
#include "util/text.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/vfs.h>

namespace rdmad {
namespace {

/// fs/configfs/mount.c; not in <linux/magic.h>.
constexpr unsigned long kConfigfsMagic = 0x62656570;

/// IB_DEVICE_NAME_MAX (include/rdma/ib_verbs.h) is 64 bytes with the NUL.
constexpr size_t kDeviceNameMax = 63;

/// The text without the one trailing newline the kernel prints, if there is one.
std::string_view without_newline(std::string_view text) {
    if (!text.empty() && text.back() == '\n')
        text.remove_suffix(1);
    return text;
}

RdmaCmActual status_only(uint32_t port, RdmaCmStatus status, int error, std::string message) {
    RdmaCmActual a;
    a.port = port;
    a.status = status;
    a.error = error;
    a.message = std::move(message);
    return a;
}

/// The port, `<root>` known to hold rdma_cm.
RdmaCmActual read_port(const std::string& root, const std::string& device, uint32_t port) {
    if (!is_rdma_device_name(device) || port == 0)
        return status_only(port, RdmaCmStatus::failed, EINVAL,
                           fmt::format("no RDMA device port \"{}\" {}", shown_token(device), port));
    const std::string group = rdma_cm_group_path(root, device);
    if (!sysfs::exists(group))
        return status_only(port, RdmaCmStatus::no_group, 0,
                           fmt::format("{} does not exist: the RDMA-CM defaults of {} cannot be "
                                       "read without creating it",
                                       group, device));
    const std::string dir = fmt::format("{}/ports/{}", group, port);
    const sysfs::ReadResult mode = sysfs::read_attribute(dir, "default_roce_mode");
    if (!mode.ok()) {
        const int e = mode.error;
        std::string why;
        if (e == ENOENT)
            why = sysfs::exists(dir) ? "" : fmt::format(": {} has no port {}", device, port);
        else if (e == ENODEV)
            why = fmt::format(": the kernel has no device {} now; the group is left from one "
                              "that went away",
                              device);
        return status_only(
            port, RdmaCmStatus::failed, e,
            fmt::format("cannot read {}/default_roce_mode: {}{}", dir, std::strerror(e), why));
    }
    auto parsed_mode = parse_roce_mode(mode.text);
    if (!parsed_mode)
        return status_only(port, RdmaCmStatus::failed, EPROTO,
                           fmt::format("{}/default_roce_mode reads \"{}\", neither \"{}\" nor "
                                       "\"{}\"",
                                       dir, shown_token(without_newline(mode.text)), kRoceModeV1,
                                       kRoceModeV2));
    RdmaCmActual a;
    a.port = port;
    a.status = RdmaCmStatus::ok;
    a.roce_mode = std::move(*parsed_mode);
    const sysfs::ReadResult tos = sysfs::read_attribute(dir, "default_roce_tos");
    if (tos.ok()) {
        a.tos = parse_roce_tos(tos.text);
        if (!a.tos) {
            a.error = EPROTO;
            a.message = fmt::format("{}/default_roce_tos reads \"{}\", not a number 0-255", dir,
                                    shown_token(without_newline(tos.text)));
        }
    } else if (tos.error == ENOENT) {
        // The mode file is there: a kernel before 4.11, which has no ToS default.
        a.message = fmt::format("{}/default_roce_tos does not exist: this kernel has no RDMA-CM "
                                "default ToS (Linux 4.11 added it)",
                                dir);
    } else {
        a.error = tos.error;
        a.message =
            fmt::format("cannot read {}/default_roce_tos: {}", dir, std::strerror(tos.error));
    }
    return a;
}

} // namespace

std::string_view to_string(RdmaCmStatus status) {
    switch (status) {
    case RdmaCmStatus::ok:
        return "ok";
    case RdmaCmStatus::no_group:
        return "no_group";
    case RdmaCmStatus::no_configfs:
        return "no_configfs";
    case RdmaCmStatus::unsupported:
        return "unsupported";
    case RdmaCmStatus::failed:
        return "failed";
    }
    return "failed";
}

std::optional<std::string> parse_roce_mode(std::string_view text) {
    text = without_newline(text);
    if (text == kRoceModeV1 || text == kRoceModeV2)
        return std::string(text);
    return std::nullopt;
}

std::optional<uint8_t> parse_roce_tos(std::string_view text) {
    text = without_newline(text);
    if (text.empty() || text.size() > 3 || (text.size() > 1 && text.front() == '0'))
        return std::nullopt;
    unsigned value = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            return std::nullopt;
        value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value > 255)
        return std::nullopt;
    return static_cast<uint8_t>(value);
}

bool is_rdma_device_name(std::string_view device) {
    return !device.empty() && device.size() <= kDeviceNameMax && device != "." && device != ".." &&
           device.find('/') == std::string_view::npos &&
           device.find('\0') == std::string_view::npos;
}

std::string rdma_cm_group_path(const std::string& root, const std::string& device) {
    return fmt::format("{}/rdma_cm/{}", root, device);
}

RdmaCmActual probe_rdma_cm(const std::string& root) {
    if (sysfs::exists(root + "/rdma_cm"))
        return status_only(0, RdmaCmStatus::ok, 0, {});
    struct stat st;
    if (::stat(root.c_str(), &st) != 0) {
        const int e = errno;
        return status_only(0, RdmaCmStatus::no_configfs, e,
                           fmt::format("{}: {}: this kernel has no configfs, or its module is not "
                                       "loaded (modprobe configfs)",
                                       root, std::strerror(e)));
    }
    // Mounted, configfs has at least the subsystems registered with it; not mounted, <root>
    // is the empty directory sysfs made for it. Anything in it means something is mounted.
    bool mounted = !sysfs::list_dir(root, "").empty();
    if (!mounted) {
        struct statfs fs;
        mounted = ::statfs(root.c_str(), &fs) == 0 &&
                  static_cast<unsigned long>(fs.f_type) == kConfigfsMagic;
    }
    if (!mounted)
        return status_only(0, RdmaCmStatus::no_configfs, ENOENT,
                           fmt::format("configfs is not mounted on {}: mount it with \"mount -t "
                                       "configfs none {}\" (systemd: sys-kernel-config.mount)",
                                       root, root));
    return status_only(0, RdmaCmStatus::unsupported, ENOENT,
                       fmt::format("{}/rdma_cm does not exist: the rdma_cm module is not loaded "
                                   "(modprobe rdma_cm), or the kernel is built without "
                                   "CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS",
                                   root));
}

RdmaCmActual read_rdma_cm_port(const std::string& root, const std::string& device, uint32_t port) {
    RdmaCmActual probe = probe_rdma_cm(root);
    if (probe.status != RdmaCmStatus::ok) {
        probe.port = port;
        return probe;
    }
    return read_port(root, device, port);
}

std::vector<RdmaCmActual> read_rdma_cm(const std::string& root, const std::string& device,
                                       const std::vector<uint32_t>& ports) {
    std::vector<RdmaCmActual> out;
    out.reserve(ports.size());
    const RdmaCmActual probe = probe_rdma_cm(root);
    for (uint32_t port : ports) {
        if (probe.status != RdmaCmStatus::ok) {
            out.push_back(probe);
            out.back().port = port;
        } else {
            out.push_back(read_port(root, device, port));
        }
    }
    return out;
}

} // namespace rdmad
