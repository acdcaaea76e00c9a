// SPDX-License-Identifier: MIT
#include "help.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>

namespace rdmactl {

const std::vector<VerbHelp>& verb_table() {
    static const std::vector<VerbHelp> verbs = {
        {"status", "",
         "show every RDMA port, the devices' problems and\n"
         "the netdevs whose RDMA driver is not loaded\n"
         "(the default)"},
        {"list", "", "list RDMA devices"},
        {"show", "NAME",
         "show every property of the RDMA device NAME and\n"
         "its ports, else of the netdev NAME"},
        {"links", "", "list netdevs and the RDMA device serving each"},
        {"monitor", "",
         "print one line per change (devices, ports and\n"
         "netdevs added, removed, renamed, properties\n"
         "changed, rdmad stopped and started) until\n"
         "interrupted"},
        {"doctor", "[DEVICE]",
         "list every problem with its remedy, per device\n"
         "and port (only DEVICE's when given); exit\n"
         "status 3 when there is an error or warning"},
        {"diff", "",
         "with -H given twice or more: what differs\n"
         "between the hosts per board (firmware, provider,\n"
         "device count) and per board and port (port\n"
         "type, rate and width, RoCE MTU, PFC no-drop\n"
         "priorities, recommended RoCE GID index); exit\n"
         "status 3 on a difference"},
        {"set-port-type", "DEVICE PORT TYPE",
         "ask port type TYPE (ib, eth or auto) for port\n"
         "PORT of DEVICE: ConnectX-3 switches at once;\n"
         "ConnectX-4+ writes the firmware with mstconfig,\n"
         "pending until a firmware reset or reboot"},
        {"set-pfc", "DEVICE PRIORITIES",
         "ask PFC no-drop priorities for DEVICE: a comma\n"
         "list of 0-7 (\"3,4\")"},
        {"set-trust", "DEVICE TRUST",
         "ask trust TRUST (dscp or pcp) for DEVICE: what\n"
         "its netdevs classify packets by"},
        {"set-dscp", "DEVICE MAP",
         "ask DSCP -> priority entries for DEVICE: a\n"
         "comma list of DSCP:PRIORITY (\"26:3,48:6\"); with\n"
         "--exclusive other DSCP entries are deleted"},
        {"set-rdma-cm", "DEVICE",
         "ask the RDMA-CM defaults of DEVICE's RoCE ports:\n"
         "--roce-mode, --tos or both"},
        {"revert", "DEVICE [PORT]",
         "drop every setting made over D-Bus for DEVICE\n"
         "(all the set-* verbs; for this run and\n"
         "persisted), or only PORT's port type, so that\n"
         "/etc/rdmad rules apply again"},
        {"reconcile", "",
         "apply the desired state where the hardware\n"
         "differs; list what differed"},
        {"reload", "", "make rdmad read its configuration files again"},
        {"install-providers", "",
         "install the packages of missing verbs\n"
         "providers through PackageKit; list them"},
        {"help", "[VERB]", "show this help, or VERB's"},
    };
    return verbs;
}

const VerbHelp* find_verb(std::string_view name) {
    for (const auto& v : verb_table())
        if (name == v.name)
            return &v;
    return nullptr;
}

namespace {

// The verb column is 27 wide, as the options'; a longer "verb ARGUMENTS" gets its own line.
constexpr std::size_t kColumn = 27;

void print_verb_lines(std::FILE* out, const VerbHelp& v) {
    std::string head = v.name;
    if (*v.arguments)
        head += std::string(" ") + v.arguments;
    std::string_view text = v.text;
    bool first = true;
    if (head.size() + 3 > kColumn) {
        fmt::print(out, "  {}\n", head);
        first = false;
    }
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        if (first)
            fmt::print(out, "  {:<{}}{}\n", head, kColumn - 2, line);
        else
            fmt::print(out, "{:<{}}{}\n", "", kColumn, line);
        first = false;
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    }
}

} // namespace

