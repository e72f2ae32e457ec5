//! temper-mockllm: a real HTTP server speaking OpenAI chat-completions that replays scripted
//! replies, the only test double the project allows. Library use:
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use temper_mockllm::{MockLlm, Scripted};
//! let mock = MockLlm::start(vec![Scripted::text("hello")]).await?;
//! let base = mock.url(); // point the client at base + "/v1/chat/completions"
//! # let _ = base; mock.shutdown().await; Ok(()) }
//! ```
//!
//! The binary `temper-mockllm --script FILE.json --port N` serves a script file; see [`script`]
//! for its format.
pub mod reply;
pub mod script;
mod server;

pub use script::{Arguments, MockScriptError, Scripted, ScriptedCall, load};
pub use server::{MockLlm, Order};
