# The engines bench's `hostile` state: file names holding spaces, newlines and bytes that are not
# UTF-8, where the tree walkers look (some of them breaking a rule, some not). Run as root in the
# guest, from stdin, after the snapshot's revert.
set -eu
d=/srv/temper-names
mkdir -p "$d"
for name in 'with space' $'new\nline' $'not\xffutf8' $'all of \xfe\nit' ' lead' 'trail ' $'\ttab'; do
    touch "$d/$name"
    mkdir -p "$d/dir $name"
done
chmod 0666 "$d/with space" $'/srv/temper-names/not\xffutf8'      # world-writable
chmod 0777 $'/srv/temper-names/dir new\nline'                       # world-writable, no sticky bit
chown 4242:4242 $'/srv/temper-names/all of \xfe\nit' "$d/ lead"    # unowned
chmod 1777 "$d/dir trail " && chown 65534 "$d/dir trail "          # world-writable, not root's
install -m 4755 /bin/true $'/usr/local/bin/set uid\xff\n'          # setuid
mkdir -p $'/usr/local/sbin/cmd dir\xfe' && chown 65534 $'/usr/local/sbin/cmd dir\xfe'
getent passwd | awk -F: '$3 >= 1000 && $3 < 65534 {print $1 ":" $6}' | while IFS=: read -r user home; do
    [ -d "$home" ] || continue
    install -o "$user" -m 0644 /dev/null "$home/fine name"
    install -o "$user" -m 0777 /dev/null "$home"/$'mode\xff\nwrong'
    install -o 4242 -m 0600 /dev/null "$home/owner wrong "
done
echo "hostile: $(find "$d" | wc -l) entries"
