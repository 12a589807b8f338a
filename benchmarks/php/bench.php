<?php

// The PHP binding against the host's floor: no installable PHP agent SDK runs a tool-calling
// loop offline, so the same workloads also run on bare Fibers doing the same trivial work
// (decode the call's JSON arguments, add, encode the answer), with a minimal timer loop for
// the sleeps: the least any SDK on PHP's one thread can cost. Workloads as in
// benchmarks/go/harness/workload.go:
//
//   empty       one model turn that returns the final text (wall ms)
//   fanout      one turn of FANOUT_N (1000) add(a, b) calls, then the final turn (µs per call)
//   sequential  SEQ_N (200) turns of one add call each, then the final turn (µs per turn)
//   sleepy      one turn of SLEEPY_N (100) calls of a tool sleeping 50 ms (wall ms); ours
//               sleeps with $runtime->sleep(50), which lets the other calls run meanwhile
//
// Setting up a run (the scripted client, the agent) is untimed; the whole run is timed.
// WARMUP (3) warm-up runs, then RUNS (5) timed runs, gc_collect_cycles() before each, median
// reported. Prints a table, then one JSON document (`figures[sdk][workload]`, as the Go and
// JVM drivers).
//
//   php -d extension=bindings-php/php/phaseo_agent.so benchmarks/php/bench.php
//   (benchmarks/php/run.sh builds the extension in release first)

declare(strict_types=1);

require __DIR__ . '/../../bindings-php/php/autoload.php';

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\RuntimeContext;
use Phaseo\AgentSdk\ScriptedClient;
use Phaseo\AgentSdk\Tool;

function env_int(string $name, int $default): int
{
    $v = getenv($name);
    return $v === false || $v === '' ? $default : (int) $v;
}

const SLEEP_MS = 50;
$RUNS = env_int('RUNS', 5);
$WARMUP = env_int('WARMUP', 3);
$FANOUT_N = env_int('FANOUT_N', 1000);
$SEQ_N = env_int('SEQ_N', 200);
$SLEEPY_N = env_int('SLEEPY_N', 100);
$WORKLOADS = array_map('trim', explode(',', getenv('WORKLOADS') ?: 'empty,fanout,sequential,sleepy'));
$UNITS = ['empty' => 'ms wall', 'fanout' => 'µs/call', 'sequential' => 'µs/turn', 'sleepy' => 'ms wall'];
$PER_UNIT = ['empty' => 0, 'fanout' => $FANOUT_N, 'sequential' => $SEQ_N, 'sleepy' => 0];

/** Counts the tool invocations of the current run (every variant's tools count here). */
$calls = 0;

function call(string $id, string $name, array $args): array
{
    return ['id' => $id, 'name' => $name, 'arguments' => json_encode($args)];
}

/** The scripted turns of a workload: each a list of calls (the final "done" turn not listed). */
function turns(string $workload): array
{
    global $FANOUT_N, $SEQ_N, $SLEEPY_N;
    return match ($workload) {
        'empty' => [],
        'fanout' => [array_map(fn ($i) => call("c$i", 'add', ['a' => $i, 'b' => 1]), range(0, $FANOUT_N - 1))],
        'sequential' => array_map(fn ($i) => [call("s$i", 'add', ['a' => $i, 'b' => 1])], range(0, $SEQ_N - 1)),
        'sleepy' => [array_map(fn ($i) => call("n$i", 'nap', ['i' => $i]), range(0, $SLEEPY_N - 1))],
    };
}

$int = ['type' => 'integer'];
$add = AgentSdk::defineTool(new Tool(
    id: 'add',
    execute: function (array $input, RuntimeContext $runtime) {
        global $calls;
        $calls++;
        return $input['a'] + $input['b'];
    },
    description: 'Adds two integers.',
    parameters: ['type' => 'object', 'properties' => ['a' => $int, 'b' => $int], 'required' => ['a', 'b']],
));
$nap = AgentSdk::defineTool(new Tool(
    id: 'nap',
    execute: function (array $input, RuntimeContext $runtime) {
        global $calls;
        $calls++;
        $runtime->sleep(SLEEP_MS);
        return $input['i'];
    },
    description: 'Sleeps 50 ms, returns i.',
    parameters: ['type' => 'object', 'properties' => ['i' => $int], 'required' => ['i']],
));

/** Ours: the agent and its scripted client (untimed); returns the timed run. */
function ours(string $workload): callable
{
    global $add, $nap;
    $script = turns($workload);
    $responses = array_map(fn ($calls) => ['toolCalls' => $calls], $script);
    $responses[] = ['text' => 'done'];
    $client = new ScriptedClient($responses);
    $agent = AgentSdk::createAgent(new AgentDefinition(
        id: 'bench',
        tools: [$add, $nap],
        maxSteps: count($script) + 5,
        toolExecution: ['toolConcurrency' => 1000],
    ));
    return function () use ($agent, $client, $workload) {
        $result = $agent->run(input: 'go', client: $client);
        if ($result->status() !== 'completed' || $result->output() !== 'done') {
            throw new RuntimeException("ours $workload: status {$result->status()}");
        }
    };
}

