# temper's watch over one script in the guest (run as root, on stdin: never quoted).
# $1: the script's tag (its bash runs as `temper-fix-TAG`); $2: its PID once known, or -;
# $3: sample | kill. Prints `root PID`, then `tree PROCS TICKS WRITTEN` (the CPU ticks and the
# bytes written of the script and every process under it, by parent), then a `lock PATH HOLDER
# COMM` line for each package-manager lock one of them waits on while another process holds it;
# or `gone` when the script's process is no more. `kill` stops the tree, then kills it.
set -u
tag=$1 root=$2 mode=$3
if [ "$root" = - ]; then
  # The launcher's bash; or, when the script has already exec'd another program, the child of
  # the command that started it (the newest root process whose command line ends in the name).
  root=$(pgrep -u 0 -o -f "^temper-fix-$tag( |\$)") ||
    { parent=$(pgrep -u 0 -n -f " temper-fix-$tag\$") && root=$(pgrep -o -P "$parent"); } ||
    { echo gone; exit 0; }
fi
[ -r "/proc/$root/stat" ] || { echo gone; exit 0; }
echo "root $root"
declare -A kids ticks
for s in /proc/[0-9]*/stat; do
  read -r line 2>/dev/null <"$s" || continue
  pid=${line%% *}
  # The fields after the command name, which may hold spaces or parentheses.
  read -r -a f <<<"${line##*) }"
  kids[${f[1]}]+=" $pid"
  ticks[$pid]=$((f[11] + f[12] + f[13] + f[14]))
done
tree=() todo=("$root")
while [ ${#todo[@]} -gt 0 ]; do
  p=${todo[0]} todo=("${todo[@]:1}")
  tree+=("$p")
  for k in ${kids[$p]:-}; do todo+=("$k"); done
done
if [ "$mode" = kill ]; then
  kill -STOP "${tree[@]}" 2>/dev/null
  kill -KILL "${tree[@]}" 2>/dev/null
  echo killed
  exit 0
fi
sum=0 written=0
for p in "${tree[@]}"; do
  sum=$((sum + ${ticks[$p]:-0}))
  w=$(sed -n 's/^wchar: //p' "/proc/$p/io" 2>/dev/null) && written=$((written + ${w:-0}))
done
echo "tree ${#tree[@]} $sum $written"
name() { local c; c=$(head -c 32 "/proc/$1/comm" 2>/dev/null | tr -cd '[:alnum:]_.-'); echo "${c:-?}"; }
# A blocking wait on any lock (flock, fcntl F_SETLKW) by a process of the tree.
declare -A holder
while read -r _ a b c d e f _; do
  [ "$a" = "->" ] && continue
  holder[${e##*:}]=$d
done </proc/locks
intree=" ${tree[*]} "
while read -r _ a b c d e f _; do
  [ "$a" = "->" ] && [[ $intree == *" $e "* ]] || continue
  h=${holder[${f##*:}]:-0}
  echo "lock inode:${f##*:} $h $(name "$h")"
done </proc/locks
# Package-manager locks: held by a process outside the tree while one inside has the file open.
for lock in /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock \
  /var/lib/rpm/.rpm.lock /var/cache/dnf/metadata_lock.pid /run/dnf/rpmdb.lock; do
  ino=$(stat -c %i -- "$lock" 2>/dev/null) || continue
  h=${holder[$ino]:-}
  [ -n "$h" ] && [[ $intree != *" $h "* ]] || continue
  for p in "${tree[@]}"; do
    for fd in /proc/"$p"/fd/*; do
      if [ "$(stat -L -c %i -- "$fd" 2>/dev/null)" = "$ino" ]; then
        echo "lock $lock $h $(name "$h")"
        continue 3
      fi
    done
  done
done
