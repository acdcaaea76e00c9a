# SPDX-License-Identifier: MIT
# bash completion for rdmad-wait-online(8): options, the transports, and after -d/--device the
# names of RDMA devices and, after DEVICE:, its port numbers, asked of the running rdmad
# through rdmactl (its NAME column of "list", its DEVICE and PORT columns of "status").

__rdmad_wait_online_devices() {
    command rdmactl --no-legend --no-pager --no-color list 2>/dev/null |
        while read -r name _; do printf '%s\n' "$name"; done
}

__rdmad_wait_online_ports() {
    command rdmactl --no-legend --no-pager --no-color status 2>/dev/null |
        while read -r dev port _; do
            [[ $dev == "$1" && $port =~ ^[0-9]+$ ]] && printf '%s\n' "$port"
        done
}

_rdmad_wait_online() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local options='--device= --transport= --any --timeout= --quiet --help --version'
    COMPREPLY=()
    # bash splits "--device=mlx5_0:1" at "=" and ":" (COMP_WORDBREAKS): the option is then
    # the word before the "=", and a port follows the words DEVICE ":".
    local i=$((COMP_CWORD - 1))
    if [[ $prev == : ]]; then
        local dev=${COMP_WORDS[COMP_CWORD - 2]} opt=${COMP_WORDS[COMP_CWORD - 3]}
        [[ $opt == = ]] && opt=${COMP_WORDS[COMP_CWORD - 4]}
        if [[ $opt == -d || $opt == --device ]]; then
            COMPREPLY=($(compgen -W "$(__rdmad_wait_online_ports "$dev")" -- "$cur"))
        fi
        return 0
    fi
    [[ $prev == = ]] && ((i--))
    case ${COMP_WORDS[i]} in
        -d|--device)
            COMPREPLY=($(compgen -W "$(__rdmad_wait_online_devices)" -- "$cur"))
            return 0 ;;
        --transport)
            COMPREPLY=($(compgen -W 'ib roce iwarp' -- "$cur"))
            return 0 ;;
        --timeout) return 0 ;; # a number
    esac
    COMPREPLY=($(compgen -W "$options -d -q -h" -- "$cur"))
    [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
    return 0
}

complete -F _rdmad_wait_online rdmad-wait-online
