# SPDX-License-Identifier: MIT
# bash completion for jailrun(1): options, policy files (*.ini) after
# --policy, directories after --source, --root (jailfs mounts first: the
# fuse.jailfs lines of /proc/self/mountinfo) and --cwd, and after -- the
# command, as bash completes a command line.

_jailrun()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' i
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur")
			else
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
				compopt -o filenames 2>/dev/null
			fi
			return
		fi
	done
	case $prev in
	--policy)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X '!*.ini' -- "$cur")
		compopt -o filenames 2>/dev/null
		return
		;;
	--request | --audit)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		compopt -o filenames 2>/dev/null
		return
		;;
	--root)
		local mnts
		mnts=$(awk '{ for (i = 7; $i != "-"; i++); if ($(i + 1) == "fuse.jailfs") print $5 }' \
			/proc/self/mountinfo 2>/dev/null)
		mapfile -t COMPREPLY < <(compgen -W "$mnts" -- "$cur")
		[ ${#COMPREPLY[@]} -gt 0 ] || mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		compopt -o filenames 2>/dev/null
		return
		;;
	--source | --cwd | --home | --changes)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		compopt -o filenames 2>/dev/null
		return
		;;
	--deny-exec | --allow-exec | --allow-inline)
		mapfile -t COMPREPLY < <(compgen -c -- "$cur")
		return
		;;
	--env)
		mapfile -t COMPREPLY < <(compgen -e -- "$cur")
		return
		;;
	--view-idle | --timeout | --grace | --max-output | --rlimit-cpu | --rlimit-as | --rlimit-nproc | --rlimit-fsize)
		return
		;;
	esac
	mapfile -t COMPREPLY < <(compgen -W '--root --source --no-git-root --fresh --view-idle --changes --changes-temp --apply --policy --cwd --home --shell
		--allow-inline --request --env --net --timeout --grace --max-output --rlimit-cpu --rlimit-as
		--rlimit-nproc --rlimit-fsize --deny-exec --allow-exec --check --json --audit
		--help --version --' -- "$cur")
}

complete -F _jailrun jailrun
