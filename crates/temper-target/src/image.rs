//! An image's files: the handed-over disk as a new qcow2, compressed as asked (`compress`), the
//! errors of reading a domain's disk, and what a domain's XML says of its disk and its kernel.
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

/// How the exported qcow2's clusters are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    /// Every qcow2 reader reads it; one thread: about 50 s for a 1-GB guest here.
    #[default]
    Zlib,
    /// About five times faster to write, and smaller; qemu 5.1 or newer reads it.
    Zstd,
    /// Not compressed: the size of the data.
    None,
}

impl Compression {
    /// As the export's line says it.
    pub fn said(self) -> &'static str {
        match self {
            Self::Zlib => "zlib-compressed",
            Self::Zstd => "zstd-compressed: qemu 5.1 or newer reads it",
            Self::None => "uncompressed",
        }
    }

    /// qemu-img convert's options for it. zlib is qcow2's default type, left unnamed: the image
    /// then carries no compression-type field, which qemu before 5.1 would refuse.
    fn qemu_img_args(self) -> &'static [&'static str] {
        match self {
            Self::Zlib => &["-c"],
            Self::Zstd => &["-c", "-o", "compression_type=zstd"],
            Self::None => &[],
        }
    }
}

/// `input` (any qcow2) as a qcow2 at `out`, compressed as asked, through a temporary file beside
/// it. Returns its size.
pub async fn compress(input: &Path, out: &Path, how: Compression) -> Result<u64, ImageError> {
    let io = |path: &Path, source| ImageError::Io { path: path.to_path_buf(), source };
    let tmp = out.with_extension("part");
    let result = tokio::process::Command::new("qemu-img")
        .args(["convert", "-q", "-O", "qcow2"])
        .args(how.qemu_img_args())
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

    /// A qcow2 of 8 MiB of text (compressible, every cluster written), through qemu-img itself.
    fn text_qcow2(dir: &Path) -> PathBuf {
        let raw = dir.join("text.raw");
        let line = "temper compresses what it exports, as it is asked to\n";
        std::fs::write(&raw, line.repeat((8 << 20) / line.len() + 1)).unwrap();
        let qcow = dir.join("text.qcow2");
        let ok = std::process::Command::new("qemu-img").args(["convert", "-q", "-O", "qcow2"]).arg(&raw).arg(&qcow).status().unwrap();
        assert!(ok.success());
        qcow
    }

    /// `qemu-img info`'s compression type, and whether `qemu-img compare` finds the same data.
    fn info(image: &Path, with: &Path) -> (Option<String>, bool) {
        let out = std::process::Command::new("qemu-img").args(["info", "--output=json"]).arg(image).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let same = std::process::Command::new("qemu-img").args(["compare", "-q"]).arg(with).arg(image).status().unwrap().success();
        (v["format-specific"]["data"]["compression-type"].as_str().map(String::from), same)
    }

    #[tokio::test]
    async fn the_export_is_compressed_as_asked_and_holds_the_same_data() {
        let dir = tempfile::tempdir().unwrap();
        let input = text_qcow2(dir.path());
        let mut sizes = Vec::new();
        for (how, kind) in [(Compression::Zlib, "zlib"), (Compression::Zstd, "zstd"), (Compression::None, "zlib")] {
            let out = dir.path().join(format!("{how:?}.qcow2"));
            let bytes = compress(&input, &out, how).await.unwrap();
            assert_eq!(bytes, std::fs::metadata(&out).unwrap().len());
            assert_eq!(info(&out, &input), (Some(kind.to_string()), true), "{how:?}");
            assert!(!out.with_extension("part").exists());
            sizes.push(bytes);
        }
        // 8 MiB of one line: compressed it is a small part of that; uncompressed, all of it.
        assert!(sizes[0] < 1 << 20 && sizes[1] < 1 << 20, "{sizes:?}");
        assert!(sizes[2] > 8 << 20, "{sizes:?}");
    }

    #[tokio::test]
    async fn a_failed_compression_says_why_and_leaves_no_part_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.qcow2");
        let err = compress(&dir.path().join("missing.qcow2"), &out, Compression::Zstd).await.unwrap_err();
        assert!(matches!(&err, ImageError::QemuImg(m) if m.contains("missing.qcow2")), "{err}");
        assert!(!out.exists() && !out.with_extension("part").exists());
    }

    #[test]
    fn only_uris_without_a_host_are_local() {
        assert!(is_local("qemu:///system") && is_local("test:///default"));
        assert!(!is_local("qemu+ssh://lab-2/system") && !is_local("nonsense"));
    }
}
