# SPDX-License-Identifier: MIT
# bash completion for jailfs(1): options of each mode (mount, --check,
# --scan, --audit-report, the review commands changes, diff, apply,
# discard, checkpoint, restore), -o keys, policy files (*.ini) after --policy,
# directories for SOURCE and MOUNTPOINT, the jailfs mounts after --stop. Needs only bash; bash-completion
# loads it on demand from its completions directory.

_jailfs()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' w mode=mount opts
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
		case $w in
		--check | --scan | --audit-report | --list) mode=$w ;;
		esac
	done
	case ${COMP_WORDS[1]:-} in
	changes | diff | apply | discard | checkpoint | restore)
		[ "$COMP_CWORD" -gt 1 ] && mode=review
		;;
	esac
	COMPREPLY=()
	case $prev in
	--policy | -p)
		_jailfs_files '*.ini'
		return
		;;
	--audit | --stats | --idle-lock)
		_jailfs_files '*'
		return
		;;
	--audit-level)
		mapfile -t COMPREPLY < <(compgen -W 'denied writes all' -- "$cur")
		return
		;;
	--stop)
		local mnts
		mnts=$(awk '{ for (i = 7; $i != "-"; i++); if ($(i + 1) == "fuse.jailfs") print $5 }' \
			/proc/self/mountinfo 2>/dev/null)
		mapfile -t COMPREPLY < <(compgen -W "$mnts" -- "$cur")
		return
		;;
	--source | -s | --changes)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return
		;;
	--audit-max-size | --audit-rate | --top)
		return
		;;
	-o)
		local keys='policy= read_only ro audit= audit_level= audit_sync audit_syslog
			audit_max_size= audit_rate= stats= entry_timeout= attr_timeout=
			negative_timeout= max_threads= no_splice nowatch fast_open nofast_open
			nopassthrough io_uring changes= allow_other allow_root auto_unmount max_read='
		local head=${cur%,*}, last=${cur##*,}
		[ "$head" = "$cur," ] && head=
		mapfile -t COMPREPLY < <(compgen -P "$head" -W "$keys" -- "$last")
		compopt -o nospace 2>/dev/null
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		case $mode in
		--check) opts='--policy --source --read-only --help' ;;
		--scan) opts='--policy --read-only --all --verbose --help' ;;
		--audit-report) opts='--top --help' ;;
		--list) opts='--help' ;;
		review) opts='--json --all --force --policy --help' ;;
		*)
			opts='--policy --read-only --changes -f -d -v --verbose --audit --audit-level
				--audit-sync --audit-syslog --audit-max-size --audit-rate --stats -o
				--idle-exit --idle-lock --help --version --check --scan --audit-report --list --stop'
			;;
		esac
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
	elif [ "$mode" = --audit-report ]; then
		_jailfs_files '*'
	elif [ "$COMP_CWORD" -eq 1 ]; then
		mapfile -t COMPREPLY < <(compgen -W 'changes diff apply discard checkpoint restore' \
			-- "$cur"; compgen -d -- "$cur")
		compopt -o filenames 2>/dev/null
	else
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		compopt -o filenames 2>/dev/null
	fi
}

# _jailfs_files GLOB: files matching GLOB and directories (to descend into).
_jailfs_files()
{
	local cur=${COMP_WORDS[COMP_CWORD]}
	mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X "!$1" -- "$cur")
	compopt -o filenames 2>/dev/null
}

complete -F _jailfs jailfs
