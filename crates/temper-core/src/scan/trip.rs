//! One oscap run in one round trip to the guest. Its input files (a tailoring copy, or an OVAL
//! document and its variables) arrive on stdin, one after the other; the script writes each
//! (`dd`, exactly its size), runs oscap with its PID in the pid file (for the watchdog) and
//! its chatter on stderr, prints the results document on stdout and removes every file.
//! Every name and argument stays argv: nothing is quoted into the script.
//!
//! With a working folder, oscap runs in it (made new, mode 700), and each `*.result.xml` it
//! writes there (`--oval-results`) follows the results on stdout as `NUL name NUL bytes`: XML
//! has no NUL. The folder is removed with the files.
//!
//! argv: `bash -c TRIP temper PIDFILE RESULTS WORKDIR N [SIZE PATH]×N oscap ARGS…` (WORKDIR
//! empty for none)

/// The script. Exit codes: oscap's (0 and 2 mean results), 120 when an input or the working
/// folder could not be written, 121 when the results could not be read.
pub const TRIP: &str = r#"pid=$1 res=$2 dir=$3 n=$4; shift 4
made=("$pid" "$res")
for ((i = 0; i < n; i++)); do
  size=$1 path=$2; shift 2; made+=("$path")
  if [ "$size" -gt 0 ]; then dd of="$path" bs="$size" count=1 iflag=fullblock status=none; else : > "$path"; fi \
    || { echo "temper: writing $path failed" >&2; rm -f -- "${made[@]}"; exit 120; }
done
if [ -n "$dir" ]; then
  mkdir -m 700 -- "$dir" && cd -- "$dir" || { echo "temper: making $dir failed" >&2; rm -f -- "${made[@]}"; exit 120; }
fi
exec </dev/null
"$@" >&2 &
echo $! > "$pid"
wait $!; s=$?
if [ $s -eq 0 ] || [ $s -eq 2 ]; then
  cat -- "$res" || { echo "temper: reading $res failed" >&2; s=121; }
  if [ -n "$dir" ]; then
    for f in "$dir"/*.result.xml; do
      [ -f "$f" ] || continue
      printf '\0%s\0' "${f##*/}"; cat -- "$f" || { echo "temper: reading $f failed" >&2; s=121; }
    done
  fi
fi
rm -f -- "${made[@]}"
if [ -n "$dir" ]; then cd / && rm -rf -- "$dir"; fi
exit $s"#;

/// A trip's stdout: the results document, then each document oscap wrote to the working
/// folder, by file name.
pub fn split_output(stdout: &[u8]) -> (&[u8], Vec<(String, &[u8])>) {
    let mut parts = stdout.split(|b| *b == 0);
    let results = parts.next().unwrap_or_default();
    let mut docs = Vec::new();
    while let (Some(name), Some(bytes)) = (parts.next(), parts.next()) {
        docs.push((String::from_utf8_lossy(name).into_owned(), bytes));
    }
    (results, docs)
}

/// What one trip runs: its pid and results files, its inputs, and `oscap`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trip {
    pub pid: String,
    pub results: String,
    /// A folder to run oscap in, for the documents it writes there; `None`: where it starts.
    pub workdir: Option<String>,
    /// Each input's path in the guest and its bytes.
    pub inputs: Vec<(String, Vec<u8>)>,
    /// The arguments after `oscap`.
    pub args: Vec<String>,
}

impl Trip {
    /// The command's argv and its stdin.
    pub fn argv_and_stdin(&self) -> (Vec<String>, Vec<u8>) {
        let mut argv: Vec<String> = vec!["bash".into(), "-c".into(), TRIP.into(), "temper".into()];
        let workdir = self.workdir.clone().unwrap_or_default();
        argv.extend([self.pid.clone(), self.results.clone(), workdir, self.inputs.len().to_string()]);
        let mut stdin = Vec::new();
        for (path, bytes) in &self.inputs {
            argv.extend([bytes.len().to_string(), path.clone()]);
            stdin.extend_from_slice(bytes);
        }
        argv.push("oscap".into());
        argv.extend(self.args.iter().cloned());
        (argv, stdin)
    }

