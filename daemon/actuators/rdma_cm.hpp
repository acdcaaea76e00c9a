// SPDX-License-Identifier: MIT
//
// RDMA-CM defaults per port as an actuator: the RoCE mode and ToS that rdma_cm gives a
// connection whose application did not choose them (an application's rdma_set_option()
// RDMA_OPTION_ID_TOS still wins). The layout and the formats are those of
// sources/rdma_cm_reader.hpp; what writing answers, from kernel
// drivers/infiniband/core/cma_configfs.c and cma.c:
//
//   mkdir rdma_cm/<dev>      the only way to get at a device's files (configfs has no other);
//                            ENODEV when rdma_cm knows no device by that name (make_cma_dev()),
//                            EEXIST when it is there already
//   default_roce_mode        takes "IB/RoCE v1" or "RoCE v2", one trailing newline allowed
//                            (ib_cache_gid_parse_type_str()); EINVAL for any other text, and for
//                            a mode the port does not support (cma_set_default_gid_type(): not in
//                            roce_gid_type_mask_support(); an InfiniBand or iWARP port takes
//                            only "IB/RoCE v1")
//   default_roce_tos         takes a u8 (kstrtou8(buf, 0): EINVAL for text, ERANGE above 255)
//   either file              ENODEV when the group's device went away (cma_configfs_params_get())
//
// configfs hands each write(2) to the attribute's store() at once (fs/configfs/file.c), so its
// error is write(2)'s. The values live in the kernel's cma_device: they go with the device (a
// driver reload, an mlx4 port type change) and must be set again when it comes back; the group
// rdmad makes stays, so that the reader can see them.
#pragma once

#include "sources/rdma_cm_reader.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

/// The two system calls set_rdma_cm() makes on configfs, each answering 0 or an errno. The
/// real ones by default; unit tests put a model of the kernel in their place (a plain
/// directory cannot fill `ports/` on mkdir or refuse a value).
struct ConfigfsCalls {
    std::function<int(const std::string& path)> make_group;
    std::function<int(const std::string& path, std::string_view text)> write;
};

/// mkdir(2) with mode 0755: 0 or errno.
int make_configfs_group(const std::string& path);

/// open(2) O_WRONLY of an existing file, then one write(2) of all of `text`: 0 or errno (EIO for
/// a short write). Never creates the file, never retries.
int write_configfs_attribute(const std::string& path, std::string_view text);

/// make_configfs_group() and write_configfs_attribute().
ConfigfsCalls real_configfs_calls();

/// What set_rdma_cm() did and found.
struct RdmaCmWrite {
    int error = 0;              ///< 0 when the read-back equals every value asked, else an errno
    std::string message;        ///< for the admin, naming the file; "" when ok
    bool created_group = false; ///< rdma_cm/<dev> was made by this call
    std::vector<std::string> written; ///< paths written, in order (at most one per file)
    RdmaCmActual before;              ///< the port as read before writing
    RdmaCmActual after;               ///< the read-back (status failed when none was made)
    bool ok() const { return error == 0; }
};

/// Make port `port` of RDMA device `device` default to `roce_mode` (kRoceModeV1 or
/// kRoceModeV2) and `tos`, each left alone when nullopt. In order: check that `<root>` has
/// rdma_cm (probe_rdma_cm()); mkdir `rdma_cm/<device>` when absent (EEXIST is fine); read the
/// port; write each value that differs, once, as "<value>\n" (as echo(1) does; the kernel drops
/// the newline); read the port back once. ok only when the read-back shows every value asked.
///
/// Errors (error, and a message naming the path):
///   EINVAL   a mode other than the two, a device name that is no name, port 0; or the kernel
///            refused the mode (the port does not support it)
///   ENOENT   no configfs on `<root>` (the message names `mount -t configfs none
///            /sys/kernel/config` and sys-kernel-config.mount), no rdma_cm in it, no such port,
///            or no default_roce_tos (a kernel before 4.11)
///   ENODEV   the kernel knows no RDMA device `device` (mkdir), or it went away
///   EIO      every write succeeded but the read-back differs from what was asked
///   other    what mkdir(2), open(2) or write(2) answered (EACCES, EROFS, ...)
/// Never retries; a value whose write failed leaves the other one's write standing.
RdmaCmWrite set_rdma_cm(const std::string& root, const std::string& device, uint32_t port,
                        const std::optional<std::string>& roce_mode, std::optional<uint8_t> tos,
                        const ConfigfsCalls& calls = real_configfs_calls());

} // namespace rdmad