void print_help(std::FILE* out) {
    std::fputs("Usage: rdmactl [OPTIONS] [VERB]\n"
               "Query and configure rdmad, the RDMA device daemon, on the system bus\n"
               "(org.rdmad1).\n"
               "\n"
               "Verbs:\n",
               out);
    for (const auto& v : verb_table())
        print_verb_lines(out, v);
    std::fputs("\n"
               "Options:\n"
               "  -h, --help               show this help and exit\n"
               "      --version            show the version and exit\n"
               "      --json               print the JSON of org.rdmad1.Manager.Describe()\n"
               "                           instead of tables: status the whole document,\n"
               "                           list {\"Devices\": [...]}, links {\"Links\": [...]},\n"
               "                           show the device or netdev object, monitor one\n"
               "                           JSON object per line\n"
               "  -H, --host=[USER@]HOST   talk to rdmad on HOST's system bus over ssh;\n"
               "                           given again (or a comma list), status, list,\n"
               "                           links, show, doctor and diff ask every HOST at\n"
               "                           once: one table with a HOST column, or one\n"
               "                           block per host, --json an object keyed by host\n"
               "      --timeout=SECONDS    with several hosts: how long to wait for them\n"
               "                           (default 30); a host still silent is an error\n"
               "      --no-legend          print no table headers, no summary lines and no\n"
               "                           blank separator lines\n"
               "      --no-pager           do not pipe the output into a pager\n"
               "      --no-color           print no colours (also when NO_COLOR is set)\n"
               "      --persist            set-*: save the request in rdmad's state\n"
               "                           file, so it survives restarts\n"
               "      --exclusive          set-dscp: delete the DSCP entries MAP does not\n"
               "                           list\n"
               "      --roce-mode=MODE     set-rdma-cm: the default RoCE mode, \"RoCE v2\"\n"
               "                           or \"IB/RoCE v1\"\n"
               "      --tos=N              set-rdma-cm: the default ToS byte, 0-255\n"
               "      --dry-run            reconcile: only list what differs\n"
               "  -v, --verbose            doctor: print the evidence of each problem\n"
               "\n"
               "The set-* verbs, revert, reconcile (without --dry-run) and reload need\n"
               "authorization (polkit action org.rdmad1.configure), install-providers\n"
               "org.rdmad1.install-providers.\n"
               "\n"
               "On a terminal, errors are red, warnings yellow and ACTIVE ports green, and\n"
               "long output goes through $RDMACTL_PAGER, else $PAGER, else less.\n"
               "\n"
               "Exit status: 0 success, 1 failure (also when rdmad is not running or\n"
               "refuses; with several hosts, when one could not be asked), 2 usage error,\n"
               "3 doctor found an error or warning, or diff a difference.\n",
               out);
}

void print_verb_help(std::FILE* out, const VerbHelp& verb) {
    fmt::print(out, "Usage: rdmactl [OPTIONS] {}{}{}\n\n", verb.name, *verb.arguments ? " " : "",
               verb.arguments);
    std::string text = verb.text;
    std::replace(text.begin(), text.end(), '\n', ' ');
    if (!text.empty())
        text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    // Re-wrap at 72 columns.
    std::string line;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(' ', start);
        if (end == std::string::npos)
            end = text.size();
        const std::string word = text.substr(start, end - start);
        if (!line.empty() && line.size() + 1 + word.size() > 72) {
            fmt::print(out, "{}\n", line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
        start = end + 1;
    }
    fmt::print(out, "{}.\n\nSee rdmactl --help for the options, rdmactl(1) for the details.\n",
               line);
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // d[i][j]: distance between a's first i and b's first j characters.
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

std::string closest_verb(std::string_view typed) {
    const VerbHelp* best = nullptr;
    std::size_t best_distance = 0;
    for (const auto& v : verb_table()) {
        const std::size_t dist = edit_distance(typed, v.name);
        if (!best || dist < best_distance) {
            best = &v;
            best_distance = dist;
        }
    }
    if (!best || best_distance > 2 || best_distance * 2 > typed.size() + 1)
        return {};
    return best->name;
}

} // namespace rdmactl
