//! Tools defined from Rust types (docs/behaviour.md §20): the schema generated from
//! `schemars::JsonSchema`, arguments decoded with serde before the function runs, wrong
//! types returned to the model, strict form on request, pause and continue from JSON.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use phaseo_agent::exec::block_on;
use phaseo_agent::schemars::{self, JsonSchema};
use phaseo_agent::{
    json, AgentDefinition, ContinueOptions, OnError, RunOptions, RunResult, RunStatus, Tool,
    ToolDecision, ToolError, Value,
};
use serde::{Deserialize, Serialize};

/// Who the order is for.
#[derive(Deserialize, JsonSchema)]
struct Customer {
    /// The customer's id in the shop, e.g. "C-1042".
    id: String,
    /// Shown on the packing slip.
    name: String,
}

/// One product line.
#[derive(Deserialize, JsonSchema)]
struct LineItem {
    /// Stock keeping unit.
    sku: String,
    /// How many, at least 1.
    quantity: u32,
}

/// How the parcel travels.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Shipping {
    Standard,
    Express,
}

/// An order to place.
#[derive(Deserialize, JsonSchema)]
struct PlaceOrder {
    customer: Customer,
    /// The products, in the order the customer added them.
    items: Vec<LineItem>,
    shipping: Shipping,
    /// A note for the courier.
    note: Option<String>,
    /// Wrap as a gift (default false).
    #[serde(default)]
    gift_wrap: bool,
}

/// The placed order.
#[derive(Serialize, JsonSchema)]
struct Receipt {
    /// The order number.
    order_id: String,
    /// Units in the parcel.
    units: u32,
}

/// A node of the catalogue tree: it holds its own kind.
#[derive(Deserialize, JsonSchema)]
struct Category {
    /// The category's label.
    name: String,
    /// Sub-categories.
    #[serde(default)]
    children: Vec<Category>,
}

fn place_order(ran: Arc<Mutex<Vec<String>>>) -> Tool {
    Tool::typed(
        "place_order",
        "Places an order",
        move |order: PlaceOrder, _rt| {
            let units = order.items.iter().map(|i| i.quantity).sum();
            let skus: Vec<&str> = order.items.iter().map(|i| i.sku.as_str()).collect();
            ran.lock().unwrap().push(format!(
                "{} {:?} {} {} {:?} {}",
                order.customer.name,
                order.shipping,
                skus.join(","),
                units,
                order.note,
                order.gift_wrap
            ));
            Ok::<_, ToolError>(Receipt {
                order_id: format!("O-{}", order.customer.id),
                units,
            })
        },
    )
}

/// Asserts `schema` equals the checked-in `tests/fixtures/<name>`
/// (`PHASEO_UPDATE_FIXTURES=1` rewrites the file instead).
fn assert_schema(schema: &Value, name: &str) {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("PHASEO_UPDATE_FIXTURES").is_some() {
        std::fs::write(&path, serde_json::to_string_pretty(schema).unwrap() + "\n").unwrap();
    }
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(schema, &expected);
}

#[test]
fn the_schema_comes_from_the_types_with_their_doc_comments() {
    let tool = place_order(Arc::default());
    assert_schema(tool.parameters_schema(), "typed_place_order.json");
}

