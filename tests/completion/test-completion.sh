#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Calls the bash completion function _rdmactl (and zsh's helpers, when zsh is installed) the
# way the shells do, with a stub rdmactl on PATH that prints what the real one prints with
# --no-legend for one host (the layout of cli/verb_list.cpp, verb_links.cpp, verb_status.cpp;
# names from tests/fixtures/hosts/procfs-hfi1-mlx4-mlx5). The names from a running rdmad are
# checked in tests/integration/test_rdmactl.cpp.
# rdmad-wait-online's completion is checked the same way, with the same stub.
# Usage: test-completion.sh BASH_COMPLETION_FILE ZSH_COMPLETION_FILE WAIT_ONLINE_BASH_FILE
#        WAIT_ONLINE_ZSH_FILE
set -u
bash_file=$1 zsh_file=$2 wait_bash_file=$3 wait_zsh_file=$4
bash_func=_rdmactl
stub=$(mktemp -d)
trap 'rm -rf "$stub"' EXIT
cat >"$stub/rdmactl" <<'STUB'
#!/bin/sh
# The verb is the last argument; record the options so the test can check --host.
printf '%s\n' "$*" >>"$(dirname "$0")/calls"
for verb; do :; done
case $verb in
list) printf '%s\n' \
  'hfi1_0   CA  0000:05:00.0  hfi1       hfi1  1  1.27.0' \
  'mlx4_0   CA  0000:03:00.0  mlx4_core  mlx4  2  2.42.5000' \
  'mlx5_0   CA  0000:04:00.0  mlx5_core  mlx5  1  16.35.2000' ;;
links) printf '%s\n' \
  '1  lo    -     -             unknown  no  -       -' \
  '4  ib0   mlx4  0000:03:00.0  up       yes mlx4_0  -' ;;
status) printf '%s\n' \
  'hfi1_0  1  OPA         ACTIVE  LinkUp  100 Gb/s  -    hfi1' \
  'mlx4_0  1  InfiniBand  ACTIVE  LinkUp  40 Gb/s   ib0  mlx4' \
  'mlx4_0  2  InfiniBand  DOWN    Polling -         ib1  mlx4' \
  'mlx5_0  1  InfiniBand  ACTIVE  LinkUp  100 Gb/s  ib2  mlx5' \
  'mlx4_0: warning: port 2 is not ACTIVE (DOWN)' ;;
*) exit 1 ;;
esac
STUB
chmod +x "$stub/rdmactl"
export PATH="$stub:$PATH"

