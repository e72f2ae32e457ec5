//! Defining a domain for a disk image (`temper target enroll --image`): TCG, SSH forwarded from
//! 127.0.0.1 only, as `vm/domain.sh` writes it for the test VMs.
use std::path::PathBuf;

use quick_xml::escape::escape;
use temper_core::ports::{PortError, PortResult};
use virt::connect::Connect;

use crate::LibvirtHypervisor;
use crate::image::DirectBoot;

/// A domain for one disk.
#[derive(Debug, Clone)]
pub struct DomainSpec {
    pub name: String,
    pub disk: PathBuf,
    pub memory_mib: u32,
    /// Host port on 127.0.0.1 forwarded to the guest's port 22.
    pub ssh_port: u16,
    /// A kernel from the host (the test images have no bootloader); `None` boots the disk.
    pub direct_boot: Option<DirectBoot>,
    /// A file the serial console is written to; `None`: a pty.
    pub console: Option<PathBuf>,
}

impl DomainSpec {
    pub fn xml(&self) -> String {
        let e = |s: &str| escape(s).into_owned();
        let boot = match &self.direct_boot {
            Some(b) => format!(
                "<kernel>{}</kernel>{}{}",
                e(&b.kernel),
                b.initrd.as_deref().map(|i| format!("<initrd>{}</initrd>", e(i))).unwrap_or_default(),
                b.cmdline.as_deref().map(|c| format!("<cmdline>{}</cmdline>", e(c))).unwrap_or_default()
            ),
            None => "<boot dev='hd'/>".into(),
        };
        let serial = match &self.console {
            Some(f) => format!("<serial type='file'><source path='{}'/><target port='0'/></serial>", e(&f.display().to_string())),
            None => "<serial type='pty'><target port='0'/></serial>".into(),
        };
        format!(
            "<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\
             <name>{name}</name><description>enrolled by temper</description><memory unit='MiB'>{mem}</memory><vcpu>2</vcpu>\
             <os><type arch='x86_64' machine='pc'>hvm</type>{boot}</os><features><acpi/><apic/></features>\
             <cpu mode='maximum'/><clock offset='utc'/><on_crash>destroy</on_crash><devices>\
             <emulator>/usr/bin/qemu-system-x86_64</emulator><disk type='file' device='disk'>\
             <driver name='qemu' type='qcow2' cache='unsafe'/><source file='{disk}'/><target dev='vda' bus='virtio'/></disk>\
             {serial}<memballoon model='none'/></devices>\
             <qemu:commandline><qemu:arg value='-netdev'/><qemu:arg value='user,id=slirp0,hostfwd=tcp:127.0.0.1:{port}-:22'/>\
             <qemu:arg value='-device'/><qemu:arg value='virtio-net-pci,netdev=slirp0,addr=0x9'/></qemu:commandline></domain>",
            name = e(&self.name),
            mem = self.memory_mib,
            disk = e(&self.disk.display().to_string()),
            port = self.ssh_port,
        )
    }
}

impl LibvirtHypervisor {
    /// Defines (persistently) the domain `spec` describes; an existing one of that name is an error.
    pub async fn define(&self, spec: &DomainSpec) -> PortResult<()> {
        let (uri, xml) = (self.config().uri.clone(), spec.xml());
        tokio::task::spawn_blocking(move || {
            let conn = Connect::open(Some(&uri)).map_err(|e| PortError::Hypervisor(format!("connect to {uri}: {}", e.message())))?;
            conn.define_domain_xml(&xml).map(|_| ()).map_err(|e| PortError::Hypervisor(format!("define: {}", e.message())))
        })
        .await
        .map_err(|e| PortError::Hypervisor(format!("define: {e}")))?
    }

    /// The domain's disk file, and whether it runs now.
    pub async fn disk(&self) -> PortResult<(PathBuf, bool)> {
        let domain = self.config().domain.clone();
        self.with_domain("disk", move |dom| {
            let hv = |e: virt::error::Error| PortError::Hypervisor(format!("domain `{domain}`: {}", e.message()));
            let disk = crate::image::disk_source(&dom.xml_desc(0).map_err(hv)?)
                .ok_or_else(|| PortError::Hypervisor(format!("domain `{domain}` has no file-backed disk")))?;
            Ok((PathBuf::from(disk), dom.is_active().map_err(hv)?))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_xml_escapes_and_forwards_ssh_on_loopback_only() {
        let spec = DomainSpec {
            name: "a<b".into(),
            disk: "/img/x&y.qcow2".into(),
            memory_mib: 1024,
            ssh_port: 2297,
            direct_boot: Some(DirectBoot { kernel: "/k".into(), initrd: None, cmdline: Some("root=/dev/vda rw".into()) }),
            console: None,
        };
        let xml = spec.xml();
        assert!(xml.contains("<name>a&lt;b</name>") && xml.contains("source file='/img/x&amp;y.qcow2'"), "{xml}");
        assert!(xml.contains("hostfwd=tcp:127.0.0.1:2297-:22"));
        assert!(xml.contains("<kernel>/k</kernel><cmdline>root=/dev/vda rw</cmdline>") && !xml.contains("<initrd>"));
        assert!(xml.contains("<serial type='pty'>"));
        let logged = DomainSpec { console: Some("/run/a&b.log".into()), ..spec.clone() }.xml();
        assert!(logged.contains("<serial type='file'><source path='/run/a&amp;b.log'/>"), "{logged}");
        assert!(DomainSpec { direct_boot: None, ..spec }.xml().contains("<boot dev='hd'/>"));
    }
}
