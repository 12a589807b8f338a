//! Model clients shipped with the core: scripted and test (offline).

mod scripted;
mod test_client;

pub use scripted::ScriptedClient;
pub use test_client::{example_value, TestClient};
