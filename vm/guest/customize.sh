#!/bin/bash
# Runs on the host as an mmdebstrap customize hook: $1 = guest root, $2 = dir of debs, $3 = public key file.
# Everything here goes into the image hash (build-image.sh hashes vm/guest/*).
set -euo pipefail
R=$1; DEBS=$2; PUB=$3; HERE=$(cd "$(dirname "$0")" && pwd)
chr() { chroot "$R" "$@"; }

# SSG 0.1.76 (Debian content only).
mkdir -p "$R/tmp/debs" && cp "$DEBS"/ssg-debian_*.deb "$DEBS"/ssg-base_*.deb "$R/tmp/debs/"
chr sh -c 'dpkg -i /tmp/debs/*.deb' && rm -rf "$R/tmp/debs"
test -f "$R/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml"

echo temper-guest > "$R/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 temper-guest\n' > "$R/etc/hosts"
echo '/dev/vda / ext4 defaults 0 1' > "$R/etc/fstab"
mkdir -p "$R/etc/systemd/network"
printf '[Match]\nName=eth0\n\n[Network]\nDHCP=ipv4\n' > "$R/etc/systemd/network/20-eth0.network"
chr systemctl enable systemd-networkd.service serial-getty@ttyS0.service nginx.service ssh.service
chr systemctl mask e2scrub_reap.service e2scrub_all.timer apt-daily.timer apt-daily-upgrade.timer \
  systemd-networkd-wait-online.service man-db.timer fstrim.timer
printf 'UseDNS no\n' > "$R/etc/ssh/sshd_config.d/fast.conf"

# The mission app and its health check.
install -m 0644 "$HERE/index.html" "$R/var/www/html/index.html"
rm -f "$R/var/www/html/index.nginx-debian.html"
install -m 0755 "$HERE/mission-healthcheck" "$R/usr/local/bin/mission-healthcheck"

# The image's own admin: group sudo, no password and no key (a team gives it theirs). It is not
# temper's: it keeps sudo after the handover (`temper image export`), and the boot proof logs in
# as it with a one-time key and password put in the proof's overlay alone.
chr useradd -m -s /bin/bash -G sudo admin

# The temper user: key login, passwordless sudo.
chr useradd -m -s /bin/bash temper
install -d -m 0700 "$R/home/temper/.ssh"
install -m 0600 "$PUB" "$R/home/temper/.ssh/authorized_keys"
chr chown -R temper:temper /home/temper/.ssh
echo 'temper ALL=(ALL) NOPASSWD:ALL' > "$R/etc/sudoers.d/temper"
chmod 0440 "$R/etc/sudoers.d/temper"
chr visudo -cf /etc/sudoers.d/temper >/dev/null

# Package lists for stock fixes that install packages (mmdebstrap's lists are kept; refresh them here).
chr apt-get update -q
chr update-initramfs -u -k all
# Slirp's DNS forwarder (networkd without resolved does not write resolv.conf); last, as the
# chroot used the host's resolver until here.
rm -f "$R/etc/resolv.conf" && echo 'nameserver 10.0.2.3' > "$R/etc/resolv.conf"
