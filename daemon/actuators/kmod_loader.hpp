// SPDX-License-Identifier: MIT
//
// Kernel modules rdmad loads ([daemon] load_modules, rdmad.conf(5)): one module through
// libkmod's probe, as `modprobe <name>` does with the admin's blacklist honoured, and rdmad's
// own modules-load.d(5) file, which systemd-modules-load reads at boot.
#pragma once

#include "sources/kmod_library.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

/// What loading one module came to.
struct ModuleLoad {
    enum class Status {
        loaded,      ///< inserted, or already in the kernel (loaded or built-in)
        blacklisted, ///< a modprobe.d `blacklist` line names it: nothing was done
        failed,      ///< `error` says why
    } status = Status::failed;
    int error = 0;       ///< errno (positive) when failed
    std::string message; ///< strerror(error) when failed, naming the module
};

/// Load `module` and the modules it depends on through `lib` (kmod_module_new_from_name, then
/// kmod_module_probe_insert_module with KMOD_PROBE_APPLY_BLACKLIST: libkmod.h, "Flags to
/// kmod_module_probe_insert_module()"; modprobe.d install commands run as modprobe runs them,
/// as systemd's module_load_and_warn() does). The kernel's refusal comes back as the errno of
/// finit_module(2) (EPERM without CAP_SYS_MODULE, ENOEXEC for a file that is no module,
/// ENOSYS on a kernel without module support); a module libkmod's index does not list is
/// ENOENT. Never throws.
ModuleLoad load_kernel_module(const KmodLibrary& lib, const std::string& module);

/// rdmad's file in the modules-load.d directory: "<dir>/rdmad.conf".
std::string modules_load_path(const std::string& modules_load_dir);

/// The file's text for `modules` (one name a line, modules-load.d(5)), with a header saying
/// who wrote it.
std::string modules_load_text(const std::vector<std::string>& modules);

/// The module names a modules-load.d(5) text lists: one a line, '#' and ';' lines and blank
/// lines skipped, surrounding whitespace dropped.
std::vector<std::string> parse_modules_load_text(std::string_view text);

/// Write the file atomically (util/atomic_file.hpp); throws std::system_error.
void write_modules_load(const std::string& modules_load_dir,
                        const std::vector<std::string>& modules);

/// Remove rdmad's file (nothing is to be loaded at boot any more), then fsync the directory.
/// A missing file is fine; throws std::system_error otherwise.
void remove_modules_load(const std::string& modules_load_dir);

} // namespace rdmad
