//! `temper-mockllm --script FILE.json --port N [--host IP] [--log FILE]`: serves a script until
//! killed. Prints `listening on http://HOST:PORT` once ready.
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use clap::Parser;
use temper_mockllm::{MockLlm, load};

#[derive(Parser)]
#[command(about = "Scripted OpenAI-compatible chat-completions server")]
struct Args {
    /// JSON array of replies (see the temper_mockllm::script docs).
    #[arg(long)]
    script: PathBuf,
    /// 0 picks a free port.
    #[arg(long, default_value_t = 0)]
    port: u16,
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Appends each request body here as one JSON line.
    #[arg(long)]
    log: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let script = match load(&args.script) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("temper-mockllm: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let mock = match MockLlm::bind(SocketAddr::new(args.host, args.port), script, args.log).await {
        Ok(m) => m,
        Err(e) => {
            eprintln!("temper-mockllm: cannot listen on {}:{}: {e}", args.host, args.port);
            return std::process::ExitCode::from(1);
        }
    };
    println!("listening on {}", mock.url());
    let _ = tokio::signal::ctrl_c().await;
    mock.shutdown().await;
    std::process::ExitCode::SUCCESS
}
