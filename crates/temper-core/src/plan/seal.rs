//! A plan's seal. `SHA256SUMS` holds the sha256 of every other file of the plan's folder, in
//! the format `sha256sum --check` reads; `SHA256SUMS.sig` is an SSH signature over it (SSHSIG,
//! namespace `temper-plan`), as `ssh-keygen -Y sign -n temper-plan SHA256SUMS` writes it. A
//! signed plan is checked against an allowed-signers file before anything of it is read:
//! the signature, then every file's sha256, then that no file is missing or unlisted.
use std::path::{Path, PathBuf};

use chrono::Utc;
use ssh_key::{HashAlg, LineEnding, PrivateKey, PublicKey, SshSig};

use super::sha256_hex;
use super::signers::{self, Refusal};
pub use super::{MANIFEST, NAMESPACE, SIGNATURE};

/// What a plan must show before it is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// A signature by a key of this allowed-signers file.
    Signers(PathBuf),
    /// None asked for (`--unsigned`): only each script's sha256 in `plan.json` is checked.
    Unsigned,
}

/// Who signed a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signer {
    /// The allowed-signers line's principals.
    pub principals: String,
    /// `SHA256:…`, as `ssh-keygen -l` prints it.
    pub fingerprint: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "the plan is not signed ({SIGNATURE} is missing): nothing was run; sign it with `temper plan export --sign KEY`, or give --unsigned to apply it as it is"
    )]
    NotSigned,
    #[error("{SIGNATURE} is not an SSH signature: {0}")]
    Malformed(String),
    #[error("the plan is signed in the namespace `{0}`, not `{NAMESPACE}`: nothing was run")]
    Namespace(String),
    #[error("allowed signers {}: {message}", path.display())]
    Signers { path: PathBuf, message: String },
    #[error("the plan is signed by {0}, a key that is not in the allowed signers: nothing was run")]
    UnknownKey(String),
    #[error("the plan is signed by {fingerprint}, which the allowed signers' line {line} names, but {why}: nothing was run")]
    Refused { fingerprint: String, line: usize, why: Refusal },
    #[error("the signature does not match {MANIFEST}: the plan was changed after it was signed; nothing was run")]
    BadSignature,
    #[error("{file} does not match its sha256 in {MANIFEST}: the plan was changed after it was signed; nothing was run")]
    Changed { file: String },
    #[error("{file} is in {MANIFEST} and missing from the plan: nothing was run")]
    Missing { file: String },
    #[error("{file} is in the plan and not in {MANIFEST}: a file was added after it was signed; nothing was run")]
    Unlisted { file: String },
    #[error("{MANIFEST} line {line} is not `SHA256  FILE` for a file of the plan's folder")]
    ManifestLine { line: usize },
    #[error("{0} is not a plain file (a link, or something else): a plan holds only files")]
    NotAFile(String),
    #[error("`{0}`: a plan's file names are UTF-8 with no newline or backslash")]
    BadName(String),
    #[error("the signing key {}: {message}", path.display())]
    Key { path: PathBuf, message: String },
}

/// Writes `SHA256SUMS` for every file in `dir`, and returns its bytes.
pub fn write_manifest(dir: &Path) -> Result<Vec<u8>, SealError> {
    let mut text = String::new();
    for f in files(dir)? {
        let bytes = read(&dir.join(&f))?;
        text.push_str(&format!("{}  {f}\n", sha256_hex(&bytes)));
    }
    let path = dir.join(MANIFEST);
    std::fs::write(&path, &text).map_err(|source| SealError::Io { path, source })?;
    Ok(text.into_bytes())
}

/// Seals `dir`: writes its manifest and signs it with the OpenSSH private key at `key`
/// (decrypted with `passphrase` where it is encrypted).
pub fn sign(dir: &Path, key: &Path, passphrase: Option<&str>) -> Result<Signer, SealError> {
    let bad = |message: String| SealError::Key { path: key.to_path_buf(), message };
    let mut private = PrivateKey::read_openssh_file(key).map_err(|e| bad(format!("not an OpenSSH private key ({e})")))?;
    if private.is_encrypted() {
        let Some(p) = passphrase else {
            return Err(bad(
                "it is encrypted: set TEMPER_SIGN_PASSPHRASE, or sign SHA256SUMS with `ssh-keygen -Y sign -n temper-plan`".into()
            ));
        };
        private = private.decrypt(p).map_err(|e| bad(format!("it did not decrypt with TEMPER_SIGN_PASSPHRASE ({e})")))?;
    }
    let manifest = write_manifest(dir)?;
    let sig = private.sign(NAMESPACE, HashAlg::Sha512, &manifest).map_err(|e| bad(format!("it did not sign ({e})")))?;
    let pem = sig.to_pem(LineEnding::LF).map_err(|e| bad(e.to_string()))?;
    let path = dir.join(SIGNATURE);
    std::fs::write(&path, pem).map_err(|source| SealError::Io { path, source })?;
    Ok(Signer { principals: private.comment().to_string(), fingerprint: private.fingerprint(HashAlg::Sha256).to_string() })
}

