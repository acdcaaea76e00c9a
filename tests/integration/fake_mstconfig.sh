#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A stand-in for mstflint's mstconfig, for rdmad's tests (these machines have no ConnectX
# card to ask). It answers `[-e] -d <pci> query|q [PARAM...]` and `-y -d <pci> set PARAM=N`
# from a state kept per PCI address in $FAKE_MSTCONFIG_DIR, in the layout of recorded output:
#   - query: Mellanox/nic-configuration-operator pkg/nvconfig/utils_test.go, a ConnectX4's
#     `mlxconfig -d 0000:3b:00.0 q` ("Configurations:" then Default, Current, Next Boot
#     columns; a '*' before a row whose next value differs; the closing "The '*' shows ..."
#     line); mstconfig without -e prints the Next Boot column alone;
#   - set: the "Configurations:  Next Boot  New" table, "Apply new Configuration? (y/n) [n] :
#     y", "Applying... Done!" and "-I- Please reboot machine to load new configurations." of
#     `mlxconfig -d ... set LINK_TYPE_P1=2` on ConnectX-4/-6 VPI cards (published transcripts,
#     e.g. the ConnectX4 of jiegec's mft-debian-bookworm write-up).
# State: $FAKE_MSTCONFIG_DIR/<pci>.<PARAM> holds "DEFAULT CURRENT NEXT" as numbers (1 IB,
# 2 ETH, 3 VPI); a set changes NEXT, a test changes CURRENT to play a firmware reset.
# $FAKE_MSTCONFIG_DIR/<pci>.fail holds a text the tool prints on stderr before exiting 1 (as
# the real one does for a function it cannot open: "-E- Failed to open device"). Every call
# is appended to $FAKE_MSTCONFIG_DIR/calls.log as its arguments joined by spaces.
# $FAKE_MSTCONFIG_DIR/<pci>.hang makes every call for <pci> hang without an answer (as the
# real tool does on a wedged PCI config access) until it is killed.
set -u
dir=${FAKE_MSTCONFIG_DIR:?FAKE_MSTCONFIG_DIR is not set}
printf '%s\n' "$*" >> "$dir/calls.log"

verbose=0
yes=0
pci=
while [ $# -gt 0 ]; do
    case "$1" in
    -e|--enable_verbosity) verbose=1; shift ;;
    -y|--yes) yes=1; shift ;;
    -d|--dev) pci=$2; shift 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "-E- No command found. For more information please read the help message:" >&2; exit 1; }
cmd=$1
shift
[ -n "$pci" ] || { echo "-E- Device not specified" >&2; exit 1; }
if [ -f "$dir/$pci.hang" ]; then
    exec sleep 3600
fi
if [ -f "$dir/$pci.fail" ]; then
    cat "$dir/$pci.fail" >&2
    exit 1
fi

name_of() {
    case "$1" in
    1) echo "IB(1)" ;;
    2) echo "ETH(2)" ;;
    3) echo "VPI(3)" ;;
    *) echo "$1" ;;
    esac
}

header() {
    printf '\nDevice #1:\n----------\n\n'
    printf 'Device type:    ConnectX4\n'
    printf 'Name:           MCX456A-ECA_Ax\n'
    printf 'Description:    ConnectX-4 VPI adapter card; EDR IB (100Gb/s) and 100GbE; dual-port QSFP28; PCIe3.0 x16; ROHS R6\n'
    printf 'Device:         %s\n\n' "$pci"
}

case "$cmd" in
query|q)
    header
    if [ $verbose = 1 ]; then
        printf '%-45s%-16s%-16s%s\n' "Configurations:" "Default" "Current" "Next Boot"
    else
        printf '%-45s%s\n' "Configurations:" "Next Boot"
    fi
    [ $# -gt 0 ] || set -- $(cd "$dir" && ls "$pci".* 2>/dev/null | sed "s/^$pci\\.//")
    for param in "$@"; do
        [ -f "$dir/$pci.$param" ] || continue
        read -r def cur next < "$dir/$pci.$param"
        mark=' '
        { [ "$next" != "$def" ] || [ "$next" != "$cur" ]; } && mark='*'
        if [ $verbose = 1 ]; then
            printf '%-9s%-36s%-16s%-16s%s\n' "$mark" "$param" "$(name_of "$def")" \
                "$(name_of "$cur")" "$(name_of "$next")"
        else
            printf '%-9s%-36s%s\n' "$mark" "$param" "$(name_of "$next")"
        fi
    done
    echo "The '*' shows parameters with next value different from default/current value."
    ;;
set|s)
    header
    printf '%-45s%-16s%s\n' "Configurations:" "Next Boot" "New"
    for assignment in "$@"; do
        param=${assignment%%=*}
        value=${assignment#*=}
        if [ ! -f "$dir/$pci.$param" ]; then
            echo "-E- The Device doesn't support $param parameter" >&2
            exit 1
        fi
        read -r def cur next < "$dir/$pci.$param"
        printf '%-9s%-36s%-16s%s\n' "" "$param" "$(name_of "$next")" "$(name_of "$value")"
    done
    if [ $yes = 1 ]; then
        printf '\n Apply new Configuration? (y/n) [n] : y\n'
    else
        printf '\n Apply new Configuration? (y/n) [n] : n\n'
        echo "Aborted by user"
        exit 1
    fi
    for assignment in "$@"; do
        param=${assignment%%=*}
        value=${assignment#*=}
        read -r def cur next < "$dir/$pci.$param"
        printf '%s %s %s\n' "$def" "$cur" "$value" > "$dir/$pci.$param.new"
        mv "$dir/$pci.$param.new" "$dir/$pci.$param"
    done
    echo "Applying... Done!"
    echo "-I- Please reboot machine to load new configurations."
    ;;
*)
    echo "-E- Unknown command \"$cmd\"" >&2
    exit 1
    ;;
esac
exit 0
