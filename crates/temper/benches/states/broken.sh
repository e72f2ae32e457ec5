# The engines bench's `broken` state: every tree walker of ANSSI high and `standard` made to fail,
# as ComplianceAsCode's own test scenarios break them (each rule's tests/*.fail.sh). Run as root
# in the guest, from stdin, after the snapshot's revert.
set -eu
export DEBIAN_FRONTEND=noninteractive
# audit_rules_privileged_commands applies once auditd is installed; then a setuid binary with no
# audit rule fails it.
if ! command -v auditctl >/dev/null; then
    apt-get -q update >/dev/null && apt-get install -y -q auditd >/dev/null
fi
install -m 4755 /bin/true /usr/local/bin/temper-setuid
mkdir -p /srv/temper
# file_permissions_unauthorized_world_writable
touch /srv/temper/world-writable && chmod 0666 /srv/temper/world-writable
# dir_perms_world_writable_sticky_bits
mkdir -p /srv/temper/no-sticky && chmod 0777 /srv/temper/no-sticky
# dir_perms_world_writable_root_owned
mkdir -p /srv/temper/not-root && chown 65534:65534 /srv/temper/not-root && chmod 1777 /srv/temper/not-root
# no_files_unowned_by_user, file_permissions_ungroupowned
touch /srv/temper/unowned && chown 4242:4242 /srv/temper/unowned
# dir_system_commands_root_owned
mkdir -p /usr/local/sbin/temper-dir && chown 65534:65534 /usr/local/sbin/temper-dir
# accounts_users_home_files_permissions, _ownership, _groupownership: a file in each home
getent passwd | awk -F: '$3 >= 1000 && $3 < 65534 {print $1 ":" $6}' | while IFS=: read -r user home; do
    [ -d "$home" ] || continue
    install -o "$user" -m 0777 /dev/null "$home/temper-wrong-mode"
    install -o 4242 -g 4242 -m 0600 /dev/null "$home/temper-wrong-owner"
done
echo "broken: $(find /srv/temper /usr/local/sbin/temper-dir /usr/local/bin/temper-setuid | wc -l) entries"
