<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Internal;

use Phaseo\AgentSdk\RuntimeContext;
use Phaseo\AgentSdk\ToolCall;

/**
 * The PHP thread's side of the bridge (internal). The core hands every call of a PHP
 * function to this thread through one queue (`phaseo_poll`, which also polls the runs this
 * thread drives). Whoever waits for a run pumps the queue: each call runs in a `Fiber`, started
 * in the order the core made the calls, and answered with `phaseo_respond` when its fiber
 * returns. A fiber that waits (`$runtime->sleep()`, a nested run) suspends, so other calls
 * proceed: that is how tool calls overlap up to the concurrency limit on one PHP thread.
 * A call the core stopped waiting for (a timeout, a cancelled run) is told at once: its
 * `$runtime->cancelled()` turns true and a sleeping fiber wakes early.
 */
final class Scheduler
{
    /** How long a generator tool or a stream may hold the thread between two values (see pass()). */
    private const PASS_AFTER = 0.01;

    /** The error of a call whose PHP function suspended the call's own fiber. */
    public const FOREIGN_SUSPEND = 'the PHP function called Fiber::suspend() outside a Fiber of its own: '
        . 'the SDK runs each call in a Fiber that only it may suspend';

    /** @var array<int, array{fiber: \Fiber, wake: ?float, run: ?int, job?: array, since?: float, told?: true, parked?: true}> calls in flight */
    private static array $tasks = [];
    /**
     * Fibers whose call has ended, kept for the next calls (at most IDLE_FIBERS): a new
     * Fiber maps a stack and a dropped one unmaps it, and while the core's threads run, each
     * unmap makes every core flush its TLB, which cost more than a trivial tool.
     *
     * @var list<\Fiber>
     */
    private static array $idle = [];
    private const IDLE_FIBERS = 64;
    /** @var array<int, mixed> call id => the value its function returned (see invoke()) */
    private static array $results = [];
    /** The value a pooled fiber suspends with when its call has ended (see free()). */
    private static ?object $free = null;
    /** @var array<int, int> spl_object_id(fiber) => call id */
    private static array $byFiber = [];
    /** @var array<int, true> */
    private static array $cancelled = [];
    /** @var array<int, array> run => its end message */
    private static array $done = [];
    /** @var array<int, list<array>> run => events not yet taken (streams) */
    private static array $events = [];
    /** @var array<int, callable|true> run => its event listener (true: a stream) */
    private static array $listeners = [];
    /** @var list<array{0: float, 1: callable}> */
    private static array $timers = [];
    /** Whether a blocking wait holds the SIGINT handler (see interruptible()). */
    private static bool $sigint = false;
    /** Whether Ctrl-C came during that wait. */
    private static bool $interrupted = false;

    /**
     * Serves calls still in flight (ones the core abandoned, e.g. after a timeout, whose
     * fibers still sleep) for up to `$ms` milliseconds; whether none is left.
     */
    public static function settle(float $ms): bool
    {
        $until = self::now() + $ms / 1000;
        while (self::$tasks !== [] && self::now() < $until && self::currentCall() === null) {
            self::pump();
        }
        return self::$tasks === [];
    }

    /** Sends a run's events to `$listener` (a callable) or keeps them for `nextEvent` (true). */
    public static function listen(int $run, callable|bool $listener): void
    {
        self::$listeners[$run] = $listener;
    }

    /** Calls `$f` at `$at` (hrtime seconds) while some run is being waited for. */
    public static function timer(float $at, callable $f): void
    {
        self::$timers[] = [$at, $f];
    }

    /** Now, in seconds (monotonic). */
    public static function now(): float
    {
        return hrtime(true) / 1e9;
    }

    /** Waits for a run's end message (`{state}` or `{error}`), serving calls meanwhile. */
    public static function wait(int $run): array
    {
        self::interruptible($run, static function () use ($run): void {
            while (!isset(self::$done[$run])) {
                self::step($run);
            }
        });
        $m = self::$done[$run];
        unset(self::$done[$run], self::$listeners[$run], self::$events[$run]);
        return $m;
    }

    /**
     * Serves the calls that reach PHP (a served MCP server's tools) until `$stop()` is true,
     * checking it at least every 100 ms.
     *
     * @param callable(): bool $stop
     */
    public static function serveUntil(callable $stop): void
    {
        while (!$stop()) {
            self::step(0);
        }
    }