failures=0
# complete_bash "LINE": completes LINE (a trailing space starts a new, empty word); the
# sorted COMPREPLY, joined with spaces.
complete_bash() {
    bash -c '
        source "$1"
        read -ra COMP_WORDS <<<"$2"
        [[ $2 == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE=$2 COMP_POINT=${#2}
        "$3"
        printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$bash_file" "$1" "$bash_func"
}
# check "LINE" "EXPECTED WORDS": compares the sorted COMPREPLY with the sorted EXPECTED WORDS.
check() {
    local line=$1 expected=$2 got
    got=$(complete_bash "$line")
    expected=$(printf '%s\n' $expected | sort | tr '\n' ' ')
    compare "$line" "$got" "$expected"
}
# check_words "LINE" WORD...: as check, for words that have a space.
check_words() {
    local line=$1 got expected
    shift
    got=$(complete_bash "$line")
    expected=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    compare "$line" "$got" "$expected"
}
compare() {
    local line=$1 got=$2 expected=$3
    if [[ $got != "$expected" ]]; then
        echo "FAIL bash '$line': got '$got', want '$expected'"
        failures=$((failures + 1))
    else
        echo "ok   bash '$line'"
    fi
}

check 'rdmactl ' 'status list show links monitor doctor diff set-port-type set-pfc set-trust set-dscp set-rdma-cm revert reconcile reload install-providers help'
check 'rdmactl st' 'status'
check 'rdmactl in' 'install-providers'
check 'rdmactl re' 'revert reconcile reload'
check 'rdmactl --no-p' '--no-pager'
check 'rdmactl --d' '--dry-run'
check 'rdmactl --verb' '--verbose'
check 'rdmactl doctor ' 'hfi1_0 mlx4_0 mlx5_0'
check 'rdmactl help s' 'status show set-port-type set-pfc set-trust set-dscp set-rdma-cm'
check 'rdmactl -H a -H b d' 'doctor diff'
check 'rdmactl show ' 'hfi1_0 mlx4_0 mlx5_0 lo ib0'
check 'rdmactl show m' 'mlx4_0 mlx5_0'
check 'rdmactl set-port-type ' 'hfi1_0 mlx4_0 mlx5_0'
check 'rdmactl set-port-type mlx4_0 ' '1 2'
check 'rdmactl set-port-type mlx4_0 2 ' 'ib eth auto'
check 'rdmactl set-port-type mlx4_0 2 e' 'eth'
check 'rdmactl --json set-pfc ml' 'mlx4_0 mlx5_0'
check 'rdmactl set-trust ' 'hfi1_0 mlx4_0 mlx5_0'
check 'rdmactl set-trust mlx5_0 ' 'dscp pcp'
check 'rdmactl set-trust mlx5_0 d' 'dscp'
check 'rdmactl set-trust mlx5_0 dscp ' ''
check 'rdmactl set-dscp m' 'mlx4_0 mlx5_0'
check 'rdmactl set-dscp mlx5_0 --e' '--exclusive'
check 'rdmactl set-rdma-cm ' 'hfi1_0 mlx4_0 mlx5_0'
# --roce-mode's values have a space: each offered as one word, the space escaped.
check_words 'rdmactl set-rdma-cm --roce-mode ' 'RoCE\ v2' 'IB/RoCE\ v1'
check_words 'rdmactl set-rdma-cm --roce-mode I' 'IB/RoCE\ v1'
check_words 'rdmactl set-rdma-cm --roce-mode = R' 'RoCE\ v2'
check 'rdmactl set-rdma-cm --tos ' ''
check 'rdmactl set-rdma-cm --tos 106 ' 'hfi1_0 mlx4_0 mlx5_0'
check 'rdmactl set-rdma-cm --tos = 106 m' 'mlx4_0 mlx5_0'
check 'rdmactl --ro' '--roce-mode='
check 'rdmactl revert mlx5_0 ' '1'
check 'rdmactl revert mlx4_0 2 ' ''
check 'rdmactl list ' ''
# -H HOST is passed on to the lookups.
rm -f "$stub/calls"
check 'rdmactl -H node17 revert ' 'hfi1_0 mlx4_0 mlx5_0'
if ! grep -q -- '--host=node17 --no-legend --no-pager --no-color list' "$stub/calls"; then
    echo "FAIL bash: -H node17 not passed to the lookup: $(cat "$stub/calls")"
    failures=$((failures + 1))
fi
# A comma list of hosts: the lookups ask its first host alone (a table without HOST column).
rm -f "$stub/calls"
check 'rdmactl -H node17,node18 doctor ' 'hfi1_0 mlx4_0 mlx5_0'
if ! grep -q -- '--host=node17 --no-legend --no-pager --no-color list' "$stub/calls"; then
    echo "FAIL bash: -H node17,node18 not asked of node17: $(cat "$stub/calls")"
    failures=$((failures + 1))
fi

# rdmad-wait-online: options, transports, device names after -d, ports after DEVICE: (bash
# splits "--device=mlx4_0:2" into "--device" "=" "mlx4_0" ":" "2", written here with spaces).
bash_file=$wait_bash_file bash_func=_rdmad_wait_online
check 'rdmad-wait-online ' '--device= --transport= --any --timeout= --quiet --help --version -d -q -h'
check 'rdmad-wait-online --t' '--transport= --timeout='
check 'rdmad-wait-online -d ' 'hfi1_0 mlx4_0 mlx5_0'
check 'rdmad-wait-online -q -d m' 'mlx4_0 mlx5_0'
check 'rdmad-wait-online --device = h' 'hfi1_0'
check 'rdmad-wait-online -d mlx4_0 : ' '1 2'
check 'rdmad-wait-online --device = mlx4_0 : 2' '2'
check 'rdmad-wait-online --transport ' 'ib roce iwarp'
check 'rdmad-wait-online --transport = r' 'roce'
check 'rdmad-wait-online --timeout ' ''
check 'rdmad-wait-online --any --a' '--any'

# zsh: the file parses, and its lookup helpers give the names (_describe stubbed to print
# the array it is handed).
if command -v zsh >/dev/null; then
    if ! zsh -n "$zsh_file"; then
        echo "FAIL zsh: syntax"
        failures=$((failures + 1))
    fi
    got=$(zsh -fc '
        _describe() { print -l -- ${(P)4} }
        _rdmactl() { :; }   # the file calls it at the end; only the helpers are wanted
        words=(rdmactl revert) CURRENT=3
        source <(sed "\$d" "$1")
        __rdmactl_devices; __rdmactl_netdevs; __rdmactl_ports mlx4_0' _ "$zsh_file" |
        tr '\n' ' ')
    want='hfi1_0 mlx4_0 mlx5_0 lo ib0 1 2 '
    if [[ $got != "$want" ]]; then
        echo "FAIL zsh helpers: got '$got', want '$want'"
        failures=$((failures + 1))
    else
        echo "ok   zsh helpers"
    fi
    if ! zsh -n "$wait_zsh_file"; then
        echo "FAIL zsh: syntax of $wait_zsh_file"
        failures=$((failures + 1))
    fi
    got=$(zsh -fc '
        _describe() { print -l -- ${(P)4} }
        _rdmad_wait_online() { :; }
        source <(sed "\$d" "$1")
        __rdmad_wait_online_targets' _ "$wait_zsh_file" | tr '\n' ' ')
    want='hfi1_0 mlx4_0 mlx5_0 hfi1_0:1 mlx4_0:1 mlx4_0:2 mlx5_0:1 '
    if [[ $got != "$want" ]]; then
        echo "FAIL zsh rdmad-wait-online targets: got '$got', want '$want'"
        failures=$((failures + 1))
    else
        echo "ok   zsh rdmad-wait-online targets"
    fi
else
    echo "FAIL zsh is not installed (tools/install-deps.sh installs it)"
    failures=$((failures + 1))
fi

echo "$failures failures"
((failures == 0))
