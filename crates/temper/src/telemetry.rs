//! Logs through `tracing` to stderr (`TEMPER_LOG`, default `info`), and spans to an OTLP
//! collector when `otlp_endpoint` (or `OTEL_EXPORTER_OTLP_ENDPOINT`) is set.
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Flushes spans on drop.
pub struct Telemetry(Option<SdkTracerProvider>);

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = p.shutdown();
        }
    }
}

pub fn init(otlp_endpoint: Option<&str>) -> Telemetry {
    let filter = EnvFilter::try_from_env("TEMPER_LOG").unwrap_or_else(|_| EnvFilter::new("warn,temper=info"));
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_target(false);
    let endpoint = otlp_endpoint.map(str::to_string).or_else(|| std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").ok());
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
    let _ = tracing_subscriber::registry().with(filter).with(fmt).with(otel).try_init();
    Telemetry(provider)
}