    /** The next event of a streamed run, or null once it ended (its end stays for wait()). */
    public static function nextEvent(int $run): ?array
    {
        return self::interruptible($run, static function () use ($run): ?array {
            while (true) {
                if (!empty(self::$events[$run])) {
                    return array_shift(self::$events[$run]);
                }
                if (isset(self::$done[$run])) {
                    return null;
                }
                self::step($run);
            }
        });
    }

    /**
     * Runs `$body` (a wait for `$run` on the PHP thread) so that Ctrl-C stops the run
     * cleanly: with `pcntl` loaded and SIGINT at its default, a handler is installed for the
     * wait (the queue is polled at least every 100 ms, so it runs at once); the first SIGINT
     * cancels the run (tools see `cancelled()`, a store keeps the `cancelled` state), and
     * when the run has ended SIGINT is raised again at its default, ending the script as
     * Ctrl-C does; a second SIGINT ends it at once. A handler of the application's own is
     * left alone (it runs during the wait too, and may cancel a CancelToken).
     *
     * @template T
     * @param callable(): T $body
     * @return T
     */
    private static function interruptible(int $run, callable $body): mixed
    {
        if (self::$sigint || self::currentCall() !== null || !function_exists('pcntl_signal')
            || pcntl_signal_get_handler(SIGINT) !== SIG_DFL) {
            return $body();
        }
        self::$sigint = true;
        $async = pcntl_async_signals(true);
        pcntl_signal(SIGINT, static function () use ($run): void {
            if (self::$interrupted) {
                self::raiseInterrupt();
            }
            self::$interrupted = true;
            phaseo_run_cancel($run);
        });
        try {
            return $body();
        } finally {
            pcntl_signal(SIGINT, SIG_DFL);
            pcntl_async_signals($async);
            self::$sigint = false;
            if (self::$interrupted) {
                self::$interrupted = false;
                self::raiseInterrupt();
            }
        }
    }

    /** Ends the script the way an unhandled Ctrl-C does. */
    private static function raiseInterrupt(): never
    {
        pcntl_signal(SIGINT, SIG_DFL);
        phaseo_interrupt();
        exit(130);
    }

    /** One round: inside one of our fibers, suspend until woken; else pump the queue. */
    private static function step(int $run): void
    {
        $self = self::currentCall();
        if ($self !== null) {
            self::$tasks[$self]['run'] = $run;
            \Fiber::suspend();
            return;
        }
        self::pump();
    }

    /** The call id of the fiber running now, if it is one of ours. */
    private static function currentCall(): ?int
    {
        $fiber = \Fiber::getCurrent();
        return $fiber === null ? null : (self::$byFiber[spl_object_id($fiber)] ?? null);
    }

    /** Waits for and handles the queue's messages, then resumes the fibers due. */
    private static function pump(): void
    {
        $msg = phaseo_poll(self::timeoutMs());
        while ($msg !== null) {
            self::handle(Json::decode($msg));
            $msg = phaseo_poll(0);
        }
        self::resumeDue();
    }

    /** How long the queue may be waited on: until the next wake-up or timer. */
    private static function timeoutMs(): int
    {
        $next = INF;
        foreach (self::$tasks as $id => $t) {
            if ($t['wake'] !== null) {
                $next = min($next, $t['wake']);
            }
            if ($t['run'] !== null && (isset(self::$done[$t['run']]) || !empty(self::$events[$t['run']]))) {
                return 0;
            }
        }
        foreach (self::$timers as [$at]) {
            $next = min($next, $at);
        }
        if ($next === INF) {
            return 100;
        }
        return (int) max(0, min(100, ceil(($next - self::now()) * 1000)));
    }

    private static function handle(array $m): void
    {
        switch ($m['t']) {
            case 'call':
                self::start((int) $m['id'], (string) $m['kind'], (int) $m['cb'], $m['args']);
                break;
            case 'cancel':
                // A call that already answered needs nothing (its answer was discarded).
                $id = (int) $m['id'];
                if (isset(self::$tasks[$id])) {
                    self::$cancelled[$id] = true;
                    if (self::$tasks[$id]['wake'] !== null) {
                        self::$tasks[$id]['wake'] = 0.0;
                    }
                }
                break;
            case 'event':
                $listener = self::$listeners[(int) $m['run']] ?? null;
                if ($listener === true) {
                    self::$events[(int) $m['run']][] = $m['event'];
                } elseif ($listener !== null) {
                    try {
                        $listener($m['event']);
                    } catch (\Throwable $e) {
                        // A listener's error must not break the run (docs/behaviour.md §5): reported only.
                        // (self::message: a message property need not be text.)
                        error_log('phaseo agent: event listener threw ' . get_class($e) . ': ' . self::message($e));
                    }
                }
                break;
            case 'done':
                self::$done[(int) $m['run']] = $m;
                break;
        }
    }