#[test]
fn the_strict_form_lists_every_field_and_admits_null_for_optional_ones() {
    let tool = place_order(Arc::default()).strict(true);
    let schema = tool.parameters_schema();
    assert_eq!(phaseo_agent::strict_problem(schema), None);
    assert_eq!(
        schema["required"],
        json!(["customer", "items", "shipping", "note", "gift_wrap"])
    );
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(
        schema["properties"]["gift_wrap"]["type"],
        json!(["boolean", "null"])
    );
    // Accepted by the agent (strict tools are checked when it is defined), and a null for
    // a field with a default is that default.
    let ran = Arc::new(Mutex::new(Vec::new()));
    let agent = agent(AgentDefinition::new("shop").tool(place_order(ran.clone()).strict(true)));
    let args = r#"{"customer":{"id":"C-7","name":"Ana"},"items":[{"sku":"A","quantity":1}],"shipping":"express","note":null,"gift_wrap":null}"#;
    let client = scripted([call("c1", "place_order", args), text("placed")]);
    let result = block_on(agent.run(RunOptions::new("order", client))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(*ran.lock().unwrap(), vec!["Ana Express A 1 None false"]);
}

#[test]
fn a_call_runs_with_decoded_arguments_and_its_result_is_the_encoded_output() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let agent = agent(AgentDefinition::new("shop").tool(place_order(ran.clone())));
    let args = r#"{"customer":{"id":"C-7","name":"Ana"},"items":[{"sku":"A","quantity":2},{"sku":"B","quantity":3}],"shipping":"express"}"#;
    let client = scripted([call("c1", "place_order", args), text("placed")]);
    let result = block_on(agent.run(RunOptions::new("order", client))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(*ran.lock().unwrap(), vec!["Ana Express A,B 5 None false"]);
    let state = result.to_value();
    assert_eq!(
        state["stepResults"][0]["toolResults"][0]["result"],
        json!({"order_id": "O-C-7", "units": 5})
    );
}

#[test]
fn wrong_types_go_back_to_the_model_which_retries() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let tool = place_order(ran.clone()).on_error(OnError::ReturnToModel);
    let agent = agent(AgentDefinition::new("shop").tool(tool));
    let wrong = r#"{"customer":{"id":"C-7","name":"Ana"},"items":[{"sku":"A","quantity":"two"}],"shipping":"express"}"#;
    let right = r#"{"customer":{"id":"C-7","name":"Ana"},"items":[{"sku":"A","quantity":2}],"shipping":"standard"}"#;
    let client = Recording::new([
        call("c1", "place_order", wrong),
        call("c2", "place_order", right),
        text("placed"),
    ]);
    let result = block_on(agent.run(RunOptions::new("order", client.clone()))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(*ran.lock().unwrap(), vec!["Ana Standard A 2 None false"]);
    let seen = serde_json::to_string(&client.requests()[1]["messages"]).unwrap();
    assert!(
        seen.contains("Invalid tool input: /items/0/quantity:"),
        "the model sees where its arguments were wrong: {seen}"
    );
}

#[test]
fn a_value_the_schema_admits_but_the_type_rejects_is_an_input_error_naming_its_place() {
    // `quantity` is a u32: the schema says integer ≥ 0, and 2^40 is beyond u32.
    let tool = place_order(Arc::default()).on_error(OnError::ReturnToModel);
    let agent = agent(AgentDefinition::new("shop").tool(tool));
    let big = r#"{"customer":{"id":"C","name":"N"},"items":[{"sku":"A","quantity":1099511627776}],"shipping":"express"}"#;
    let client = Recording::new([call("c1", "place_order", big), text("sorry")]);
    let result = block_on(agent.run(RunOptions::new("order", client.clone()))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    let seen = serde_json::to_string(&client.requests()[1]["messages"]).unwrap();
    assert!(
        seen.contains("Invalid tool input: /items/0/quantity:"),
        "{seen}"
    );
}

#[test]
fn a_recursive_type_refers_to_its_own_definition() {
    let seen = Arc::new(Mutex::new(0usize));
    let count = seen.clone();
    let tool = Tool::typed(
        "file_categories",
        "Files a catalogue tree",
        move |root: Category, _rt| {
            fn size(c: &Category) -> usize {
                1 + c.children.iter().map(size).sum::<usize>()
            }
            *count.lock().unwrap() = size(&root);
            Ok::<_, ToolError>(json!({"filed": root.name}))
        },
    );
    assert_schema(tool.parameters_schema(), "typed_category.json");
    let agent = agent(AgentDefinition::new("catalogue").tool(tool));
    let tree =
        r#"{"name":"root","children":[{"name":"a","children":[{"name":"a1"}]},{"name":"b"}]}"#;
    let client = scripted([call("c1", "file_categories", tree), text("filed")]);
    let result = block_on(agent.run(RunOptions::new("file", client))).unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(*seen.lock().unwrap(), 4);
}

#[test]
fn a_paused_typed_call_continues_from_json_with_an_edited_input_decoded_again() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let agent =
        agent(AgentDefinition::new("shop").tool(place_order(ran.clone()).require_approval()));
    let args = r#"{"customer":{"id":"C-7","name":"Ana"},"items":[{"sku":"A","quantity":9}],"shipping":"express"}"#;
    let paused = block_on(agent.run(RunOptions::new(
        "order",
        scripted([call("c1", "place_order", args)]),
    )))
    .unwrap();
    assert_eq!(paused.status(), RunStatus::WaitingForHuman);
    let state = RunResult::from_json(&paused.to_json()).unwrap();
    let edited = json!({"customer": {"id": "C-7", "name": "Ana"},
                        "items": [{"sku": "A", "quantity": 1}], "shipping": "standard",
                        "note": "leave at the door"});
    let result = block_on(
        agent.continue_run(
            &state,
            ContinueOptions::new(scripted([text("placed")]))
                .approve(ToolDecision::edited("c1", edited)),
        ),
    )
    .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(
        *ran.lock().unwrap(),
        vec![r#"Ana Standard A 1 Some("leave at the door") false"#]
    );
}

#[test]
fn a_manual_typed_tool_checks_the_supplied_output_against_its_type() {
    let tool = Tool::typed_external::<LineItem, Receipt>("pick", "A person picks the item");
    assert!(tool.is_manual());
    assert_eq!(
        tool.parameters_schema()["required"],
        json!(["sku", "quantity"])
    );
}

#[test]
fn a_schema_a_validator_describes_is_made_strict_on_request_in_either_order() {
    let described = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
                           "type": "object", "properties": {"city": {"type": "string"},
                           "days": {"type": "integer"}}, "required": ["city"]});
    let strict_form = json!({"type": "object", "properties": {"city": {"type": "string"},
                             "days": {"type": ["integer", "null"]}}, "required": ["city", "days"],
                             "additionalProperties": false});
    let validator = || phaseo_agent::json_schema_validator(&described).unwrap();
    let before = Tool::new("a", "", Value::Null, |_, _| Ok(json!(1)))
        .strict(true)
        .input_schema(validator());
    let after = Tool::new("b", "", Value::Null, |_, _| Ok(json!(1)))
        .input_schema(validator())
        .strict(true);
    assert_eq!(before.parameters_schema(), &strict_form);
    assert_eq!(after.parameters_schema(), &strict_form);
    // Hand-written parameters are the author's: never rewritten.
    let explicit = Tool::new("c", "", described.clone(), |_, _| Ok(json!(1))).strict(true);
    assert_eq!(explicit.parameters_schema(), &described);
}
