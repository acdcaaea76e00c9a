// SPDX-License-Identifier: MIT
//
// rdmad: start-up only. Options, then the Daemon.
#include "config.h"
#include "daemon.hpp"
#include "util/log.hpp"

#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <getopt.h>
#include <string>

namespace {

void usage(FILE* out) {
    std::fprintf(out,
                 "Usage: rdmad [OPTIONS]\n"
                 "Discover RDMA devices, ports and netdevs and serve them on the system bus as "
                 "org.rdmad1.\n\n"
                 "  -h, --help                   show this help and exit\n"
                 "      --version                show the version and exit\n"
                 "  -v, --verbose                log debug messages\n"
                 "      --verbs-config-dir=DIR   rdma-core's <provider>.driver files "
                 "(default %s)\n"
                 "      --provider-dir=DIR       rdma-core's lib<provider>-rdmav<N>.so files "
                 "(default %s)\n"
                 "      --provider-abi=N         the N of -rdmav<N>.so (default %d)\n"
                 "      --os-release=FILE        os-release(5) file naming the distribution "
                 "(default /etc/os-release)\n"
                 "      --legacy-mlx4-conf=FILE  the legacy mlx4 port type file "
                 "(default /etc/rdma/mlx4.conf)\n"
                 "      --modprobe-dir=DIR       where rdmad writes rdmad-mlx4.conf and "
                 "rdmad-ib_core.conf (default /etc/modprobe.d);\n"
                 "                               when given, the only modprobe.d directory "
                 "libkmod reads\n"
                 "      --module-dir=DIR         libkmod's module directory "
                 "(default /lib/modules/$(uname -r))\n"
                 "      --modules-load-dir=DIR   where rdmad writes rdmad.conf "
                 "(default /etc/modules-load.d)\n"
                 "      --packagekit-timeout=SECONDS  how long a provider install may take "
                 "before rdmad\n"
                 "                               cancels it (default 1800)\n"
                 "\nEnvironment: CONFIGURATION_DIRECTORY (default /etc/rdmad), STATE_DIRECTORY "
                 "(default /var/lib/rdmad).\n",
                 RDMAD_VERBS_CONFIG_DIR, RDMAD_VERBS_PROVIDER_DIR, RDMAD_VERBS_PROVIDER_ABI);
}

/// Whether `dir`, the value of `option`, is an absolute path; else says so on stderr. A
/// directory rdmad writes its own files in: "" would put them in / ("/rdmad.conf"), a relative
/// one below whatever directory rdmad was started in.
bool absolute_dir(const char* option, const char* dir) {
    if (dir[0] == '/')
        return true;
    std::fprintf(stderr, "rdmad: %s takes an absolute directory, not '%s'\n", option, dir);
    return false;
}

} // namespace

