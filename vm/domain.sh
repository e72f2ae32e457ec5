# The test domains' libvirt XML, shared by vm/up.sh and vm/boot-image.sh. Source it after
# lib.sh. Kept out of lib.sh, which is part of the image's recipe hash.
# Each domain's vCPUs: 2, or TEMPER_VM_VCPUS (tests/run.sh gives its two guests side by side 1 each).
VCPUS=${TEMPER_VM_VCPUS:-2}
# domain_xml NAME PORT DISK CONSOLE IMAGE_DIR DESCRIPTION: a TCG domain booting IMAGE_DIR's kernel
# with DISK as its root, VCPUS vCPUs, SSH forwarded from 127.0.0.1:PORT only.
domain_xml() {
  cat <<XML
<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>$1</name>
  <description>$6</description>
  <memory unit='MiB'>$MEM</memory>
  <vcpu>$VCPUS</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$5/vmlinuz</kernel>
    <initrd>$5/initrd.img</initrd>
    <cmdline>root=/dev/vda rw console=ttyS0 net.ifnames=0 quiet</cmdline>
  </os>
  <features><acpi/><apic/></features>
  <cpu mode='maximum'/>
  <clock offset='utc'/>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2' cache='unsafe'/>
      <source file='$3'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <serial type='file'><source path='$4'/><target port='0'/></serial>
    <memballoon model='none'/>
  </devices>
  <qemu:commandline>
    <qemu:arg value='-netdev'/>
    <qemu:arg value='user,id=slirp0,hostfwd=tcp:127.0.0.1:$2-:22'/>
    <qemu:arg value='-device'/>
    <qemu:arg value='virtio-net-pci,netdev=slirp0,addr=0x9'/>
  </qemu:commandline>
</domain>
XML
}
