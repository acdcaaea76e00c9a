// SPDX-License-Identifier: MIT
#include "actuators/mstconfig.hpp"

#include "sources/mstconfig.hpp"
#include "util/run_tool.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace rdmad {

std::vector<std::string> mstconfig_set_argv(const std::string& tool, const std::string& pci,
                                            uint32_t card_port, const std::string& type) {
    return {tool, "-y",  "-d",
            pci,  "set", fmt::format("LINK_TYPE_P{}={}", card_port, link_type_number(type))};
}

WriteResult set_firmware_port_type(const std::string& tool, const std::string& pci,
                                   uint32_t card_port, const std::string& type) {
    const auto argv = mstconfig_set_argv(tool, pci, card_port, type);
    return firmware_write_result(run_tool(argv, kMstconfigTimeout), argv);
}

WriteResult firmware_write_result(const ToolRun& run, const std::vector<std::string>& argv) {
    const std::string& tool = argv.at(0);
    const std::string command = fmt::format("{}", fmt::join(argv, " ")); // as the admin types it
    WriteResult w;
    if (run.spawn_error != 0) {
        w.error = run.spawn_error;
        w.message = fmt::format("{}: {}", tool, std::strerror(run.spawn_error));
    } else if (run.timed_out) {
        w.error = ETIMEDOUT;
        w.message = fmt::format("{} did not finish within {} s (killed)", command,
                                kMstconfigTimeout.count() / 1000);
    } else if (run.exit_status != 0) {
        w.error = EIO;
        std::string err = run.err.empty() ? run.out : run.err;
        while (!err.empty() && (err.back() == '\n' || err.back() == ' '))
            err.pop_back();
        if (err.size() > 300)
            err = err.substr(0, 300) + "...";
        // exit_status is -1 for a tool a signal ended (ToolRun): it has no exit status.
        const std::string ended = run.exit_status < 0
                                      ? std::string("was killed by a signal")
                                      : fmt::format("exited with {}", run.exit_status);
        w.message = fmt::format("{} {}{}{}", command, ended, err.empty() ? "" : ": ", err);
    }
    return w;
}

} // namespace rdmad
