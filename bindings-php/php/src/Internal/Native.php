<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Internal;

use Phaseo\AgentSdk\AgentError;

/** Calls into the extension, turning its errors (JSON in an \Exception) into AgentErrors. */
final class Native
{
    /**
     * @template T
     * @param callable(): T $f
     * @return T
     */
    public static function call(callable $f): mixed
    {
        try {
            return $f();
        } catch (\Exception $e) {
            if (get_class($e) === \Exception::class && str_starts_with($e->getMessage(), '{"code"')) {
                throw AgentError::fromNative($e->getMessage());
            }
            throw $e;
        }
    }
}