    /// Reads a trip back from its argv and stdin (for guests that answer from a script).
    pub fn parse(argv: &[String], stdin: &[u8]) -> Option<Self> {
        let [bash, c, script, _, pid, results, workdir, n, rest @ ..] = argv else { return None };
        if bash != "bash" || c != "-c" || script != TRIP {
            return None;
        }
        let n: usize = n.parse().ok()?;
        let (sizes, oscap) = rest.split_at_checked(2 * n)?;
        let mut inputs = Vec::new();
        let mut at = 0usize;
        for pair in sizes.chunks(2) {
            let size: usize = pair[0].parse().ok()?;
            inputs.push((pair[1].clone(), stdin.get(at..at + size)?.to_vec()));
            at += size;
        }
        let (first, args) = oscap.split_first()?;
        let workdir = (!workdir.is_empty()).then(|| workdir.clone());
        (first == "oscap").then(|| Self { pid: pid.clone(), results: results.clone(), workdir, inputs, args: args.to_vec() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trip_reads_back_as_written() {
        let t = Trip {
            pid: "/var/tmp/a.pid".into(),
            results: "/var/tmp/a.xml".into(),
            workdir: Some("/var/tmp/a-oscap".into()),
            inputs: vec![("/var/tmp/doc".into(), b"<doc/>".to_vec()), ("/var/tmp/empty".into(), vec![])],
            args: vec!["oval".into(), "eval".into()],
        };
        let (argv, stdin) = t.argv_and_stdin();
        assert_eq!(stdin, b"<doc/>");
        assert_eq!(Trip::parse(&argv, &stdin), Some(t.clone()));
        let plain = Trip { workdir: None, ..t };
        let (argv, stdin) = plain.argv_and_stdin();
        assert_eq!(Trip::parse(&argv, &stdin), Some(plain), "no working folder reads back as none");
        assert_eq!(Trip::parse(&argv, b"<do"), None, "stdin shorter than the sizes say");
        assert_eq!(Trip::parse(&["bash".into(), "-s".into()], b""), None);
    }

    /// Runs a trip in real bash, with a stand-in `oscap` first on PATH: it prints chatter, copies
    /// file `$1` to `$2`, writes `$4` and `notes.txt` where it runs when `$4` is given, then exits `$3`.
    fn run(dir: &std::path::Path, inputs: Vec<(String, Vec<u8>)>, args: [&str; 3]) -> std::process::Output {
        run_in(dir, None, inputs, &args)
    }

    fn run_in(dir: &std::path::Path, workdir: Option<String>, inputs: Vec<(String, Vec<u8>)>, args: &[&str]) -> std::process::Output {
        use std::io::Write;
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("oscap"), "#!/bin/sh\necho chatter\ncat \"$1\" > \"$2\" 2>/dev/null\n[ -n \"$4\" ] && printf '<oval n=\"%s\"/>' \"$4\" > \"$4\" && : > notes.txt\nexit $3\n").unwrap();
        std::process::Command::new("chmod").arg("+x").arg(bin.join("oscap")).status().unwrap();
        let f = |n: &str| dir.join(n).to_str().unwrap().to_string();
        let args = args.iter().map(|a| a.to_string()).collect();
        let trip = Trip { pid: f("p.pid"), results: f("r.xml"), workdir, inputs, args };
        let (argv, stdin) = trip.argv_and_stdin();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        let mut child = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .env("PATH", path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&stdin).unwrap();
        child.wait_with_output().unwrap()
    }

    fn left(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.retain(|n| n != "bin");
        names
    }

    #[test]
    fn inputs_arrive_byte_exact_results_come_on_stdout_and_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
        let odd: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
        let inputs = vec![(d("a"), b"first\n".to_vec()), (d("empty"), vec![]), (d("b"), odd.clone())];
        let out = run(dir.path(), inputs, [&d("b"), &d("r.xml"), "2"]);
        assert_eq!(out.status.code(), Some(2), "oscap's own exit code");
        assert!(out.stdout == odd, "the results, and only them, on stdout ({} bytes)", out.stdout.len());
        assert_eq!(String::from_utf8_lossy(&out.stderr), "chatter\n", "oscap's chatter goes to stderr");
        assert_eq!(left(dir.path()), Vec::<String>::new(), "every file removed");
    }

    #[test]
    fn failures_are_exit_codes_of_their_own_and_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
        let out = run(dir.path(), vec![(d("no/such/dir/doc"), b"x".to_vec())], [&d("x"), &d("r.xml"), "0"]);
        assert_eq!(out.status.code(), Some(120), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("writing"));
        let out = run(dir.path(), vec![], [&d("missing"), "/dev/null", "0"]);
        assert_eq!(out.status.code(), Some(121), "no results file: {}", String::from_utf8_lossy(&out.stderr));
        let out = run(dir.path(), vec![(d("doc"), b"<doc/>".to_vec())], [&d("doc"), &d("r.xml"), "1"]);
        assert_eq!((out.status.code(), out.stdout.len()), (Some(1), 0), "an oscap error: no results read");
        assert_eq!(left(dir.path()), Vec::<String>::new(), "every file removed");
    }

    #[test]
    fn documents_written_in_the_working_folder_follow_the_results_and_the_folder_goes() {
        let dir = tempfile::tempdir().unwrap();
        let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
        let inputs = vec![(d("doc"), b"<TestResult/>".to_vec())];
        let out = run_in(dir.path(), Some(d("work")), inputs, &[&d("doc"), &d("r.xml"), "2", "ssg-x-oval.xml.result.xml"]);
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        let (results, docs) = split_output(&out.stdout);
        assert_eq!(results, b"<TestResult/>");
        let docs: Vec<(&str, &[u8])> = docs.iter().map(|(n, b)| (n.as_str(), *b)).collect();
        assert_eq!(docs, [("ssg-x-oval.xml.result.xml", &b"<oval n=\"ssg-x-oval.xml.result.xml\"/>"[..])], "only *.result.xml");
        assert_eq!(left(dir.path()), Vec::<String>::new(), "the folder and every file removed");
        assert_eq!(split_output(b"<TestResult/>"), (&b"<TestResult/>"[..], vec![]), "no folder, no documents");
        // A folder already there is never used: someone else may have made it.
        std::fs::create_dir(dir.path().join("work")).unwrap();
        let out = run_in(dir.path(), Some(d("work")), vec![(d("doc"), b"x".to_vec())], &[&d("doc"), &d("r.xml"), "0", "a.result.xml"]);
        assert_eq!(out.status.code(), Some(120), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(left(dir.path()), ["work"], "its inputs removed, the folder left to its owner");
        assert!(std::fs::read_dir(dir.path().join("work")).unwrap().next().is_none(), "nothing written into it");
    }
}
