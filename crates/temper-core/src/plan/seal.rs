//! A plan's seal. `SHA256SUMS` holds the sha256 of every other file of the plan's folder, in
//! the format `sha256sum --check` reads, and the plan's terms (its expiry, the targets it is
//! for: [`Terms`]) as lines that `sha256sum` skips; `SHA256SUMS.sig` is an SSH signature over it
//! (SSHSIG, namespace `temper-plan`), as `ssh-keygen -Y sign -n temper-plan SHA256SUMS` writes
//! it. A plan is checked from outside its folder, on the bytes read once ([`Folder`]), against an
//! allowed-signers file: the signature, that the allowed signers' revocation lists do not name
//! it, every file's sha256, that no file or folder is there that the manifest does not list,
//! then its terms ([`check`]).
use std::path::{Path, PathBuf};

use ssh_key::{HashAlg, LineEnding, PrivateKey, PublicKey, SshSig};

use super::signers::{self, SignerRefusal};
use temper_journal::plan::{Applying, Folder, FolderError, STEPS_DIR, Terms, TermsError, sha256_hex, terms};
use temper_journal::plan::{MANIFEST, NAMESPACE, SIGNATURE};

/// What a plan must show before it is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// A signature by a key of this allowed-signers file.
    Signers(PathBuf),
    /// None asked for (`--unsigned`): only each script's sha256 in `plan.json` is checked.
    Unsigned,
}

/// What a plan's seal showed: who signed it (`None`: applied `--unsigned`), its terms, and its
/// manifest's sha256 (what a signer revokes it by).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    pub signer: Option<Signer>,
    pub terms: Terms,
    pub manifest_sha256: Option<String>,
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
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error(transparent)]
    Terms(#[from] TermsError),
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
    Refused { fingerprint: String, line: usize, why: SignerRefusal },
    #[error("the signature does not match {MANIFEST}: the plan was changed after it was signed; nothing was run")]
    BadSignature,
    #[error("{file} does not match its sha256 in {MANIFEST}: the plan was changed after it was signed; nothing was run")]
    Changed { file: String },
    #[error("{file} is in {MANIFEST} and missing from the plan: nothing was run")]
    Missing { file: String },
    #[error("{file} is in the plan and not in {MANIFEST}: a file was added after it was signed; nothing was run")]
    Unlisted { file: String },
    #[error("{MANIFEST} line {line} is not `SHA256  FILE` for a file of the plan's folder, nor a term (`# temper-plan …`)")]
    ManifestLine { line: usize },
    #[error("{MANIFEST} line {line}: {source}")]
    ManifestTerm { line: usize, source: TermsError },
    #[error("the plan has no {MANIFEST}: write it with `temper plan export` (a plan's files are sealed by it)")]
    NoManifest,
    #[error(
        "the plan (its {MANIFEST} has sha256 {sha256}) is revoked: {} line {line} names it; nothing was run",
        list.display()
    )]
    Revoked { sha256: String, list: PathBuf, line: usize },
    #[error("the revocation list {}: {message}", path.display())]
    RevocationList { path: PathBuf, message: String },
    #[error("the signing key {}: {message}", path.display())]
    Key { path: PathBuf, message: String },
}

/// Writes `SHA256SUMS` for every file in `dir`, `terms` first, and returns its bytes.
pub fn write_manifest(dir: &Path, terms: &Terms) -> Result<Vec<u8>, SealError> {
    let folder = Folder::read(dir)?;
    let mut text = terms.lines();
    for f in folder.names().filter(|f| !is_seal(f)) {
        text.push_str(&format!("{}  {f}\n", sha256_hex(folder.file(f).unwrap_or_default())));
    }
    let path = dir.join(MANIFEST);
    std::fs::write(&path, &text).map_err(|source| SealError::Io { path, source })?;
    Ok(text.into_bytes())
}

/// Signs `dir`'s manifest with the OpenSSH private key at `key` (decrypted with `passphrase`
/// where it is encrypted), as `ssh-keygen -Y sign -n temper-plan SHA256SUMS` does, once the
/// folder is checked to be what the manifest says.
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
    let folder = Folder::read(dir)?;
    let manifest = folder.file(MANIFEST).ok_or(SealError::NoManifest)?;
    check_manifest(&folder, manifest, Hashes::Checked)?;
    let sig = private.sign(NAMESPACE, HashAlg::Sha512, manifest).map_err(|e| bad(format!("it did not sign ({e})")))?;
    let pem = sig.to_pem(LineEnding::LF).map_err(|e| bad(e.to_string()))?;
    let path = dir.join(SIGNATURE);
    std::fs::write(&path, pem).map_err(|source| SealError::Io { path, source })?;
    Ok(Signer { principals: private.comment().to_string(), fingerprint: private.fingerprint(HashAlg::Sha256).to_string() })
}

/// Checks a plan's folder, as read once, as `trust` asks, and its terms `at` where and when it
/// is applied: the one check every way of applying a plan makes.
/// - Signed: the signature by a key of the allowed signers, allowed now and for plans; that no
///   revocation list the allowed signers name holds the manifest's sha256; every file against
///   the manifest, and nothing in the folder that it does not list.
/// - `--unsigned`: no signature and no sha256 of the manifest (each script's sha256 in
///   `plan.json` is checked when the plan is read); still nothing that the manifest does not
///   list, where there is one.
pub fn check(folder: &Folder, trust: &Trust, at: &Applying<'_>) -> Result<Sealed, SealError> {
    let sealed = match trust {
        Trust::Signers(signers) => verify(folder, signers, at.now)?,
        Trust::Unsigned => match folder.file(MANIFEST) {
            Some(manifest) => Sealed { signer: None, terms: check_manifest(folder, manifest, Hashes::NotChecked)?, manifest_sha256: None },
            None => Sealed { signer: None, terms: Terms::default(), manifest_sha256: None },
        },
    };
    sealed.terms.check(at)?;
    Ok(sealed)
}

