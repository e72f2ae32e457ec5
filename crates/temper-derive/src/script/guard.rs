//! The checks a fix makes in the guest, at fix time, on each item before it changes anything:
//! the scan's evidence may be hours old, and the guest is not trusted.
//!
//! `temper_path PATH` stops the script (exit 3, nothing changed) unless PATH is not a link, its
//! resolved path (`realpath -e`) is PATH itself, outside the protected trees, and every folder
//! above it is root's and writable by root alone: then no other user can swap the item for a
//! link between the check and the change. `temper_meta PATH WAS WANT` stops it unless PATH's
//! `uid gid mode` is still WAS, as the scan found it, or already WANT (compare, then set).
//! `temper_link_to PATH OTHERS…` is true when PATH is a link to one of OTHERS, which is
//! changed as itself (Debian's `/etc/sysctl.d/99-sysctl.conf` is `/etc/sysctl.conf`).
//! `temper_alias PATH OTHERS…` is true when PATH resolves to one of OTHERS, another item of the
//! same fix, by a folder above it that is a link (`/bin` is `/usr/bin` on a merged `/usr`): that
//! item is checked and changed by its own name, and PATH is left to it. It is asked once, at the
//! check, and the record and the change follow its answer.
use std::sync::LazyLock;

use crate::value::PROTECTED;

/// The two functions, as script text.
pub static FUNCTION: LazyLock<String> = LazyLock::new(|| {
    let protected: Vec<String> = PROTECTED.iter().map(|p| format!("{p}|{p}/*|{p}.*")).collect();
    format!(
        r#"temper_stop() {{ echo "temper: $*: nothing was changed" >&2; exit 3; }}
temper_path() {{
  local p="$1" real d o m
  if [ -L "$p" ]; then temper_stop "$p is a symbolic link"; fi
  real="$(realpath -e -- "$p")" || temper_stop "$p does not exist"
  if [ "$real" != "$p" ]; then temper_stop "$p resolves to $real"; fi
  case "$real" in {}|*/.ssh|*/.ssh/*) temper_stop "$real is in a protected tree" ;; esac
  d="$real"
  while [ "$d" != / ]; do
    d="$(dirname -- "$d")"
    read -r o m < <(stat -c '%u %a' -- "$d") || true
    if [ "$o" != 0 ] || [ -z "$m" ] || (( 8#$m & 8#022 )); then temper_stop "$d, above $p, is not root's alone (owner ${{o:-?}}, mode ${{m:-?}})"; fi
  done
}}
temper_link_to() {{
  local p="$1" real o
  shift
  [ -L "$p" ] || return 1
  real="$(realpath -e -- "$p")" || return 1
  for o in "$@"; do if [ "$o" != "$p" ] && [ "$real" = "$o" ]; then return 0; fi; done
  return 1
}}
temper_alias() {{
  local p="$1" real o
  shift
  real="$(realpath -e -- "$p")" || return 1
  [ "$real" != "$p" ] || return 1
  for o in "$@"; do if [ "$real" = "$o" ]; then return 0; fi; done
  return 1
}}
temper_meta() {{
  local now
  now="$(stat -c '%u %g %a' -- "$1")" || temper_stop "$1 cannot be read"
  if [ "$now" != "$2" ] && [ "$now" != "$3" ]; then temper_stop "$1 is $now now, not $2 as the scan found it"; fi
}}
"#,
        protected.join("|")
    )
});
