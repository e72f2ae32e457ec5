//! An image's files: the handed-over disk as a new, compressed qcow2 (`compress`), the errors of
//! reading a domain's disk, and what a domain's XML says of its disk and its kernel.
use std::path::{Path, PathBuf};
use std::process::Stdio;

use quick_xml::events::Event;

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("libvirt: {0}")]
    Libvirt(String),
    #[error("`{uri}` is not this host: export reads the domain's disk file, so run it on the hypervisor's host")]
    Remote { uri: String },
    #[error("domain `{0}` has no file-backed disk to export")]
    NoDisk(String),
    #[error("qemu-img convert failed: {0}")]
    QemuImg(String),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// A domain's `<os>` kernel, initrd and command line (direct kernel boot).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DirectBoot {
    pub kernel: String,
    pub initrd: Option<String>,
    pub cmdline: Option<String>,
}

/// `input` (any qcow2) as a compressed qcow2 at `out`, through a temporary file beside it.
/// Returns its size.
pub async fn compress(input: &Path, out: &Path) -> Result<u64, ImageError> {
    let io = |path: &Path, source| ImageError::Io { path: path.to_path_buf(), source };
    let tmp = out.with_extension("part");
    let result = tokio::process::Command::new("qemu-img")
        .args(["convert", "-q", "-c", "-O", "qcow2"])
        .arg(input)
        .arg(&tmp)
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|e| io(Path::new("qemu-img"), e))?;
    if !result.status.success() {
        let _ = std::fs::remove_file(&tmp);
        return Err(ImageError::QemuImg(String::from_utf8_lossy(&result.stderr).trim().to_string()));
    }
    std::fs::rename(&tmp, out).map_err(|e| io(out, e))?;
    Ok(std::fs::metadata(out).map_err(|e| io(out, e))?.len())
}

/// A URI without a host: `qemu:///system`, not `qemu+ssh://host/system`.
pub(crate) fn is_local(uri: &str) -> bool {
    uri.split_once("://").is_some_and(|(_, rest)| rest.starts_with('/'))
}

/// The source file of the domain's first file-backed disk (`<disk device='disk'>`).
pub(crate) fn disk_source(xml: &str) -> Option<String> {
    let mut r = quick_xml::Reader::from_str(xml);
    let mut in_disk = false;
    loop {
        match r.read_event().ok()? {
            Event::Start(e) if e.name().0 == "disk" => {
                in_disk = e.try_get_attribute("device").ok().flatten().is_some_and(|a| &*a.value == "disk");
            }
            Event::End(e) if e.name().0 == "disk" => in_disk = false,
            Event::Empty(e) | Event::Start(e) if in_disk && e.name().0 == "source" => {
                if let Some(f) = e.try_get_attribute("file").ok().flatten() {
                    return f.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok().map(|v| v.into_owned());
                }
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}

/// The `<os>` element's kernel, initrd and cmdline, when it boots a kernel directly.
pub(crate) fn direct_boot(xml: &str) -> Option<DirectBoot> {
    let mut r = quick_xml::Reader::from_str(xml);
    let (mut in_os, mut at, mut boot) = (false, None::<String>, (None, None, None));
    loop {
        match r.read_event().ok()? {
            Event::Start(e) if e.name().0 == "os" => in_os = true,
            Event::End(e) if e.name().0 == "os" => break,
            Event::Start(e) if in_os => at = Some(String::from_utf8_lossy(e.name().0.as_ref()).into_owned()),
            Event::Text(t) if in_os => {
                let text = t.xml10_content().trim().to_string();
                match at.as_deref() {
                    Some("kernel") => boot.0 = Some(text),
                    Some("initrd") => boot.1 = Some(text),
                    Some("cmdline") => boot.2 = Some(text),
                    _ => {}
                }
            }
            Event::End(_) => at = None,
            Event::Eof => break,
            _ => {}
        }
    }
    Some(DirectBoot { kernel: boot.0?, initrd: boot.1, cmdline: boot.2 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_file_disk_is_the_source() {
        let xml = "<domain><devices><disk type='file' device='cdrom'><source file='/iso'/></disk>\
                   <disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='/var/a&amp;b.qcow2'/></disk>\
                   </devices></domain>";
        assert_eq!(disk_source(xml).as_deref(), Some("/var/a&b.qcow2"));
        assert_eq!(disk_source("<domain><devices/></domain>"), None);
        assert_eq!(disk_source("<domain><devices><disk device='disk'"), None, "malformed: none, no panic");
    }

    #[test]
    fn a_direct_kernel_boot_is_read_from_os() {
        let xml = "<domain><os><type arch='x86_64'>hvm</type><kernel>/img/vmlinuz</kernel><initrd>/img/initrd.img</initrd>\
                   <cmdline>root=/dev/vda rw</cmdline></os><devices/></domain>";
        let b = direct_boot(xml).unwrap();
        assert_eq!(
            (b.kernel.as_str(), b.initrd.as_deref(), b.cmdline.as_deref()),
            ("/img/vmlinuz", Some("/img/initrd.img"), Some("root=/dev/vda rw"))
        );
        assert_eq!(direct_boot("<domain><os><type>hvm</type><boot dev='hd'/></os></domain>"), None, "a disk's own bootloader");
    }

    #[test]
    fn only_uris_without_a_host_are_local() {
        assert!(is_local("qemu:///system") && is_local("test:///default"));
        assert!(!is_local("qemu+ssh://lab-2/system") && !is_local("nonsense"));
    }
}
