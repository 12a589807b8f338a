using System;
using System.Runtime.InteropServices;
using System.Text;

namespace PhaseoAgentSdk
{
    /// <summary>P/Invoke declarations of the C ABI (bindings-c/include/phaseo_agent.h). Text
    /// crosses as NUL-terminated UTF-8 that this class encodes and decodes itself, so the
    /// marshalling is the same on Mono and .NET whatever their default string encoding.</summary>
    internal static class Native
    {
        /// <summary>The cdylib: libphaseo_agent_c.so (Linux), found on the loader's path
        /// (LD_LIBRARY_PATH, or next to the assembly / the NuGet runtime asset).</summary>
        const string Lib = "phaseo_agent_c";

        internal const int OK = 0, ERROR = 1, END = 2, PENDING = 3;

        internal const int KindExecute = 0, KindValidate = 1, KindApprove = 2, KindToolCalled = 3,
            KindResponseReceived = 4, KindNextTurn = 5, KindStop = 6, KindReview = 7, KindTurn = 8, KindGenerate = 9;

        /// <summary>struct PhaseoHost, passed by value.</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct Host
        {
            public IntPtr UserData;
            public IntPtr Invoke;
            public IntPtr OnEvent;
            public IntPtr OnDone;
            public IntPtr Release;
        }

        /// <summary>struct PhaseoQueued (bindings-c/src/queue.rs).</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct Queued
        {
            public int Kind;
            public IntPtr UserData;
            public IntPtr Call;
            public IntPtr EventJson;
        }

        internal const int QueuedInvoke = 0, QueuedEvent = 1, QueuedDone = 2, QueuedRelease = 3, QueuedCancel = 4, QueuedPost = 5, QueuedWake = 6;

        [DllImport(Lib)] internal static extern Host phaseo_queue_host(IntPtr userData, [MarshalAs(UnmanagedType.I1)] bool events, [MarshalAs(UnmanagedType.I1)] bool done);
        [DllImport(Lib)] internal static extern int phaseo_queue_on_cancel(IntPtr call, IntPtr userData, out IntPtr error);
        [DllImport(Lib)] internal static extern void phaseo_queue_post(IntPtr userData);
        [DllImport(Lib)] internal static extern int phaseo_queue_next(uint timeoutMs, out Queued item, out IntPtr error);

