<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use PHPUnit\Framework\TestCase;

/**
 * Seeded generated inputs at the PHP boundary (the properties are described in
 * tests/fixtures/fuzz_child.php): hostile host values through every kind of callback, and
 * mutated paused states through continue. Each property runs in a child process, so that an
 * input that crashes PHP fails the test with the case that did it.
 *
 * The hostile probe adds `callbacks` (every kind of PHP function a run calls misbehaving, with
 * the run cancelled or timed out at a random point), `options` (wrong types and values),
 * `leaks` (batches of runs: PHP's memory stops growing) and `bigstates` (states up to 8 MB).
 *
 * `PHASEO_FUZZ_RUNS` sets the inputs per property (default 1000: a few thousand in all, in
 * seconds; `make fuzz-php` runs many more), `PHASEO_FUZZ_SEED` the seed (default fixed, so
 * that `make php-tests` is repeatable; a failure prints the seed to run again with).
 */
final class FuzzTest extends TestCase
{
    private const DEFAULT_SEED = '20260101';

    public static function properties(): iterable
    {
        foreach (['storable', 'refused', 'thrown', 'states', 'callbacks', 'options', 'leaks', 'bigstates'] as $property) {
            yield $property => [$property];
        }
    }

    /** The share of PHASEO_FUZZ_RUNS a property runs (the batches and big states take longer). */
    private const SHARE = ['callbacks' => 2.0, 'leaks' => 0.01, 'bigstates' => 0.03];

    /** Seconds a case may print nothing before it counts as a hang. */
    private const CASE_LIMIT = 120;

    /**
     * Runs the property in child processes: a child that dies counts a death at its last
     * case, one whose progress file stops changing for CASE_LIMIT seconds is killed and
     * counts a hang; either way the next child goes on from the next case. The children's
     * failed checks are counted by kind (wrong_kind, lost_state, hang, leak). All must be 0.
     *
     * @dataProvider properties
     */
    public function testProperty(string $property): void
    {
        $seed = getenv('PHASEO_FUZZ_SEED') ?: self::DEFAULT_SEED;
        $runs = (int) (getenv('PHASEO_FUZZ_RUNS') ?: 1000);
        $this->assertGreaterThan(0, $runs, 'PHASEO_FUZZ_RUNS must be a positive number');
        $runs = max(1, (int) round($runs * (self::SHARE[$property] ?? 1.0)));
        $progress = tempnam(sys_get_temp_dir(), 'phaseo-fuzz-');
        $ext = __DIR__ . '/../php/phaseo_agent.so';
        $counts = ['death' => 0, 'hang' => 0, 'wrong_kind' => 0, 'lost_state' => 0, 'leak' => 0];
        $report = '';
        $first = 0;
        try {
            while ($first < $runs) {
                file_put_contents($progress, '');
                $child = proc_open(
                    [PHP_BINARY, '-n', '-d', "extension={$ext}", __DIR__ . '/fixtures/fuzz_child.php', $property, $seed, (string) $runs, $progress, (string) $first],
                    [1 => ['file', $out = tempnam(sys_get_temp_dir(), 'phaseo-out-'), 'w'], 2 => ['file', '/dev/null', 'w']],
                    $pipes,
                );
                $last = '';
                $since = microtime(true);
                $stalled = false;
                while (proc_get_status($child)['running']) {
                    usleep(20_000);
                    clearstatcache();
                    $now = (string) file_get_contents($progress);
                    if ($now !== $last) {
                        [$last, $since] = [$now, microtime(true)];
                    } elseif (microtime(true) - $since > self::CASE_LIMIT) {
                        proc_terminate($child, 9);
                        $stalled = true;
                        break;
                    }
                }
                $code = proc_close($child);
                $printed = (string) file_get_contents($out);
                @unlink($out);
                foreach (explode("\n", $printed) as $line) {
                    if (str_starts_with($line, 'FAIL ')) {
                        $report .= substr($line, 0, 600) . "\n";
                    }
                    if (str_starts_with($line, 'failures: ')) {
                        foreach (json_decode(substr($line, 10), true) as $kind => $n) {
                            $counts[$kind] += $n;
                        }
                    }
                }
                if (!$stalled && str_contains($printed, "{$property}: ") && str_contains($printed, 'failures: ')) {
                    fwrite(STDERR, implode("\n", array_filter(explode("\n", $printed), static fn ($l) => str_starts_with($l, "{$property}: "))) . "\n");
                    break;
                }
                // Died or stalled at the case its progress file names: counted, then on from the next.
                $counts[$stalled ? 'hang' : 'death']++;
                $at = preg_match('/^case (\d+)/', $last, $m) === 1 ? (int) $m[1] : $first;
                $report .= sprintf("case %d: %s (exit %d): %s\n", $at, $stalled ? 'hung' : 'the child died', $code, trim($last));
                $first = $at + 1;
            }
        } finally {
            @unlink($progress);
        }
        fwrite(STDERR, sprintf("%s: %s (PHASEO_FUZZ_SEED=%s)\n", $property, json_encode($counts), $seed));
        $this->assertSame(0, array_sum($counts), sprintf(
            "%s with PHASEO_FUZZ_SEED=%s PHASEO_FUZZ_RUNS=%d: %s\n%s"
            . 'run one case alone: php -n -d extension=php/phaseo_agent.so tests/fixtures/fuzz_child.php %s %s <runs> /tmp/progress <case>',
            $property,
            $seed,
            $runs,
            json_encode($counts),
            substr($report, 0, 6000),
            $property,
            $seed,
        ));
    }
}
