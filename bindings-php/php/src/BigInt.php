<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/**
 * An integer PHP's `int` cannot hold (above PHP_INT_MAX, up to 2^64-1: the SDK's values
 * are 64-bit integers, SPEC §7). Values from the SDK hold one where such a number was;
 * writing it back (returning it, a context, …) writes the exact number.
 */
final class BigInt implements \JsonSerializable, \Stringable
{
    /** @param string $digits the decimal digits */
    public function __construct(public readonly string $digits)
    {
        if (preg_match('/^[0-9]+$/D', $digits) !== 1) {
            throw new \InvalidArgumentException("BigInt: not decimal digits: {$digits}");
        }
    }

    public function __toString(): string
    {
        return $this->digits;
    }

    public function jsonSerialize(): string
    {
        return Internal\Json::BIG . $this->digits;
    }
}
