using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>The product's state accessor: the application keeps each run's state itself
    /// (a database row, a file, a cache). Give it to a run's or continue's
    /// <see cref="RunOverrides.Accessor"/> (or its product name <see cref="RunOverrides.State"/>) (continue by <see cref="ContinueOptions.RunId"/>), or
    /// wrap it with <see cref="RunStore.FromAccessor"/> for an agent. Unlike the SDK's
    /// stores an accessor has no claim (it does not stop a pause from being continued
    /// twice) and cannot list, delete or recover runs.</summary>
    public interface IStateAccessor
    {
        /// <summary>The stored state of <paramref name="runId"/>, or null when there is none
        /// (continuing it is then a <c>continue_invalid</c> error naming the id).</summary>
        Task<RunResult> Load(string runId, CancellationToken cancellationToken = default(CancellationToken));

        /// <summary>Stores a checkpoint of the run (<see cref="RunResult.ToJson"/> is its
        /// canonical text), replacing the previous one. A failure fails the run with
        /// <c>store_failed</c>.</summary>
        Task Save(RunResult result, CancellationToken cancellationToken = default(CancellationToken));
    }

    public sealed partial class RunStore
    {
        /// <summary>A run store over the application's state accessor: the core calls
        /// <see cref="IStateAccessor.Load"/> and <see cref="IStateAccessor.Save"/> (queued to
        /// the binding's dispatch thread, their tokens cancelled when the run stops waiting).</summary>
        public static RunStore FromAccessor(IStateAccessor accessor)
        {
            if (accessor == null) throw new AgentException(ErrorCodes.DefinitionInvalid, "the state accessor is null");
            var host = new HostObject();
            host.Add(c =>
            {
                var runId = c.Arg(0) as string;
                var cts = new CancellationTokenSource();
                c.WithRuntimeless(cts, () => accessor.Load(runId, cts.Token), r => r == null ? null : (object)r.ToJson());
            });
            host.Add(c =>
            {
                var text = c.Arg(1) as string;
                var cts = new CancellationTokenSource();
                c.WithRuntimeless(cts, async () =>
                {
                    await accessor.Save(RunResult.FromJson(text), cts.Token).ConfigureAwait(false);
                    return (object)null;
                });
            });
            // The core takes the host: its release frees the handle, also on failure.
            Native.Check(Native.phaseo_store_accessor(host.ToNative(false, false), 1, 2, out var p, out var err), err);
            return new RunStore(p);
        }

        /// <summary>A run's store: Store, or one over the State accessor (not both).</summary>
        internal static RunStore For(RunStore store, IStateAccessor accessor)
        {
            if (accessor == null) return store;
            if (store != null) throw new AgentException(ErrorCodes.DefinitionInvalid, "pass either Store or a State accessor, not both");
            return FromAccessor(accessor);
        }
    }
}