    private static function start(int $id, string $kind, int $cb, array $args): void
    {
        $fiber = array_pop(self::$idle) ?? new \Fiber(static function (array $job): void {
            // One call after the other: each call's value goes to $results (see invoke()),
            // then the fiber tells the scheduler it is free and waits for its next call.
            while (true) {
                self::$results[$job[0]] = self::invoke(...$job);
                $job = \Fiber::suspend(self::free());
            }
        });
        self::$tasks[$id] = ['fiber' => $fiber, 'wake' => null, 'run' => null, 'job' => [$id, $kind, $cb, $args]];
        self::$byFiber[spl_object_id($fiber)] = $id;
        self::resume($id);
    }

    /** What a fiber of the pool hands the scheduler when its call has ended. */
    private static function free(): object
    {
        return self::$free ??= new \stdClass();
    }

    /**
     * Runs one call's PHP function and answers the core; nothing it throws escapes. Returns
     * what the function returned: the fiber puts it in $results, and the scheduler drops it
     * there, outside the fiber, so that freeing a value nested deep (refused, but PHP frees
     * nested arrays recursively) uses the main stack, not the fiber's small one.
     */
    private static function invoke(int $id, string $kind, int $cb, array $args): mixed
    {
        try {
            $f = Registry::get($cb);
            $value = match ($kind) {
                'execute' => self::execute($f, $id, $args),
                'stream' => self::stream($f, $id, $args[0]),
                'approve', 'toolCalled', 'responseReceived', 'nextTurn' =>
                    $f($args[0], new RuntimeContext($id, $args[1])),
                // The agent-level predicate gets the product's ToolCall object.
                'agentApprove' => $f(ToolCall::fromArray($args[0]), new RuntimeContext($id, $args[1])),
                default => $f(...$args),
            };
            if ($kind === 'approve' || $kind === 'agentApprove') {
                $value = (bool) $value;
            }
        } catch (\Throwable $e) {
            phaseo_respond($id, null, self::message($e), false);
            return null;
        }
        try {
            // Checked before json_encode runs (see Json): too deep, cyclic, or anything else
            // JSON cannot hold is the call's invalid answer (`tool_output_invalid` for a result).
            $json = Json::encode($value);
        } catch (\Throwable $e) {
            phaseo_respond($id, null, Json::reason($e, 'the result'), true);
            return $value;
        }
        phaseo_respond($id, $json, null, false);
        return $value;
    }

    private static function execute(callable $f, int $id, array $args): mixed
    {
        $runtime = new RuntimeContext($id, $args[1]);
        $value = $f($args[0], $runtime);
        if ($value instanceof \Generator) {
            // A generator tool: each yielded value is a progress value, the return the result.
            // Once the core stopped waiting (a timeout, a cancelled run) no more values are
            // taken: a generator that never ends would otherwise hold the one PHP thread.
            foreach ($value as $progress) {
                ($runtime->emitProgress)($progress);
                self::pass($id);
                if (self::cancelled($id)) {
                    return null;
                }
            }
            return $value->getReturn();
        }
        return $value;
    }

    /** Iterates a model client's stream, passing each event to the run as it comes. */
    private static function stream(callable $f, int $id, array $request): mixed
    {
        foreach ($f($request) as $event) {
            try {
                $json = Json::encode($event);
            } catch (\JsonException $e) {
                throw new \UnexpectedValueException(Json::reason($e, 'a stream event'), 0, $e);
            }
            Native::call(fn () => phaseo_call_stream($id, $json));
            self::pass($id);
            if (self::cancelled($id)) {
                return null;
            }
        }
        return null;
    }

    /**
     * What an exception of any class says (bridge rule 4) as UTF-8 text (a message may be
     * any bytes), with a fixed fallback.
     */
    public static function message(\Throwable $e): string
    {
        try {
            $m = $e->getMessage();
            return $m !== '' ? Json::text($m) : get_class($e);
        } catch (\Throwable) {
            return 'a PHP tool threw an exception whose message could not be read';
        }
    }

