<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Internal;

/**
 * The PHP callables the core names by id (`{"$callback": id}` in definitions). An agent
 * releases its ids when it is destroyed; a run's own ids when the run ends.
 */
final class Registry
{
    /** @var array<int, callable> */
    private static array $callables = [];
    private static int $next = 0;

    /** Registers a callable; its id. */
    public static function add(callable $callable): int
    {
        self::$callables[++self::$next] = $callable;
        return self::$next;
    }

    /** The callable of an id. */
    public static function get(int $id): callable
    {
        return self::$callables[$id] ?? throw new \LogicException("callback {$id} was released");
    }

    /** @param list<int> $ids */
    public static function release(array $ids): void
    {
        foreach ($ids as $id) {
            unset(self::$callables[$id]);
        }
    }
}
