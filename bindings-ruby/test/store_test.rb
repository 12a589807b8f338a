# frozen_string_literal: true

require "test_helper"
require "tmpdir"

# Run stores: continue by run id, at most once, the inbox listing, the application's accessor.
class StoreTest < Minitest::Test
  include SdkHelpers

  def agent_with(store, ran)
    deploy = tool("deploy", require_approval: true, execute: ->(input, rt) { ran << rt.tool_call["id"]; { ok: input["env"] } })
    PhaseoAgentSdk.create_agent(id: "ops", tools: [deploy], store: store)
  end

  def test_sqlite_pause_in_one_agent_continue_by_id_in_another_once
    Dir.mktmpdir do |dir|
      path = File.join(dir, "runs.db")
      ran = []
      client = script({ tool_calls: [call("c1", "deploy", env: "prod")] }, { text: "Done." })
      paused = agent_with(PhaseoAgentSdk::SqliteRunStore.new(path), ran).run(input: "go", client: client)
      assert_equal "waiting_for_human", paused.status

      store = PhaseoAgentSdk::SqliteRunStore.new(path)
      inbox = store.list(status: "waiting_for_human")
      assert_equal [paused.run_id], inbox.runs.map(&:run_id)
      assert_equal ["c1"], inbox.runs.first.pending.map { |p| p["call"]["id"] }
      worker = agent_with(store, ran)
      done = worker.continue_run(run_id: paused.run_id, approvals: ["c1"], client: client)
      assert_equal "Done.", done.output
      assert_equal ["c1"], ran
      assert_equal "completed", store.load(paused.run_id).status
      error = assert_raises(PhaseoAgentSdk::ContinueError) do
        worker.continue_run(run_id: paused.run_id, approvals: ["c1"], client: client)
      end
      assert_equal "continue_invalid", error.code
      assert_equal 1, store.prune(["completed"], older_than: -60)
      assert_nil store.load(paused.run_id)
    end
  end

  def test_application_accessor_load_and_save
    saved = {}
    accessor = Object.new
    accessor.define_singleton_method(:load) { |run_id| saved[run_id] }
    accessor.define_singleton_method(:save) { |result| saved[result.run_id] = result }
    ran = []
    client = script({ tool_calls: [call("c1", "deploy", env: "prod")] }, { text: "Done." })
    agent = agent_with(accessor, ran)
    paused = agent.run(input: "go", client: client)
    assert_equal "waiting_for_human", saved.fetch(paused.run_id).status
    done = agent.continue_run(run_id: paused.run_id, approvals: ["c1"], client: client)
    assert_equal "completed", done.status
    assert_equal "completed", saved.fetch(paused.run_id).status
  end

  def test_in_memory_store_unknown_run
    agent = agent_with(PhaseoAgentSdk::InMemoryRunStore.new, [])
    error = assert_raises(PhaseoAgentSdk::AgentError) { agent.continue_run(run_id: "nope", client: script({ text: "x" })) }
    assert_includes error.message, "nope"
  end

  def test_postgres_two_workers_continue_once
    url = ENV.fetch("PHASEO_TEST_POSTGRES_URL", nil)
    flunk "PHASEO_TEST_POSTGRES_URL is not set: run under scripts/with-test-postgres.sh; a PostgreSQL test never skips" unless url
    ran = []
    client = script({ tool_calls: [call("c1", "deploy", env: "prod")] }, { text: "Done." })
    paused = agent_with(PhaseoAgentSdk::PostgresRunStore.new(url), ran).run(input: "go", client: client)
    workers = Array.new(2) { agent_with(PhaseoAgentSdk::PostgresRunStore.new(url), ran) }
    outcomes = workers.map do |w|
      Thread.new do
        w.continue_run(run_id: paused.run_id, approvals: ["c1"], client: script({ text: "Done." }).tap { |c| c.cursor = 0 }).status
      rescue PhaseoAgentSdk::ContinueError => e
        e.code
      end
    end.map(&:value)
    assert_equal %w[completed continue_invalid], outcomes.sort
    assert_equal ["c1"], ran
  end
end
