//! Tools defined from Rust types (docs/behaviour.md §20): the arguments' JSON Schema comes
//! from `schemars::JsonSchema` (doc comments become descriptions), each call's arguments
//! are decoded with `serde::Deserialize` before the function runs, and the result type's
//! schema is the tool's output schema.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::error::ToolError;
use crate::input_path::{json_pointer, PathStep};
use crate::schema::{JsonSchema, Validator};
use crate::tool::{Tool, ToolExecutor};
use crate::tool_runtime::ToolRuntime;

/// The JSON Schema (draft 2020-12) of `T` as a tool sends it: without `$schema` and the
/// root `title` (the type's Rust name, which tells the model nothing).
pub fn schema_for_type<T: schemars::JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(m) = &mut schema {
        m.remove("$schema");
        m.remove("title");
    }
    schema
}

/// Decodes `value` into `T`; the error is `<JSON pointer>: <reason>`.
pub fn decode_input<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let steps: Vec<PathStep> = e
            .path()
            .iter()
            .filter_map(|segment| match segment {
                serde_path_to_error::Segment::Seq { index } => Some(PathStep::Index(*index)),
                serde_path_to_error::Segment::Map { key } => Some(PathStep::Key(key.clone())),
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => None,
            })
            .collect();
        format!("{}: {}", json_pointer(&steps), e.inner())
    })
}

/// Checks that a call's arguments decode into `In` (so a value the schema admits but the
/// type does not is a tool input error the model can correct), and describes `In`.
struct DecodesInto<In> {
    schema: Value,
    decodes: PhantomData<fn() -> In>,
}

#[async_trait]
impl<In: DeserializeOwned + 'static> Validator for DecodesInto<In> {
    async fn validate(&self, value: Value) -> Result<Value, ToolError> {
        decode_input::<In>(&value).map_err(ToolError::new)?;
        Ok(value)
    }

    fn json_schema(&self) -> Option<Value> {
        Some(self.schema.clone())
    }
}

struct TypedExecutor<In, Out, F> {
    run: Arc<F>,
    types: PhantomData<fn(In) -> Out>,
}

fn encode_output<Out: Serialize>(output: Out) -> Result<Value, ToolError> {
    serde_json::to_value(output)
        .map_err(|e| ToolError::new(format!("the tool's result cannot be written as JSON: {e}")))
}

#[async_trait]
impl<In, Out, F> ToolExecutor for TypedExecutor<In, Out, F>
where
    In: DeserializeOwned + Send + 'static,
    Out: Serialize + Send + 'static,
    F: Fn(In, ToolRuntime) -> Result<Out, ToolError> + Send + Sync + 'static,
{
    async fn execute(&self, input: Value, runtime: ToolRuntime) -> Result<Value, ToolError> {
        let input = decode_input::<In>(&input).map_err(ToolError::new)?;
        let run = Arc::clone(&self.run);
        // Blocking functions run off the async workers, as `Tool::new`'s do.
        match tokio::task::spawn_blocking(move || run(input, runtime)).await {
            Ok(output) => encode_output(output?),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(ToolError::new(e.to_string())),
        }
    }
}

struct TypedAsyncExecutor<In, Out, F> {
    run: F,
    types: PhantomData<fn(In) -> Out>,
}

#[async_trait]
impl<In, Out, F, Fut> ToolExecutor for TypedAsyncExecutor<In, Out, F>
where
    In: DeserializeOwned + Send + 'static,
    Out: Serialize + Send + 'static,
    F: Fn(In, ToolRuntime) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
{
    async fn execute(&self, input: Value, runtime: ToolRuntime) -> Result<Value, ToolError> {
        let input = decode_input::<In>(&input).map_err(ToolError::new)?;
        encode_output((self.run)(input, runtime).await?)
    }
}

impl Tool {
    /// `tool` with `In`'s schema as `parameters` (decoded on each call) and `Out`'s as
    /// its output schema.
    fn with_types<In, Out>(tool: Tool) -> Self
    where
        In: schemars::JsonSchema + DeserializeOwned + 'static,
        Out: schemars::JsonSchema,
    {
        let decodes = DecodesInto::<In> {
            schema: schema_for_type::<In>(),
            decodes: PhantomData,
        };
        let mut tool = tool.input_schema(Arc::new(decodes));
        match JsonSchema::compile(&schema_for_type::<Out>()) {
            Ok(output) => tool.output_schema(Arc::new(output)),
            Err(e) => {
                tool.problems.push(format!("output type: {e}"));
                tool
            }
        }
    }

    /// A tool defined from Rust types (docs/behaviour.md §20): `parameters` are `In`'s JSON
    /// Schema (field doc comments become descriptions), each call's arguments are decoded
    /// into `In` before `execute` runs (a value that does not decode is
    /// `Invalid tool input: <path>: <reason>`), and `Out`'s schema checks the result.
    /// `execute` runs on a blocking thread, as with [`Tool::new`]; `.strict(true)` sends
    /// the strict form of the generated schema ([`crate::make_strict`]).
    ///
    /// ```
    /// use phaseo_agent::{Tool, ToolError};
    /// use schemars::JsonSchema;
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Weather {
    ///     /// City name, e.g. "Lisbon".
    ///     city: String,
    /// }
    ///
    /// #[derive(Serialize, JsonSchema)]
    /// struct Forecast {
    ///     celsius: f64,
    /// }
    ///
    /// let weather = Tool::typed("weather", "Current weather", |input: Weather, _rt| {
    ///     Ok::<_, ToolError>(Forecast { celsius: if input.city == "Lisbon" { 21.0 } else { 9.0 } })
    /// });
    /// assert_eq!(weather.parameters_schema()["required"][0], "city");
    /// ```
    pub fn typed<In, Out, F>(
        id: impl Into<String>,
        description: impl Into<String>,
        execute: F,
    ) -> Self
    where
        In: schemars::JsonSchema + DeserializeOwned + Send + 'static,
        Out: schemars::JsonSchema + Serialize + Send + 'static,
        F: Fn(In, ToolRuntime) -> Result<Out, ToolError> + Send + Sync + 'static,
    {
        let executor = TypedExecutor {
            run: Arc::new(execute),
            types: PhantomData,
        };
        Self::with_types::<In, Out>(Tool::with_executor(
            id,
            description,
            Value::Null,
            Arc::new(executor),
        ))
    }

    /// [`Tool::typed`] with an asynchronous function.
    pub fn typed_async<In, Out, F, Fut>(
        id: impl Into<String>,
        description: impl Into<String>,
        execute: F,
    ) -> Self
    where
        In: schemars::JsonSchema + DeserializeOwned + Send + 'static,
        Out: schemars::JsonSchema + Serialize + Send + 'static,
        F: Fn(In, ToolRuntime) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
    {
        let executor = TypedAsyncExecutor {
            run: execute,
            types: PhantomData,
        };
        Self::with_types::<In, Out>(Tool::with_executor(
            id,
            description,
            Value::Null,
            Arc::new(executor),
        ))
    }

    /// A manual tool (no executor: each call pauses for the application's output) whose
    /// `parameters` come from `In` and whose supplied output is checked against `Out`.
    pub fn typed_external<In, Out>(id: impl Into<String>, description: impl Into<String>) -> Self
    where
        In: schemars::JsonSchema + DeserializeOwned + 'static,
        Out: schemars::JsonSchema,
    {
        Self::with_types::<In, Out>(Tool::external(id, description, Value::Null))
    }
}
