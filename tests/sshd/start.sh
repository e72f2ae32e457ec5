#!/usr/bin/env bash
# A throwaway sshd for the tests, on 127.0.0.1 only (port TEMPER_SSHD_PORT, 2200), that lets root
# in with a key of its own: libvirt's remote driver reaches this host through it as it would
# another hypervisor host (`qemu+ssh://`). Debian's openssh-server is installed when missing; its
# own service is never started. Idempotent. Prints one line: the libvirt URI.
set -euo pipefail
dir=${TEMPER_SSHD_DIR:-/var/tmp/temper-sshd}
port=${TEMPER_SSHD_PORT:-2200}
log() { echo "[sshd $(date +%H:%M:%S)] $*" >&2; }
if [ ! -x /usr/sbin/sshd ]; then
  log "installing openssh-server"
  export DEBIAN_FRONTEND=noninteractive TMPDIR=${TMPDIR:-/var/tmp}
  apt-get install -y -q --no-install-recommends openssh-server >&2
fi
mkdir -p "$dir" /run/sshd && chmod 700 "$dir"
[ -f "$dir/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C temper-sshd-host -f "$dir/host_ed25519"
[ -f "$dir/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C temper-tests -f "$dir/id_ed25519"
cp "$dir/id_ed25519.pub" "$dir/authorized_keys" && chmod 600 "$dir/authorized_keys"
cat >"$dir/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $port
HostKey $dir/host_ed25519
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
CONF
if [ -s "$dir/sshd.pid" ] && kill -0 "$(cat "$dir/sshd.pid")" 2>/dev/null; then
  log "already running on 127.0.0.1:$port"
else
  /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log"
  log "started on 127.0.0.1:$port"
fi
# sshd forks before it listens: return only once the port takes a connection.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
for _ in $(seq 100); do listening && break; sleep 0.1; done
if ! listening; then
  log "sshd does not listen on 127.0.0.1:$port after 10 s; its log:"
  tail -n 20 "$dir/sshd.log" >&2 || true
  exit 1
fi
echo "qemu+ssh://root@127.0.0.1:$port/system?keyfile=$dir/id_ed25519&no_verify=1&no_tty=1"
