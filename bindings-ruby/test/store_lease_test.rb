# frozen_string_literal: true

require "test_helper"
require "open3"
require "rbconfig"
require "tmpdir"

# Run-store leases across processes (docs/behaviour.md §10), on a SQLite file and on PostgreSQL: Ruby
# worker processes (test/store_worker.rb, lease 1 s renewed every 250 ms) race to continue
# one pause, die after their claim, or freeze past their lease. A PostgreSQL test without
# its server FAILS (run under scripts/with-test-postgres.sh, as `make ruby-tests` does).
class StoreLeaseTest < Minitest::Test
  include SdkHelpers

  WORKER = File.expand_path("store_worker.rb", __dir__)

  def setup
    @dir = Dir.mktmpdir("phaseo-rb-lease-")
    @log = File.join(@dir, "executions.log")
    File.write(@log, "")
  end

  def teardown
    FileUtils.remove_entry(@dir)
  end

  def sqlite = "sqlite:#{File.join(@dir, 'runs.db')}"

  def postgres
    ENV.fetch("PHASEO_TEST_POSTGRES_URL") do
      flunk "PHASEO_TEST_POSTGRES_URL is not set: run under scripts/with-test-postgres.sh; a PostgreSQL test never skips"
    end
  end

  def env = { "PHASEO_EXEC_LOG" => @log }

  def worker(store, *args)
    out, err, status = Open3.capture3(env, RbConfig.ruby, WORKER, store, *args)
    assert status.success?, err
    JSON.parse(out.lines.last)
  end

  # A worker whose tool has started (it printed {"executing": true}).
  def executing_worker(store, *args)
    stdin, stdout, stderr, thread = Open3.popen3(env, RbConfig.ruby, WORKER, store, *args)
    stdin.close
    line = stdout.gets
    assert_equal({ "executing" => true }, line && JSON.parse(line), line || stderr.read)
    [stdout, stderr, thread]
  end

  def executions = File.readlines(@log).size

  def open_store(store)
    store.start_with?("sqlite:") ? PhaseoAgentSdk::SqliteRunStore.new(store.delete_prefix("sqlite:")) : PhaseoAgentSdk::PostgresRunStore.new(store)
  end

  def race(store)
    paused = worker(store, "pause")
    assert_equal "waiting_for_human", paused["status"]
    racers = Array.new(4) { Thread.new { worker(store, "continue", paused["run_id"]) } }.map(&:value)
    assert_equal 1, racers.count { |a| a["status"] == "completed" }, racers.inspect
    assert_equal 3, racers.count { |a| a["error"] == "continue_invalid" }, racers.inspect
    assert_equal 1, executions
  end

  def killed_after_claim(store)
    paused = worker(store, "pause")
    stdout, stderr, thread = executing_worker(store, "continue", paused["run_id"], "--hang")
    Process.kill("KILL", thread.pid)
    thread.join
    [stdout, stderr].each(&:close)
    rows = open_store(store)
    assert_equal "running", rows.load(paused["run_id"]).status
    # The dead worker's lease (1 s) must expire before anyone may take the run over. Checked
    # from this process: starting another can take longer than the lease on a busy machine.
    rescuer = PhaseoAgentSdk.create_agent(id: "store-worker", store: rows)
    early = assert_raises(PhaseoAgentSdk::ContinueError) do
      rescuer.recover(paused["run_id"], client: PhaseoAgentSdk::ScriptedClient.new([{ text: "done" }]))
    end
    assert_equal "continue_invalid", early.code
    assert_equal 1, executions
    sleep 1.3
    done = worker(store, "recover", paused["run_id"])
    assert_equal({ "run_id" => paused["run_id"], "status" => "completed", "output" => "done" }, done)
    # The approval stored by the claim was used: the tool ran again, to completion.
    assert_equal 2, executions
  end

  def lease_taken_over(store)
    paused = worker(store, "pause")
    stdout, stderr, thread = executing_worker(store, "continue", paused["run_id"], "--slow")
    # Frozen past its 1 s lease, the worker cannot renew it: another process recovers the run.
    Process.kill("STOP", thread.pid)
    begin
      sleep 1.3
      done = worker(store, "recover", paused["run_id"])
    ensure
      Process.kill("CONT", thread.pid)
    end
    assert_equal "completed", done["status"], done.inspect
    answer = JSON.parse(stdout.read.lines.last)
    assert thread.value.success?, stderr.read
    assert_equal({ "error" => "lease_lost",
                   "message" => "Run #{paused['run_id']} was taken over by another worker (lease lost)" }, answer)
    assert_equal "completed", open_store(store).load(paused["run_id"]).status
  end

  def test_sqlite_processes_race_to_continue_one_pause = race(sqlite)
  def test_postgres_processes_race_to_continue_one_pause = race(postgres)
  def test_sqlite_worker_killed_after_its_claim_is_recovered_elsewhere = killed_after_claim(sqlite)
  def test_postgres_worker_killed_after_its_claim_is_recovered_elsewhere = killed_after_claim(postgres)
  def test_sqlite_worker_whose_lease_was_taken_over_gets_lease_lost = lease_taken_over(sqlite)
  def test_postgres_worker_whose_lease_was_taken_over_gets_lease_lost = lease_taken_over(postgres)

  def test_a_bad_lease_is_refused_by_name
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.create_agent(id: "a", lease: { duration_ms: 100, renew_every_ms: 100 })
    end
    assert_includes error.message, "lease needs 0 < renew_every_ms < duration_ms"
    assert_raises(PhaseoAgentSdk::DefinitionError) { PhaseoAgentSdk.create_agent(id: "a", lease: { ttl: 1 }) }
  end
end
