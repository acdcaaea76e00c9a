// SPDX-License-Identifier: MIT
#include "actuators/rdma_cm.hpp"

#include "util/sysfs.hpp"
#include "util/text.hpp"
#include "util/unique_fd.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rdmad {
namespace {

RdmaCmWrite failure(RdmaCmWrite w, int error, std::string message) {
    w.error = error;
    w.message = std::move(message);
    return w;
}

/// Why writing `value` to `path` failed, for the admin.
std::string write_error(const std::string& path, std::string_view value, int e,
                        const std::string& device, uint32_t port, bool mode_file) {
    std::string why;
    if (e == EINVAL && mode_file)
        why = fmt::format(": port {} of {} does not support that RoCE mode (an InfiniBand or "
                          "iWARP port takes only \"{}\")",
                          port, device, kRoceModeV1);
    else if (e == ENODEV)
        why = fmt::format(": the kernel has no device {} now", device);
    else if (e == ENOENT && !mode_file)
        why = ": this kernel has no RDMA-CM default ToS (Linux 4.11 added it)";
    return fmt::format("cannot write \"{}\" to {}: {}{}", value, path, std::strerror(e), why);
}

} // namespace

int make_configfs_group(const std::string& path) {
    return ::mkdir(path.c_str(), 0755) == 0 ? 0 : errno;
}

int write_configfs_attribute(const std::string& path, std::string_view text) {
    // No O_CREAT: configfs attributes exist or the kernel does not have them. O_TRUNC as
    // `echo X > file` opens it (configfs takes it and stores the whole write, fs/configfs/file.c);
    // a plain file standing in for it then holds exactly the value written.
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd)
        return errno;
    ssize_t n;
    do
        n = ::write(fd.get(), text.data(), text.size());
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno;
    if (static_cast<size_t>(n) != text.size())
        return EIO;
    return fd.close_checked() == 0 ? 0 : errno;
}

ConfigfsCalls real_configfs_calls() {
    return {make_configfs_group, write_configfs_attribute};
}

RdmaCmWrite set_rdma_cm(const std::string& root, const std::string& device, uint32_t port,
                        const std::optional<std::string>& roce_mode, std::optional<uint8_t> tos,
                        const ConfigfsCalls& calls) {
    RdmaCmWrite w;
    w.before.port = w.after.port = port;
    if (roce_mode && !parse_roce_mode(*roce_mode))
        return failure(std::move(w), EINVAL,
                       fmt::format("\"{}\" is not a RoCE mode: \"{}\" or \"{}\"",
                                   shown_token(*roce_mode), kRoceModeV1, kRoceModeV2));
    if (!is_rdma_device_name(device) || port == 0)
        return failure(std::move(w), EINVAL,
                       fmt::format("no RDMA device port \"{}\" {}", shown_token(device), port));

    const RdmaCmActual probe = probe_rdma_cm(root);
    if (probe.status != RdmaCmStatus::ok)
        return failure(std::move(w), probe.error ? probe.error : ENOENT, probe.message);

    const std::string group = rdma_cm_group_path(root, device);
    if (!sysfs::exists(group)) {
        const int e = calls.make_group(group);
        if (e == ENODEV)
            return failure(
                std::move(w), e,
                fmt::format("cannot create {}: the kernel has no RDMA device {}", group, device));
        if (e != 0 && e != EEXIST)
            return failure(std::move(w), e,
                           fmt::format("cannot create {}: {}", group, std::strerror(e)));
        w.created_group = e == 0;
    }

    w.before = read_rdma_cm_port(root, device, port);
    if (w.before.status != RdmaCmStatus::ok)
        return failure(std::move(w), w.before.error ? w.before.error : EIO, w.before.message);

    const std::string dir = fmt::format("{}/ports/{}", group, port);
    int first_error = 0;
    std::string messages;
    auto write_file = [&](const char* file, std::string_view value, bool mode_file) {
        const std::string path = fmt::format("{}/{}", dir, file);
        w.written.push_back(path);
        const int e = calls.write(path, fmt::format("{}\n", value));
        if (e == 0)
            return;
        if (first_error == 0)
            first_error = e;
        if (!messages.empty())
            messages += "; ";
        messages += write_error(path, value, e, device, port, mode_file);
    };
    if (roce_mode && w.before.roce_mode != *roce_mode)
        write_file("default_roce_mode", *roce_mode, true);
    if (tos && w.before.tos != tos)
        write_file("default_roce_tos", std::to_string(*tos), false);

    w.after = read_rdma_cm_port(root, device, port);
    if (first_error != 0)
        return failure(std::move(w), first_error, std::move(messages));
    if (w.after.status != RdmaCmStatus::ok)
        return failure(std::move(w), w.after.error ? w.after.error : EIO,
                       fmt::format("read-back: {}", w.after.message));
    std::string differs;
    if (roce_mode && w.after.roce_mode != *roce_mode)
        differs = fmt::format("{}/default_roce_mode reads \"{}\" after \"{}\" was written", dir,
                              w.after.roce_mode, *roce_mode);
    if (tos && w.after.tos != tos)
        differs += fmt::format("{}{}/default_roce_tos reads {} after {} was written",
                               differs.empty() ? "" : "; ", dir,
                               w.after.tos ? std::to_string(*w.after.tos) : "nothing", *tos);
    if (!differs.empty())
        return failure(std::move(w), EIO, std::move(differs));
    return w;
}

} // namespace rdmad
