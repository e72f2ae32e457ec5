# Sourced by vm/up.sh and vm/boot-image.sh (not by lib.sh: that file is part of the image's
# recipe). A guest's SSH host key, pinned in $KNOWN_HOSTS, the file temper checks every connection
# against: recorded at the first contact with a domain just made from a built or exported image
# (each image build makes new keys; qemu holds the forwarded port from the domain's start),
# checked at every other contact. A guest that offers another key stops the script.
KNOWN_HOSTS=${TEMPER_KNOWN_HOSTS_FILE:-/etc/temper/known_hosts}
# The ssh options that check the guest's key against it, and nothing else.
PIN_SSH_OPTS=(-o StrictHostKeyChecking=yes -o UserKnownHostsFile="$KNOWN_HOSTS" -o GlobalKnownHostsFile=/dev/null -o UpdateHostKeys=no)
# pin_guest NAME PORT: the guest the functions below speak of.
pin_guest() { PIN_NAME=$1 PIN_PORT=$2 PIN_HOST="[127.0.0.1]:$2"; }
# recorded_key / offered_key: its ed25519 host key as recorded, as offered now ("type base64").
recorded_key() { if [ -f "$KNOWN_HOSTS" ]; then awk -v h="$PIN_HOST" '$1 == h {print $2" "$3; exit}' "$KNOWN_HOSTS"; fi; }
offered_key() { ssh-keyscan -T 5 -t ed25519 -p "$PIN_PORT" 127.0.0.1 2>/dev/null | awk '$2 == "ssh-ed25519" {print $2" "$3; exit}'; }
fp() { ssh-keygen -lf - <<<"$1" | awk '{print $2}'; }
# pin_key KEY: records KEY as its host key in place of any other (0600, under the lock temper takes).
pin_key() {
  install -d -m 0700 "$(dirname "$KNOWN_HOSTS")"
  (
    flock 9
    umask 077
    { if [ -f "$KNOWN_HOSTS" ]; then awk -v h="$PIN_HOST" '$1 != h' "$KNOWN_HOSTS"; fi; echo "$PIN_HOST $1 temper-vm:$PIN_NAME"; } >"$KNOWN_HOSTS.new"
    mv "$KNOWN_HOSTS.new" "$KNOWN_HOSTS"
  ) 9>>"$KNOWN_HOSTS.lock"
}
# changed_key OFFERED RECORDED: says so, and stops the script.
changed_key() {
  log "the SSH host key that $PIN_NAME offers on 127.0.0.1:$PIN_PORT ($(fp "$1")) is not the one recorded in $KNOWN_HOSTS ($(fp "$2"))."
  log "Someone may be posing as the guest. Nothing was run on it. If the guest was rebuilt, check its key on its console, then: temper target trust NAME (or TEMPER_VM_RECREATE=1 bash vm/up.sh $PIN_NAME $PIN_PORT)"
  exit 1
}
# first_contact SECONDS: waits for the domain just made to offer its key, and records it.
first_contact() {
  local end=$(( SECONDS + $1 )) key=""
  until key=$(offered_key) && [ -n "$key" ]; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.5
  done
  pin_key "$key"
  log "recorded $PIN_NAME's host key $(fp "$key") in $KNOWN_HOSTS (first contact with the domain just made)"
}
# check_pin: it offers the recorded key (none recorded yet, for a domain made before keys were
# pinned: recorded now); false when it does not answer; stops the script on another key.
check_pin() {
  local off rec
  off=$(offered_key); [ -n "$off" ] || return 1
  rec=$(recorded_key)
  if [ -z "$rec" ]; then pin_key "$off"; log "recorded $PIN_NAME's host key $(fp "$off") in $KNOWN_HOSTS (none was)"; return 0; fi
  [ "$rec" = "$off" ] || changed_key "$off" "$rec"
}
# key_refused SSH_STDERR: stops the script when ssh refused the guest's key.
key_refused() { if grep -q "Host key verification failed" <<<"$1"; then changed_key "$(offered_key)" "$(recorded_key)"; fi; }
