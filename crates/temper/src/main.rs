//! temper: hardens a VM against a SCAP profile, one verified fix at a time.
mod cli;
mod cmd;
mod config;
mod controls;
mod progress;
mod telemetry;
mod wiring;

use clap::Parser;
use tracing::Level;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    telemetry::set_format(cli.log_format);
    let config = match config::Config::load(&cli.config) {
        Ok(c) => c,
        Err(e) => {
            telemetry::notice(Level::ERROR, format_args!("{e}"));
            return std::process::ExitCode::from(cmd::EXIT_ERROR);
        }
    };
    // Outside the async runtime: the OTLP exporter runs on a thread of its own.
    let telemetry = telemetry::init(&telemetry::TelemetrySettings { format: cli.log_format, otlp_endpoint: config.otlp_endpoint.clone() });
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            telemetry::notice(Level::ERROR, format_args!("cannot start the async runtime: {e}"));
            return std::process::ExitCode::from(cmd::EXIT_ERROR);
        }
    };
    let code = runtime.block_on(cmd::dispatch(cli, config));
    drop(runtime);
    drop(telemetry); // flushes spans
    std::process::ExitCode::from(code)
}
