//! Secrets withheld by what they are, wherever text from the guest goes (evidence, a fix's
//! output): crypt(3) password hashes, the password field of `passwd`, `shadow`, `group` and
//! `gshadow` lines, GRUB's PBKDF2 hashes and private keys. What the guest holds reaches the
//! journal, every report, the plan and the LLM's prompt; none of these needs a secret.
use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// What is shown in place of a hash.
pub const HASH: &str = "[hash withheld]";
/// What is shown in place of a private key.
pub const KEY: &str = "[private key withheld]";

static PRIVATE_KEY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)").unwrap());
/// crypt(3): `$1$`, `$2b$`, `$5$`, `$6$`, `$y$`, `$gy$`, `$7$`, `$sha1$`, `$md5`… then salt and hash.
static CRYPT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\$(?:1|2[abxy]?|5|6|7|y|gy|sha1|md5)\$[./A-Za-z0-9$=,]{8,}").unwrap());
static GRUB: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"grub\.pbkdf2\.[a-z0-9]+\.[0-9]+\.[0-9A-Fa-f.]+").unwrap());
/// A `passwd` (7 fields), `shadow` (9), `group` or `gshadow` (4) line: its second field.
static ACCOUNT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^([a-z_][a-z0-9_.-]*\$?):([^:\n]*)((?::[^:\n]*){2}|(?::[^:\n]*){5}|(?::[^:\n]*){7})$").unwrap());

/// `text` with every secret it holds replaced; borrowed when it holds none.
pub fn withhold(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for (re, with) in [(&*PRIVATE_KEY, KEY), (&*CRYPT, HASH), (&*GRUB, HASH)] {
        if re.is_match(&out) {
            out = Cow::Owned(re.replace_all(&out, with).into_owned());
        }
    }
    if ACCOUNT.is_match(&out) {
        let replaced = ACCOUNT.replace_all(&out, |c: &regex::Captures<'_>| format!("{}:{}{}", &c[1], password_field(&c[2]), &c[3]));
        out = Cow::Owned(replaced.into_owned());
    }
    out
}

/// An account line's password field: its lock marks (`!`, `*`) kept, and what follows them
/// withheld unless it is empty or `x` (the hash lives in shadow).
pub fn password_field(value: &str) -> String {
    let rest = value.trim_start_matches(['!', '*']);
    match rest {
        "" | "x" => value.to_string(),
        r if r == HASH || r.ends_with(HASH) => value.to_string(),
        _ => format!("{}{HASH}", &value[..value.len() - rest.len()]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_secret_is_withheld_and_the_rest_kept() {
        let cases = [
            (
                "root:$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7:19000:0:99999:7:::",
                "root:[hash withheld]:19000:0:99999:7:::",
            ),
            ("old:Xy3fT8aB9cD0e:1001:1001:Old Style:/home/old:/bin/sh", "old:[hash withheld]:1001:1001:Old Style:/home/old:/bin/sh"),
            ("locked:!$6$saltsalt$abcdefghijklmnop:1:2:3:4:5:6:", "locked:![hash withheld]:1:2:3:4:5:6:"),
            ("daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin", "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin"),
            ("nobody:*:19000:0:99999:7:::", "nobody:*:19000:0:99999:7:::"),
            ("staff:secretgrouppw:50:alice", "staff:[hash withheld]:50:alice"),
            ("password_pbkdf2 root grub.pbkdf2.sha512.10000.ABCDEF0123.456789abcd", "password_pbkdf2 root [hash withheld]"),
            ("echo done; the hash is $6$rounds=5000$saltsalt$Qw1hash/more.chars", "echo done; the hash is [hash withheld]"),
            ("PermitRootLogin no", "PermitRootLogin no"),
            ("12:34:56:78", "12:34:56:78"),
        ];
        for (input, want) in cases {
            assert_eq!(withhold(input), want, "{input}");
        }
        let key = "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter";
        assert_eq!(withhold(key), "before\n[private key withheld]\nafter");
        let cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA";
        assert_eq!(withhold(cut), KEY, "a key cut off by an output cap");
        assert!(matches!(withhold("nothing here"), Cow::Borrowed(_)));
    }
}
