// SPDX-License-Identifier: MIT
#include "sources/host_reader.hpp"

#include "util/sysfs.hpp"

#include <cerrno>
#include <sys/utsname.h>

namespace rdmad {
namespace {

bool lists_module(const std::string& builtin, const std::string& module) {
    // One path per line, e.g. "kernel/drivers/infiniband/core/ib_uverbs.ko".
    const std::string file = "/" + module + ".ko";
    size_t pos = 0;
    while ((pos = builtin.find(file, pos)) != std::string::npos) {
        const size_t end = pos + file.size();
        if (end == builtin.size() || builtin[end] == '\n')
            return true;
        pos = end;
    }
    return false;
}

} // namespace

HostFacts read_host(const HostPaths& paths) {
    HostFacts host;
    utsname u{};
    std::string release;
    if (uname(&u) == 0) {
        host.hostname = u.nodename;
        release = u.release;
    }
    const std::string builtin_path =
        (paths.module_dir.empty() ? paths.modules + "/" + release : paths.module_dir) +
        "/modules.builtin";
    // modules.builtin lists some hundred modules (tens of KiB): read up to 4 MiB.
    std::optional<std::string> builtin;
    int builtin_error = 0;
    if (!release.empty() || !paths.module_dir.empty()) {
        auto r = sysfs::read_attribute(builtin_path, "", 4u << 20);
        if (r.ok())
            builtin = std::move(r.text);
        builtin_error = r.error;
    }
    const bool sys_readable = sysfs::exists(paths.sys + "/class");
    struct Mark {
        const char* module;
        std::vector<std::string> files;
    };
    const Mark marks[] = {
        // A class exists while the module that registers it is loaded: a recorded host (or a
        // kernel) without abi_version but with uverbs devices has ib_uverbs.
        {"ib_uverbs",
         {paths.sys + "/class/infiniband_verbs/abi_version", paths.sys + "/class/infiniband_verbs"}},
        {"rdma_ucm", {paths.sys + "/class/misc/rdma_cm", paths.dev + "/infiniband/rdma_cm"}},
        {"ib_umad",
         {paths.sys + "/class/infiniband_mad/abi_version", paths.sys + "/class/infiniband_mad"}},
        {"ib_ipoib", {}},
    };
    for (const auto& m : marks) {
        ModuleState s;
        s.name = m.module;
        auto files = m.files;
        files.push_back(paths.sys + "/module/" + m.module);
        bool present = false;
        for (const auto& f : files) {
            const bool e = sysfs::exists(f);
            present = present || e;
            s.evidence.push_back(f + (e ? " = present" : " = absent"));
        }
        const bool in_builtin = builtin && lists_module(*builtin, m.module);
        s.evidence.push_back(builtin_path +
                             (builtin           ? (in_builtin ? " = lists " : " = does not list ")
                              : builtin_error == ENOENT ? " = absent, looked for "
                                                        : " = unreadable, looked for ") +
                             m.module + ".ko");
        if (!sys_readable)
            s.state = "unknown";
        else if (present)
            s.state = in_builtin ? "built-in" : "loaded";
        else
            s.state = "absent";
        host.modules.push_back(std::move(s));
    }
    return host;
}

} // namespace rdmad