/// Checks `dir`'s seal against the allowed signers in `signers`: who signed it, or why not.
pub fn verify(dir: &Path, signers: &Path) -> Result<Signer, SealError> {
    let sig_path = dir.join(SIGNATURE);
    if !sig_path.exists() {
        return Err(SealError::NotSigned);
    }
    let sig = SshSig::from_pem(read(&sig_path)?).map_err(|e| SealError::Malformed(e.to_string()))?;
    if sig.namespace() != NAMESPACE {
        return Err(SealError::Namespace(sig.namespace().to_string()));
    }
    let text = std::fs::read_to_string(signers).map_err(|source| SealError::Io { path: signers.to_path_buf(), source })?;
    let allowed = signers::parse(&text).map_err(|message| SealError::Signers { path: signers.to_path_buf(), message })?;
    let fingerprint = sig.public_key().fingerprint(HashAlg::Sha256).to_string();
    let mine: Vec<_> = allowed.iter().filter(|a| &a.key == sig.public_key()).collect();
    let now = Utc::now();
    let Some(line) = mine.iter().find(|a| a.allows(NAMESPACE, now).is_ok()) else {
        return Err(match mine.first() {
            Some(a) => SealError::Refused { fingerprint, line: a.line, why: a.allows(NAMESPACE, now).unwrap_err() },
            None => SealError::UnknownKey(fingerprint),
        });
    };
    let manifest = read(&dir.join(MANIFEST))?;
    PublicKey::from(sig.public_key().clone()).verify(NAMESPACE, &manifest, &sig).map_err(|_| SealError::BadSignature)?;
    check_manifest(dir, &manifest)?;
    Ok(Signer { principals: line.principals.clone(), fingerprint })
}

/// Every file the manifest lists matches it, and it lists every file in `dir`.
fn check_manifest(dir: &Path, manifest: &[u8]) -> Result<(), SealError> {
    let text = String::from_utf8_lossy(manifest);
    let mut listed = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let bad = || SealError::ManifestLine { line: i + 1 };
        let (sum, file) = l.split_once("  ").ok_or_else(bad)?;
        let plain = file.split('/').all(|p| !p.is_empty() && p != "." && p != "..") && !file.contains('\\');
        if sum.len() != 64 || !sum.bytes().all(|b| b.is_ascii_hexdigit()) || !plain {
            return Err(bad());
        }
        listed.push((sum.to_ascii_lowercase(), file.to_string()));
    }
    let present = files(dir)?;
    if let Some(f) = present.iter().find(|f| !listed.iter().any(|(_, l)| l == *f)) {
        return Err(SealError::Unlisted { file: f.clone() });
    }
    for (sum, file) in listed {
        if !present.contains(&file) {
            return Err(SealError::Missing { file });
        }
        if sha256_hex(&read(&dir.join(&file))?) != sum {
            return Err(SealError::Changed { file });
        }
    }
    Ok(())
}

/// The files of the plan's folder but the seal's own, as relative paths, sorted. A link or
/// anything else that is not a file or a folder is refused.
fn files(dir: &Path) -> Result<Vec<String>, SealError> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let path = dir.join(&rel);
        let entries = std::fs::read_dir(&path).map_err(|source| SealError::Io { path: path.clone(), source })?;
        for e in entries {
            let e = e.map_err(|source| SealError::Io { path: path.clone(), source })?;
            let rel = rel.join(e.file_name());
            let name = rel
                .to_str()
                .filter(|n| !n.contains(['\n', '\r', '\\']))
                .ok_or_else(|| SealError::BadName(rel.display().to_string()))?
                .to_string();
            let kind = e.file_type().map_err(|source| SealError::Io { path: e.path(), source })?;
            if kind.is_dir() {
                todo.push(rel);
            } else if !kind.is_file() {
                return Err(SealError::NotAFile(name));
            } else if name != MANIFEST && name != SIGNATURE {
                out.push(name);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn read(path: &Path) -> Result<Vec<u8>, SealError> {
    std::fs::read(path).map_err(|source| SealError::Io { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests;
