# SPDX-License-Identifier: MIT
# zsh -f zsh-complete.zsh FPATH-DIR OUT-DIR LINE...: for each LINE, what zsh's
# completion system offers when TAB is pressed at its end, in OUT-DIR/N (N
# from 1, one candidate a line). It runs as a user's shell runs it: an
# interactive zsh -f on a pseudo-terminal (zpty), compinit loading the
# functions of FPATH-DIR; compadd is wrapped to record each match it adds.
# Exit status 1 when a completion did not finish within 30 s.
zmodload zsh/zpty || exit 1
dir=$1 outdir=$2
shift 2
log=$outdir/log
: >$log
zpty jfz zsh -f -i || exit 1
# The prompt is empty; each command is one line, typed before ZLE starts.
zpty -w jfz "PS1= fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w jfz "zstyle ':completion:*' list-grouped false; zstyle ':completion:*' insert-tab false"
zpty -w jfz "compadd() { local -a jf_m; builtin compadd -A jf_m \"\$@\";" \
	"(( \$#jf_m )) && print -rl -- \$jf_m >>${(q)log}; builtin compadd \"\$@\"; }"
# _main_complete empties comppostfuncs before it calls them: jf_done re-arms
zpty -w jfz "jf_done() { print -r -- __done__ >>${(q)log}; comppostfuncs=(jf_done); }"
zpty -w jfz "comppostfuncs=(jf_done)"
integer n=0 rc=0
for line in "$@"; do
	(( n++ ))
	: >$log
	zpty -n -w jfz "$line"$'\t'
	integer i
	for (( i = 0; i < 300; i++ )); do
		# drain the terminal: a full one would block the shell
		while zpty -r -t jfz _; do :; done
		[[ "$(<$log)" == *__done__* ]] && break
		sleep 0.1
	done
	(( i == 300 )) && rc=1
	grep -vx __done__ $log | sort -u >$outdir/$n
	zpty -n -w jfz $'\x15' # ^U: erase the line for the next one
done
zpty -d jfz
exit $rc
