//! Where the file systems are on a raw disk: the whole disk, or each partition of an MBR or GPT
//! partition table; each one with an ext2/3/4 superblock is a candidate root.
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// A byte range of the disk that holds an ext file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Volume {
    pub offset: u64,
    pub len: u64,
    /// 0 for the whole disk, else the partition's number (from 1).
    pub partition: usize,
}

const SECTOR: u64 = 512;
/// The ext superblock's magic, at byte 56 of the superblock (1024 bytes in).
const EXT_MAGIC_AT: u64 = 1024 + 56;
/// More partition entries than any real table holds are not read.
const MAX_GPT_ENTRIES: u64 = 256;

/// The ext file systems of a raw disk of `size` bytes.
pub(crate) fn volumes(f: &mut File, size: u64) -> std::io::Result<Vec<Volume>> {
    let whole = Volume { offset: 0, len: size, partition: 0 };
    if is_ext(f, whole)? {
        return Ok(vec![whole]);
    }
    let mut out = Vec::new();
    for v in partitions(f, size)? {
        if v.offset.checked_add(v.len).is_some_and(|end| end <= size) && is_ext(f, v)? {
            out.push(v);
        }
    }
    Ok(out)
}

fn read_at(f: &mut File, at: u64, buf: &mut [u8]) -> std::io::Result<bool> {
    f.seek(SeekFrom::Start(at))?;
    match f.read_exact(buf) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}

fn is_ext(f: &mut File, v: Volume) -> std::io::Result<bool> {
    let mut m = [0u8; 2];
    Ok(v.len > EXT_MAGIC_AT + 2 && read_at(f, v.offset + EXT_MAGIC_AT, &mut m)? && m == [0x53, 0xEF])
}

fn le32(b: &[u8]) -> u64 {
    u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

/// The primary partitions of an MBR, or the entries of a GPT behind a protective MBR.
fn partitions(f: &mut File, size: u64) -> std::io::Result<Vec<Volume>> {
    let mut mbr = [0u8; 512];
    if !read_at(f, 0, &mut mbr)? || mbr[510..512] != [0x55, 0xAA] {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for i in 0..4 {
        let e = &mbr[446 + 16 * i..446 + 16 * (i + 1)];
        match e[4] {
            0 => {}
            0xEE => return gpt(f, size),
            _ => out.push(Volume { offset: le32(&e[8..12]) * SECTOR, len: le32(&e[12..16]) * SECTOR, partition: i + 1 }),
        }
    }
    Ok(out)
}

fn gpt(f: &mut File, size: u64) -> std::io::Result<Vec<Volume>> {
    let mut h = [0u8; 92];
    if !read_at(f, SECTOR, &mut h)? || &h[..8] != b"EFI PART" {
        return Ok(Vec::new());
    }
    let (lba, count, esize) = (le64(&h[72..80]), le32(&h[80..84]).min(MAX_GPT_ENTRIES), le32(&h[84..88]));
    if !(48..=4096).contains(&esize) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut e = vec![0u8; esize as usize];
    for i in 0..count {
        let Some(at) = lba.checked_mul(SECTOR).and_then(|b| b.checked_add(i * esize)).filter(|&a| a < size) else { break };
        if !read_at(f, at, &mut e)? {
            break;
        }
        if e[..16].iter().all(|&b| b == 0) {
            continue;
        }
        let (first, last) = (le64(&e[32..40]), le64(&e[40..48]));
        if last >= first {
            out.push(Volume { offset: first * SECTOR, len: (last - first + 1) * SECTOR, partition: i as usize + 1 });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn disk(bytes: &[(u64, &[u8])], size: u64) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.set_len(size).unwrap();
        for (at, b) in bytes {
            f.seek(SeekFrom::Start(*at)).unwrap();
            f.write_all(b).unwrap();
        }
        f
    }

    #[test]
    fn a_bare_file_system_is_the_whole_disk() {
        let mut f = disk(&[(EXT_MAGIC_AT, &[0x53, 0xEF])], 1 << 20);
        assert_eq!(volumes(&mut f, 1 << 20).unwrap(), [Volume { offset: 0, len: 1 << 20, partition: 0 }]);
    }

    #[test]
    fn an_mbr_partition_with_ext_is_found_and_others_are_not() {
        let mut mbr = [0u8; 512];
        // Partition 1: a non-ext one at sector 2048; partition 2: ext at sector 4096.
        for (i, start) in [(0usize, 2048u32), (1, 4096)] {
            let e = &mut mbr[446 + 16 * i..446 + 16 * (i + 1)];
            e[4] = 0x83;
            e[8..12].copy_from_slice(&start.to_le_bytes());
            e[12..16].copy_from_slice(&2048u32.to_le_bytes());
        }
        mbr[510] = 0x55;
        mbr[511] = 0xAA;
        let size = 8 << 20;
        let mut f = disk(&[(0, &mbr), (4096 * SECTOR + EXT_MAGIC_AT, &[0x53, 0xEF])], size);
        assert_eq!(volumes(&mut f, size).unwrap(), [Volume { offset: 4096 * SECTOR, len: 2048 * SECTOR, partition: 2 }]);
    }

    #[test]
    fn a_gpt_partition_with_ext_is_found() {
        let mut mbr = [0u8; 512];
        mbr[446 + 4] = 0xEE;
        mbr[510] = 0x55;
        mbr[511] = 0xAA;
        let mut h = [0u8; 92];
        h[..8].copy_from_slice(b"EFI PART");
        h[72..80].copy_from_slice(&2u64.to_le_bytes());
        h[80..84].copy_from_slice(&4u32.to_le_bytes());
        h[84..88].copy_from_slice(&128u32.to_le_bytes());
        let mut e = [0u8; 128];
        e[0] = 1;
        e[32..40].copy_from_slice(&2048u64.to_le_bytes());
        e[40..48].copy_from_slice(&4095u64.to_le_bytes());
        let size = 4 << 20;
        let mut f = disk(&[(0, &mbr), (SECTOR, &h), (2 * SECTOR + 128, &e), (2048 * SECTOR + EXT_MAGIC_AT, &[0x53, 0xEF])], size);
        assert_eq!(volumes(&mut f, size).unwrap(), [Volume { offset: 2048 * SECTOR, len: 2048 * SECTOR, partition: 2 }]);
    }
}
