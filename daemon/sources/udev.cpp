// SPDX-License-Identifier: MIT
#include "sources/udev.hpp"

#include <stdexcept>

namespace rdmad::udev {

Udev make_context() {
    Udev ctx(udev_new());
    if (!ctx)
        throw std::runtime_error("udev_new failed");
    return ctx;
}

} // namespace rdmad::udev
