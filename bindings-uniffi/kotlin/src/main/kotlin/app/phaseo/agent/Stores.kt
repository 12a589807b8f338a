// Durable runs (docs/behaviour.md §10) in Kotlin: run stores, continue by run id, recover, the approval
// inbox. Thin wrappers over the generated `RunStore`, `Agent.continueById` and
// `Agent.recover`; the generated error becomes `AgentException` (`store_failed`,
// `lease_lost`, `continue_invalid`).
package app.phaseo.agent

import kotlinx.coroutines.Job
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray

/** Runs kept in the SQLite file at [path] (created and migrated when needed). */
fun sqliteStore(path: String): RunStore = sdk { sqliteRunStore(path) }

/** Runs kept in PostgreSQL at [url] (`postgres://user:pass@host:port/db`): connects and migrates. */
suspend fun postgresStore(url: String): RunStore = sdk { postgresRunStore(url) }

/** Runs kept in this process's memory (tests). */
fun inMemoryStore(): RunStore = inMemoryRunStore()

/** How long a worker holds a store-backed run and how often it renews the hold. */
fun lease(durationMs: Long = 30_000, renewEveryMs: Long = 10_000) = Lease(durationMs, renewEveryMs)

/**
 * One page of runs, oldest update first, of [status] (empty: any) and [agentId]; the
 * approval inbox is `listRuns(listOf("waiting_for_human"))`. Pass [RunPage.nextCursor] as
 * [cursor] for the next page.
 */
suspend fun RunStore.listRuns(
    status: List<String> = emptyList(),
    agentId: String? = null,
    limit: Int = 0,
    cursor: String? = null,
): RunPage = sdk { list(status, agentId, limit.toUInt(), cursor) }

/** The stored run [runId], or null. */
suspend fun RunStore.loadRun(runId: String): StoredRun? = sdk { load(runId) }

/** Deletes a run; whether it was stored. */
suspend fun RunStore.deleteRun(runId: String): Boolean = sdk { delete(runId) }

/** Deletes the runs of [statuses] last updated more than [ageMs] ago; how many. */
suspend fun RunStore.pruneOlderThan(statuses: List<String>, ageMs: Long): Long =
    sdk { prune(statuses, System.currentTimeMillis() - ageMs).toLong() }

/** The calls a waiting run waits on (what an approval inbox shows). */
val StoredRun.pending: List<JsonObject>
    get() = parseJson(state.pendingJson()).jsonArray.map { it as JsonObject }

/**
 * Continues the paused run [runId] of the run store ([store], or the agent's), claiming
 * its pause at most once: a pause already continued elsewhere throws [AgentException]
 * `continue_invalid` (`Pause <pauseId> of run <runId> was already continued`). The decisions
 * are those of the state form of `continueRun`; the claim stores them, edited inputs and
 * [responses] too, so a recovering worker applies exactly them.
 */
suspend fun Agent.continueRun(
    runId: String,
    client: Client,
    approvals: List<Decision> = emptyList(),
    rejections: List<Decision> = emptyList(),
    toolOutputs: Map<String, JsonElement> = emptyMap(),
    humanInput: String? = null,
    context: JsonElement? = null,
    overrides: RunOverrides? = null,
    onEvent: ((event: JsonObject) -> Unit)? = null,
    cancel: CancelToken? = null,
    store: RunStore? = null,
    responses: Map<String, JsonElement> = emptyMap(),
): RunResult {
    val job = currentCoroutineContext()[Job]
    return sdk {
        JvmDispatch.driveSuspending(
            continueByIdDriven(
                runId,
                continueOptions(
                    client, approvals, rejections, toolOutputs, humanInput, context, overrides, onEvent, cancel, store,
                    job = job, responses = responses,
                ),
            ),
        )
    }
}

/**
 * Recovers the stored run [runId] whose worker died (its lease expired): goes on from its
 * last checkpoint with the decisions its claim stored.
 */
suspend fun Agent.recover(
    runId: String,
    client: Client,
    context: JsonElement? = null,
    overrides: RunOverrides? = null,
    onEvent: ((event: JsonObject) -> Unit)? = null,
    cancel: CancelToken? = null,
    store: RunStore? = null,
): RunResult {
    val job = currentCoroutineContext()[Job]
    val options = continueOptions(client, emptyList(), emptyList(), emptyMap(), null, context, overrides, onEvent, cancel, store, job = job)
    return sdk { JvmDispatch.driveSuspending(recoverDriven(runId, options)) }
}

/**
 * The product's state accessor: the application keeps each run's state itself. Used as a
 * store ([accessorStore]) it has no claim — a pause continued twice is not prevented — and
 * listing, deleting, pruning and recovering are refused (`store_failed`).
 */
interface StateAccessor {
    /** The state of run [runId], or null when unknown. */
    suspend fun load(runId: String): RunResult?

    /** Keeps [state] (replacing the earlier state of its run). */
    suspend fun save(state: RunResult)
}

private class KotlinAccessor(val accessor: StateAccessor) : StateJsonAccessor {
    override suspend fun load(runId: String): String? = hostCall { accessor.load(runId)?.toJson() }

    override suspend fun save(runId: String, stateJson: String) = hostCall { accessor.save(RunResult.fromJson(stateJson)) }
}

/** A store over the application's own [StateAccessor] (`load(runId)` / `save(state)`). */
fun accessorStore(accessor: StateAccessor): RunStore = accessorRunStore(KotlinAccessor(accessor))