/// The signature, the revocation lists and the files; the terms are read, not checked.
fn verify(folder: &Folder, signers: &Path, now: chrono::DateTime<chrono::Utc>) -> Result<Sealed, SealError> {
    let sig = folder.file(SIGNATURE).ok_or(SealError::NotSigned)?;
    let sig = SshSig::from_pem(sig).map_err(|e| SealError::Malformed(e.to_string()))?;
    if sig.namespace() != NAMESPACE {
        return Err(SealError::Namespace(sig.namespace().to_string()));
    }
    let text = std::fs::read_to_string(signers).map_err(|source| SealError::Io { path: signers.to_path_buf(), source })?;
    let allowed = signers::parse(&text).map_err(|message| SealError::Signers { path: signers.to_path_buf(), message })?;
    let fingerprint = sig.public_key().fingerprint(HashAlg::Sha256).to_string();
    let mine: Vec<_> = allowed.iter().filter(|a| &a.key == sig.public_key()).collect();
    let Some(line) = mine.iter().find(|a| a.allows(NAMESPACE, now).is_ok()) else {
        return Err(match mine.first() {
            Some(a) => SealError::Refused { fingerprint, line: a.line, why: a.allows(NAMESPACE, now).unwrap_err() },
            None => SealError::UnknownKey(fingerprint),
        });
    };
    let manifest = folder.file(MANIFEST).ok_or_else(|| SealError::Missing { file: MANIFEST.into() })?;
    PublicKey::from(sig.public_key().clone()).verify(NAMESPACE, manifest, &sig).map_err(|_| SealError::BadSignature)?;
    let sha256 = sha256_hex(manifest);
    for list in signers::revocation_lists(&text) {
        let list = signers.parent().unwrap_or(Path::new(".")).join(list);
        revoked(&list, &sha256)?;
    }
    let terms = check_manifest(folder, manifest, Hashes::Checked)?;
    Ok(Sealed { signer: Some(Signer { principals: line.principals.clone(), fingerprint }), terms, manifest_sha256: Some(sha256) })
}

/// Refuses the manifest whose sha256 is `sha256` when the revocation list at `path` names it:
/// one sha256 a line (as `sha256sum SHA256SUMS` prints it; what follows it is a comment), `#`
/// comments. A list that cannot be read refuses every plan: it was asked for.
fn revoked(path: &Path, sha256: &str) -> Result<(), SealError> {
    let bad = |message: String| SealError::RevocationList { path: path.to_path_buf(), message };
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("{e}: nothing was run")))?;
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let sum = l.split_whitespace().next().unwrap_or_default();
        if sum.len() != 64 || !sum.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad(format!("line {} is not a manifest's sha256: nothing was run", i + 1)));
        }
        if sum.eq_ignore_ascii_case(sha256) {
            return Err(SealError::Revoked { sha256: sha256.to_string(), list: path.to_path_buf(), line: i + 1 });
        }
    }
    Ok(())
}

/// Whether [`check_manifest`] compares each file with its sha256.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hashes {
    Checked,
    /// `--unsigned`: only that the manifest lists every file.
    NotChecked,
}

/// The manifest's terms, once every file it lists is there and matches it (`hashes`), and it
/// lists every file of the folder and every folder but `steps/` holds a file it lists.
fn check_manifest(folder: &Folder, manifest: &[u8], hashes: Hashes) -> Result<Terms, SealError> {
    let text = std::str::from_utf8(manifest).map_err(|_| SealError::ManifestLine { line: 1 })?;
    let (mut listed, mut terms) = (Vec::new(), Terms::default());
    for (i, l) in text.lines().enumerate() {
        if l.starts_with(terms::PREFIX) {
            terms.read_line(l).map_err(|source| SealError::ManifestTerm { line: i + 1, source })?;
            continue;
        }
        let bad = || SealError::ManifestLine { line: i + 1 };
        let (sum, file) = l.split_once("  ").ok_or_else(bad)?;
        let plain = file.split('/').all(|p| !p.is_empty() && p != "." && p != "..") && !file.contains('\\');
        if sum.len() != 64 || !sum.bytes().all(|b| b.is_ascii_hexdigit()) || !plain || is_seal(file) {
            return Err(bad());
        }
        listed.push((sum.to_ascii_lowercase(), file.to_string()));
    }
    let is_listed = |f: &str| listed.iter().any(|(_, l)| l == f);
    if let Some(f) = folder.names().find(|f| !is_seal(f) && !is_listed(f)) {
        return Err(SealError::Unlisted { file: f.to_string() });
    }
    // `steps/` is always there, empty in a plan of no step.
    if let Some(d) = folder.dirs().find(|d| *d != STEPS_DIR && !listed.iter().any(|(_, l)| l.starts_with(&format!("{d}/")))) {
        return Err(SealError::Unlisted { file: format!("{d}/") });
    }
    for (sum, file) in listed {
        let Some(bytes) = folder.file(&file) else {
            return Err(SealError::Missing { file });
        };
        if hashes == Hashes::Checked && sha256_hex(bytes) != sum {
            return Err(SealError::Changed { file });
        }
    }
    Ok(terms)
}

/// The seal's own files, which the manifest does not list.
fn is_seal(file: &str) -> bool {
    file == MANIFEST || file == SIGNATURE
}

#[cfg(test)]
mod tests;
