//! The support-desk demo: three tools on the offline test client, a pause for approval and
//! a manual step, and a continue from the state's JSON text.
//!
//! `cargo run -q -p support-desk`

use std::sync::Arc;
use std::time::Duration;

use phaseo_agent::{
    create_agent, json, AgentDefinition, AgentEvent, ContinueOptions, EventData, GatewayClient,
    ModelClient, OpenAICompatibleClient, RunOptions, RunResult, RunStatus, TestClient, Tool,
};

/// A real model when the environment names one (`PHASEO_API_KEY` for the Phaseo gateway,
/// `OPENAI_BASE_URL` for an OpenAI-compatible server; model from `PHASEO_MODEL` /
/// `OPENAI_MODEL`), else the offline test client.
fn client_from_env() -> Arc<dyn ModelClient> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if var("PHASEO_API_KEY").is_some() {
        println!("model: Phaseo gateway");
        let client = GatewayClient::from_env();
        return Arc::new(match var("PHASEO_MODEL") {
            Some(m) => client.model(m),
            None => client,
        });
    }
    if var("OPENAI_BASE_URL").is_some() {
        println!("model: OpenAI-compatible server");
        let client = OpenAICompatibleClient::from_env();
        return Arc::new(match var("OPENAI_MODEL") {
            Some(m) => client.model(m),
            None => client,
        });
    }
    println!("model: offline test client (set PHASEO_API_KEY or OPENAI_BASE_URL for a real one)");
    Arc::new(TestClient::new())
}

fn print_event(event: &AgentEvent) {
    let detail = match &event.data {
        EventData::ToolStarted { tool_name, .. } => format!(" {tool_name}"),
        EventData::ToolPreliminary {
            tool_name, result, ..
        } => format!(" {tool_name} progress {result}"),
        EventData::ToolCompleted {
            tool_name, output, ..
        } => format!(" {tool_name} -> {output}"),
        EventData::ToolFailed {
            tool_name, error, ..
        } => format!(" {tool_name} failed: {error}"),
        EventData::Waiting { pause } => format!(" ({:?})", pause.kind),
        EventData::Completed { output } => format!(" {output}"),
        _ => String::new(),
    };
    println!("  event {}{}", event.type_name(), detail);
}

fn support_desk() -> phaseo_agent::Agent {
    let lookup = Tool::new_async(
        "lookup_ticket",
        "Load a support ticket by id.",
        json!({
            "type": "object",
            "properties": {"ticketId": {"type": "string", "examples": ["T-1001"]}},
            "required": ["ticketId"],
            "additionalProperties": false
        }),
        |input, rt| async move {
            rt.emit_progress(json!({"phase": "searching"}));
            tokio::time::sleep(Duration::from_millis(20)).await;
            rt.emit_progress(json!({"phase": "found"}));
            Ok(json!({"ticketId": input["ticketId"], "customer": "Ana", "status": "open", "paid": 150}))
        },
    )
    .timeout(Duration::from_secs(2));
    let refund = Tool::new(
        "issue_refund",
        "Refund a ticket's customer. Amounts over 100 need a person's approval.",
        json!({
            "type": "object",
            "properties": {
                "ticketId": {"type": "string", "examples": ["T-1001"]},
                "amount": {"type": "number", "minimum": 0, "examples": [150]}
            },
            "required": ["ticketId", "amount"],
            "additionalProperties": false
        }),
        |input, rt| Ok(json!({"refunded": input["amount"], "idempotencyKey": rt.tool_call().id})),
    )
    .approval(|input, _rt| input["amount"].as_f64().unwrap_or(0.0) > 100.0);
    let escalate = Tool::external(
        "escalate",
        "Hand the ticket to a human specialist, who answers later.",
        json!({
            "type": "object",
            "properties": {
                "ticketId": {"type": "string", "examples": ["T-1001"]},
                "reason": {"type": "string", "examples": ["customer asked for a manager"]}
            },
            "required": ["ticketId", "reason"]
        }),
    );
    create_agent(
        AgentDefinition::new("support-desk")
            .instructions("You resolve support tickets.")
            .tools([lookup, refund, escalate]),
    )
    .expect("the demo agent is valid")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = support_desk();
    let client = client_from_env();
    let on_event = Arc::new(print_event);

    println!("== run");
    let paused = agent
        .run(
            RunOptions::new(
                "Ticket T-1001: the customer wants a refund of 150.",
                client.clone(),
            )
            .context(json!({"operator": "demo"}))
            .on_event(on_event.clone()),
        )
        .await?;
    println!("status: {:?}", paused.status());
    if paused.status() != RunStatus::WaitingForHuman {
        println!("answer: {}", paused.output());
        return Ok(());
    }
    for p in paused.pending() {
        println!(
            "pending: {} {} {} ({})",
            p.call.id, p.call.name, p.call.input, p.reason
        );
    }

    // An application stores the state as JSON text and continues later, maybe elsewhere.
    let stored = paused.to_json();
    println!("stored state: {} bytes", stored.len());
    let restored = RunResult::from_json(&stored)?;

    let mut options = ContinueOptions::new(client).on_event(on_event);
    for p in restored.pending() {
        options = match &*p.call.name {
            "issue_refund" => options.approve(&*p.call.id),
            _ => options.output(&*p.call.id, json!({"assignedTo": "Berta", "eta": "2h"})),
        };
    }
    println!("== continue");
    let done = agent.continue_run(&restored, options).await?;
    println!("status: {:?}", done.status());
    println!("answer: {}", done.output());
    println!(
        "usage: {:?} tokens over {} steps",
        done.usage().total_tokens,
        done.run.step_count
    );
    Ok(())
}
