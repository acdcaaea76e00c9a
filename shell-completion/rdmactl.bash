# SPDX-License-Identifier: MIT
# bash completion for rdmactl(1): verbs, options, and the names of RDMA devices, netdevs and
# port numbers, asked of the running rdmad (through rdmactl itself, on the host given with
# -H/--host when there is one), as systemctl completes unit names.

# The output of "rdmactl [--host=HOST] --no-legend --no-pager VERB", nothing on failure. With
# several hosts (-H again, or a comma list), names come from the last -H's first host: one
# host's table has no HOST column.
__rdmactl_query() {
    local -a host=()
    local i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            -H|--host) host=(--host="${COMP_WORDS[i + 1]%%,*}") ;;
            --host=*) host=("${COMP_WORDS[i]%%,*}") ;;
        esac
    done
    command rdmactl "${host[@]}" --no-legend --no-pager --no-color "$@" 2>/dev/null
}

# RDMA device names: the NAME column of "rdmactl list".
__rdmactl_devices() {
    __rdmactl_query list | while read -r name _; do printf '%s\n' "$name"; done
}

# Netdev names: the NAME column of "rdmactl links" (IFINDEX NAME ...).
__rdmactl_netdevs() {
    __rdmactl_query links | while read -r _ name _; do printf '%s\n' "$name"; done
}

# The port numbers of device $1: the PORT column of its rows in "rdmactl status".
__rdmactl_ports() {
    __rdmactl_query status | while read -r dev port _; do
        [[ $dev == "$1" && $port =~ ^[0-9]+$ ]] && printf '%s\n' "$port"
    done
}

_rdmactl() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local verbs='status list show links monitor doctor diff set-port-type set-pfc set-trust set-dscp set-rdma-cm revert reconcile reload install-providers help'
    local options='--help --version --json --host= --no-legend --no-pager --no-color --persist --exclusive --roce-mode= --tos= --dry-run --verbose --timeout='
    COMPREPLY=()

    if [[ $prev == -H || $prev == --host ]]; then
        COMPREPLY=($(compgen -A hostname -- "$cur"))
        return 0
    fi
    # --roce-mode's values have a space: offered escaped. bash splits "--roce-mode=v" at the
    # "=" (COMP_WORDBREAKS), so the option is then the word before the "=".
    local opt=$prev
    [[ $prev == = ]] && opt=${COMP_WORDS[COMP_CWORD - 2]}
    if [[ $opt == --roce-mode ]]; then
        local mode
        while IFS= read -r mode; do
            [[ $mode == "$cur"* ]] && COMPREPLY+=("${mode// /\\ }")
        done <<<$'RoCE v2\nIB/RoCE v1'
        return 0
    fi
    [[ $opt == --tos ]] && return 0 # a number
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options -H" -- "$cur"))
        [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
        return 0
    fi

    # The verb and the arguments before the word being completed (options skipped).
    local verb= i
    local -a args=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            # "--tos=106" is the words "--tos" "=" "106" (COMP_WORDBREAKS).
            -H|--host|--roce-mode|--tos) [[ ${COMP_WORDS[i + 1]} == = ]] && ((i++)); ((i++)) ;;
            =) ((i++)) ;;
            -*) ;;
            *) if [[ -z $verb ]]; then verb=${COMP_WORDS[i]}; else args+=("${COMP_WORDS[i]}"); fi ;;
        esac
    done

    local words=
    case $verb in
        '') words=$verbs ;;
        help) ((${#args[@]} == 0)) && words=$verbs ;;
        show) ((${#args[@]} == 0)) && words="$(__rdmactl_devices) $(__rdmactl_netdevs)" ;;
        set-port-type)
            case ${#args[@]} in
                0) words=$(__rdmactl_devices) ;;
                1) words=$(__rdmactl_ports "${args[0]}") ;;
                2) words='ib eth auto' ;;
            esac ;;
        set-pfc|set-dscp|set-rdma-cm|doctor) ((${#args[@]} == 0)) && words=$(__rdmactl_devices) ;;
        set-trust)
            case ${#args[@]} in
                0) words=$(__rdmactl_devices) ;;
                1) words='dscp pcp' ;;
            esac ;;
        revert)
            case ${#args[@]} in
                0) words=$(__rdmactl_devices) ;;
                1) words=$(__rdmactl_ports "${args[0]}") ;;
            esac ;;
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    return 0
}

complete -F _rdmactl rdmactl