    /**
     * Between two values of a generator tool or a model stream: once the call has held the
     * thread for PASS_AFTER seconds, lets the scheduler run (the queue, timers such as
     * `CancelToken::cancelAfter`, other calls) before the next value, so a generator that
     * never ends still sees its cancellation.
     */
    private static function pass(int $id): void
    {
        if (self::currentCall() !== $id) {
            return;
        }
        $now = self::now();
        if ($now - (self::$tasks[$id]['since'] ?? $now) < self::PASS_AFTER) {
            return;
        }
        self::$tasks[$id]['wake'] = $now;
        \Fiber::suspend();
    }

    private static function resume(int $id): void
    {
        $t = self::$tasks[$id];
        $job = $t['job'] ?? null;
        unset(self::$tasks[$id]['job'], $t['job']);
        self::$tasks[$id]['wake'] = null;
        self::$tasks[$id]['run'] = null;
        self::$tasks[$id]['since'] = self::now();
        $said = null;
        try {
            if (!$t['fiber']->isStarted()) {
                $said = $t['fiber']->start($job);
            } else {
                $said = $t['fiber']->resume($job);
            }
        } catch (\Throwable $e) {
            // Only our own plumbing can get here (invoke catches everything).
            phaseo_respond($id, null, self::message($e), false);
        }
        $job = null;
        $ended = self::$free !== null && $said === self::$free;
        unset(self::$results[$id]);
        $now = self::$tasks[$id] ?? null;
        if (!$ended && $now !== null && $t['fiber']->isSuspended() && $now['wake'] === null && $now['run'] === null && !isset($now['parked'])) {
            // The PHP function itself called Fiber::suspend() in the call's fiber (not in a
            // Fiber of its own): nothing would ever resume it. The call fails, and the fiber
            // is dropped (unwound, `finally` blocks run) like a parked one.
            phaseo_respond($id, null, self::FOREIGN_SUSPEND, false);
            self::$tasks[$id]['parked'] = true;
        }
        if ($ended || $t['fiber']->isTerminated() || isset(self::$tasks[$id]['parked'])) {
            unset(self::$tasks[$id], self::$byFiber[spl_object_id($t['fiber'])], self::$cancelled[$id]);
            if ($ended && count(self::$idle) < self::IDLE_FIBERS) {
                self::$idle[] = $t['fiber'];
            }
        }
    }

    private static function resumeDue(): void
    {
        $now = self::now();
        foreach (self::$timers as $i => [$at, $f]) {
            if ($at <= $now) {
                unset(self::$timers[$i]);
                try {
                    $f();
                } catch (\Throwable $e) {
                    error_log('phaseo agent: timer threw ' . get_class($e) . ': ' . self::message($e));
                }
            }
        }
        self::$timers = array_values(self::$timers);
        foreach (array_keys(self::$tasks) as $id) {
            $t = self::$tasks[$id] ?? null;
            if ($t === null || !$t['fiber']->isSuspended()) {
                continue;
            }
            $due = ($t['wake'] !== null && $t['wake'] <= $now)
                || ($t['run'] !== null && (isset(self::$done[$t['run']]) || !empty(self::$events[$t['run']])));
            if ($due) {
                self::resume($id);
            }
        }
    }

    /**
     * Sleeps `$ms` in a call's fiber (others proceed), ending early when the call is
     * cancelled; outside a fiber it blocks, checking for cancellation. False when cut short
     * (or already cancelled); a call that sleeps again after that is never resumed.
     */
    public static function sleep(int $call, float $ms): bool
    {
        $until = self::now() + $ms / 1000;
        if (self::currentCall() === $call) {
            if (isset(self::$tasks[$call]['told'])) {
                // The core stopped waiting for this call, a sleep already returned false, and
                // the tool sleeps again all the same (a loop that ignores it): returning at
                // once would spin the one PHP thread forever. The fiber is parked for good
                // instead; the scheduler then drops it, which unwinds it (`finally` blocks run).
                self::$tasks[$call]['parked'] = true;
                \Fiber::suspend();
                return false;
            }
            while (self::now() < $until && !self::cancelled($call)) {
                self::$tasks[$call]['wake'] = $until;
                \Fiber::suspend();
            }
            if (self::cancelled($call)) {
                self::$tasks[$call]['told'] = true;
                return false;
            }
            return true;
        } else {
            while (self::now() < $until && !self::cancelled($call)) {
                usleep((int) min(2000, max(0, ($until - self::now()) * 1e6)));
            }
        }
        return !self::cancelled($call);
    }

    /** Whether the core stopped waiting for a call. */
    public static function cancelled(int $call): bool
    {
        return isset(self::$cancelled[$call]) || phaseo_call_cancelled($call);
    }
}
