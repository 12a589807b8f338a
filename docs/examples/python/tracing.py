from phaseo_agent import (AgentTool, ScriptedClient, create_agent, define_tool, enable_tracing,
                          flush_tracing)

# Every run from now on records spans. The collector's address comes from
# OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) unless `endpoint=` is given.
enable_tracing(service_name="orders-bot")

lookup = define_tool(AgentTool(
    id="lookup-order",
    description="Look up an order",
    parameters={"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
    execute=lambda tool_input, runtime: {"order": tool_input["order"], "status": "shipped"},
))
client = ScriptedClient([
    {"tool_calls": [{"id": "c1", "name": "lookup-order", "arguments": '{"order": "A-7"}'}]},
    {"text": "Order A-7 has shipped."},
])
with create_agent({"id": "support", "tools": [lookup]}) as agent:
    print(agent.run(input="where is order A-7?", client=client).output)
flush_tracing()  # export now (what is left is also exported when the process exits)
