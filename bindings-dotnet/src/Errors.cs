using System;
using System.Collections.Generic;

namespace PhaseoAgentSdk
{
    /// <summary>The docs/behaviour.md §9 error codes (<see cref="AgentException.Code"/>).</summary>
    public static class ErrorCodes
    {
        /// <summary>Arguments failed the tool's parameters or input schema.</summary>
        public const string ToolInputInvalid = "tool_input_invalid";
        /// <summary>A result failed the output schema or the value limits.</summary>
        public const string ToolOutputInvalid = "tool_output_invalid";
        /// <summary>A progress value failed the event schema or the value limits.</summary>
        public const string ToolEventInvalid = "tool_event_invalid";
        /// <summary>The final output failed the agent's output schema.</summary>
        public const string AgentOutputInvalid = "agent_output_invalid";
        /// <summary>The model called a tool the agent does not have.</summary>
        public const string UnknownTool = "unknown_tool";
        /// <summary>A tool call exceeded its timeout.</summary>
        public const string ToolTimeout = "tool_timeout";
        /// <summary>A tool threw.</summary>
        public const string ToolFailed = "tool_failed";
        /// <summary>The run reached its step limit.</summary>
        public const string MaxSteps = "max_steps";
        /// <summary>A continue was refused (nothing ran, the state is unchanged).</summary>
        public const string ContinueInvalid = "continue_invalid";
        /// <summary>A state or run input was malformed.</summary>
        public const string StateInvalid = "state_invalid";
        /// <summary>The model client failed (after retries).</summary>
        public const string ModelFailed = "model_failed";
        /// <summary>The HTTP gateway answered with an error.</summary>
        public const string Gateway = "gateway";
        /// <summary>A definition or option is invalid.</summary>
        public const string DefinitionInvalid = "definition_invalid";
        /// <summary>The run was cancelled.</summary>
        public const string Cancelled = "cancelled";
        /// <summary>A run store failed.</summary>
        public const string StoreFailed = "store_failed";
        /// <summary>A store-backed run lost its lease.</summary>
        public const string LeaseLost = "lease_lost";
        /// <summary>An MCP server failed.</summary>
        public const string McpFailed = "mcp_failed";
        /// <summary>A misuse of the binding itself (a disposed agent, a bad argument).</summary>
        public const string InvalidArgument = "invalid_argument";
    }

    /// <summary>Every error of the SDK: <see cref="Code"/> is the docs/behaviour.md §9 code, the message the
    /// documented text, and <see cref="State"/> the failed run's state (null for a refused continue
    /// or a definition error). Derives from <see cref="InvalidOperationException"/>, which the
    /// product's C# SDK throws. A timed-out tool call (code <c>tool_timeout</c>) also carries
    /// a <see cref="TimeoutException"/> with the same message as its
    /// <see cref="Exception.InnerException"/>, the product's way of reporting a timeout in
    /// C#: <c>catch (AgentException e) when (e.InnerException is TimeoutException)</c>.</summary>
    public class AgentException : InvalidOperationException
    {
        /// <summary>The docs/behaviour.md §9 code, e.g. <c>tool_failed</c>.</summary>
        public string Code { get; }
        /// <summary>The failed run's canonical state (continue from it, or inspect it); null
        /// when nothing ran.</summary>
        public RunResult State { get; }

        /// <summary>An error with a code, message and optional failed state (with code
        /// <c>tool_timeout</c>, its InnerException is a <see cref="TimeoutException"/>).</summary>
        public AgentException(string code, string message, RunResult state = null)
            : base(message, code == ErrorCodes.ToolTimeout ? new TimeoutException(message) : null)
        {
            Code = code;
            State = state;
        }

        internal static AgentException FromErrorJson(string text)
        {
            try
            {
                var m = (Dictionary<string, object>)Json.Parse(text ?? "{}");
                m.TryGetValue("code", out var code);
                m.TryGetValue("message", out var message);
                RunResult state = null;
                if (m.TryGetValue("state", out var s) && s != null) state = RunResult.FromValue(s);
                return new AgentException(code as string ?? "internal", message as string ?? "unknown error", state);
            }
            catch (Exception e) when (!(e is AgentException))
            {
                return new AgentException("internal", "unreadable error from the SDK: " + text);
            }
        }
    }
}