        [DllImport(Lib)] internal static extern int phaseo_agent_new(byte[] definition, IntPtr store, Host host, out IntPtr agent, out IntPtr error);
        [DllImport(Lib)] internal static extern void phaseo_agent_free(IntPtr agent);
        [DllImport(Lib)] internal static extern int phaseo_agent_run_driven(IntPtr agent, byte[] options, IntPtr client, IntPtr store, Host host, out IntPtr run, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_agent_continue_driven(IntPtr agent, byte[] state, byte[] runId, byte[] options, IntPtr client, IntPtr store, Host host, out IntPtr run, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_agent_recover_driven(IntPtr agent, byte[] runId, byte[] options, IntPtr client, IntPtr store, Host host, out IntPtr run, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_agent_stream(IntPtr agent, byte[] options, IntPtr client, IntPtr store, Host host, out IntPtr stream, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_agent_continue_stream(IntPtr agent, byte[] state, byte[] runId, byte[] options, IntPtr client, IntPtr store, Host host, out IntPtr stream, out IntPtr error);

        [DllImport(Lib)] internal static extern int phaseo_client_scripted(byte[] responses, UIntPtr used, out IntPtr client, out IntPtr error);
        [DllImport(Lib)] internal static extern UIntPtr phaseo_client_cursor(IntPtr client);
        [DllImport(Lib)] internal static extern int phaseo_client_test(out IntPtr client, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_client_http(byte[] kind, byte[] options, out IntPtr client, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_client_host(Host host, ulong callback, out IntPtr client, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_client_host_stream(Host host, ulong generateCallback, ulong streamCallback, out IntPtr client, out IntPtr error);
        [DllImport(Lib)] internal static extern void phaseo_client_free(IntPtr client);

        [DllImport(Lib)] internal static extern void phaseo_string_free(IntPtr text);
        [DllImport(Lib)] internal static extern UIntPtr phaseo_string_len(IntPtr text);

        [DllImport(Lib)] internal static extern int phaseo_serve_mcp(byte[] options, IntPtr client, Host host, out IntPtr server, out IntPtr error);
        [DllImport(Lib)] internal static extern IntPtr phaseo_mcp_server_url(IntPtr server);
        [DllImport(Lib)] internal static extern int phaseo_mcp_server_wait(IntPtr server, out IntPtr error);
        [DllImport(Lib)] internal static extern void phaseo_mcp_server_close(IntPtr server);
        [DllImport(Lib)] internal static extern void phaseo_mcp_server_free(IntPtr server);

        [DllImport(Lib)] internal static extern int phaseo_call_kind(IntPtr call);
        [DllImport(Lib)] internal static extern ulong phaseo_call_callback(IntPtr call);
        [DllImport(Lib)] internal static extern IntPtr phaseo_call_args(IntPtr call);

        /// <summary>struct PhaseoCallInfo (bindings-c/src/host.rs).</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct CallInfo
        {
            public int Kind;
            public ulong Callback;
            public IntPtr Args;
            public UIntPtr ArgsLen;
        }

        [DllImport(Lib)] internal static extern int phaseo_call_read(IntPtr call, out CallInfo info);
        [DllImport(Lib)] [return: MarshalAs(UnmanagedType.I1)] internal static extern bool phaseo_call_is_cancelled(IntPtr call);
        [DllImport(Lib)] internal static extern int phaseo_call_on_cancel(IntPtr call, IntPtr onCancel, IntPtr userData, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_call_emit_progress(IntPtr call, byte[] value, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_call_reject_progress(IntPtr call, byte[] message, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_call_set_context(IntPtr call, byte[] value, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_call_stream_event(IntPtr call, byte[] eventJson, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_call_complete(IntPtr call, byte[] text, [MarshalAs(UnmanagedType.I1)] bool isError);
        [DllImport(Lib)] internal static extern int phaseo_call_complete_invalid(IntPtr call, byte[] message);
        [DllImport(Lib)] internal static extern int phaseo_call_pause(IntPtr call);

        [DllImport(Lib)] internal static extern int phaseo_queue_run_poll(IntPtr run, IntPtr driver, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_queue_take_local(out Queued item, out IntPtr error);
        [DllImport(Lib)] internal static extern IntPtr phaseo_queue_inline_begin(IntPtr driver);
        [DllImport(Lib)] internal static extern void phaseo_queue_inline_end(IntPtr previous);

        [DllImport(Lib)] internal static extern void phaseo_run_cancel(IntPtr run);
        [DllImport(Lib)] [return: MarshalAs(UnmanagedType.I1)] internal static extern bool phaseo_run_is_done(IntPtr run);
        [DllImport(Lib)] internal static extern int phaseo_run_wait(IntPtr run, out IntPtr json, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_run_take_state(IntPtr run, out IntPtr state, out IntPtr head, out IntPtr error);
        [DllImport(Lib)] internal static extern IntPtr phaseo_state_json(StateHandle state);
        [DllImport(Lib)] internal static extern UIntPtr phaseo_state_size(IntPtr state);
        [DllImport(Lib)] internal static extern void phaseo_state_free(IntPtr state);
        [DllImport(Lib)] internal static extern void phaseo_run_free(IntPtr run);

        [DllImport(Lib)] internal static extern int phaseo_store_memory(out IntPtr store, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_store_sqlite(byte[] path, out IntPtr store, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_store_postgres(byte[] url, out IntPtr store, out IntPtr error);
        [DllImport(Lib)] internal static extern void phaseo_store_free(IntPtr store);
        [DllImport(Lib)] internal static extern int phaseo_store_load(IntPtr store, byte[] runId, out IntPtr json, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_store_list(IntPtr store, byte[] query, out IntPtr json, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_store_prune(IntPtr store, byte[] statusesJson, long olderThanMs, out ulong count, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_store_delete(IntPtr store, byte[] runId, [MarshalAs(UnmanagedType.I1)] out bool deleted, out IntPtr error);

        [DllImport(Lib)] internal static extern int phaseo_stream_next(IntPtr stream, out IntPtr json, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_stream_result(IntPtr stream, out IntPtr json, out IntPtr error);
        [DllImport(Lib)] internal static extern void phaseo_stream_cancel(IntPtr stream);
        [DllImport(Lib)] internal static extern void phaseo_stream_free(IntPtr stream);

        [DllImport(Lib)] internal static extern int phaseo_store_accessor(Host host, ulong loadCallback, ulong saveCallback, out IntPtr store, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_tracing_enable(byte[] options, out IntPtr error);
        [DllImport(Lib)] [return: MarshalAs(UnmanagedType.I1)] internal static extern bool phaseo_tracing_is_enabled();
        [DllImport(Lib)] internal static extern int phaseo_tracing_flush(out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_tracing_shutdown(out IntPtr error);

        [DllImport(Lib)] internal static extern int phaseo_schema_new(byte[] schema, out IntPtr schemaOut, out IntPtr error);
        [DllImport(Lib)] internal static extern int phaseo_schema_validate(IntPtr schema, byte[] value, IntPtr outJson, out IntPtr error);
        [DllImport(Lib)] internal static extern void phaseo_schema_free(IntPtr schema);
        [DllImport(Lib)] internal static extern int phaseo_schema_strict(byte[] schema, out IntPtr strictOut, out IntPtr error);

        /// <summary>NUL-terminated UTF-8 (null stays null: a NULL pointer).</summary>
        internal static byte[] Utf8(string s)
        {
            if (s == null) return null;
            var bytes = new byte[Encoding.UTF8.GetByteCount(s) + 1];
            Encoding.UTF8.GetBytes(s, 0, s.Length, bytes, 0);
            return bytes;
        }

        /// <summary>Reads a NUL-terminated UTF-8 string the SDK owns (not freed).</summary>
        internal static string Read(IntPtr p) => p == IntPtr.Zero ? null : Read(p, phaseo_string_len(p));

        /// <summary>Reads <paramref name="len"/> bytes of UTF-8 the SDK owns (not freed).</summary>
        internal static string Read(IntPtr p, UIntPtr len)
        {
            if (p == IntPtr.Zero) return null;
            int n = checked((int)(ulong)len);
            var bytes = new byte[n];
            Marshal.Copy(p, bytes, 0, n);
            return Encoding.UTF8.GetString(bytes);
        }

        /// <summary>Reads and frees a string the SDK returned.</summary>
        internal static string Take(IntPtr p)
        {
            if (p == IntPtr.Zero) return null;
            try { return Read(p); } finally { phaseo_string_free(p); }
        }

        /// <summary>Throws the <see cref="AgentException"/> of an <c>out_error</c> when
        /// <paramref name="status"/> is ERROR.</summary>
        internal static void Check(int status, IntPtr error)
        {
            if (status == ERROR) throw AgentException.FromErrorJson(Take(error));
            if (error != IntPtr.Zero) phaseo_string_free(error);
        }
    }
}
