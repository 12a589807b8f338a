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
 * `PHASEO_FUZZ_RUNS` sets the inputs per property (default 1000: a few thousand in all, in
 * seconds; `make fuzz-php` runs many more), `PHASEO_FUZZ_SEED` the seed (default fixed, so
 * that `make php-tests` is repeatable; a failure prints the seed to run again with).
 */
final class FuzzTest extends TestCase
{
    private const DEFAULT_SEED = '20260101';

    public static function properties(): iterable
    {
        foreach (['storable', 'refused', 'thrown', 'states'] as $property) {
            yield $property => [$property];
        }
    }

    /**
     * @dataProvider properties
     */
    public function testProperty(string $property): void
    {
        $seed = getenv('PHASEO_FUZZ_SEED') ?: self::DEFAULT_SEED;
        $runs = (int) (getenv('PHASEO_FUZZ_RUNS') ?: 1000);
        $this->assertGreaterThan(0, $runs, 'PHASEO_FUZZ_RUNS must be a positive number');
        $progress = tempnam(sys_get_temp_dir(), 'phaseo-fuzz-');
        $ext = __DIR__ . '/../php/phaseo_agent.so';
        // The deadline only catches a hang: about 20 times what the inputs take here.
        $deadline = (string) max(300, (int) ceil($runs * 0.05));
        try {
            $child = proc_open(
                ['timeout', $deadline, PHP_BINARY, '-n', '-d', "extension={$ext}", __DIR__ . '/fixtures/fuzz_child.php', $property, $seed, (string) $runs, $progress],
                [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
                $pipes,
            );
            $out = stream_get_contents($pipes[1]);
            $err = stream_get_contents($pipes[2]);
            fclose($pipes[1]);
            fclose($pipes[2]);
            $code = proc_close($child);
            $last = (string) file_get_contents($progress);
        } finally {
            @unlink($progress);
        }
        $this->assertSame(0, $code, sprintf(
            "%s failed (exit %d) with PHASEO_FUZZ_SEED=%s PHASEO_FUZZ_RUNS=%d\nlast input: %s%s%s\n"
            . 'run that case alone: php -n -d extension=php/phaseo_agent.so tests/fixtures/fuzz_child.php %s %s <runs> /tmp/progress <case>',
            $property,
            $code,
            $seed,
            $runs,
            $last,
            substr($out, -4000),
            substr($err, -4000),
            $property,
            $seed,
        ));
        $this->assertStringStartsWith("{$property}: {$runs} inputs", $out);
        // The counts and the time, past PHPUnit's check of the test's own output.
        fwrite(STDERR, $out);
    }
}
