//! For tests and benches: the PostgreSQL server they share, and a fresh database on it per test.
use std::sync::OnceLock;

use temper_journal::{JournalError, JournalResult};

/// The test server's URL: `TEMPER_TEST_PG`, else the cluster `tests/pg/start.sh` starts (it
/// installs Debian's PostgreSQL when missing, and runs it unprivileged on 127.0.0.1).
pub fn server_url() -> String {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        if let Ok(url) = std::env::var("TEMPER_TEST_PG") {
            return url;
        }
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/pg/start.sh");
        let out = std::process::Command::new("bash").arg(&script).output();
        match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().lines().last().unwrap_or_default().to_string(),
            Ok(o) => panic!(
                "PostgreSQL for the tests: {} failed ({}): {}\nset TEMPER_TEST_PG=postgres://… or fix the script",
                script.display(),
                o.status,
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => panic!("PostgreSQL for the tests: cannot run {}: {e}", script.display()),
        }
    })
    .clone()
}

/// Creates an empty database named `<prefix>_<pid>_<n>` on the server at `server` and returns
/// its URL.
pub async fn scratch_database(server: &str, prefix: &str) -> JournalResult<String> {
    use sqlx::Connection;
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let stamp = chrono::Utc::now().timestamp_millis() % 1_000_000_000;
    let name = format!("{prefix}_{}_{stamp}_{n}", std::process::id()).to_lowercase();
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(JournalError::Open(format!("database name `{name}`: letters, digits and _ only")));
    }
    let mut conn = sqlx::PgConnection::connect(server).await.map_err(|e| JournalError::Open(format!("{server}: {e}")))?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut conn).await.map_err(crate::db_error)?;
    let base = server.rsplit_once('/').map_or(server, |(b, _)| b);
    Ok(format!("{base}/{name}"))
}

/// A TCP relay from a new loopback port to the PostgreSQL server of `url`: the same URL through
/// the relay, and the relay's task. Aborting the task closes every relayed connection and refuses
/// new ones, as a driver's network going down would.
pub async fn relay(url: &str) -> std::io::Result<(String, tokio::task::JoinHandle<()>)> {
    use tokio::net::{TcpListener, TcpStream};
    let hostport = url.split('@').nth(1).and_then(|r| r.split('/').next()).unwrap_or_default().to_string();
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let relayed = url.replacen(&hostport, &format!("127.0.0.1:{}", listener.local_addr()?.port()), 1);
    let task = tokio::spawn(async move {
        let mut conns = tokio::task::JoinSet::new();
        while let Ok((mut inbound, _)) = listener.accept().await {
            let to = hostport.clone();
            conns.spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    Ok((relayed, task))
}
