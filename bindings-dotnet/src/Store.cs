using System;
using System.Collections.Generic;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>A row of a run store.</summary>
    public sealed class StoredRun
    {
        /// <summary>The run id.</summary>
        public string RunId { get; }
        /// <summary>The owning agent.</summary>
        public string AgentId { get; }
        /// <summary>The row's status (running once a pause is claimed).</summary>
        public string Status { get; }
        /// <summary>The pause of a waiting run.</summary>
        public string PauseId { get; }
        /// <summary>Row version (the compare-and-set token).</summary>
        public long Version { get; }
        /// <summary>Creation time (ms since the epoch).</summary>
        public long CreatedAtMs { get; }
        /// <summary>Last write (ms since the epoch).</summary>
        public long UpdatedAtMs { get; }
        /// <summary>The worker holding the run (null when none).</summary>
        public string LeaseOwner { get; }
        /// <summary>When that hold ends (ms since the epoch; null when none).</summary>
        public long? LeaseExpiresAtMs { get; }
        /// <summary>The canonical state.</summary>
        public RunResult State { get; }
        internal StoredRun(Dictionary<string, object> m)
        {
            RunId = V.Str(m, "runId"); AgentId = V.Str(m, "agentId"); Status = V.Str(m, "status");
            PauseId = V.Str(m, "pauseId"); Version = V.Long(m, "version");
            CreatedAtMs = V.Long(m, "createdAtMs"); UpdatedAtMs = V.Long(m, "updatedAtMs"); LeaseOwner = V.Str(m, "leaseOwner");
            if (V.Get(m, "leaseExpiresAtMs") != null) LeaseExpiresAtMs = V.Long(m, "leaseExpiresAtMs");
            var s = V.Get(m, "state");
            if (s != null) State = RunResult.FromValue(s);
        }
    }

    /// <summary>A page of <see cref="RunStore.List"/>.</summary>
    public sealed class StoredRunPage
    {
        /// <summary>The runs, newest first.</summary>
        public IReadOnlyList<StoredRun> Runs { get; }
        /// <summary>The next page's cursor (null when this is the last).</summary>
        public string NextCursor { get; }
        internal StoredRunPage(IReadOnlyList<StoredRun> runs, string next) { Runs = runs; NextCursor = next; }
    }

    /// <summary>A durable run store (docs/behaviour.md §10): in memory, SQLite or PostgreSQL, run in the
    /// core. Give it to <see cref="AgentDefinition.Store"/> (or a run's Store); continue a
    /// stored run by id with <see cref="ContinueOptions.RunId"/>. The store queries block: on
    /// the thread pool through their Task.</summary>
    public sealed partial class RunStore : IDisposable
    {
        internal IntPtr Handle;
        RunStore(IntPtr p) { Handle = p; }

        /// <summary>A new in-memory store.</summary>
        public static RunStore Memory()
        {
            Native.Check(Native.phaseo_store_memory(out var p, out var err), err);
            return new RunStore(p);
        }

        /// <summary>Opens (creating if needed) a SQLite store at <paramref name="path"/>.</summary>
        public static RunStore Sqlite(string path)
        {
            Native.Check(Native.phaseo_store_sqlite(Native.Utf8(path), out var p, out var err), err);
            return new RunStore(p);
        }

        /// <summary>Connects to PostgreSQL (<c>postgres://…</c>) and creates the tables if needed.</summary>
        public static Task<RunStore> Postgres(string url) => Task.Run(() =>
        {
            Native.Check(Native.phaseo_store_postgres(Native.Utf8(url), out var p, out var err), err);
            return new RunStore(p);
        });

        /// <summary>Loads a run (null when the store has none).</summary>
        public Task<StoredRun> Load(string runId) => Task.Run(() =>
        {
            Native.Check(Native.phaseo_store_load(Live(), Native.Utf8(runId), out var json, out var err), err);
            var text = Native.Take(json);
            GC.KeepAlive(this);
            return text == null ? null : new StoredRun(V.Obj(Json.Parse(text)));
        });

        /// <summary>Lists runs, newest first, filtered by statuses and agent id; a page of at
        /// most <paramref name="limit"/> runs, continued with its NextCursor.</summary>
        public Task<StoredRunPage> List(IReadOnlyList<string> statuses = null, string agentId = null, int? limit = null, string cursor = null) => Task.Run(() =>
        {
            var q = new Dictionary<string, object>();
            if (statuses != null) q["statuses"] = statuses;
            if (agentId != null) q["agentId"] = agentId;
            if (limit != null) q["limit"] = (long)limit.Value;
            if (cursor != null) q["cursor"] = cursor;
            Native.Check(Native.phaseo_store_list(Live(), Native.Utf8(Json.Write(q)), out var json, out var err), err);
            var m = V.Obj(Json.Parse(Native.Take(json)));
            GC.KeepAlive(this);
            var list = new List<StoredRun>();
            foreach (var r in V.List(V.Get(m, "runs"))) list.Add(new StoredRun(V.Obj(r)));
            return new StoredRunPage(list, V.Str(m, "nextCursor"));
        });

        /// <summary>Deletes a run; true when it existed.</summary>
        public Task<bool> Delete(string runId) => Task.Run(() =>
        {
            Native.Check(Native.phaseo_store_delete(Live(), Native.Utf8(runId), out var deleted, out var err), err);
            GC.KeepAlive(this);
            return deleted;
        });

        /// <summary>Deletes the runs of <paramref name="statuses"/> (e.g. <c>completed</c>,
        /// <c>cancelled</c>) last updated more than <paramref name="olderThan"/> ago; how many.
        /// An unknown status name is refused, naming it.</summary>
        public Task<long> Prune(IReadOnlyList<string> statuses, TimeSpan olderThan) => Task.Run(() =>
        {
            var cutoff = DateTimeOffset.UtcNow.Subtract(olderThan).ToUnixTimeMilliseconds();
            var names = Json.Write(statuses ?? (IReadOnlyList<string>)new string[0]);
            Native.Check(Native.phaseo_store_prune(Live(), Native.Utf8(names), cutoff, out var count, out var err), err);
            GC.KeepAlive(this);
            return (long)count;
        });

        IntPtr Live() => Handle != IntPtr.Zero ? Handle : throw new AgentException(ErrorCodes.InvalidArgument, "the store was disposed");

        /// <summary>Frees the handle (runs still using the store keep it alive).</summary>
        public void Dispose()
        {
            var p = System.Threading.Interlocked.Exchange(ref Handle, IntPtr.Zero);
            if (p != IntPtr.Zero) Native.phaseo_store_free(p);
            GC.SuppressFinalize(this);
        }

        /// <summary>Frees the handle when the application did not.</summary>
        ~RunStore() { if (Handle != IntPtr.Zero) Native.phaseo_store_free(Handle); }
    }
}
