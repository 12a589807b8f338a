using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>A model client: any C# class implementing it serves a run's model requests
    /// (docs/behaviour.md §5); the SDK's own clients (<see cref="ScriptedClient"/>,
    /// <see cref="TestClient"/>, the HTTP clients) run in the core.</summary>
    public interface IModelClient
    {
        /// <summary>Answers one model request. <c>request.CancellationToken</c> is cancelled
        /// when the run stops waiting (cancellation, a timed-out attempt).</summary>
        Task<ModelResponse> Generate(ModelRequest request);
    }

    /// <summary>A tool as offered to the model.</summary>
    public sealed class ToolSpec
    {
        /// <summary>The tool id.</summary>
        public string Id { get; }
        /// <summary>Its description.</summary>
        public string Description { get; }
        /// <summary>The JSON Schema of its arguments.</summary>
        public object Parameters { get; }
        /// <summary>Whether schema-exact arguments are asked for.</summary>
        public bool Strict { get; }
        /// <summary>Example arguments (null when none).</summary>
        public IReadOnlyList<object> InputExamples { get; }
        internal ToolSpec(Dictionary<string, object> m)
        {
            Id = V.Str(m, "id"); Description = V.Str(m, "description"); Parameters = V.Get(m, "parameters");
            Strict = V.Bool(m, "strict"); InputExamples = V.Get(m, "inputExamples") as List<object>;
        }
    }

    /// <summary>A model request (the core's camelCase JSON, read into properties;
    /// <see cref="Value"/> holds all of it).</summary>
    public sealed class ModelRequest
    {
        /// <summary>The agent's id.</summary>
        public string AgentId { get; }
        /// <summary>The model (null = the client's default).</summary>
        public string Model { get; }
        /// <summary>The instructions (null = none).</summary>
        public string Instructions { get; }
        /// <summary>The conversation.</summary>
        public IReadOnlyList<Message> Messages { get; }
        /// <summary>The tools offered.</summary>
        public IReadOnlyList<ToolSpec> Tools { get; }
        /// <summary>The application context.</summary>
        public object Context { get; }
        /// <summary>Sampling temperature (null = unset).</summary>
        public double? Temperature { get; }
        /// <summary>Output limit (null = unset).</summary>
        public int? MaxOutputTokens { get; }
        /// <summary>Nucleus sampling (null = unset).</summary>
        public double? TopP { get; }
        /// <summary>Which tool the model must call (null = unset).</summary>
        public object ToolChoice { get; }
        /// <summary>Whether several calls per turn are allowed (null = unset).</summary>
        public bool? ParallelToolCalls { get; }
        /// <summary>The run is streamed.</summary>
        public bool Stream { get; }
        /// <summary>Cancelled when the run stops waiting for this request.</summary>
        public CancellationToken CancellationToken { get; }
        /// <summary>The request as JSON data.</summary>
        public Dictionary<string, object> Value { get; }

        internal ModelRequest(Dictionary<string, object> m, CancellationToken token)
        {
            Value = m ?? new Dictionary<string, object>();
            AgentId = V.Str(m, "agentId"); Model = V.Str(m, "model"); Instructions = V.Str(m, "instructions");
            Messages = Message.ListFrom(V.Get(m, "messages"));
            var tools = new List<ToolSpec>();
            foreach (var t in V.List(V.Get(m, "tools"))) tools.Add(new ToolSpec(V.Obj(t)));
            Tools = tools;
            Context = V.Get(m, "context"); Temperature = V.NDouble(m, "temperature");
            if (V.Get(m, "maxOutputTokens") != null) MaxOutputTokens = (int)V.Long(m, "maxOutputTokens");
            TopP = V.NDouble(m, "topP"); ToolChoice = V.Get(m, "toolChoice");
            if (V.Get(m, "parallelToolCalls") is bool b) ParallelToolCalls = b;
            Stream = V.Bool(m, "stream");
            CancellationToken = token;
        }
    }

    /// <summary>A call the model requests: <see cref="Arguments"/> is the raw JSON text.</summary>
    public sealed class ModelToolCall
    {
        /// <summary>The call id.</summary>
        public string Id { get; }
        /// <summary>The tool id.</summary>
        public string Name { get; }
        /// <summary>The raw JSON text of the arguments.</summary>
        public string Arguments { get; }
        /// <summary>A call.</summary>
        public ModelToolCall(string Id, string Name, string Arguments) { this.Id = Id; this.Name = Name; this.Arguments = Arguments; }
    }

    /// <summary>A model response.</summary>
    public sealed class ModelResponse
    {
        /// <summary>The text.</summary>
        public string Text { get; set; }
        /// <summary>The calls requested.</summary>
        public IReadOnlyList<ModelToolCall> ToolCalls { get; set; }
        /// <summary>Token usage: <c>{inputTokens, outputTokens, cachedTokens?}</c>.</summary>
        public Dictionary<string, object> Usage { get; set; }
        /// <summary>The cost of the request.</summary>
        public double? Cost { get; set; }
        /// <summary><c>stop</c>, <c>tool_calls</c>, … (default from the calls).</summary>
        public string FinishReason { get; set; }

        /// <summary>A response.</summary>
        public ModelResponse(string Text = null, IReadOnlyList<ModelToolCall> ToolCalls = null) { this.Text = Text; this.ToolCalls = ToolCalls; }

        /// <summary>A response from its JSON data <c>{text?, toolCalls?, usage?, cost?,
        /// finishReason?}</c>.</summary>
        public static ModelResponse FromValue(object value)
        {
            var m = V.Obj(value) ?? throw new ArgumentException("a model response must be a JSON object");
            var r = new ModelResponse(V.Str(m, "text"));
            if (V.Get(m, "toolCalls") is List<object> calls)
            {
                var list = new List<ModelToolCall>();
                foreach (var c in calls) { var cm = V.Obj(c); list.Add(new ModelToolCall(V.Str(cm, "id"), V.Str(cm, "name"), V.Str(cm, "arguments"))); }
                r.ToolCalls = list;
            }
            r.Usage = V.Obj(V.Get(m, "usage"));
            r.Cost = V.NDouble(m, "cost");
            r.FinishReason = V.Str(m, "finishReason");
            return r;
        }

        internal Dictionary<string, object> ToJson()
        {
            var m = new Dictionary<string, object>();
            if (Text != null) m["text"] = Text;
            if (ToolCalls != null)
            {
                var l = new List<object>();
                foreach (var c in ToolCalls)
                    l.Add(new Dictionary<string, object> { { "id", c.Id }, { "name", c.Name }, { "arguments", c.Arguments ?? "{}" } });
                m["toolCalls"] = l;
            }
            if (Usage != null) m["usage"] = Usage;
            if (Cost != null) m["cost"] = Cost.Value;
            if (FinishReason != null) m["finishReason"] = FinishReason;
            return m;
        }
    }

    /// <summary>A client that runs in the core. Its <see cref="Generate"/> is not for direct
    /// use (runs call the core's client without crossing into C#). Dispose frees the handle;
    /// runs using it keep it alive.</summary>
    public abstract class NativeModelClient : IModelClient, IDisposable
    {
        internal IntPtr Ptr;
        internal NativeModelClient(IntPtr ptr) { Ptr = ptr; }
        /// <summary>Not supported: give the client to a run.</summary>
        public Task<ModelResponse> Generate(ModelRequest request) =>
            throw new NotSupportedException("this client runs in the SDK's core: pass it to a run");
        /// <summary>Frees the handle.</summary>
        public void Dispose()
        {
            var p = System.Threading.Interlocked.Exchange(ref Ptr, IntPtr.Zero);
            if (p != IntPtr.Zero) Native.phaseo_client_free(p);
            GC.SuppressFinalize(this);
        }
        /// <summary>Frees the handle when the application did not.</summary>
        ~NativeModelClient() { if (Ptr != IntPtr.Zero) Native.phaseo_client_free(Ptr); }
    }

    /// <summary>Scripted responses consumed in order across every run and continue it serves
    /// (each <c>{text?, toolCalls?, usage?, cost?, finishReason?, fail?}</c>).</summary>
    public sealed class ScriptedClient : NativeModelClient
    {
        /// <summary>A client over the responses; the first <paramref name="used"/> are
        /// skipped (a run resumed elsewhere).</summary>
        public ScriptedClient(IEnumerable<object> responses, int used = 0) : base(Create(responses, used)) { }

        static IntPtr Create(IEnumerable<object> responses, int used)
        {
            var list = new List<object>();
            foreach (var r in responses) list.Add(r is ModelResponse mr ? mr.ToJson() : r);
            Native.Check(Native.phaseo_client_scripted(Native.Utf8(Json.Write(list)), (UIntPtr)(uint)used, out var p, out var err), err);
            return p;
        }

        /// <summary>How many responses were consumed.</summary>
        public int Cursor => (int)(uint)Native.phaseo_client_cursor(Ptr);
    }

    /// <summary>The offline test client: calls every tool once with arguments generated from
    /// its schema, then summarizes. No network.</summary>
    public sealed class TestClient : NativeModelClient
    {
        /// <summary>A test client.</summary>
        public TestClient() : base(Create()) { }
        static IntPtr Create()
        {
            Native.Check(Native.phaseo_client_test(out var p, out var err), err);
            return p;
        }
    }

    /// <summary>Options of the HTTP clients; unset values come from the environment
    /// (<c>PHASEO_API_KEY</c>/<c>PHASEO_BASE_URL</c>, <c>OPENAI_API_KEY</c>/<c>OPENAI_BASE_URL</c>).</summary>
    public sealed class HttpClientOptions
    {
        /// <summary>The API key.</summary>
        public string ApiKey { get; set; }
        /// <summary>The base URL.</summary>
        public string BaseUrl { get; set; }
        /// <summary>The default model.</summary>
        public string Model { get; set; }
        /// <summary>The request timeout.</summary>
        public TimeSpan? Timeout { get; set; }
        /// <summary>Extra headers.</summary>
        public Dictionary<string, string> Headers { get; set; }
        /// <summary>Gateway only: a preset.</summary>
        public string Preset { get; set; }
        /// <summary>Gateway only: body fields sent with every request.</summary>
        public Dictionary<string, object> BodyDefaults { get; set; }

        internal Dictionary<string, object> ToJson()
        {
            var m = new Dictionary<string, object>();
            if (ApiKey != null) m["apiKey"] = ApiKey;
            if (BaseUrl != null) m["baseUrl"] = BaseUrl;
            if (Model != null) m["model"] = Model;
            if (Timeout != null) m["timeoutMs"] = (long)Timeout.Value.TotalMilliseconds;
            if (Headers != null) m["headers"] = Headers;
            if (Preset != null) m["preset"] = Preset;
            if (BodyDefaults != null) m["bodyDefaults"] = BodyDefaults;
            return m;
        }
    }

    /// <summary>An HTTP model client running in the core: the Phaseo gateway (Responses API)
    /// or any OpenAI-compatible server (Chat Completions).</summary>
    public sealed class HttpModelClient : NativeModelClient
    {
        internal HttpModelClient(string kind, HttpClientOptions o) : base(Create(kind, o)) { }
        static IntPtr Create(string kind, HttpClientOptions o)
        {
            Native.Check(Native.phaseo_client_http(Native.Utf8(kind), Native.Utf8(Json.Write((o ?? new HttpClientOptions()).ToJson())), out var p, out var err), err);
            return p;
        }
    }

    /// <summary>The native client a run uses: the core's own, or a host client wrapping a
    /// C# <see cref="IModelClient"/> for this run.</summary>
    internal sealed class ClientHandle
    {
        internal IntPtr Ptr;
        bool owned;

        internal void Release() { if (owned) Native.phaseo_client_free(Ptr); }

        internal static ClientHandle For(IModelClient client)
        {
            if (client is NativeModelClient n)
            {
                if (n.Ptr == IntPtr.Zero) throw new AgentException(ErrorCodes.InvalidArgument, "the model client was disposed");
                return new ClientHandle { Ptr = n.Ptr };
            }
            var host = new HostObject();
            host.Add(c =>
            {
                var cts = new CancellationTokenSource();
                c.WithRuntimeless(cts, () => client.Generate(new ModelRequest(V.Obj(c.Arg(0)), cts.Token)), r => r?.ToJson());
            });
            if (client is IStreamingModelClient streaming)
            {
                host.Add(c =>
                {
                    var cts = new CancellationTokenSource();
                    c.WithRuntimeless(cts, async () =>
                    {
                        await streaming.Stream(new ModelRequest(V.Obj(c.Arg(0)), cts.Token), c.StreamEvent).ConfigureAwait(false);
                        return (object)null;
                    });
                });
                Native.Check(Native.phaseo_client_host_stream(host.ToNative(false, false), 1, 2, out var sp, out var serr), serr);
                return new ClientHandle { Ptr = sp, owned = true };
            }
            Native.Check(Native.phaseo_client_host(host.ToNative(false, false), 1, out var p, out var err), err);
            return new ClientHandle { Ptr = p, owned = true };
        }
    }
}
