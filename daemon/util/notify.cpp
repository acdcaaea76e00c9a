// SPDX-License-Identifier: MIT
#include "util/notify.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace rdmad {

Notifier::Notifier() {
    const char* e = std::getenv("NOTIFY_SOCKET");
    if (!e || !*e)
        return;
    std::string a = e;
    // sd_notify(3): an absolute path, or '@' for Linux's abstract namespace. Other forms
    // (vsock:) are not for a daemon on the host's own manager.
    if (a[0] == '@')
        a[0] = '\0';
    else if (a[0] != '/')
        return;
    if (a.size() > sizeof(sockaddr_un::sun_path))
        return;
    fd_.reset(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (fd_)
        address_ = std::move(a);
}

bool Notifier::send(std::string_view state) {
    if (!fd_)
        return false;
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::memcpy(sa.sun_path, address_.data(), address_.size());
    const auto len = socklen_t(offsetof(sockaddr_un, sun_path) + address_.size() +
                               (address_[0] == '\0' ? 0 : 1));
    for (;;) {
        const ssize_t n =
            ::sendto(fd_.get(), state.data(), state.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                     reinterpret_cast<const sockaddr*>(&sa), len);
        if (n >= 0)
            return true;
        if (errno != EINTR)
            break;
    }
    ++dropped_;
    return false;
}

} // namespace rdmad