/**
 * The floor: each turn's calls in Fibers of their own (all started, then the sleeping ones
 * resumed by a minimal timer loop), each decoding its arguments, running the tool's body and
 * encoding the answer.
 */
function floor_variant(string $workload): callable
{
    $script = turns($workload);
    $bodies = [
        'add' => function (array $input) {
            global $calls;
            $calls++;
            return $input['a'] + $input['b'];
        },
        'nap' => function (array $input) {
            global $calls;
            $calls++;
            Fiber::suspend(hrtime(true) + SLEEP_MS * 1_000_000);
            return $input['i'];
        },
    ];
    return function () use ($script, $bodies, $workload) {
        $answers = [];
        foreach ($script as $turn) {
            $waiting = [];
            foreach ($turn as $c) {
                $fiber = new Fiber(function () use ($c, $bodies, &$answers) {
                    $answers[] = json_encode($bodies[$c['name']](json_decode($c['arguments'], true)));
                });
                $wake = $fiber->start();
                if (!$fiber->isTerminated()) {
                    $waiting[] = [$wake, $fiber];
                }
            }
            while ($waiting) {
                usort($waiting, fn ($x, $y) => $x[0] <=> $y[0]);
                [$wake, $fiber] = array_shift($waiting);
                $ns = $wake - hrtime(true);
                if ($ns > 0) {
                    usleep(intdiv($ns, 1000));
                }
                $fiber->resume();
            }
        }
        if (count($answers) !== array_sum(array_map('count', $script))) {
            throw new RuntimeException("floor $workload: " . count($answers) . ' answers');
        }
    };
}

function median(array $xs): float
{
    sort($xs);
    $n = count($xs);
    return $n % 2 ? $xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2;
}

function measure(string $workload, callable $make): array
{
    global $RUNS, $WARMUP, $PER_UNIT, $calls;
    $want = array_sum(array_map('count', turns($workload)));
    $samples = [];
    for ($i = 0; $i < $WARMUP + $RUNS; $i++) {
        $run = $make($workload);
        $calls = 0;
        gc_collect_cycles();
        $t0 = hrtime(true);
        $run();
        $dt = (hrtime(true) - $t0) / 1e6;
        if ($calls !== $want) {
            throw new RuntimeException("$workload: $calls tool calls, expected $want");
        }
        if ($i >= $WARMUP) {
            $samples[] = $dt;
        }
    }
    $scale = $PER_UNIT[$workload] > 0 ? 1000 / $PER_UNIT[$workload] : 1.0;
    return [median($samples) * $scale, min($samples) * $scale];
}

function fmt(float $v): string
{
    return $v >= 100 ? number_format($v, 0, '.', ',') : ($v >= 10 ? sprintf('%.1f', $v) : sprintf('%.2f', $v));
}

$loadBefore = array_map(fn ($x) => round($x, 2), sys_getloadavg());
$figures = ['ours' => [], 'floor' => []];
$fastest = ['ours' => [], 'floor' => []];
foreach ($WORKLOADS as $w) {
    foreach (['ours' => 'ours', 'floor' => 'floor_variant'] as $sdk => $variant) {
        [$figures[$sdk][$w], $fastest[$sdk][$w]] = measure($w, $variant);
    }
}
$loadAfter = array_map(fn ($x) => round($x, 2), sys_getloadavg());

echo "\nPhaseo Agent SDK (PHP) vs the floor (bare Fibers): median of $RUNS runs after $WARMUP warm-up; PHP " . PHP_VERSION
    . '; load before ' . implode(' ', $loadBefore) . ', after ' . implode(' ', $loadAfter) . "\n";
$rows = [['workload', 'unit', 'ours', 'floor', 'ours ÷ floor', 'ours (fastest run)']];
foreach ($WORKLOADS as $w) {
    $o = $figures['ours'][$w];
    $f = $figures['floor'][$w];
    $rows[] = [$w, $UNITS[$w], fmt($o), fmt($f), ($f > 0 ? fmt($o / $f) . '×' : '–'), fmt($fastest['ours'][$w])];
}
/** Characters in a UTF-8 text (without mbstring, which a PHP build may lack). */
function textWidth(string $text): int
{
    return preg_match_all('/./us', $text);
}

$widths = [];
foreach ($rows as $r) {
    foreach ($r as $i => $c) {
        $widths[$i] = max($widths[$i] ?? 0, textWidth($c));
    }
}
foreach ($rows as $j => $r) {
    $cells = [];
    foreach ($r as $i => $c) {
        $pad = str_repeat(' ', $widths[$i] - textWidth($c));
        $cells[] = $i < 2 ? $c . $pad : $pad . $c;
    }
    echo implode('  ', $cells), "\n";
    if ($j === 0) {
        echo implode('  ', array_map(fn ($n) => str_repeat('-', $n), $widths)), "\n";
    }
}
echo "\nJSON:\n", json_encode(['load_before' => $loadBefore, 'load_after' => $loadAfter, 'runs' => $RUNS,
    'warmup' => $WARMUP, 'versions' => ['php' => PHP_VERSION], 'figures' => $figures, 'fastest' => $fastest]), "\n";
