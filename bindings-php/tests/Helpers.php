<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\ModelClient;
use Phaseo\AgentSdk\RunResult;

/** A PHP model client: replies in order, records every request. */
final class RecordingModel implements ModelClient
{
    /** @var list<array> */
    public array $requests = [];

    /** @param list<array|\Closure> $replies */
    public function __construct(private array $replies)
    {
    }

    public function generate(array $request): array
    {
        $this->requests[] = $request;
        $reply = array_shift($this->replies) ?? throw new \RuntimeException('the test model ran out of replies');
        return $reply instanceof \Closure ? $reply($request) : $reply;
    }
}

/** Shared helpers of the PHPUnit tests. */
trait Helpers
{
    /** A model tool call. */
    private static function call(string $id, string $name, array|\stdClass $input = []): array
    {
        return ['id' => $id, 'name' => $name, 'arguments' => json_encode($input === [] ? new \stdClass() : $input)];
    }

    /** The trailing tool messages of a request. */
    private static function toolMessages(array $request): array
    {
        $out = [];
        foreach (array_reverse($request['messages']) as $m) {
            if ($m['role'] !== 'tool') {
                break;
            }
            array_unshift($out, $m);
        }
        return $out;
    }

    /** A state through its canonical JSON text, as an application stores it. */
    private static function roundTrip(RunResult $r): RunResult
    {
        return RunResult::fromJson($r->toJson());
    }

    private static function ms(float $since): float
    {
        return (hrtime(true) - $since) / 1e6;
    }
}
