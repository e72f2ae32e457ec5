//! temper: hardens a VM against a SCAP profile, one verified fix at a time.
mod cli;
mod cmd;
mod config;
mod progress;
mod telemetry;
mod wiring;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("temper: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    let code = runtime.block_on(cmd::dispatch(cli));
    std::process::ExitCode::from(code)
}
