//! Logs through `tracing` to stderr (`TEMPER_LOG`, default `info`), as text (coloured only on
//! a terminal) or as one JSON object per line (`--log-format json`), and spans to an OTLP
//! collector when `otlp_endpoint` (or `OTEL_EXPORTER_OTLP_ENDPOINT`) is set.
use std::io::IsTerminal;
use std::sync::OnceLock;

use clap::ValueEnum;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Level;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// How lines on stderr look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    /// Plain lines; ANSI colour only when stderr is a terminal (and NO_COLOR is unset).
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `fields`, `target`.
    Json,
}

impl LogFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Json => "json",
        }
    }
}

/// What `init` sets up.
#[derive(Debug, Clone, Default)]
pub struct TelemetrySettings {
    pub format: LogFormat,
    pub otlp_endpoint: Option<String>,
}

/// Flushes spans on drop.
pub struct Telemetry(Option<SdkTracerProvider>);

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = p.shutdown();
        }
    }
}

static FORMAT: OnceLock<LogFormat> = OnceLock::new();

/// Sets the format of [`notice`]s; the first call wins (main calls it before reading the config).
pub fn set_format(format: LogFormat) {
    let _ = FORMAT.set(format);
}

/// A message for whoever reads stderr, whatever `TEMPER_LOG` filters: `temper: …` as text, or
/// a JSON line shaped like the log's.
pub fn notice(level: Level, msg: std::fmt::Arguments<'_>) {
    match FORMAT.get().copied().unwrap_or_default() {
        LogFormat::Text => eprintln!("temper: {msg}"),
        LogFormat::Json => {
            let line = serde_json::json!({
                "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
                "level": level.as_str(),
                "fields": {"message": msg.to_string()},
                "target": "temper",
            });
            eprintln!("{line}");
        }
    }
}

pub fn init(settings: &TelemetrySettings) -> Telemetry {
    set_format(settings.format);
    let filter = EnvFilter::try_from_env("TEMPER_LOG").unwrap_or_else(|_| EnvFilter::new("warn,temper=info"));
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let text = (settings.format == LogFormat::Text)
        .then(|| tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_target(false).with_ansi(ansi));
    let json =
        (settings.format == LogFormat::Json).then(|| tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false).json());
    let endpoint = settings.otlp_endpoint.clone().or_else(|| std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").ok());
    let provider = endpoint.and_then(|ep| {
        let exporter = SpanExporter::builder().with_http().with_endpoint(format!("{}/v1/traces", ep.trim_end_matches('/'))).build().ok()?;
        Some(
            SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(opentelemetry_sdk::Resource::builder().with_service_name("temper").build())
                .build(),
        )
    });
    let otel = provider.as_ref().map(|p| tracing_opentelemetry::layer().with_tracer(p.tracer("temper")));
    let _ = tracing_subscriber::registry().with(filter).with(text).with(json).with(otel).try_init();
    Telemetry(provider)
}
