// SPDX-License-Identifier: MIT
#include "actuators/port_type.hpp"
#include "rdmad_api.hpp"

#include "inventory/attributes.hpp"
#include "util/unique_fd.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

namespace rdmad {

WriteResult write_mlx4_port_type(const std::string& pci_address, uint32_t port,
                                 const std::string& type) {
    if (!is_pci_address(pci_address) || port < 1 || port > 2 || !api::valid_port_type(type))
        return {EINVAL, "invalid port type request"};
    const std::string path = fmt::format("/sys/bus/pci/devices/{}/mlx4_port{}", pci_address, port);
    const std::string value = type + "\n"; // without the newline the kernel answers EINVAL
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd) {
        int e = errno;
        return {e, fmt::format("{}: {}", path, std::strerror(e))};
    }
    ssize_t n = ::write(fd.get(), value.data(), value.size());
    int e = n < 0 ? errno : (static_cast<size_t>(n) == value.size() ? 0 : EIO);
    fd.reset();
    if (e)
        return {e, fmt::format("{}: {}", path, std::strerror(e))};
    return {};
}

} // namespace rdmad