int main(int argc, char** argv) {
    // Block the signals sd-event handles before anything else, so a SIGTERM during start-up
    // stops the daemon through the loop (exit 0) instead of killing it.
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, nullptr);

    enum {
        OPT_VERSION = 1000,
        OPT_CONFIG_DIR,
        OPT_PROVIDER_DIR,
        OPT_PROVIDER_ABI,
        OPT_OS_RELEASE,
        OPT_LEGACY,
        OPT_MODPROBE,
        OPT_MODULE_DIR,
        OPT_MODULES_LOAD,
        OPT_PACKAGEKIT_TIMEOUT
    };
    static const struct option options[] = {
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, OPT_VERSION},
        {"verbose", no_argument, nullptr, 'v'},
        {"verbs-config-dir", required_argument, nullptr, OPT_CONFIG_DIR},
        {"provider-dir", required_argument, nullptr, OPT_PROVIDER_DIR},
        {"provider-abi", required_argument, nullptr, OPT_PROVIDER_ABI},
        {"os-release", required_argument, nullptr, OPT_OS_RELEASE},
        {"legacy-mlx4-conf", required_argument, nullptr, OPT_LEGACY},
        {"modprobe-dir", required_argument, nullptr, OPT_MODPROBE},
        {"module-dir", required_argument, nullptr, OPT_MODULE_DIR},
        {"modules-load-dir", required_argument, nullptr, OPT_MODULES_LOAD},
        {"packagekit-timeout", required_argument, nullptr, OPT_PACKAGEKIT_TIMEOUT},
        {nullptr, 0, nullptr, 0},
    };
    rdmad::DaemonOptions opts;
    opts.scan.providers = {RDMAD_VERBS_CONFIG_DIR, RDMAD_VERBS_PROVIDER_DIR,
                           RDMAD_VERBS_PROVIDER_ABI};
    int c;
    while ((c = getopt_long(argc, argv, "hv", options, nullptr)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_VERSION:
            std::printf("rdmad %s\n", RDMAD_VERSION);
            return 0;
        case 'v':
            rdmad::log::set_max_level(rdmad::log::Level::debug);
            break;
        case OPT_CONFIG_DIR:
            opts.scan.providers.config_dir = optarg;
            break;
        case OPT_PROVIDER_DIR:
            opts.scan.providers.provider_dir = optarg;
            break;
        case OPT_PROVIDER_ABI: {
            int abi = 0;
            const char* end = optarg + std::strlen(optarg);
            auto [p, ec] = std::from_chars(optarg, end, abi);
            if (ec != std::errc() || p != end || abi < 0) {
                std::fprintf(stderr, "rdmad: --provider-abi takes a whole number, not '%s'\n",
                             optarg);
                return 2;
            }
            opts.scan.providers.abi = abi;
            break;
        }
        case OPT_OS_RELEASE:
            opts.scan.os_release_path = optarg;
            break;
        case OPT_LEGACY:
            opts.reconcile.legacy_mlx4_conf = optarg;
            break;
        case OPT_MODPROBE:
            if (!absolute_dir("--modprobe-dir", optarg))
                return 2;
            opts.reconcile.modprobe_dir = optarg;
            // The blacklist rdmad honours comes from the modprobe.d it is told to use, as
            // modprobe -C <dir> reads only that configuration.
            opts.scan.kmod.config_paths = {optarg};
            break;
        case OPT_MODULE_DIR:
            if (!absolute_dir("--module-dir", optarg))
                return 2;
            opts.scan.kmod.module_dir = optarg; // modprobe -d/-S pick the same directory
            break;
        case OPT_MODULES_LOAD:
            if (!absolute_dir("--modules-load-dir", optarg))
                return 2;
            opts.reconcile.modules_load_dir = optarg;
            break;
        case OPT_PACKAGEKIT_TIMEOUT: {
            unsigned seconds = 0;
            const char* end = optarg + std::strlen(optarg);
            auto [p, ec] = std::from_chars(optarg, end, seconds);
            if (ec != std::errc() || p != end || seconds == 0 || seconds > 86400) {
                std::fprintf(stderr,
                             "rdmad: --packagekit-timeout takes seconds from 1 to 86400, not "
                             "'%s'\n",
                             optarg);
                return 2;
            }
            opts.packagekit_timeout_usec = uint64_t{seconds} * 1'000'000;
            break;
        }
        default:
            usage(stderr);
            return 2;
        }
    }
    // systemd sets these for ConfigurationDirectory= and StateDirectory= (systemd.exec(5));
    // with several directories they are colon-separated and the first is ours.
    auto first_dir = [](const char* env, std::string& into) {
        if (const char* v = std::getenv(env); v && *v)
            into = std::string(v).substr(0, std::string(v).find(':'));
    };
    first_dir("CONFIGURATION_DIRECTORY", opts.reconcile.config_dir);
    first_dir("STATE_DIRECTORY", opts.reconcile.state_dir);
    if (optind < argc) {
        std::fprintf(stderr, "rdmad: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    try {
        rdmad::Daemon daemon(std::move(opts));
        return daemon.run();
    } catch (const std::exception& e) {
        rdmad::log::error("{}", e.what());
        return 1;
    }
}
