// SPDX-License-Identifier: MIT
//
// The dispatcher scripts: which files of the dispatcher directories run, in which order, and
// which are refused and why. NetworkManager's rules (NetworkManager-dispatcher(8)): only a
// regular file (a symbolic link is followed) owned by root, not writable by group or others,
// not setuid or setgid, executable by its owner, is run. Names are taken from every directory
// and run in byte order of the name; a name in an earlier directory hides it in later ones,
// and a link to /dev/null there masks it. Hidden files (".name") and package managers' and
// editors' leftovers ("name~", "name.dpkg-old", "name.rpmsave", ...) are not scripts and are
// passed over silently.
#pragma once

#include <optional>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace rdmad::dispatch {

struct Script {
    std::string name; ///< the file name, which orders the scripts
    std::string path; ///< directory + "/" + name
    bool operator==(const Script&) const = default;
};

struct Refused {
    Script script;
    std::string reason; ///< "owned by uid 65534, not root", "writable by group or others", ...
    /// What identifies this version of the file (device, inode, ctime): a refusal is logged
    /// once until the file changes (chmod, chown and rename change the ctime).
    std::string version;
    bool operator==(const Refused&) const = default;
};

struct Listing {
    std::vector<Script> run;         ///< in the order they run
    std::vector<Refused> refused;    ///< in name order
    std::vector<std::string> errors; ///< directories that exist but cannot be read, with why
};

/// Why a file with status `st` (stat(2), the link followed) must not run; nullopt when it may.
std::optional<std::string> refusal(const struct stat& st);

/// True for a name that is no script: hidden, empty, a backup or a package manager's copy.
bool ignored_name(const std::string& name);

/// Lists `directories` (precedence order); a directory that does not exist holds nothing.
Listing list_scripts(const std::vector<std::string>& directories);

} // namespace rdmad::dispatch
