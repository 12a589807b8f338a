# frozen_string_literal: true

module PhaseoAgentSdk
  # A stored run (a row of a run store): its columns and its state.
  StoredRun = Struct.new(:run_id, :agent_id, :status, :pause_id, :version, :created_at_ms, :updated_at_ms,
                         :lease_owner, :lease_expires_at_ms, :state, keyword_init: true) do
    # The calls waiting for a decision (of the stored state).
    def pending = state.pending

    def self.from_row(row)
      new(run_id: row["runId"], agent_id: row["agentId"], status: row["status"], pause_id: row["pauseId"],
          version: row["version"], created_at_ms: row["createdAtMs"], updated_at_ms: row["updatedAtMs"],
          lease_owner: row["leaseOwner"], lease_expires_at_ms: row["leaseExpiresAtMs"],
          state: RunResult.new(Native.to_json(row["state"])))
    end
  end

  # One page of a listing.
  RunPage = Struct.new(:runs, :next_cursor, keyword_init: true)

  # A run store (docs/behaviour.md §10): give it to `create_agent(store:)`; runs are saved at every
  # checkpoint and continued by id (`continue_run(run_id:)`), at most once across workers.
  class RunStore
    # The native store (internal).
    attr_reader :native

    def initialize(native)
      @native = native
    end

    # One page of runs, oldest update first: `status:` one status or a list.
    def list(status: nil, agent_id: nil, limit: 0, cursor: nil)
      text = Internal.native { @native.list(Array(status).map(&:to_s), agent_id, limit, cursor) }
      page = Native.parse_json(text)
      RunPage.new(runs: page["runs"].map { |row| StoredRun.from_row(row) }, next_cursor: page["nextCursor"])
    end

    # The stored run, or nil.
    def load(run_id)
      text = Internal.native { @native.load(run_id.to_s) }
      text && StoredRun.from_row(Native.parse_json(text))
    end

    # Deletes a run; whether it was stored.
    def delete(run_id) = Internal.native { @native.delete(run_id.to_s) }

    # Deletes the runs of these statuses last updated more than `older_than` seconds ago;
    # returns how many.
    def prune(statuses, older_than:)
      cutoff = ((Time.now.to_f - older_than.to_f) * 1000).to_i
      Internal.native { @native.prune(Array(statuses).map(&:to_s), cutoff) }
    end
  end

  # Runs in this process's memory (tests).
  class InMemoryRunStore < RunStore
    def initialize = super(Native::RunStore.memory)
  end

  # A SQLite file (created and migrated when needed): several processes on one host.
  class SqliteRunStore < RunStore
    def initialize(path)
      super(Internal.native { Native::RunStore.sqlite(path.to_s) })
    end
  end

  # PostgreSQL (many workers): `PostgresRunStore.new("postgres://...")` connects and migrates.
  class PostgresRunStore < RunStore
    def initialize(url)
      super(Internal.native { Native::RunStore.postgres(url.to_s) })
    end
  end

  # The application's own object with `load(run_id)` (a RunResult, its JSON or nil) and
  # `save(result)` (the product's state accessor), as a store.
  class AccessorRunStore < RunStore
    def initialize(accessor)
      unless accessor.respond_to?(:load) && accessor.respond_to?(:save)
        raise ArgumentError, "a state accessor needs load(run_id) and save(result)"
      end

      load = lambda do |run_id|
        found = accessor.load(run_id)
        case found
        when RunResult then found.to_json
        when Hash then RunResult.from_json(found).to_json
        else found
        end
      end
      save = lambda do |_run_id, json|
        accessor.save(RunResult.new(json))
        nil
      end
      @ids = [Internal.register(load), Internal.register(save)]
      super(Native::RunStore.accessor(*@ids))
    end
  end
end
